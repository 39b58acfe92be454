//! What the server answers: health, models, metrics, structured output, text, tool calls,
//! streams.

use super::*;

#[test]
fn health_models_and_metrics_answer() {
    let url = main_server();
    let health: Value = client()
        .get(format!("{url}/health"))
        .send()
        .unwrap()
        .json()
        .unwrap();
    assert_eq!(health["status"], "ok");
    let models = client()
        .get(format!("{url}/v1/models"))
        .bearer_auth(KEY)
        .send()
        .unwrap();
    assert_eq!(models.status(), 200);
    let models: Value = models.json().unwrap();
    assert_eq!(models["object"], "list");
    assert_eq!(models["data"][0]["id"], health["model"]);
    let metrics = client()
        .get(format!("{url}/metrics"))
        .bearer_auth(KEY)
        .send()
        .unwrap()
        .text()
        .unwrap();
    for name in [
        "gbnfc_http_requests_total",
        "gbnfc_generated_tokens_total",
        "gbnfc_queue_depth",
        "gbnfc_time_to_first_token_seconds",
        "gbnfc_grammar_cache_hits_total",
    ] {
        assert!(metrics.contains(name), "{name} missing from\n{metrics}");
    }
}

#[test]
fn health_is_503_until_the_model_is_loaded() {
    // The router alone, over a real socket, before anything loads the model.
    let runtime = tokio::runtime::Runtime::new().unwrap();
    let listener = runtime
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .unwrap();
    let address = listener.local_addr().unwrap();
    let state = Arc::new(AppState::new(options()));
    let app = server::routes::router(state);
    runtime.spawn(async move { axum::serve(listener, app).await });
    let url = format!("http://{address}");
    let health = client().get(format!("{url}/health")).send().unwrap();
    assert_eq!(health.status(), 503);
    let (status, body) = chat(&url, &json!({"messages": user("hi")}));
    assert_eq!(status, 503);
    assert_eq!(body["error"]["type"], "server_error");
}

