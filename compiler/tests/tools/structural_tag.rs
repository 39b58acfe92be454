//! Structural tags (`tools::structural_tag`): for every seed tool list, every call
//! syntax and the choices `required`, `auto` and each tool
//! by name, with one call or several: each tag's `begin`, a text of its arguments'
//! grammar and its `end` make a call that gbnfc's own call grammar accepts and that reads
//! back as that tool with those arguments (and, for Mistral, inside the list tag, with the
//! id); calls joined by the tag's separator are accepted too when parallel calls are
//! allowed. What a structural tag cannot express is refused with the way out.

use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::tools::structural_tag::structural_tag;
use gbnfc_compiler::tools::{
    compile_tools, parse_tool_calls, CompiledTools, Syntax, ToolChoice, ToolOptions,
};
use serde_json::{json, Value};

use crate::common::{read, seed_examples};

/// An id as Mistral calls carry one: nine letters or digits.
const ID: &str = "a1B2c3D4e";

/// `tag`'s call with `arguments`: begin, arguments, the id where the content asks for one
/// after them (a `sequence`: arguments, `, "id": "`, the id's pattern), end.
fn call_text(tag: &Value, arguments: &str) -> String {
    let content = &tag["content"];
    let id = match content["type"].as_str() {
        Some("grammar") => String::new(),
        Some("sequence") => {
            let elements = content["elements"].as_array().unwrap();
            assert_eq!(elements[0]["type"], json!("grammar"), "{tag}");
            assert_eq!(elements[2]["pattern"], json!("[0-9A-Za-z]{9}"), "{tag}");
            format!("{}{ID}", elements[1]["value"].as_str().unwrap())
        }
        other => panic!("content of type {other:?}: {tag}"),
    };
    format!(
        "{}{arguments}{id}{}",
        tag["begin"].as_str().unwrap(),
        tag["end"].as_str().unwrap()
    )
}

/// The tags' arguments grammar, in the content as it is or first in its sequence.
fn arguments_grammar(tag: &Value) -> &str {
    let content = &tag["content"];
    let grammar = match content["type"].as_str() {
        Some("sequence") => &content["elements"][0],
        _ => content,
    };
    grammar["grammar"].as_str().unwrap()
}

/// The calls' `tags_with_separator` (or, under `auto`, `triggered_tags`) in `format`, and
/// the text of the list around them (`[TOOL_CALLS][` and `]` for Mistral, else nothing).
fn calls_of(format: &Value) -> (&Value, &str, &str) {
    let list = match format["type"].as_str() {
        Some("tag") => Some(format),
        Some("triggered_tags")
            if format["tags"][0]["content"]["type"] == json!("tags_with_separator") =>
        {
            Some(&format["tags"][0])
        }
        _ => None,
    };
    match list {
        Some(list) => (
            &list["content"],
            list["begin"].as_str().unwrap(),
            list["end"].as_str().unwrap(),
        ),
        None => (format, "", ""),
    }
}

/// Checks every tag of `compiled`'s structural tag against its grammar and its reader.
fn check_tags(compiled: &CompiledTools, label: &str, seed: u64) {
    let tag = structural_tag(compiled).unwrap_or_else(|e| panic!("{label}: {e}"));
    assert_eq!(tag["type"], json!("structural_tag"), "{label}");
    let format = &tag["format"];
    let listed = !compiled.syntax.open().is_empty();
    let expected = match (&compiled.choice, listed) {
        (ToolChoice::Auto, _) => "triggered_tags",
        (_, true) => "tag",
        (_, false) => "tags_with_separator",
    };
    assert_eq!(format["type"], json!(expected), "{label}");
    let (calls, open, close) = calls_of(format);
    assert_eq!(
        (open, close),
        (compiled.syntax.open(), compiled.syntax.close()),
        "{label}"
    );
    assert_eq!(
        calls["stop_after_first"],
        json!(!compiled.parallel),
        "{label}"
    );
    let tags = calls["tags"].as_array().unwrap();
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
    let mut calls_written = Vec::new();
    for (tag, tool) in tags.iter().zip(&offered) {
        let grammar = arguments_grammar(tag);
        assert!(grammar.contains("root ::="), "{label}: {grammar}");
        let sampler = Sampler::new(&tool.arguments).unwrap();
        for arguments in sampler.samples(seed, 5, SampleOptions::default()) {
            let call = call_text(tag, &arguments);
            let text = format!("{open}{call}{close}");
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
            if compiled.syntax.has_id() {
                assert_eq!(read[0].id.as_deref(), Some(ID), "{label}: {text}");
            }
            calls_written.push(call);
        }
    }
    if compiled.parallel && calls_written.len() >= 2 && compiled.max_calls >= 2 {
        let separator = calls["separator"]
            .as_str()
            .unwrap_or(compiled.syntax.separator());
        let two = format!(
            "{open}{}{separator}{}{close}",
            calls_written[0],
            calls_written[calls_written.len() - 1]
        );
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
        for syntax in Syntax::ALL {
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
    let none = refused(ToolOptions {
        choice: Some(ToolChoice::None),
        ..ToolOptions::default()
    });
    assert!(none.contains("tool choice none"), "{none}");
}
