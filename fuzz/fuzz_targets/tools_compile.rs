//! Any bytes as a tool list (first byte: syntax, choice and parallel calls; the rest:
//! JSON): `compile_tools` never panics; when it gives a grammar, 3 samples read back with
//! `parse_tool_calls` into calls of listed tools (the forced one when named), as many as
//! allowed, whose arguments the `jsonschema` crate finds valid where that tool's schema
//! is enforced in full. Samples with a fraction, an exponent or more than 15 digits are
//! not validated (serde_json rounds them to f64).
#![no_main]

use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::tools::{compile_tools, parse_reply, Syntax, ToolChoice, ToolOptions};
use gbnfc_fuzz::numbers_are_exact;
use libfuzzer_sys::fuzz_target;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let Some((&settings, json)) = data.split_first() else {
        return;
    };
    let Ok(input) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let syntax = [
        Syntax::Json,
        Syntax::Hermes,
        Syntax::Llama3,
        Syntax::Mistral,
    ][usize::from(settings & 3)];
    let choice = match (settings >> 2) & 3 {
        0 => None,
        1 => Some(ToolChoice::Required),
        2 => Some(ToolChoice::Auto),
        _ => Some(ToolChoice::None),
    };
    let options = ToolOptions {
        syntax,
        choice,
        parallel: Some(settings & 16 != 0),
        max_calls: 3,
        ..ToolOptions::default()
    };
    let Ok(compiled) = compile_tools(&input, &options) else {
        return;
    };
    let Some(grammar) = &compiled.grammar else {
        return;
    };
    let Ok(sampler) = Sampler::new(grammar) else {
        panic!("a compiled tool grammar has no sampler:\n{grammar}");
    };
    let sample_options = SampleOptions {
        max_len: 512,
        ..SampleOptions::default()
    };
    for text in sampler.samples(data.len() as u64, 3, sample_options) {
        if !numbers_are_exact(&text) {
            continue;
        }
        let calls = match parse_reply(compiled.syntax, &text) {
            Ok(reply) => reply.calls,
            Err(e) => panic!("sample is neither prose nor calls ({e}): {text}\n{grammar}"),
        };
        if calls.is_empty() {
            continue;
        }
        let most = if compiled.parallel {
            compiled.max_calls as usize
        } else {
            1
        };
        assert!(
            calls.len() <= most,
            "{} calls, at most {most}: {text}",
            calls.len()
        );
        for call in calls {
            let Some(tool) = compiled.tool(&call.name) else {
                panic!("call of unknown tool {}: {text}", call.name);
            };
            if let ToolChoice::Named(forced) = &compiled.choice {
                assert_eq!(&call.name, forced, "{text}");
            }
            if tool.needs_validation {
                continue;
            }
            // The draft the schema declares (2020-12 by default), as the bridge validates.
            let Ok(validator) = jsonschema::options()
                .should_validate_formats(true)
                .build(&tool.spec.parameters)
            else {
                continue;
            };
            if let Err(error) = validator.validate(&call.arguments) {
                panic!(
                    "arguments of {} invalid: {error}\n{text}\nschema: {}",
                    call.name, tool.spec.parameters
                );
            }
        }
    }
});
