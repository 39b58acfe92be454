//! Tool retrieval in the compiler ([`ToolOptions::shown`]): the grammar allows exactly the
//! tools shown. Texts sampled from the whole list's grammar — calls to every tool — are
//! accepted by the shortlist's grammar exactly when every call names a shown tool; the
//! offered tools are the shown ones in list order; a bad name or a forced tool left out
//! is an error, and a hidden tool's bad schema still fails the list.

use super::{mcp_fixtures, samples, seed_tool_lists};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::tools::{
    compile_tools, parse_tool_calls, read_tools, Syntax, ToolChoice, ToolOptions, ToolsError,
};
use serde_json::{json, Value};

/// Every other tool of the list, starting with the second (the first when it has one).
fn every_other(input: &Value) -> Vec<String> {
    let list = read_tools(input, None).unwrap();
    let start = usize::from(list.tools.len() > 1);
    list.tools
        .iter()
        .skip(start)
        .step_by(2)
        .map(|t| t.name.clone())
        .collect()
}

#[test]
fn the_grammar_allows_exactly_the_tools_shown() {
    let mut lists = seed_tool_lists();
    lists.extend(mcp_fixtures());
    let (mut accepted, mut rejected) = (0, 0);
    for (label, input) in &lists {
        let shown = every_other(input);
        for syntax in Syntax::ALL {
            for parallel in [false, true] {
                let options = ToolOptions {
                    syntax,
                    choice: Some(ToolChoice::Required),
                    parallel: Some(parallel),
                    max_calls: 3,
                    ..ToolOptions::default()
                };
                let whole = compile_tools(input, &options).unwrap();
                let narrowed = compile_tools(
                    input,
                    &ToolOptions {
                        shown: Some(shown.clone()),
                        ..options.clone()
                    },
                )
                .unwrap();
                let offered: Vec<&str> = narrowed
                    .tools
                    .iter()
                    .map(|t| t.spec.name.as_str())
                    .collect();
                assert_eq!(offered, shown, "{label}: offered tools");
                let recognizer = Recognizer::new(narrowed.grammar.as_ref().unwrap()).unwrap();
                let texts = samples(whole.grammar.as_ref().unwrap(), 7, 120);
                for text in texts {
                    let calls = parse_tool_calls(syntax, &text).unwrap();
                    let all_shown = calls.iter().all(|c| shown.contains(&c.name));
                    assert_eq!(
                        recognizer.recognize(&text).accepted,
                        all_shown,
                        "{label} {syntax:?} parallel {parallel}: {text:?}"
                    );
                    if all_shown {
                        accepted += 1;
                    } else {
                        rejected += 1;
                    }
                }
            }
        }
    }
    eprintln!("shortlist grammars: {accepted} samples accepted, {rejected} rejected");
    assert!(accepted > 0 && rejected > 0);
}

fn two_tools() -> Value {
    json!([
        {"type": "function", "function": {"name": "get_weather",
            "parameters": {"type": "object", "properties": {"city": {"type": "string"}}}}},
        {"type": "function", "function": {"name": "get_time",
            "parameters": {"type": "object", "properties": {"zone": {"type": "string"}}}}}
    ])
}

#[test]
fn a_shown_name_not_in_the_list_is_an_error() {
    let options = ToolOptions {
        shown: Some(vec!["get_wether".into()]),
        ..ToolOptions::default()
    };
    let error = compile_tools(&two_tools(), &options).unwrap_err();
    assert!(matches!(error, ToolsError::BadOption(_)), "{error:?}");
    assert!(error.to_string().contains("`get_wether`"), "{error}");
}

#[test]
fn a_forced_tool_must_be_shown() {
    let options = ToolOptions {
        choice: Some(ToolChoice::Named("get_time".into())),
        shown: Some(vec!["get_weather".into()]),
        ..ToolOptions::default()
    };
    let error = compile_tools(&two_tools(), &options).unwrap_err();
    assert!(
        error.to_string().contains("not among the shown tools"),
        "{error}"
    );
}

#[test]
fn a_hidden_tools_bad_schema_still_fails_the_list() {
    let mut tools = two_tools();
    tools[1]["function"]["parameters"]["properties"]["zone"] = json!({"type": "strnig"});
    let options = ToolOptions {
        shown: Some(vec!["get_weather".into()]),
        ..ToolOptions::default()
    };
    let error = compile_tools(&tools, &options).unwrap_err();
    assert!(
        matches!(&error, ToolsError::Schema { tool, .. } if tool == "get_time"),
        "{error:?}"
    );
}
