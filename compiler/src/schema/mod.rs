//! JSON Schema → GBNF.
//!
//! [`compile`] takes a schema (2020-12 semantics; draft-04/06/07 and 2019-09 spellings
//! too), a boolean schema, or an OpenAI `response_format`, and returns a [`CheckedGrammar`] whose
//! `root` accepts the canonical text ([`canon`]) of every value the schema accepts, and
//! nothing the schema rejects — for every keyword it reports as enforced. Keywords it
//! cannot enforce exactly come back as [`SchemaDiagnostic`]s with their JSON pointer
//! ("enforced by validation only"), never dropped in silence.
//!
//! The stages, each in its own module:
//! - [`document`]: unwrap `response_format`, index `$id`/`$anchor`, resolve `$ref`;
//! - `read`: a schema without combinators read into a typed schema (`ir`);
//! - `intersect`: `allOf`, `$ref` siblings and `anyOf`/`oneOf` branches with the rest of
//!   their schema, as typed schemas (`merge`, as JSON, where those hold combinators);
//! - `emit`: lower each schema to GBNF rules, with `objects`, `arrays`, `scalars`,
//!   [`numeric`] ranges, string [`formats`] and `pattern`s ([`crate::pattern`]).
//!
//! Only [`document`], [`canon`], [`formats`] and [`numeric`] are public: the rest are
//! the compiler's own stages, reached through [`compile`].

mod arrays;
mod blocks;
pub mod canon;
mod disjoint;
pub mod document;
mod emit;
pub mod formats;
mod intersect;
mod ir;
mod keywords;
mod literals;
pub mod numeric;
mod objects;
mod read;
mod scalars;
mod unique;

use std::fmt;

use serde_json::Value;
use thiserror::Error;

use crate::gbnf::CheckedGrammar;

/// How much whitespace the grammar allows between JSON tokens.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Whitespace {
    /// None: compact JSON, the canonical text.
    #[default]
    Compact,
    /// Up to one newline and 20 spaces between tokens: bounded, so a model cannot loop.
    Flexible,
}

/// Where remote `$ref`s (outside the document) are found: given an absolute URI without
/// fragment, return the schema document, or `None`.
pub type RemoteResolver<'a> = &'a dyn Fn(&str) -> Option<Value>;

/// Compilation settings.
#[derive(Clone, Copy, Default)]
pub struct Options<'a> {
    /// Keywords that can only be enforced by validation become errors.
    pub strict: bool,
    /// An absent `additionalProperties` means `false` (as in OpenAI's strict mode).
    pub closed: bool,
    /// Whitespace between tokens.
    pub whitespace: Whitespace,
    /// Resolves references to other documents; without it they are errors.
    pub remote: Option<RemoteResolver<'a>>,
    /// Fill [`Compiled::explain`] with every keyword occurrence (`--explain`); without
    /// it, only the keywords that are not simply enforced are reported.
    pub explain: bool,
}

impl fmt::Debug for Options<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Options")
            .field("strict", &self.strict)
            .field("closed", &self.closed)
            .field("whitespace", &self.whitespace)
            .field("remote", &self.remote.is_some())
            .field("explain", &self.explain)
            .finish()
    }
}

/// How a keyword is treated.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum KeywordStatus {
    /// The grammar enforces it exactly.
    Enforced,
    /// The grammar cannot enforce it (exactly); generated output must be validated.
    ValidationOnly,
    /// The grammar enforces it soundly but accepts only part of what it allows (some
    /// valid values cannot be generated); the message says which.
    Restricted,
    /// It constrains nothing (`title`, `description`, `default`, …).
    Annotation,
    /// Not a keyword gbnfc knows: often a typo. Ignored.
    Unknown,
}

impl fmt::Display for KeywordStatus {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            KeywordStatus::Enforced => "enforced",
            KeywordStatus::ValidationOnly => "validation-only",
            KeywordStatus::Restricted => "restricted",
            KeywordStatus::Annotation => "annotation",
            KeywordStatus::Unknown => "unknown",
        })
    }
}

/// What the compiler says about one keyword occurrence.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaDiagnostic {
    /// JSON pointer to the keyword, e.g. `/properties/age/minimum`.
    pub pointer: String,
    /// The keyword.
    pub keyword: String,
    /// How it is treated.
    pub status: KeywordStatus,
    /// Why, when it is not simply enforced.
    pub message: String,
}

