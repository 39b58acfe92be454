//! Bad tool lists and options get clear errors; diagnostics, settings, `strict` and names.

use super::*;

fn openai(tools: Value) -> Value {
    json!({ "tools": tools })
}

fn function(name: Value, parameters: Option<Value>) -> Value {
    let mut function = json!({ "name": name, "description": "d" });
    if let Some(parameters) = parameters {
        function["parameters"] = parameters;
    }
    json!({"type": "function", "function": function})
}

fn object() -> Value {
    json!({"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]})
}

/// The error for `input`, which must start with `pointer` and mention each of `words`.
fn fails(input: &Value, options: &ToolOptions, pointer: &str, words: &[&str]) -> ToolsError {
    let err = compile_tools(input, options).unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with(&format!("{pointer}: ")),
        "want {pointer} first in: {text}"
    );
    for w in words {
        assert!(text.contains(w), "want {w:?} in: {text}");
    }
    err
}

#[test]
fn bad_tool_lists_get_clear_errors() {
    let default = ToolOptions::default();
    fails(&openai(json!([])), &default, "/tools", &["empty"]);
    let twice = openai(json!([
        function(json!("get_weather"), Some(object())),
        function(json!("get_weather"), Some(object()))
    ]));
    fails(
        &twice,
        &default,
        "/tools/1",
        &["`get_weather`", "listed twice", "/tools/0"],
    );
    let missing = openai(json!([function(json!("get_weather"), None)]));
    let err = fails(
        &missing,
        &default,
        "/tools/0/function",
        &["`get_weather`", "no `parameters`", "\"type\": \"object\""],
    );
    assert!(matches!(err, ToolsError::MissingParameters { .. }));
    let mcp = json!({"tools": [{"name": "read", "description": "no schema"}]});
    fails(&mcp, &default, "/tools/0", &["`read`", "no `inputSchema`"]);
    let anthropic = json!([{"name": "read", "input_schema": {"type": "array"}}]);
    fails(
        &anthropic,
        &default,
        "/0/input_schema/type",
        &[
            "tool `read`",
            "not an object schema",
            "\"type\": \"object\"",
        ],
    );
    let boolean = openai(json!([function(json!("f"), Some(json!(true)))]));
    fails(
        &boolean,
        &default,
        "/tools/0/function/parameters",
        &["tool `f`", "the schema `true`"],
    );
    let number = openai(json!([function(json!(42), Some(object()))]));
    fails(
        &number,
        &default,
        "/tools/0/function/name",
        &["/tools/0", "`42` as its name"],
    );
    let choice =
        json!({"tools": [function(json!("f"), Some(object()))], "tool_choice": "sometimes"});
    fails(
        &choice,
        &default,
        "/tool_choice",
        &["unknown tool choice", "\"sometimes\""],
    );
    let forced = json!({"tools": [function(json!("f"), Some(object()))],
        "tool_choice": {"type": "function", "function": {"name": "g"}}});
    fails(
        &forced,
        &default,
        "/tool_choice",
        &["`g`", "not in the tool list", "tools: f"],
    );
    let typo = json!({"tools": [function(json!("f"), Some(json!({"type": "object",
        "properties": {"n": {"type": "strng"}}})))]});
    fails(
        &typo,
        &default,
        "/tools/0/function/parameters/properties/n/type",
        &["tool `f`", "\"string\""],
    );
    let rpc = json!({"jsonrpc": "2.0", "id": 1, "error": {"code": -32601, "message": "Method not found"}});
    fails(&rpc, &default, "/error", &["Method not found"]);
    let rf = json!({"tools": [function(json!("f"), Some(object()))],
        "response_format": {"type": "json_schema", "json_schema": {"name": "x", "schema": {"type": "integer", "minimum": 3, "maximum": 1}}}});
    fails(
        &rf,
        &default,
        "/response_format/json_schema/schema",
        &["response_format", "accepts no value"],
    );
}

#[test]
fn bad_options_get_clear_errors() {
    let input = openai(json!([function(json!("get_weather"), Some(object()))]));
    let forced = ToolOptions {
        choice: Some("get_wether".parse().unwrap()),
        ..ToolOptions::default()
    };
    let err = compile_tools(&input, &forced).unwrap_err();
    assert_eq!(err.pointer(), None);
    assert!(
        err.to_string()
            .contains("`get_wether` is not in the tool list (tools: get_weather)"),
        "{err}"
    );
    assert!(matches!(
        "yaml".parse::<Syntax>(),
        Err(ToolsError::UnknownSyntax(_))
    ));
    assert!("yaml"
        .parse::<Syntax>()
        .unwrap_err()
        .to_string()
        .contains("json, hermes, llama3 or mistral"));
    assert!(matches!(
        "".parse::<ToolChoice>(),
        Err(ToolsError::UnknownChoice { .. })
    ));
    assert!(matches!(
        "openapi".parse::<InputFormat>(),
        Err(ToolsError::UnknownInputFormat(_))
    ));
    for max_calls in [0, 2001] {
        let options = ToolOptions {
            max_calls,
            ..ToolOptions::default()
        };
        let err = compile_tools(&input, &options).unwrap_err();
        assert!(matches!(err, ToolsError::BadOption(_)), "{err}");
    }
    let strict = ToolOptions {
        strict: true,
        ..ToolOptions::default()
    };
    let unique = openai(json!([function(
        json!("tag"),
        Some(json!({"type": "object",
        "properties": {"tags": {"type": "array", "uniqueItems": true}}}))
    )]));
    let err = compile_tools(&unique, &strict).unwrap_err();
    assert_eq!(
        err.pointer(),
        Some("/tools/0/function/parameters/properties/tags/uniqueItems")
    );
    assert!(err.to_string().contains("tool `tag`"), "{err}");
}

#[test]
fn diagnostics_point_into_the_input_and_name_the_tool() {
    let input = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
        {"name": "plain", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
        {"name": "tagger", "inputSchema": {"type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}, "uniqueItems": true}}}}
    ]}});
    let compiled = compile_tools(&input, &ToolOptions::default()).unwrap();
    let unique: Vec<_> = compiled
        .diagnostics
        .iter()
        .filter(|d| d.diagnostic.status == KeywordStatus::ValidationOnly)
        .collect();
    assert_eq!(unique.len(), 1, "{:?}", compiled.diagnostics);
    assert_eq!(unique[0].tool.as_deref(), Some("tagger"));
    assert_eq!(
        unique[0].diagnostic.pointer,
        "/result/tools/1/inputSchema/properties/tags/uniqueItems"
    );
    assert!(unique[0].to_string().contains("(tool `tagger`)"));
    assert!(compiled.needs_validation());
    assert!(compiled.tool("tagger").unwrap().needs_validation);
    assert!(!compiled.tool("plain").unwrap().needs_validation);
    // Forcing the other tool leaves the diagnostic out: its schema is not in the grammar.
    let forced = ToolOptions {
        choice: Some(ToolChoice::Named("plain".into())),
        ..ToolOptions::default()
    };
    assert!(!compile_tools(&input, &forced).unwrap().needs_validation());
}

