//! String-format grammars (`schema::formats`) against the `jsonschema` crate: every text a
//! grammar accepts must be valid for the format there (soundness), and common real-world
//! values must be accepted (completeness).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::HashSet;

use gbnfc_compiler::gbnf::{check, parse};
use gbnfc_compiler::json_text::encode_str;
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::formats::{entry_rule, format_grammar, format_rules, FORMATS};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::json;

mod near_valid;
mod tables;

/// A format's grammar, recognizer and the crate's validator side by side.
struct Format {
    name: &'static str,
    recognizer: Recognizer,
    validator: jsonschema::Validator,
}

impl Format {
    fn new(name: &'static str) -> Self {
        let grammar = format_grammar(name).unwrap();
        Format {
            name,
            recognizer: Recognizer::new(&grammar).unwrap(),
            validator: jsonschema::options()
                .should_validate_formats(true)
                .build(&json!({"type": "string", "format": name}))
                .unwrap(),
        }
    }

    /// Does the grammar accept the canonical JSON text of `s`?
    fn grammar_accepts(&self, s: &str) -> bool {
        self.recognizer
            .recognize(&format!("\"{}\"", encode_str(s)))
            .accepted
    }

    /// Does the crate accept `s`?
    fn crate_accepts(&self, s: &str) -> bool {
        self.validator.is_valid(&json!(s))
    }

    /// The grammar's answer, after checking it is sound for `s`.
    fn sound(&self, s: &str) -> bool {
        let accepted = self.grammar_accepts(s);
        assert!(
            !accepted || self.crate_accepts(s),
            "{}: grammar accepts {s:?}, jsonschema does not",
            self.name
        );
        accepted
    }

    /// `valid`: accepted by both; `invalid`: refused by both; `restricted`: valid for
    /// the crate but refused by the grammar (a documented restriction).
    fn table(&self, valid: &[&str], invalid: &[&str], restricted: &[&str]) {
        for s in valid {
            assert!(
                self.crate_accepts(s),
                "{}: jsonschema refuses {s:?}",
                self.name
            );
            assert!(self.sound(s), "{}: grammar refuses {s:?}", self.name);
        }
        for s in invalid {
            assert!(!self.sound(s), "{}: grammar accepts {s:?}", self.name);
            assert!(
                !self.crate_accepts(s),
                "{}: jsonschema accepts {s:?}",
                self.name
            );
        }
        for s in restricted {
            assert!(
                self.crate_accepts(s),
                "{}: jsonschema refuses {s:?}",
                self.name
            );
            assert!(!self.sound(s), "{}: grammar accepts {s:?}", self.name);
        }
    }
}

// -----------------------------------------------------------------------------------------
// Structure

#[test]
fn every_format_grammar_is_clean_and_round_trips() {
    for format in FORMATS {
        let grammar = format_grammar(format).unwrap();
        let diagnostics = check(&grammar);
        assert!(
            diagnostics.is_empty(),
            "{format}: {:?}",
            diagnostics
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
        );
        let printed = grammar.to_string();
        assert_eq!(parse(&printed).unwrap(), grammar, "{format}:\n{printed}");
    }
}

#[test]
fn rule_names_are_prefixed_and_never_shared_between_formats() {
    let mut all = HashSet::new();
    for format in FORMATS {
        let rules = format_rules(format).unwrap();
        let entry = entry_rule(format);
        assert_eq!(rules[0].0, entry);
        for (name, _) in &rules {
            assert!(
                name == &entry || name.starts_with(&format!("{entry}-")),
                "{format}: {name}"
            );
            assert!(
                name.chars().all(|c| c.is_ascii_alphanumeric() || c == '-'),
                "{name}"
            );
            assert!(all.insert(name.clone()), "{name} defined twice");
        }
    }
    assert!(format_rules("color").is_none());
    assert!(format_rules("").is_none());
    assert!(format_grammar("regex").is_none());
}

#[test]
fn formats_side_by_side_form_one_clean_grammar() {
    let mut grammar = gbnfc_compiler::gbnf::Grammar::default();
    let arms: Vec<_> = FORMATS
        .iter()
        .map(|f| gbnfc_compiler::gbnf::Expr::rule(entry_rule(f)))
        .collect();
    grammar.push("root", gbnfc_compiler::gbnf::Expr::alt(arms));
    for format in FORMATS {
        for (name, body) in format_rules(format).unwrap() {
            grammar.push(name, body);
        }
    }
    assert!(check(&grammar).is_empty());
    let r = Recognizer::new(&grammar).unwrap();
    for text in ["2024-02-29", "::1", "P1D", "a@b.c", "x:y"] {
        assert!(r.recognize(text).accepted, "{text}");
    }
}

// -----------------------------------------------------------------------------------------
// Soundness by sampling

fn samples_are_valid(format: &'static str, seed: u64) {
    let f = Format::new(format);
    let sampler = Sampler::new(&format_grammar(format).unwrap()).unwrap();
    let mut distinct = HashSet::new();
    for text in sampler.samples(seed, 2_000, SampleOptions::default()) {
        let value: String = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("{format}: sample {text} is not a JSON string: {e}"));
        assert!(
            f.crate_accepts(&value),
            "{format}: sample {value:?} is invalid for jsonschema"
        );
        assert!(f.recognizer.recognize(&text).accepted, "{format}: {text}");
        distinct.insert(value);
    }
    assert!(
        distinct.len() > 500,
        "{format}: only {} distinct samples",
        distinct.len()
    );
}

#[test]
fn samples_date() {
    samples_are_valid("date", 1);
}

#[test]
fn samples_time() {
    samples_are_valid("time", 2);
}

#[test]
fn samples_date_time() {
    samples_are_valid("date-time", 3);
}

#[test]
fn samples_duration() {
    samples_are_valid("duration", 4);
}

#[test]
fn samples_email() {
    samples_are_valid("email", 5);
}

#[test]
fn samples_hostname() {
    samples_are_valid("hostname", 6);
}

#[test]
fn samples_ipv4() {
    samples_are_valid("ipv4", 7);
}

#[test]
fn samples_ipv6() {
    samples_are_valid("ipv6", 8);
}

#[test]
fn samples_uuid() {
    samples_are_valid("uuid", 9);
}

#[test]
fn samples_uri() {
    samples_are_valid("uri", 10);
}

#[test]
fn samples_uri_reference() {
    samples_are_valid("uri-reference", 11);
}