#[test]
fn json_schema_answers_validate_for_every_example_schema() {
    let url = main_server();
    for name in [
        "weather-card.schema.json",
        "ticket-classification.schema.json",
        "query-order.schema.json",
    ] {
        let schema = example(name);
        let body = json!({
            "model": "my-model",
            "messages": user("Fill in a realistic example."),
            "response_format": {"type": "json_schema",
                "json_schema": {"name": "answer", "schema": schema, "strict": true}},
            "seed": 3,
        });
        let (status, answer) = chat(url, &body);
        assert_eq!(status, 200, "{name}: {answer}");
        assert_eq!(answer["model"], "my-model");
        assert_valid_content(&answer, &schema);
    }
    let format = example("weather-card.response-format.json");
    let (status, answer) = chat(
        url,
        &json!({"messages": user("Weather in Chengdu"), "response_format": format}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_valid_content(&answer, &format["json_schema"]["schema"]);
}

#[test]
fn json_object_grammar_and_text_answers() {
    let url = main_server();
    let (status, answer) = chat(
        url,
        &json!({"messages": user("A JSON object about cats."),
        "response_format": {"type": "json_object"}, "max_tokens": 64}),
    );
    assert_eq!(status, 200, "{answer}");
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(
        serde_json::from_str::<Value>(content).unwrap().is_object(),
        "{content}"
    );

    let (status, answer) = chat(
        url,
        &json!({"messages": user("Yes or no?"),
        "grammar": "root ::= \"yes\" | \"no\""}),
    );
    assert_eq!(status, 200, "{answer}");
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(content == "yes" || content == "no", "{content}");

    let (status, answer) = chat(
        url,
        &json!({"messages": user("Say hello."),
        "response_format": {"type": "text"}, "max_tokens": 8, "temperature": 0}),
    );
    assert_eq!(status, 200, "{answer}");
    let reason = answer["choices"][0]["finish_reason"].as_str().unwrap();
    assert!(reason == "stop" || reason == "length");
    assert!(answer["usage"]["completion_tokens"].as_u64().unwrap() <= 8);
}

#[test]
fn stop_sequences_end_free_text() {
    let url = main_server();
    let (status, answer) = chat(
        url,
        &json!({"messages": user("Count from 1 to 20, one number per line."),
        "stop": ["\n"], "max_tokens": 64, "temperature": 0}),
    );
    assert_eq!(status, 200, "{answer}");
    let content = answer["choices"][0]["message"]["content"].as_str().unwrap();
    assert!(!content.contains('\n'), "{content:?}");
    assert_eq!(answer["choices"][0]["finish_reason"], "stop");
}

#[test]
fn tool_calls_required_named_auto_and_none() {
    let url = main_server();
    let tools = weather_tools();
    let ask = user("What's the weather in Chengdu tomorrow?");
    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tool_choice": "required"}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_eq!(answer["choices"][0]["finish_reason"], "tool_calls");
    let message = &answer["choices"][0]["message"];
    assert_valid_calls(message, &tools);

    let first = tools[0]["function"]["name"].as_str().unwrap();
    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools,
        "tool_choice": {"type": "function", "function": {"name": first}}, "parallel_tool_calls": false}),
    );
    assert_eq!(status, 200, "{answer}");
    let names = assert_valid_calls(&answer["choices"][0]["message"], &tools);
    assert_eq!(names, vec![first.to_string()]);

    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tool_choice": "auto"}),
    );
    assert_eq!(status, 200, "{answer}");
    let choice = &answer["choices"][0];
    match choice["finish_reason"].as_str().unwrap() {
        "tool_calls" => {
            assert_valid_calls(&choice["message"], &tools);
        }
        "stop" => assert!(choice["message"]["content"].is_string()),
        other => panic!("finish_reason {other}"),
    }

    // The call answered, then no tools: a content answer.
    let call = &message["tool_calls"][0];
    let follow_up = json!([
        {"role": "user", "content": "What's the weather in Chengdu tomorrow?"},
        {"role": "assistant", "content": null, "tool_calls": [call]},
        {"role": "tool", "tool_call_id": call["id"], "content": "{\"forecast\": \"sunny, 25 C\"}"},
    ]);
    let (status, answer) = chat(
        url,
        &json!({"messages": follow_up, "tools": tools,
        "tool_choice": "none", "max_tokens": 48}),
    );
    assert_eq!(status, 200, "{answer}");
    assert!(
        answer["choices"][0]["message"]["content"].is_string(),
        "{answer}"
    );
    assert!(answer["choices"][0]["message"].get("tool_calls").is_none());
}

/// Tool retrieval in the server: the five-server list (38 tools, about 5,300 tokens)
/// cannot be shown whole in the test server's 2,048-token context, so by default the
/// best five are shown and the call fits; `tools_top_k: 1` shows the one BM25 ranks
/// first, and every call names it, even sampled at temperature 1; `tools_top_k: 0` shows every tool and the request is
/// refused for its length, as any prompt too long for the context is.
#[test]
fn tools_top_k_narrows_a_long_tool_list() {
    let url = main_server();
    let tools = five_servers::openai_tools();
    let ask = user("What time is it in Tokyo right now?");
    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tool_choice": "required", "max_tokens": 64}),
    );
    assert_eq!(status, 200, "{answer}");
    assert_valid_calls(&answer["choices"][0]["message"], &tools);

    let convert = "If it is 15:00 in London, what time is it in Tokyo?";
    let specs = read_tools(&json!({"tools": tools}), None).unwrap().tools;
    let best = ToolIndex::new(&specs).top(convert, 1, &[]);
    let best = specs[best[0]].name.clone();
    assert_eq!(best, "convert_time");
    for seed in 1..=3 {
        let (status, answer) = chat(
            url,
            &json!({"messages": user(convert), "tools": tools, "tool_choice": "required",
                "tools_top_k": 1, "seed": seed, "temperature": 1.0, "max_tokens": 64}),
        );
        assert_eq!(status, 200, "{answer}");
        let names = assert_valid_calls(&answer["choices"][0]["message"], &tools);
        assert_eq!(names, std::slice::from_ref(&best), "seed {seed}");
    }

    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tools_top_k": 0}),
    );
    assert_eq!(status, 400, "{answer}");
    assert_eq!(
        answer["error"]["code"], "context_length_exceeded",
        "{answer}"
    );

    let (status, answer) = chat(
        url,
        &json!({"messages": ask, "tools": tools, "tools_top_k": "five"}),
    );
    assert_eq!(status, 400, "{answer}");
    assert_eq!(answer["error"]["param"], "tools_top_k", "{answer}");
}

