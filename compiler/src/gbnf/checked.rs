//! [`CheckedGrammar`]: a grammar that passed [`check()`](super::check()), the only kind
//! llama.cpp may be given.
//!
//! llama.cpp's parser takes grammars its sampler then aborts or recurses forever on (left
//! recursion through a rule that only derives empty, a repetition of something that can be
//! empty, a tree deeper than its stack); `check` finds every one of them. Only
//! [`CheckedGrammar::new`] makes a `CheckedGrammar`, and it runs the check: whatever
//! requires one (the bridge's generation, its server's cache) needs no gate of its own.
//! Parse stacks that explode at run time depend on the model's tokens and are followed
//! where llama.cpp's sampler runs (`gbnf::llama_stacks`).

use std::fmt;
use std::ops::Deref;

use super::ast::Grammar;
use super::check::{check, is_clean};
use crate::diagnostic::Diagnostic;

/// A grammar with no error from [`check()`](super::check()). It reads as a [`Grammar`]
/// (`Deref`) and cannot be changed.
#[derive(Debug, Clone, PartialEq)]
pub struct CheckedGrammar {
    grammar: Grammar,
}

/// A grammar [`CheckedGrammar::new`] refused, given back with every finding.
#[derive(Debug, Clone, PartialEq)]
pub struct Rejected {
    /// The grammar, unchanged.
    pub grammar: Grammar,
    /// Every finding of the check, errors and warnings, in source order.
    pub diagnostics: Vec<Diagnostic>,
}

impl CheckedGrammar {
    /// Checks `grammar`.
    ///
    /// # Errors
    /// [`Rejected`] when the check finds an error.
    ///
    /// ```
    /// use gbnfc_compiler::gbnf::{parse, CheckedGrammar};
    /// let ok = CheckedGrammar::new(parse("root ::= [a-z]+\n").unwrap()).unwrap();
    /// assert_eq!(ok.to_string(), "root ::= [a-z]+\n");
    /// let bad = CheckedGrammar::new(parse("root ::= root \"x\" | \"y\"\n").unwrap());
    /// assert_eq!(bad.unwrap_err().errors().next().unwrap().code, "left-recursion");
    /// ```
    pub fn new(grammar: Grammar) -> Result<CheckedGrammar, Rejected> {
        CheckedGrammar::with_warnings(grammar).map(|(checked, _)| checked)
    }

    /// Checks `grammar`, keeping the check's warnings.
    ///
    /// # Errors
    /// As [`CheckedGrammar::new`].
    pub fn with_warnings(grammar: Grammar) -> Result<(CheckedGrammar, Vec<Diagnostic>), Rejected> {
        let diagnostics = check(&grammar);
        if !is_clean(&diagnostics) {
            Err(Rejected {
                grammar,
                diagnostics,
            })
        } else {
            Ok((CheckedGrammar { grammar }, diagnostics))
        }
    }
}

impl Deref for CheckedGrammar {
    type Target = Grammar;

    fn deref(&self) -> &Grammar {
        &self.grammar
    }
}

impl fmt::Display for CheckedGrammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.grammar.fmt(f)
    }
}

impl Rejected {
    /// The errors among the findings.
    pub fn errors(&self) -> impl Iterator<Item = &Diagnostic> {
        self.diagnostics.iter().filter(|d| d.is_error())
    }

    /// Has the check found an error of kind `code`?
    pub fn has(&self, code: &str) -> bool {
        self.errors().any(|d| d.code == code)
    }
}

/// One line per error: `error[code]: message`.
impl fmt::Display for Rejected {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, error) in self.errors().enumerate() {
            if i > 0 {
                f.write_str("\n")?;
            }
            write!(f, "error[{}]: {}", error.code, error.message)?;
        }
        Ok(())
    }
}

impl std::error::Error for Rejected {}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::gbnf::{parse, Expr};

    #[test]
    fn a_clean_grammar_keeps_its_warnings() {
        let g = parse("root ::= \"a\"\nunused ::= \"b\"\n").unwrap();
        let (checked, warnings) = CheckedGrammar::with_warnings(g.clone()).unwrap();
        assert_eq!(*checked, g);
        assert!(!warnings.is_empty() && warnings.iter().all(|d| !d.is_error()));
    }

    #[test]
    fn a_refused_grammar_comes_back_whole_with_its_errors() {
        let g = parse("root ::= x\n").unwrap();
        let rejected = CheckedGrammar::new(g.clone()).unwrap_err();
        assert_eq!(rejected.grammar, g);
        assert!(rejected.has("undefined-rule"), "{rejected}");
        assert!(rejected.to_string().starts_with("error[undefined-rule]: "));
    }

    #[test]
    fn a_tree_deeper_than_the_parser_builds_is_refused() {
        let mut body = Expr::literal("x");
        for _ in 0..=crate::gbnf::flat::MAX_EXPR_DEPTH {
            body = Expr::Group(Box::new(body));
        }
        let mut g = Grammar::default();
        g.push("root", body);
        assert!(CheckedGrammar::new(g).unwrap_err().has("too-deep"));
    }
}
