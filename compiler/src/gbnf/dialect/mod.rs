//! One grammar in the spelling of each engine that takes a grammar per request.
//!
//! - [`Target::Llama`]: llama.cpp's GBNF (llama-server's `grammar` field; the `Display`
//!   of [`Grammar`]).
//! - [`Target::Xgrammar`]: the EBNF of XGrammar, the default structured-output backend of
//!   vLLM and SGLang. It grew out of GBNF; what differs is written by the printer (see
//!   `print.rs`) and rule names, which may not start with a digit nor be `true`/`false`.
//! - [`Target::Lark`]: the Lark dialect of llguidance, their other backend (see `lark.rs`):
//!   `name: body` rules, lowercase names, `start` for `root`.
//!
//! Every target reads the same language: the tree is only respelled, never rewritten, so
//! what the recognizer proves of the GBNF holds of the other spellings. A construct a target
//! cannot spell (a token reference in XGrammar, a negated token by text in Lark) is an
//! error naming the rule, never a silent change.

mod lark;
mod names;

use std::fmt;

use super::ast::{CompactString, Expr, Grammar, TokenRef};
use super::print::{grammar_text, Spelling};

/// An engine's grammar dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Target {
    /// llama.cpp's GBNF.
    Llama,
    /// XGrammar's EBNF (vLLM, SGLang).
    Xgrammar,
    /// llguidance's Lark dialect (vLLM, SGLang).
    Lark,
}

impl Target {
    /// Every target, in the order `--target` lists them.
    pub const ALL: [Target; 3] = [Target::Llama, Target::Xgrammar, Target::Lark];

    /// The target's name on the command line: `llama`, `xgrammar` or `lark`.
    pub fn name(self) -> &'static str {
        match self {
            Target::Llama => "llama",
            Target::Xgrammar => "xgrammar",
            Target::Lark => "lark",
        }
    }

    /// The target named `name`.
    pub fn parse(name: &str) -> Result<Target, String> {
        Target::ALL
            .into_iter()
            .find(|target| target.name() == name)
            .ok_or_else(|| format!("unknown target `{name}`: use llama, xgrammar or lark"))
    }

    /// `grammar` in this target's spelling.
    pub fn render(self, grammar: &Grammar) -> Result<String, TargetError> {
        if let Some(error) = self.unspellable(grammar) {
            return Err(error);
        }
        Ok(match self {
            Target::Llama => grammar.to_string(),
            Target::Xgrammar => grammar_text(
                &names::respelled(grammar, xgrammar_name, &[]),
                Spelling::Xgrammar,
            ),
            Target::Lark => {
                lark::grammar_text(&names::respelled(grammar, lark_name, &[("root", "start")]))
            }
        })
    }

    /// The first construct of `grammar` this target has no spelling for.
    fn unspellable(self, grammar: &Grammar) -> Option<TargetError> {
        let refused = |expr: &Expr| match (self, expr) {
            (Target::Xgrammar, Expr::Token { .. }) => {
                Some("XGrammar has no token references (`<…>`); write the token's text instead")
            }
            (
                Target::Lark,
                Expr::Token {
                    negated: true,
                    token: TokenRef::Text(_),
                },
            ) => Some("Lark has no negated token by text; negate the token's id (`!<[id]>`)"),
            _ => None,
        };
        grammar.rules.iter().find_map(|rule| {
            let mut found = None;
            rule.body.walk(|expr| {
                if found.is_none() {
                    found = refused(expr);
                }
            });
            found.map(|message| TargetError {
                target: self,
                rule: rule.name.clone(),
                message,
            })
        })
    }
}

impl fmt::Display for Target {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// A grammar holds something a target cannot spell.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TargetError {
    /// The target asked for.
    pub target: Target,
    /// The rule that holds it.
    pub rule: CompactString,
    /// What it is and what to do.
    pub message: &'static str,
}

impl fmt::Display for TargetError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "rule `{}` cannot be written for {}: {}",
            self.rule, self.target, self.message
        )
    }
}

impl std::error::Error for TargetError {}

