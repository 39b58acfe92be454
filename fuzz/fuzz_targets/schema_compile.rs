//! Any bytes as a JSON Schema: `compile` never panics, whatever the input (with default
//! options and closed objects); when it compiles with every keyword enforced, samples of
//! the grammar are JSON values that the `jsonschema` crate finds valid.
//!
//! Samples are validated when the `jsonschema` oracle can judge their numbers exactly:
//! integers of at most 15 digits, or numbers of at most 15 significant digits (fractions
//! such as the multiples of `0.01` included) when the schema's numbers are short too
//! (`gbnfc_fuzz::numbers_are_short`). Others are read as f64, and a rounded number can
//! cross a bound the exact one respects.
#![no_main]

use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{compile, Options};
use gbnfc_fuzz::{numbers_are_exact, numbers_are_short};
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Ok(schema) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let closed = Options {
        closed: true,
        ..Options::default()
    };
    let _ = compile(&schema, &closed);
    let Ok(compiled) = compile(&schema, &Options::default()) else {
        return;
    };
    if compiled.needs_validation() {
        return;
    }
    // The draft the schema declares (2020-12 by default), as the bridge validates.
    let Ok(validator) = jsonschema::options()
        .should_validate_formats(true)
        .build(&schema)
    else {
        return;
    };
    let Ok(sampler) = Sampler::new(&compiled.grammar) else {
        panic!("a compiled grammar has no sampler:\n{}", compiled.grammar);
    };
    let options = SampleOptions {
        max_len: 256,
        ..SampleOptions::default()
    };
    let short_schema = numbers_are_short(&schema.to_string());
    for text in sampler.samples(data.len() as u64, 3, options) {
        if !(numbers_are_exact(&text) || (short_schema && numbers_are_short(&text))) {
            continue;
        }
        let value: Value = serde_json::from_str(&text)
            .unwrap_or_else(|e| panic!("sample is not JSON ({e}): {text}\nschema: {schema}"));
        if let Err(error) = validator.validate(&value) {
            panic!("sample {text} is invalid: {error}\nschema: {schema}");
        }
    }
});
