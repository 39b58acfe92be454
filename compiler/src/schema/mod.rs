//! JSON Schema → GBNF.
//!
//! Building blocks live in their own modules: number ranges ([`numeric`]) and string
//! formats ([`formats`]).

pub mod formats;
pub mod numeric;
