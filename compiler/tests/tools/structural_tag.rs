//! Structural tags (`tools::structural_tag`): for every seed tool list, the call
//! syntaxes a structural tag can express and the choices `required`, `auto` and each tool
//! by name, with one call or several: each tag's `begin`, a text of its arguments'
//! grammar and its `end` make a call that gbnfc's own call grammar accepts and that reads
//! back as that tool with those arguments; calls joined by the tag's separator are
//! accepted too when parallel calls are allowed. What a structural tag cannot express is
//! refused with the way out.

use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::tools::structural_tag::structural_tag;
use gbnfc_compiler::tools::{
    compile_tools, parse_tool_calls, CompiledTools, Syntax, ToolChoice, ToolOptions,
};
use serde_json::{json, Value};

use crate::common::{read, seed_examples};

/// `tag`'s call with `arguments`: begin, arguments, end.
fn call_text(tag: &Value, arguments: &str) -> String {
    format!(
        "{}{arguments}{}",
        tag["begin"].as_str().unwrap(),
        tag["end"].as_str().unwrap()
    )
}

/// Checks every tag of `compiled`'s structural tag against its grammar and its reader.
fn check_tags(compiled: &CompiledTools, label: &str, seed: u64) {
    let tag = structural_tag(compiled).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(tag["type"], json!("structural_tag"), "{label}");
    let format = &tag["format"];
    let expected = match compiled.choice {
        ToolChoice::Auto => "triggered_tags",
        _ => "tags_with_separator",
    };
    assert_eq!(format["type"], json!(expected), "{label}");
    assert_eq!(
        format["stop_after_first"],
        json!(!compiled.parallel),
        "{label}"
    );
    let tags = format["tags"].as_array().unwrap();
    let offered: Vec<_> = match &compiled.choice {
        ToolChoice::Named(name) => compiled
            .tools
            .iter()
            .filter(|t| &t.spec.name == name)
            .collect(),
        _ => compiled.tools.iter().collect(),
    };
    assert_eq!(tags.len(), offered.len(), "{label}");
    let recognizer = Recognizer::new(compiled.grammar.as_ref().unwrap()).unwrap();
    let mut calls = Vec::new();
    for (tag, tool) in tags.iter().zip(&offered) {
        let grammar = tag["content"]["grammar"].as_str().unwrap();
        assert!(grammar.contains("root ::="), "{label}: {grammar}");
        let sampler = Sampler::new(&tool.arguments).unwrap();
        for arguments in sampler.samples(seed, 5, SampleOptions::default()) {
            let text = call_text(tag, &arguments);
            let recognition = recognizer.recognize(&text);
            assert!(
                recognition.accepted,
                "{label}: the grammar refuses {text:?} at byte {}",
                recognition.viable_prefix
            );
            let read = parse_tool_calls(compiled.syntax, &text)
                .unwrap_or_else(|e| panic!("{label}: {e}: {text}"));
            assert_eq!(read.len(), 1, "{label}: {text}");
            assert_eq!(read[0].name, tool.spec.name, "{label}: {text}");
            let expected: Value = serde_json::from_str(&arguments).unwrap();
            assert_eq!(read[0].arguments, expected, "{label}: {text}");
            calls.push(text);
        }
    }
    if compiled.parallel && calls.len() >= 2 && compiled.max_calls >= 2 {
        let separator = format["separator"]
            .as_str()
            .unwrap_or(compiled.syntax.separator());
        let two = format!("{}{separator}{}", calls[0], calls[calls.len() - 1]);
        assert!(recognizer.recognize(&two).accepted, "{label}: {two:?}");
    }
}

#[test]
fn every_tag_spells_calls_the_call_grammar_accepts() {
    let mut seed = 0;
    for (label, input, is_schema) in seed_examples() {
        if is_schema {
            continue;
        }
        let names: Vec<String> = compile_tools(&input, &ToolOptions::default())
            .unwrap()
            .tools
            .iter()
            .map(|t| t.spec.name.clone())
            .collect();
        let mut choices = vec![ToolChoice::Required, ToolChoice::Auto];
        choices.extend(names.into_iter().map(ToolChoice::Named));
        for syntax in [Syntax::Json, Syntax::Hermes, Syntax::Llama3] {
            for choice in &choices {
                for parallel in [false, true] {
                    seed += 1;
                    let options = ToolOptions {
                        syntax,
                        choice: Some(choice.clone()),
                        parallel: Some(parallel),
                        ..ToolOptions::default()
                    };
                    let compiled = compile_tools(&input, &options).unwrap();
                    let label = format!("{label} {syntax} {choice} parallel={parallel}");
                    check_tags(&compiled, &label, seed);
                }
            }
        }
    }
}

#[test]
fn what_a_structural_tag_cannot_say_is_refused() {
    let input = read(&crate::common::examples().join("weather-tools.openai.json"));
    let refused = |options: ToolOptions| {
        let compiled = compile_tools(&input, &options).unwrap();
        structural_tag(&compiled).unwrap_err().to_string()
    };
    let mistral = refused(ToolOptions {
        syntax: Syntax::Mistral,
        choice: Some(ToolChoice::Required),
        ..ToolOptions::default()
    });
    assert!(
        mistral.contains("mistral") && mistral.contains("--emit"),
        "{mistral}"
    );
    let none = refused(ToolOptions {
        choice: Some(ToolChoice::None),
        ..ToolOptions::default()
    });
    assert!(none.contains("tool choice none"), "{none}");
}