#[test]
fn settings_come_from_the_input_unless_the_options_say_otherwise() {
    let body = chat_request();
    let compiled = compile_tools(&body, &ToolOptions::default()).unwrap();
    assert_eq!(compiled.format, InputFormat::OpenAi);
    assert_eq!(compiled.choice, ToolChoice::Auto);
    assert!(!compiled.parallel);
    assert_eq!(compiled.max_calls, 1);
    assert!(compiled.response_format.is_some());
    let mut parallel = body.clone();
    parallel["parallel_tool_calls"] = json!(true);
    parallel["tool_choice"] = json!("required");
    let compiled = compile_tools(&parallel, &ToolOptions::default()).unwrap();
    assert_eq!(
        (
            compiled.choice.clone(),
            compiled.parallel,
            compiled.max_calls
        ),
        (ToolChoice::Required, true, 8)
    );
    let overridden = ToolOptions {
        parallel: Some(false),
        choice: Some(ToolChoice::None),
        ..ToolOptions::default()
    };
    let compiled = compile_tools(&parallel, &overridden).unwrap();
    assert!(!compiled.parallel);
    // `none` beside a response_format: the answer's grammar alone.
    let answer = compiled.grammar.unwrap();
    let r = Recognizer::new(&answer).unwrap();
    assert!(!r.recognize("It is sunny.").accepted);
    assert!(r.recognize(r#"{"location":"Chengdu","date":"2025-01-01","weather":{"summary":"s","temp_high":20,"temp_low":10,"condition":"c"},"commute_advice":{"go_to_work":{"need_umbrella":true,"text":"t"},"back_home":{"need_umbrella":false,"text":"t"}}}"#).accepted);
    // Legacy functions with function_call naming one.
    let legacy = json!({"functions": [{"name": "a", "parameters": object()}, {"name": "b", "parameters": object()}],
        "function_call": {"name": "b"}});
    let compiled = compile_tools(&legacy, &ToolOptions::default()).unwrap();
    assert_eq!(compiled.choice, ToolChoice::Named("b".into()));
    let text = compiled.grammar.unwrap().to_string();
    assert!(
        text.contains("\\\"b\\\"") && !text.contains("\\\"a\\\""),
        "{text}"
    );
}

#[test]
fn strict_functions_require_every_property_and_close_objects() {
    let mut body = read(&examples().join("weather-tools.openai.json"));
    body["tools"][0]["function"]["parameters"]["required"] = json!(["location"]);
    body["tools"][0]["function"]["strict"] = json!(true);
    let options = ToolOptions {
        choice: Some(ToolChoice::Required),
        ..ToolOptions::default()
    };
    let compiled = compile_tools(&body, &options).unwrap();
    let spec = &compiled.tools[0].spec;
    assert_eq!(
        spec.parameters["required"],
        json!(["location", "extensions"])
    );
    assert_eq!(spec.parameters["additionalProperties"], json!(false));
    let r = Recognizer::new(compiled.grammar.as_ref().unwrap()).unwrap();
    let call = |args: &str| format!("{{\"name\": \"get_weather\", \"arguments\": {args}}}");
    assert!(
        r.recognize(&call(r#"{"location":"Chengdu","extensions":"all"}"#))
            .accepted
    );
    assert!(!r.recognize(&call(r#"{"location":"Chengdu"}"#)).accepted);
    assert!(
        !r.recognize(&call(r#"{"location":"Chengdu","extensions":"all","x":1}"#))
            .accepted
    );
    // Without strict, the schema's own `required` holds: `extensions` may be left out.
    body["tools"][0]["function"]["strict"] = json!(false);
    let loose = compile_tools(&body, &options).unwrap();
    let r = Recognizer::new(loose.grammar.as_ref().unwrap()).unwrap();
    assert!(r.recognize(&call(r#"{"location":"Chengdu"}"#)).accepted);
}

#[test]
fn names_are_sanitised_and_collisions_resolved() {
    let input = json!([
        {"name": "get_weather", "input_schema": object()},
        {"name": "get-weather", "input_schema": {"type": "object", "properties": {"n": {"type": "integer"}}}},
        {"name": "天气", "input_schema": object()},
        {"name": "say \"hi\"", "input_schema": object()}
    ]);
    let options = ToolOptions {
        choice: Some(ToolChoice::Required),
        ..ToolOptions::default()
    };
    let compiled = compile_tools(&input, &options).unwrap();
    let prefixes: Vec<&str> = compiled
        .tools
        .iter()
        .map(|t| t.rule_prefix.as_str())
        .collect();
    assert_eq!(prefixes, ["get-weather", "get-weather-2", "tool", "say-hi"]);
    let grammar = compiled.grammar.unwrap();
    clean(&grammar, "names");
    let r = Recognizer::new(&grammar).unwrap();
    assert!(
        r.recognize(r#"{"name": "天气", "arguments": {"city":"Chengdu"}}"#)
            .accepted
    );
    assert!(
        r.recognize(r#"{"name": "say \"hi\"", "arguments": {"city":"x"}}"#)
            .accepted
    );
    assert!(
        r.recognize(r#"{"name": "get-weather", "arguments": {"n":3}}"#)
            .accepted
    );
    assert!(
        !r.recognize(r#"{"name": "get-weather", "arguments": {"n":"x"}}"#)
            .accepted
    );
    let calls = parse_tool_calls(
        Syntax::Json,
        r#"{"name": "say \"hi\"", "arguments": {"city":"x"}}"#,
    )
    .unwrap();
    assert_eq!(calls[0].name, "say \"hi\"");
    // Shared building blocks appear once.
    let text = grammar.to_string();
    assert_eq!(text.matches("\nstring ::=").count(), 1, "{text}");
}
