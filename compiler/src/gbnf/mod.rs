//! GBNF, exactly as llama.cpp reads it: the tree ([`ast`]), the parser ([`parse()`]), the
//! printer (`Display` on [`Grammar`]), the same grammar in other engines' spellings
//! ([`dialect`]), the lints ([`check()`]), the grammar that passed them
//! ([`CheckedGrammar`]) and the flat form the recognizer and sampler work on ([`flat`]).

#[cfg(feature = "arbitrary")]
pub mod arbitrary;
pub mod ast;
pub mod charset;
pub mod check;
mod checked;
pub mod derives;
pub mod dialect;
pub mod flat;
pub mod llama_stacks;
pub mod parse;
mod print;
pub mod prune;

pub use ast::{ClassRange, Expr, Grammar, Pos, Rule, TokenRef};
pub use charset::{CharSet, MAX_CHAR};
pub use check::{check, is_clean};
pub use checked::{CheckedGrammar, Rejected};
pub use dialect::{Target, TargetError};
pub use flat::{Flat, LowerError, Origin, Production, Sym, Terminal};
pub use parse::{parse, ParseError};
pub(crate) use print::push_number;