#[test]
fn streamed_content_reassembles_and_validates() {
    let url = main_server();
    let schema = example("ticket-classification.schema.json");
    let response = post(
        url,
        &json!({"messages": user("My order is late."), "stream": true,
        "stream_options": {"include_usage": true},
        "response_format": {"type": "json_schema", "json_schema": {"name": "t", "schema": schema}}}),
    );
    let events = stream_events(response);
    assert_eq!(events.last().unwrap(), "[DONE]");
    let chunks: Vec<Value> = events[..events.len() - 1]
        .iter()
        .map(|e| serde_json::from_str(e).unwrap())
        .collect();
    let mut content = String::new();
    let mut finishes = Vec::new();
    for chunk in &chunks[..chunks.len() - 1] {
        assert_eq!(chunk["object"], "chat.completion.chunk", "{chunk}");
        assert_eq!(chunk["id"], chunks[0]["id"]);
        let choice = &chunk["choices"][0];
        if let Some(text) = choice["delta"]["content"].as_str() {
            content.push_str(text);
        }
        if !choice["finish_reason"].is_null() {
            finishes.push(choice["finish_reason"].clone());
        }
    }
    assert_eq!(finishes, vec![json!("stop")]);
    assert!(
        chunks.len() > 4,
        "the content came in one piece: {chunks:?}"
    );
    let value: Value = serde_json::from_str(&content).unwrap_or_else(|e| panic!("{e}: {content}"));
    assert!(validator(&schema).is_valid(&value), "{content}");
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert!(usage["usage"]["completion_tokens"].as_u64().unwrap() > 0);
}

#[test]
fn streamed_tool_calls_reassemble_and_validate() {
    let url = main_server();
    let tools = weather_tools();
    let response = post(
        url,
        &json!({"messages": user("What's the weather in Chengdu tomorrow?"),
        "tools": tools, "tool_choice": "required", "stream": true}),
    );
    let events = stream_events(response);
    assert_eq!(events.last().unwrap(), "[DONE]");
    let mut calls: Vec<Value> = Vec::new();
    let mut finish = None;
    for event in &events[..events.len() - 1] {
        let chunk: Value = serde_json::from_str(event).unwrap();
        let choice = &chunk["choices"][0];
        if !choice["finish_reason"].is_null() {
            finish = Some(choice["finish_reason"].clone());
        }
        for delta in choice["delta"]["tool_calls"]
            .as_array()
            .into_iter()
            .flatten()
        {
            let index = delta["index"].as_u64().unwrap() as usize;
            if index == calls.len() {
                assert!(
                    delta["id"].as_str().unwrap().starts_with("call_"),
                    "{delta}"
                );
                assert_eq!(delta["type"], "function");
                assert_eq!(delta["function"]["arguments"], "");
                calls.push(json!({"id": delta["id"], "type": "function",
                    "function": {"name": delta["function"]["name"], "arguments": ""}}));
            } else {
                assert!(delta.get("id").is_none(), "{delta}");
                let so_far = calls[index]["function"]["arguments"]
                    .as_str()
                    .unwrap()
                    .to_string();
                let more = delta["function"]["arguments"].as_str().unwrap();
                calls[index]["function"]["arguments"] = json!(so_far + more);
            }
        }
    }
    assert_eq!(finish, Some(json!("tool_calls")));
    assert_valid_calls(&json!({"tool_calls": calls}), &tools);
}