impl fmt::Display for SchemaDiagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let pointer = if self.pointer.is_empty() {
            "/"
        } else {
            &self.pointer
        };
        match self.status {
            KeywordStatus::ValidationOnly => write!(
                f,
                "warning: {pointer}: `{}` is enforced by validation only: {}",
                self.keyword, self.message
            ),
            KeywordStatus::Restricted => write!(
                f,
                "note: {pointer}: `{}` is enforced, but only in part: {}",
                self.keyword, self.message
            ),
            KeywordStatus::Unknown => write!(
                f,
                "warning: {pointer}: unknown keyword `{}` is ignored{}",
                self.keyword,
                if self.message.is_empty() {
                    String::new()
                } else {
                    format!(" ({})", self.message)
                }
            ),
            status => write!(f, "{pointer}: `{}` {status} {}", self.keyword, self.message),
        }
    }
}

/// A compiled schema.
#[derive(Debug, Clone)]
pub struct Compiled {
    /// The grammar, checked.
    pub grammar: CheckedGrammar,
    /// Every keyword that is not simply enforced: validation-only, restricted, unknown.
    /// (With [`Options::explain`], [`Compiled::explain`] lists every keyword.)
    pub diagnostics: Vec<SchemaDiagnostic>,
    /// With [`Options::explain`], every keyword occurrence with its status, in document
    /// order; without it, empty (what is not simply enforced is in `diagnostics`).
    pub explain: Vec<SchemaDiagnostic>,
}

impl Compiled {
    /// `true` when some keyword is enforced by validation only: generated output must be
    /// validated after generation.
    pub fn needs_validation(&self) -> bool {
        self.diagnostics
            .iter()
            .any(|d| d.status == KeywordStatus::ValidationOnly)
    }
}

/// Why a schema could not be compiled.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum CompileError {
    /// The input is not a schema (wrong type for a keyword, unknown `type` name, …).
    #[error("{}: {message}", show(pointer))]
    Invalid {
        /// Where.
        pointer: String,
        /// What is wrong and what to do.
        message: String,
    },
    /// No value satisfies the schema.
    #[error("{}: the schema accepts no value: {message}", show(pointer))]
    Unsatisfiable {
        /// Where.
        pointer: String,
        /// Why.
        message: String,
    },
    /// A `$ref` that cannot be resolved.
    #[error("{}: cannot resolve $ref `{reference}`: {message}", show(pointer))]
    Unresolved {
        /// Where.
        pointer: String,
        /// The reference.
        reference: String,
        /// Why, and what to do.
        message: String,
    },
    /// A keyword that can only be enforced by validation, under `strict`.
    #[error(
        "{}: `{keyword}` cannot be enforced by the grammar (strict mode): {message}",
        show(pointer)
    )]
    Strict {
        /// Where.
        pointer: String,
        /// The keyword.
        keyword: String,
        /// Why.
        message: String,
    },
    /// The schema is too large or too deep to compile.
    #[error("{}: {message}", show(pointer))]
    TooLarge {
        /// Where.
        pointer: String,
        /// What limit was hit.
        message: String,
    },
}

/// A JSON pointer for messages: the root is `/` rather than the empty string.
fn show(pointer: &str) -> &str {
    if pointer.is_empty() {
        "/"
    } else {
        pointer
    }
}

/// Compiles a schema, a boolean schema or an OpenAI `response_format` to a grammar.
///
/// ```
/// use gbnfc_compiler::schema::{compile, Options};
/// use gbnfc_compiler::recognize::Recognizer;
/// let schema = serde_json::json!({
///     "type": "object",
///     "properties": {"name": {"type": "string"}, "age": {"type": "integer", "minimum": 0}},
///     "required": ["name"]
/// });
/// let compiled = compile(&schema, &Options::default()).unwrap();
/// let r = Recognizer::new(&compiled.grammar).unwrap();
/// assert!(r.recognize(r#"{"name":"Ada","age":36}"#).accepted);
/// assert!(!r.recognize(r#"{"age":36}"#).accepted);
/// assert!(!r.recognize(r#"{"name":"Ada","age":-1}"#).accepted);
/// ```
///
/// # Errors
/// See [`CompileError`].
pub fn compile(input: &Value, options: &Options<'_>) -> Result<Compiled, CompileError> {
    let document = document::Document::from_input(input, options.remote)?;
    emit::Emitter::new(&document, options).compile()
}