/// A rule name XGrammar reads: `[a-zA-Z_.-][a-zA-Z0-9_.-]*` and not a boolean (`true`,
/// `false` are option values there). GBNF names only need a prefix when they start with
/// a digit.
fn xgrammar_name(name: &str) -> CompactString {
    let body: String = name
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    let starts_well = body.chars().next().is_some_and(|c| !c.is_ascii_digit());
    if starts_well && body != "true" && body != "false" {
        body.into()
    } else {
        format!("r{body}").into()
    }
}

/// A rule name Lark reads as a rule (not a terminal, not inlined): `[a-z][a-z0-9_-]*`.
fn lark_name(name: &str) -> CompactString {
    let body: String = name
        .chars()
        .map(|c| {
            let c = c.to_ascii_lowercase();
            if c.is_ascii_lowercase() || c.is_ascii_digit() || matches!(c, '_' | '-') {
                c
            } else {
                '-'
            }
        })
        .collect();
    if body.starts_with(|c: char| c.is_ascii_lowercase()) {
        body.into()
    } else {
        format!("r{body}").into()
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::gbnf::parse;

    fn render(target: Target, text: &str) -> String {
        target.render(&parse(text).unwrap()).unwrap()
    }

    #[test]
    fn llama_is_the_display() {
        let text = "root ::= [^\"\\\\] . \"\\x01a\"\n";
        assert_eq!(render(Target::Llama, text), text);
    }

    #[test]
    fn xgrammar_spells_any_controls_and_names_its_own_way() {
        let text = "root ::= 9lives . \"\\x01a\" [\\x5E\\x01-z] true\n9lives ::= \"\" | \"x\"{0,3}\ntrue ::= \"t\"\n";
        assert_eq!(
            render(Target::Xgrammar, text),
            "root ::= r9lives [^] \"\\u0001a\" [\\^\\u0001-z] rtrue\n\
             r9lives ::= \"\" | \"x\"{0,3}\nrtrue ::= \"t\"\n"
        );
        // Two operators on one atom are parenthesized there (the parser never builds
        // this, a hand-built tree may).
        let nested = Expr::repeat(Expr::literal("a"), 1, None);
        let nested = Expr::Repeat {
            expr: Box::new(nested),
            min: 0,
            max: None,
            pos: Default::default(),
        };
        let grammar = Grammar {
            rules: vec![crate::gbnf::Rule {
                name: "root".into(),
                body: nested,
                pos: Default::default(),
            }],
        };
        assert_eq!(
            Target::Xgrammar.render(&grammar).unwrap(),
            "root ::= (\"a\"+)*\n"
        );
    }

    #[test]
    fn lark_spells_rules_literals_classes_and_repeats() {
        let text = "root ::= Value (\",\" Value)* x{0} | \"\"\nValue ::= [a-z/\\-^] [^\"\\\\\\n] . \"q\\\"\\x7F\"{2,} <[7]> !<[8]> <|end|>?\n";
        assert_eq!(
            render(Target::Lark, text),
            "start: value (\",\" value)* () | ()\n\
             value: /[a-z\\x{2F}\\-\\^]/ /[^\"\\\\\\n]/ /(?s:.)/ (\"q\" \"\\\"\" \"\\u007F\"){2,} <[7]> <[^8]> <|end|>?\n"
        );
    }

    #[test]
    fn unspellable_tokens_name_their_rule() {
        let grammar = parse("root ::= a\na ::= <[5]>\n").unwrap();
        let error = Target::Xgrammar.render(&grammar).unwrap_err();
        assert_eq!(error.rule, "a");
        assert!(error.to_string().contains("xgrammar"), "{error}");
        let grammar = parse("root ::= !<think>\n").unwrap();
        assert_eq!(Target::Lark.render(&grammar).unwrap_err().rule, "root");
        assert!(Target::Lark
            .render(&parse("root ::= !<[5]>\n").unwrap())
            .is_ok());
    }

    #[test]
    fn names_parse_back() {
        for target in Target::ALL {
            assert_eq!(Target::parse(target.name()), Ok(target));
        }
        assert!(Target::parse("gbnf")
            .unwrap_err()
            .contains("llama, xgrammar or lark"));
    }
}
