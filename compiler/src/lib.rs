//! gbnfc's compiler: the GBNF language (parse, print, check), a recognizer and a sampler
//! for any grammar, and the JSON Schema and tool-list compilers.
//!
//! Pure Rust, no llama.cpp and no I/O: callers pass text in and get values back.
//!
//! ```
//! use gbnfc_compiler::{gbnf, recognize::Recognizer, sample::{Sampler, SampleOptions}};
//! let grammar = gbnf::parse("root ::= \"yes\" | \"no\"\n").unwrap();
//! assert!(gbnf::is_clean(&gbnf::check(&grammar)));
//! let recognizer = Recognizer::new(&grammar).unwrap();
//! for text in Sampler::new(&grammar).unwrap().samples(7, 5, SampleOptions::default()) {
//!     assert!(recognizer.recognize(&text).accepted);
//! }
//! ```

mod automaton;
pub mod conformance;
pub mod diagnostic;
pub mod earley;
pub mod gbnf;
pub mod json_text;
pub(crate) mod marker;
pub mod pattern;
pub mod reasoning;
pub mod recognize;
pub mod sample;
pub mod schema;
pub mod tools;

pub use diagnostic::{Diagnostic, Severity};
