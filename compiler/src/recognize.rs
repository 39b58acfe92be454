//! Does a grammar accept a text? The shared Earley chart ([`crate::earley`]) run over
//! the text's Unicode scalar values.
//!
//! Unbounded repetitions are lowered left-recursively (see [`crate::gbnf::flat`]), which
//! keeps `x*` over long texts linear. Token references (`<[123]>`) match no characters:
//! they are opaque at this level.

use thiserror::Error;

use crate::earley::{Chart, EarleyGrammar};
use crate::gbnf::{Flat, Grammar, LowerError};

/// Why a grammar cannot be recognized against.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
pub enum RecognizeError {
    /// The grammar has no `root` rule.
    #[error("the grammar has no `root` rule")]
    NoRoot,
    /// The grammar could not be lowered.
    #[error(transparent)]
    Lower(#[from] LowerError),
}

/// The outcome of recognizing one text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Recognition {
    /// The whole text is in the grammar's language.
    pub accepted: bool,
    /// Byte length of the longest prefix that some accepted text starts with: where the
    /// text first goes wrong. Equals the text's length when it is accepted or merely
    /// incomplete.
    pub viable_prefix: usize,
    /// Byte length of the longest prefix that is itself accepted, if any.
    pub longest_match: Option<usize>,
}

/// A grammar prepared for recognition; reuse it for many texts.
#[derive(Debug, Clone)]
pub struct Recognizer {
    grammar: EarleyGrammar,
}

impl Recognizer {
    /// Prepares `grammar` (which should pass [`crate::gbnf::check()`]).
    ///
    /// # Errors
    /// No `root` rule, or a grammar too large to lower.
    pub fn new(grammar: &Grammar) -> Result<Self, RecognizeError> {
        let grammar = EarleyGrammar::new(Flat::lower(grammar)?).ok_or(RecognizeError::NoRoot)?;
        Ok(Recognizer { grammar })
    }

    /// Recognizes `text`.
    ///
    /// ```
    /// use gbnfc_compiler::{gbnf::parse, recognize::Recognizer};
    /// let g = parse("root ::= \"[\" [0-9]+ \"]\"\n").unwrap();
    /// let r = Recognizer::new(&g).unwrap();
    /// assert!(r.recognize("[42]").accepted);
    /// let miss = r.recognize("[4x]");
    /// assert!(!miss.accepted);
    /// assert_eq!(miss.viable_prefix, 2); // "[4" could still become a match
    /// ```
    pub fn recognize(&self, text: &str) -> Recognition {
        let mut chart = Chart::new(&self.grammar);
        let mut longest_match = chart.is_complete(&self.grammar).then_some(0);
        for (at, c) in text.char_indices() {
            if !chart.push(&self.grammar, c) {
                return Recognition {
                    accepted: false,
                    viable_prefix: at,
                    longest_match,
                };
            }
            if chart.is_complete(&self.grammar) {
                longest_match = Some(at + c.len_utf8());
            }
        }
        Recognition {
            accepted: longest_match == Some(text.len()),
            viable_prefix: text.len(),
            longest_match,
        }
    }
}

/// Does `grammar` accept `text`? (Prepares a [`Recognizer`] each call; keep one to check
/// many texts.) A grammar without `root` accepts nothing.
pub fn accepts(grammar: &Grammar, text: &str) -> bool {
    Recognizer::new(grammar).is_ok_and(|r| r.recognize(text).accepted)
}
