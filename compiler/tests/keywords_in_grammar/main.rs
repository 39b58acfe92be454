//! Keywords the grammar enforces that used to be left to validation (issue 29): for each
//! shape, the compiled grammar reports nothing as validation-only, passes `check`, and
//! agrees with the `jsonschema` crate on values at every boundary: the canonical text of
//! a value is accepted exactly when the crate finds the value valid. Texts sampled from
//! the grammar are valid.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_compiler::gbnf::{check, is_clean};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::canon::canonical_text;
use gbnfc_compiler::schema::document::Document;
use gbnfc_compiler::schema::{compile, KeywordStatus, Options};
use serde_json::{json, Value};

mod dependencies;
mod multiple_of;
mod pattern_lengths;
mod property_counts;
mod unique_items;

/// A schema compiled with every keyword in the grammar, beside the crate's validator.
struct Enforced {
    schema: Value,
    grammar: String,
    recognizer: Recognizer,
    sampler: Sampler,
    validator: jsonschema::Validator,
}

impl Enforced {
    /// Compiles `schema`; panics when a keyword is left to validation or the grammar
    /// fails `check`.
    fn new(schema: Value) -> Enforced {
        let compiled = compile(&schema, &Options::default()).unwrap();
        let left: Vec<_> = compiled
            .diagnostics
            .iter()
            .filter(|d| d.status == KeywordStatus::ValidationOnly)
            .collect();
        assert!(left.is_empty(), "left to validation in {schema}: {left:?}");
        let diagnostics = check(&compiled.grammar);
        assert!(
            is_clean(&diagnostics),
            "check: {diagnostics:?}\n{}",
            compiled.grammar
        );
        Enforced {
            validator: jsonschema::validator_for(&schema).unwrap(),
            recognizer: Recognizer::new(&compiled.grammar).unwrap(),
            sampler: Sampler::new(&compiled.grammar).unwrap(),
            grammar: compiled.grammar.to_string(),
            schema,
        }
    }

    /// The grammar accepts `value`'s canonical text exactly when the crate finds it valid.
    fn agrees_on(&self, value: &Value) {
        let doc = Document::from_input(&self.schema, None).unwrap();
        let text = canonical_text(value, &doc);
        let valid = self.validator.is_valid(value);
        assert_eq!(
            self.recognizer.recognize(&text).accepted,
            valid,
            "{text} is {} by the crate under {}\n{}",
            if valid { "valid" } else { "invalid" },
            self.schema,
            self.grammar
        );
    }

    /// Each of `values` (JSON texts) as [`Enforced::agrees_on`].
    fn agrees_on_all(&self, values: &[&str]) {
        for text in values {
            self.agrees_on(&serde_json::from_str(text).unwrap());
        }
    }

    /// `n` texts sampled from the grammar parse and are valid.
    fn samples_validate(&self, n: usize) {
        let options = SampleOptions {
            max_len: 120,
            ..SampleOptions::default()
        };
        for text in self.sampler.samples(29, n, options) {
            let value: Value = serde_json::from_str(&text).unwrap();
            assert!(
                self.validator.is_valid(&value),
                "sample {text} is invalid under {}",
                self.schema
            );
        }
    }
}

/// An object schema of four integer properties `a` to `d`, with `keywords` beside.
fn four_properties(keywords: &Value) -> Value {
    let mut schema = json!({
        "type": "object",
        "properties": {
            "a": {"type": "integer"}, "b": {"type": "integer"},
            "c": {"type": "integer"}, "d": {"type": "integer"}
        }
    });
    for (key, value) in keywords.as_object().unwrap() {
        schema[key] = value.clone();
    }
    schema
}

/// Objects of `a` to `d` (integers) with each subset of the four present, each also with
/// the first one, two, … of `extras` (members) after them.
fn subsets_of_four(extras: &[&str]) -> Vec<String> {
    let mut out = Vec::new();
    for mask in 0..16u32 {
        let mut members: Vec<String> = ["a", "b", "c", "d"]
            .iter()
            .enumerate()
            .filter(|(i, _)| mask & (1 << i) != 0)
            .map(|(i, name)| format!("\"{name}\":{i}"))
            .collect();
        out.push(format!("{{{}}}", members.join(",")));
        for extra in extras {
            members.push((*extra).to_string());
            out.push(format!("{{{}}}", members.join(",")));
        }
    }
    out
}

/// `schema` enforced, agreeing with the crate on every object of [`subsets_of_four`] with
/// `extras`, and its samples valid.
fn agrees_on_every_subset(schema: Value, extras: &[&str]) {
    let schema = Enforced::new(schema);
    let texts = subsets_of_four(extras);
    schema.agrees_on_all(&texts.iter().map(String::as_str).collect::<Vec<_>>());
    schema.samples_validate(30);
}
