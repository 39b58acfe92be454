#!/usr/bin/env python3
"""Drives a running `gbnfc serve` with the official OpenAI Python SDK.

Run it with the venv scripts/setup makes (target/openai-venv/bin/python); the cargo test
cli/tests/openai_sdk.rs starts the server and runs it. Inputs, from the environment:

  GBNFC_BASE_URL   the server's API root, e.g. http://127.0.0.1:PORT/v1 (required)
  GBNFC_API_KEY    the key the server was started with (required)
  GBNFC_EXAMPLES   the seed examples folder (default: <repo>/../shared/examples)
  GBNFC_REPO       the repository root (default: this script's ../)
  GBNFC_REASONING  1: the server's model reasons (it was started with a reasoning
                   chat template); run the reasoning cases instead of the others

The model is tiny, so what it says is poor; what the grammar guarantees is checked
instead: the shape of every response and chunk (the SDK validates them against its own
types: the client is made with _strict_response_validation), JSON that parses and
validates against the schema asked for, tool calls that name listed tools with arguments
valid against their parameters, finish reasons, usage, errors in the OpenAI shape.

Each case prints `ok NAME (seconds)` or `FAIL NAME: reason`; the last line is
`N passed, N failed`, and the exit status is 1 when any case failed.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
import sys
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Literal

try:
    import jsonschema
    import openai
    import pydantic
    from openai.types.chat import ChatCompletionChunk
except ImportError as e:  # not the venv: say so in the expected shape
    print(f"FAIL imports: {e} (run scripts/setup, then use target/openai-venv/bin/python)")
    print("0 passed, 1 failed")
    sys.exit(1)

SEED = 1
TEMPERATURE = 0.7
TOP_P = 0.95
TIMEOUT_S = 120

REPO = Path(os.environ.get("GBNFC_REPO") or Path(__file__).resolve().parent.parent)
EXAMPLES = Path(os.environ.get("GBNFC_EXAMPLES") or REPO / "../shared/examples")
BASE_URL = os.environ.get("GBNFC_BASE_URL", "")
API_KEY = os.environ.get("GBNFC_API_KEY", "")
REASONING = os.environ.get("GBNFC_REASONING") == "1"

# Prompts for the seed schemas (the model is tiny: they only give it something to say).
PROMPTS = {
    "query-order": "Look up order O202405180001234 and tell me where the parcel is.",
    "ticket-classification": "Classify this support ticket: I paid but my order still says unpaid.",
    "weather-card": "Make a weather card for Chengdu tomorrow with commute advice.",
}
SYSTEM = "You are a helpful assistant. Answer with one JSON object."
WEATHER_QUESTION = "What's the weather in Chengdu tomorrow?"


class Ticket(pydantic.BaseModel):
    """The small structured-output type for `parse` and the stream helper."""

    title: str
    priority: Literal["low", "medium", "high"]
    estimate_hours: int


class CheckFailed(Exception):
    """A case's expectation that did not hold."""


def expect(cond: bool, reason: str) -> None:
    if not cond:
        raise CheckFailed(reason)


def short(value: Any, limit: int = 300) -> str:
    text = value if isinstance(value, str) else repr(value)
    return text if len(text) <= limit else text[:limit] + f"… ({len(text)} chars)"


def validate(instance: Any, schema: dict, what: str) -> None:
    """Raises CheckFailed listing where `instance` breaks `schema` (formats checked)."""
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema, format_checker=jsonschema.FormatChecker())
    errors = sorted(validator.iter_errors(instance), key=lambda e: list(e.absolute_path))
    if errors:
        where = "; ".join(
            f"at /{'/'.join(map(str, e.absolute_path))}: {e.message}" for e in errors[:3]
        )
        raise CheckFailed(
            f"{what} does not validate ({len(errors)} errors: {where}): {short(instance)}"
        )


def parse_json(text: Any, what: str) -> Any:
    expect(isinstance(text, str), f"{what} is not a string: {short(text)}")
    try:
        return json.loads(text)
    except json.JSONDecodeError as e:
        raise CheckFailed(f"{what} is not JSON ({e}): {short(text)}") from None


def schema_name(stem: str) -> str:
    """A json_schema name as OpenAI allows it: [a-zA-Z0-9_-], at most 64."""
    name = "".join(c if c.isalnum() or c in "_-" else "_" for c in stem)
    return name[:64] or "schema"


class Checks:
    def __init__(self) -> None:
        self.client = openai.OpenAI(
            base_url=BASE_URL,
            api_key=API_KEY,
            max_retries=0,
            timeout=TIMEOUT_S,
            _strict_response_validation=True,
        )
        self.model = "gbnfc"  # replaced by the served model's id in `models_list`
        self.tools = self._load_tools()
        self.tools_by_name = {t["function"]["name"]: t["function"] for t in self.tools}
        self.required_message: Any = None  # the assistant message of `tools_required`
        self.passed = 0
        self.failed = 0

    # ---- helpers ------------------------------------------------------------------

    @staticmethod
    def _load_tools() -> list:
        data = json.loads((REPO / "examples/weather-tools.openai.json").read_text())
        tools = data["tools"] if isinstance(data, dict) else data
        assert tools and all(t.get("type") == "function" for t in tools), "no function tools"
        return tools

    def sampling(self, max_tokens: int = 300) -> dict:
        return {
            "model": self.model,
            "seed": SEED,
            "temperature": TEMPERATURE,
            "top_p": TOP_P,
            "max_tokens": max_tokens,
        }

    def check_usage(self, usage: Any, what: str = "usage") -> None:
        expect(usage is not None, f"no {what}")
        for field in ("prompt_tokens", "completion_tokens", "total_tokens"):
            value = getattr(usage, field, None)
            expect(isinstance(value, int) and value >= 0, f"{what}.{field} is {value!r}")
        expect(usage.prompt_tokens > 0, f"{what}.prompt_tokens is 0")
        expect(usage.completion_tokens > 0, f"{what}.completion_tokens is 0")
        expect(
            usage.total_tokens == usage.prompt_tokens + usage.completion_tokens,
            f"{what}: total_tokens {usage.total_tokens} != prompt_tokens {usage.prompt_tokens}"
            f" + completion_tokens {usage.completion_tokens}",
        )

    def check_completion(self, resp: Any, finish: tuple) -> Any:
        """The chat.completion envelope; returns choices[0]."""
        expect(resp.object == "chat.completion", f"object is {resp.object!r}")
        expect(isinstance(resp.id, str) and resp.id, f"id is {resp.id!r}")
        expect(
            resp.model == self.model, f"model {resp.model!r} is not the requested {self.model!r}"
        )
        expect(len(resp.choices) == 1, f"{len(resp.choices)} choices, not 1")
        choice = resp.choices[0]
        expect(choice.index == 0, f"choices[0].index is {choice.index}")
        expect(choice.message.role == "assistant", f"role is {choice.message.role!r}")
        expect(
            choice.finish_reason in finish,
            f"finish_reason {choice.finish_reason!r}, expected one of {finish};"
            f" content: {short(choice.message.content)}",
        )
        self.check_usage(resp.usage)
        return choice

    def check_tool_calls(self, calls: Any, only: str | None = None) -> None:
        """Each call names a listed tool (`only`, if given), id call_…, arguments valid."""
        expect(calls, "no tool calls")
        ids = set()
        for i, call in enumerate(calls):
            what = f"tool_calls[{i}]"
            expect(call.type == "function", f"{what}.type is {call.type!r}")
            expect(
                isinstance(call.id, str) and call.id.startswith("call_") and len(call.id) > 5,
                f"{what}.id {call.id!r} does not start with call_",
            )
            expect(call.id not in ids, f"{what}.id {call.id!r} repeats")
            ids.add(call.id)
            name = call.function.name
            expect(name in self.tools_by_name, f"{what} names {name!r}, not a listed tool")
            if only is not None:
                expect(name == only, f"{what} names {name!r}, not the chosen {only!r}")
            args = parse_json(call.function.arguments, f"{what}.function.arguments")
            validate(args, self.tools_by_name[name]["parameters"], f"{what} arguments")

    def json_schema_format(self, name: str, schema: dict) -> dict:
        return {
            "type": "json_schema",
            "json_schema": {"name": name, "schema": schema, "strict": True},
        }

    def structured(self, response_format: dict, prompt: str, max_tokens: int = 400) -> None:
        """One json_schema request: the content validates, finish stop, usage, model."""
        schema = response_format["json_schema"]["schema"]
        resp = self.client.chat.completions.create(
            messages=[{"role": "system", "content": SYSTEM}, {"role": "user", "content": prompt}],
            response_format=response_format,
            **self.sampling(max_tokens),
        )
        choice = self.check_completion(resp, ("stop",))
        expect(not choice.message.tool_calls, f"unexpected tool calls: {choice.message.tool_calls}")
        value = parse_json(choice.message.content, "content")
        validate(value, schema, "content")

    def stream_chunks(self, chunks: list, what: str = "stream") -> Any:
        """The invariants of a stream with include_usage; returns the finish chunk's choice."""
        expect(len(chunks) >= 2, f"{what}: only {len(chunks)} chunks")
        first_id = chunks[0].id
        for i, chunk in enumerate(chunks):
            expect(
                chunk.object == "chat.completion.chunk", f"{what}[{i}].object is {chunk.object!r}"
            )
            expect(chunk.id == first_id, f"{what}[{i}].id {chunk.id!r} != {first_id!r}")
            expect(chunk.model == self.model, f"{what}[{i}].model is {chunk.model!r}")
        *body, last = chunks
        expect(last.choices == [], f"{what}: the last chunk has choices {short(last.choices)}")
        self.check_usage(last.usage, f"{what}: the last chunk's usage")
        for i, chunk in enumerate(body):
            expect(len(chunk.choices) == 1, f"{what}[{i}] has {len(chunk.choices)} choices")
            expect(chunk.choices[0].index == 0, f"{what}[{i}].choices[0].index != 0")
            expect(chunk.usage is None, f"{what}[{i}] has usage before the last chunk")
        finishing = [i for i, c in enumerate(body) if c.choices[0].finish_reason is not None]
        expect(
            len(finishing) == 1, f"{what}: finish_reason set in chunks {finishing}, not exactly one"
        )
        expect(
            finishing[0] == len(body) - 1,
            f"{what}: chunks after the finish_reason chunk ({finishing[0]} of {len(body)})",
        )
        expect(
            body[0].choices[0].delta.role == "assistant",
            f"{what}: first delta's role is not assistant",
        )
        return body[-1].choices[0]

    # ---- cases --------------------------------------------------------------------

    def case_models_list(self) -> None:
        models = list(self.client.models.list())
        expect(len(models) >= 1, "no models listed")
        expect(all(m.object == "model" for m in models), "a listed entry's object is not 'model'")
        expect(isinstance(models[0].id, str) and models[0].id, f"model id {models[0].id!r}")
        self.model = models[0].id

    def cases_json_schema(self) -> list:
        """One case per seed schema, and the response_format example as it is."""
        cases = []
        for path in sorted(EXAMPLES.glob("*.schema.json")):
            stem = path.name[: -len(".schema.json")]

            def run(path: Path = path, stem: str = stem) -> None:
                schema = json.loads(path.read_text())
                prompt = PROMPTS.get(stem, f"Fill in a {stem} JSON object.")
                self.structured(self.json_schema_format(schema_name(stem), schema), prompt)

            cases.append((f"json_schema_strict[{path.name}]", run))
        rf_path = EXAMPLES / "weather-card.response-format.json"

        def run_rf() -> None:
            self.structured(json.loads(rf_path.read_text()), PROMPTS["weather-card"])

        cases.append((f"json_schema_strict[{rf_path.name}]", run_rf))
        return cases

    def case_parse_pydantic(self) -> None:
        sampling = self.sampling()
        sampling["max_completion_tokens"] = sampling.pop("max_tokens")
        resp = self.client.chat.completions.parse(
            messages=[
                {"role": "system", "content": "You file support tickets as JSON."},
                {"role": "user", "content": "The checkout page crashes when I pay by card."},
            ],
            response_format=Ticket,
            **sampling,
        )
        choice = self.check_completion(resp, ("stop",))
        parsed = choice.message.parsed
        expect(isinstance(parsed, Ticket), f"message.parsed is {short(parsed)}")

    def case_stream_helper_pydantic(self) -> None:
        with self.client.chat.completions.stream(
            messages=[
                {"role": "system", "content": "You file support tickets as JSON."},
                {"role": "user", "content": "I cannot log in since yesterday."},
            ],
            response_format=Ticket,
            stream_options={"include_usage": True},
            **self.sampling(),
        ) as stream:
            for _ in stream:
                pass
            final = stream.get_final_completion()
        choice = final.choices[0]
        expect(choice.finish_reason == "stop", f"finish_reason {choice.finish_reason!r}")
        expect(
            isinstance(choice.message.parsed, Ticket),
            f"message.parsed is {short(choice.message.parsed)}",
        )
        self.check_usage(final.usage)

    def case_json_object(self) -> None:
        resp = self.client.chat.completions.create(
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": "Describe a cat as a JSON object."},
            ],
            response_format={"type": "json_object"},
            **self.sampling(200),
        )
        choice = self.check_completion(resp, ("stop",))
        value = parse_json(choice.message.content, "content")
        expect(
            isinstance(value, dict),
            f"content is JSON but not an object: {short(choice.message.content)}",
        )

    def tool_request(self, tool_choice: Any, **extra: Any) -> Any:
        return self.client.chat.completions.create(
            messages=[{"role": "user", "content": WEATHER_QUESTION}],
            tools=self.tools,
            tool_choice=tool_choice,
            **self.sampling(200),
            **extra,
        )

    def case_tools_required(self) -> None:
        resp = self.tool_request("required")
        choice = self.check_completion(resp, ("tool_calls",))
        self.check_tool_calls(choice.message.tool_calls)
        self.required_message = choice.message

    def case_tools_named(self) -> None:
        name = self.tools[0]["function"]["name"]
        resp = self.tool_request(
            {"type": "function", "function": {"name": name}}, parallel_tool_calls=False
        )
        choice = self.check_completion(resp, ("tool_calls", "stop"))
        calls = choice.message.tool_calls
        self.check_tool_calls(calls, only=name)
        expect(len(calls) == 1, f"{len(calls)} tool calls with parallel_tool_calls false")

    def case_tools_auto(self) -> None:
        resp = self.tool_request("auto")
        choice = self.check_completion(resp, ("stop", "tool_calls", "length"))
        if choice.message.tool_calls:
            expect(
                choice.finish_reason == "tool_calls",
                f"tool calls with finish_reason {choice.finish_reason!r}",
            )
            self.check_tool_calls(choice.message.tool_calls)
        else:
            expect(
                choice.finish_reason in ("stop", "length"),
                f"no tool calls, finish_reason {choice.finish_reason!r}",
            )
            expect(
                isinstance(choice.message.content, str), f"content is {choice.message.content!r}"
            )

    def case_tool_result_turn(self) -> None:
        """The assistant's calls go back with a tool message per id; tool_choice none → text."""
        message = self.required_message
        if message is not None and message.tool_calls:
            calls = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.function.name, "arguments": c.function.arguments},
                }
                for c in message.tool_calls
            ]
        else:  # tools_required failed: a call of our own, so this case still says something
            calls = [
                {
                    "id": "call_check1",
                    "type": "function",
                    "function": {
                        "name": self.tools[0]["function"]["name"],
                        "arguments": json.dumps({"location": "Chengdu", "extensions": "all"}),
                    },
                }
            ]
        messages = [
            {"role": "user", "content": WEATHER_QUESTION},
            {"role": "assistant", "content": None, "tool_calls": calls},
        ] + [
            {
                "role": "tool",
                "tool_call_id": c["id"],
                "content": json.dumps({"forecast": "light rain", "high_c": 24, "low_c": 18}),
            }
            for c in calls
        ]
        resp = self.client.chat.completions.create(
            messages=messages, tools=self.tools, tool_choice="none", **self.sampling(120)
        )
        choice = self.check_completion(resp, ("stop", "length"))
        expect(
            not choice.message.tool_calls,
            f"tool calls under tool_choice none: {choice.message.tool_calls}",
        )
        expect(isinstance(choice.message.content, str), f"content is {choice.message.content!r}")

    def case_stream_json_schema(self) -> None:
        """Raw SSE: text/event-stream, data: lines ending with [DONE]; chunks per the SDK types."""
        path = EXAMPLES / "ticket-classification.schema.json"
        schema = json.loads(path.read_text())
        with self.client.chat.completions.with_streaming_response.create(
            messages=[
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": PROMPTS["ticket-classification"]},
            ],
            response_format=self.json_schema_format("ticket_classification", schema),
            stream=True,
            stream_options={"include_usage": True},
            **self.sampling(),
        ) as raw:
            content_type = raw.headers.get("content-type", "")
            lines = list(raw.iter_lines())
        expect(content_type.startswith("text/event-stream"), f"content-type {content_type!r}")
        data = [line[5:].removeprefix(" ") for line in lines if line.startswith("data:")]
        other = [
            line
            for line in lines
            if line and not line.startswith(("data:", ":", "event:", "id:", "retry:"))
        ]
        expect(not other, f"lines that are not SSE fields: {short(other)}")
        expect(
            data and data[-1] == "[DONE]",
            f"the stream does not end with data: [DONE] (last: {short(data[-1:] )})",
        )
        expect(data.count("[DONE]") == 1, "more than one [DONE]")
        chunks = []
        for i, text in enumerate(data[:-1]):
            try:
                chunks.append(ChatCompletionChunk.model_validate(json.loads(text)))
            except (ValueError, pydantic.ValidationError) as e:
                raise CheckFailed(
                    f"event {i} is not a chat.completion.chunk: {short(str(e))}: {short(text)}"
                ) from None
        finish = self.stream_chunks(chunks)
        expect(finish.finish_reason == "stop", f"finish_reason {finish.finish_reason!r}")
        expect(
            all(not c.choices or not c.choices[0].delta.tool_calls for c in chunks),
            "tool call deltas in a content stream",
        )
        content = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
        validate(parse_json(content, "streamed content"), schema, "streamed content")

    def case_stream_tools_required(self) -> None:
        stream = self.client.chat.completions.create(
            messages=[{"role": "user", "content": WEATHER_QUESTION}],
            tools=self.tools,
            tool_choice="required",
            stream=True,
            stream_options={"include_usage": True},
            **self.sampling(200),
        )
        chunks = list(stream)
        finish = self.stream_chunks(chunks)
        expect(finish.finish_reason == "tool_calls", f"finish_reason {finish.finish_reason!r}")
        calls: dict = {}
        for i, chunk in enumerate(chunks):
            if not chunk.choices:
                continue
            for delta in chunk.choices[0].delta.tool_calls or []:
                fn = delta.function
                if delta.index not in calls:
                    expect(
                        isinstance(delta.id, str) and delta.id,
                        f"chunk {i}: first delta of call {delta.index} has no id",
                    )
                    expect(
                        delta.type == "function",
                        f"chunk {i}: first delta of call {delta.index} has type {delta.type!r}",
                    )
                    expect(
                        fn is not None and fn.name,
                        f"chunk {i}: first delta of call {delta.index} has no function.name",
                    )
                    calls[delta.index] = {
                        "id": delta.id,
                        "name": fn.name,
                        "arguments": fn.arguments or "",
                    }
                else:
                    call = calls[delta.index]
                    expect(
                        delta.id in (None, call["id"]),
                        f"chunk {i}: call {delta.index} changes id to {delta.id!r}",
                    )
                    expect(
                        fn is None or fn.name in (None, "", call["name"]),
                        f"chunk {i}: call {delta.index} changes name",
                    )
                    if fn is not None and fn.arguments:
                        call["arguments"] += fn.arguments
        expect(
            sorted(calls) == list(range(len(calls))),
            f"tool call indexes {sorted(calls)} are not 0..n-1",
        )
        self.check_tool_calls(
            [
                openai.types.chat.ChatCompletionMessageFunctionToolCall.model_validate(
                    {
                        "id": c["id"],
                        "type": "function",
                        "function": {"name": c["name"], "arguments": c["arguments"]},
                    }
                )
                for _, c in sorted(calls.items())
            ]
        )

    def case_concurrent(self) -> None:
        """Two json_schema requests at once (the server runs --parallel 2): both valid."""
        path = EXAMPLES / "ticket-classification.schema.json"
        schema = json.loads(path.read_text())
        rf = self.json_schema_format("ticket_classification", schema)
        with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
            futures = [
                pool.submit(self.structured, rf, PROMPTS["ticket-classification"], 300)
                for _ in range(2)
            ]
            for f in futures:
                f.result()

    def case_stop_sequence(self) -> None:
        resp = self.client.chat.completions.create(
            messages=[
                {"role": "user", "content": "Count from one to twenty, one number per line."}
            ],
            stop=["\n"],
            **self.sampling(60),
        )
        choice = self.check_completion(resp, ("stop", "length"))
        content = choice.message.content
        expect(isinstance(content, str), f"content is {content!r}")
        expect("\n" not in content, f"the stop sequence is in the content: {short(content)}")

    def case_max_tokens_text(self) -> None:
        resp = self.client.chat.completions.create(
            messages=[{"role": "user", "content": "Tell me a long story about a dragon."}],
            **self.sampling(8),
        )
        choice = self.check_completion(resp, ("length", "stop"))
        expect(isinstance(choice.message.content, str), f"content is {choice.message.content!r}")
        expect(
            resp.usage.completion_tokens <= 8,
            f"completion_tokens {resp.usage.completion_tokens} > max_tokens 8",
        )

    def expect_status_error(self, call: Callable[[], Any], cls: type, status: int) -> None:
        try:
            call()
        except cls as e:
            expect(
                e.status_code == status, f"{cls.__name__} with status {e.status_code}, not {status}"
            )
            body = e.body
            expect(isinstance(body, dict), f"error body is not an object: {short(body)}")
            message = body.get("message")
            expect(
                isinstance(message, str) and message, f"error body has no message: {short(body)}"
            )
            expect(isinstance(body.get("type"), str), f"error body has no type: {short(body)}")
            return
        except openai.APIStatusError as e:
            raise CheckFailed(
                f"{type(e).__name__} (status {e.status_code}), not {cls.__name__}: {short(e.body)}"
            ) from None
        raise CheckFailed(f"no error; expected {cls.__name__} ({status})")

    def case_error_invalid_schema(self) -> None:
        rf = self.json_schema_format("impossible", {"type": "integer", "minimum": 5, "maximum": 1})
        messages = [{"role": "user", "content": "Pick a number."}]
        self.expect_status_error(
            lambda: self.client.chat.completions.create(
                messages=messages, response_format=rf, **self.sampling(20)
            ),
            openai.BadRequestError,
            400,
        )
        # Streaming: refused before any event is sent.
        self.expect_status_error(
            lambda: list(
                self.client.chat.completions.create(
                    messages=messages, response_format=rf, stream=True, **self.sampling(20)
                )
            ),
            openai.BadRequestError,
            400,
        )

    def case_error_n(self) -> None:
        self.expect_status_error(
            lambda: self.client.chat.completions.create(
                messages=[{"role": "user", "content": "Hi"}], n=2, **self.sampling(10)
            ),
            openai.BadRequestError,
            400,
        )

    def case_error_auth(self) -> None:
        wrong = openai.OpenAI(
            base_url=BASE_URL, api_key=API_KEY + "-wrong", max_retries=0, timeout=TIMEOUT_S
        )
        self.expect_status_error(lambda: wrong.models.list(), openai.AuthenticationError, 401)
        self.expect_status_error(
            lambda: wrong.chat.completions.create(
                messages=[{"role": "user", "content": "Hi"}], **self.sampling(10)
            ),
            openai.AuthenticationError,
            401,
        )

    # ---- running ------------------------------------------------------------------

    # ---- reasoning (GBNFC_REASONING=1) -------------------------------------------------

    def reasoning_of(self, message: Any, what: str = "message") -> str:
        """The thinking a reasoning model's message carries: a string, markers left out."""
        reasoning = getattr(message, "reasoning_content", None)
        expect(isinstance(reasoning, str), f"{what}.reasoning_content is {short(reasoning)}")
        expect("</think>" not in reasoning, f"{what}: a marker in the thinking: {short(reasoning)}")
        return reasoning

    def check_reasoning_usage(self, usage: Any, what: str = "usage") -> None:
        details = getattr(usage, "completion_tokens_details", None)
        thinking = getattr(details, "reasoning_tokens", None)
        expect(
            isinstance(thinking, int) and 0 < thinking < usage.completion_tokens,
            f"{what}.completion_tokens_details.reasoning_tokens is {thinking!r}"
            f" of {usage.completion_tokens}",
        )

    def weather_card_request(self, **extra: Any) -> dict:
        schema = json.loads((EXAMPLES / "weather-card.schema.json").read_text())
        return {
            "messages": [
                {"role": "system", "content": SYSTEM},
                {"role": "user", "content": PROMPTS["weather-card"]},
            ],
            "response_format": self.json_schema_format("weather_card", schema),
            **self.sampling(400),
            **extra,
        }

    def case_reasoning_json_schema(self) -> None:
        request = self.weather_card_request(reasoning_effort="low")
        resp = self.client.chat.completions.create(**request)
        choice = self.check_completion(resp, ("stop",))
        self.reasoning_of(choice.message)
        value = parse_json(choice.message.content, "content")
        validate(value, request["response_format"]["json_schema"]["schema"], "content")
        self.check_reasoning_usage(resp.usage)

    def case_reasoning_effort_none(self) -> None:
        resp = self.client.chat.completions.create(
            **self.weather_card_request(reasoning_effort="none")
        )
        choice = self.check_completion(resp, ("stop",))
        reasoning = self.reasoning_of(choice.message)
        expect(reasoning == "", f"reasoning_effort none, yet it thought: {short(reasoning)}")
        parse_json(choice.message.content, "content")

    def case_reasoning_stream(self) -> None:
        request = self.weather_card_request(
            reasoning_effort="medium", stream=True, stream_options={"include_usage": True}
        )
        chunks = list(self.client.chat.completions.create(**request))
        choice = self.stream_chunks(chunks)
        expect(choice.finish_reason == "stop", f"finish_reason {choice.finish_reason!r}")
        thinking, content, content_began = [], [], False
        for i, chunk in enumerate(chunks[:-1]):
            delta = chunk.choices[0].delta
            piece = getattr(delta, "reasoning_content", None)
            if piece is not None:
                expect(not content_began, f"stream[{i}]: thinking after the answer began")
                thinking.append(piece)
            if delta.content:
                content_began = True
                content.append(delta.content)
        expect(thinking, "no reasoning_content deltas")
        text = "".join(content)
        expect("<think>" not in text, f"the thinking leaked into the content: {short(text)}")
        value = parse_json(text, "streamed content")
        validate(value, request["response_format"]["json_schema"]["schema"], "streamed content")
        self.check_reasoning_usage(chunks[-1].usage, "the last chunk's usage")

    def case_reasoning_tools(self) -> None:
        resp = self.tool_request("required", reasoning_effort="low")
        choice = self.check_completion(resp, ("tool_calls",))
        self.check_tool_calls(choice.message.tool_calls)
        self.reasoning_of(choice.message)

    def reasoning_cases(self) -> list:
        return [
            ("models_list", self.case_models_list),
            ("reasoning_json_schema", self.case_reasoning_json_schema),
            ("reasoning_effort_none", self.case_reasoning_effort_none),
            ("reasoning_stream", self.case_reasoning_stream),
            ("reasoning_tools", self.case_reasoning_tools),
            # The server's own reasoning budget applies; the calls must stream as usual.
            ("reasoning_stream_tools_required", self.case_stream_tools_required),
        ]

    def all_cases(self) -> list:
        if REASONING:
            return self.reasoning_cases()
        return (
            [("models_list", self.case_models_list)]
            + self.cases_json_schema()
            + [
                ("parse_pydantic", self.case_parse_pydantic),
                ("stream_helper_pydantic", self.case_stream_helper_pydantic),
                ("json_object", self.case_json_object),
                ("tools_required", self.case_tools_required),
                ("tools_named", self.case_tools_named),
                ("tools_auto", self.case_tools_auto),
                ("tool_result_turn", self.case_tool_result_turn),
                ("stream_json_schema", self.case_stream_json_schema),
                ("stream_tools_required", self.case_stream_tools_required),
                ("concurrent_json_schema", self.case_concurrent),
                ("stop_sequence", self.case_stop_sequence),
                ("max_tokens_text", self.case_max_tokens_text),
                ("error_invalid_schema", self.case_error_invalid_schema),
                ("error_n", self.case_error_n),
                ("error_auth", self.case_error_auth),
            ]
        )

    def run(self, name: str, case: Callable[[], None]) -> None:
        start = time.monotonic()
        try:
            case()
        except CheckFailed as e:
            self.fail(name, str(e))
        except openai.APIStatusError as e:
            self.fail(name, f"{type(e).__name__} (status {e.status_code}): {short(e.body)}")
        except openai.APIError as e:  # connection, timeout, response validation
            cause = f" ({type(e.__cause__).__name__}: {e.__cause__})" if e.__cause__ else ""
            self.fail(name, f"{type(e).__name__}: {short(str(e), 600)}{short(cause)}")
        except Exception as e:  # noqa: BLE001 - a crash in a case is that case's failure
            tb = traceback.format_exc(limit=-3).strip().replace("\n", "\n    ")
            self.fail(name, f"{type(e).__name__}: {short(str(e))}\n    {tb}")
        else:
            self.passed += 1
            print(f"ok {name} ({time.monotonic() - start:.1f} s)", flush=True)

    def fail(self, name: str, reason: str) -> None:
        self.failed += 1
        print(f"FAIL {name}: {reason}", flush=True)


def main() -> int:
    missing = [
        v for v, value in (("GBNFC_BASE_URL", BASE_URL), ("GBNFC_API_KEY", API_KEY)) if not value
    ]
    if missing:
        print(f"FAIL setup: {' and '.join(missing)} not set")
        print("0 passed, 1 failed")
        return 1
    start = time.monotonic()
    try:
        checks = Checks()
        cases = checks.all_cases()
    except Exception as e:  # noqa: BLE001
        print(f"FAIL setup: {type(e).__name__}: {e}")
        print("0 passed, 1 failed")
        return 1
    print(f"# {len(cases)} cases against {BASE_URL} (openai {openai.__version__})", flush=True)
    for name, case in cases:
        checks.run(name, case)
    print(f"# {time.monotonic() - start:.1f} s in all", flush=True)
    print(f"{checks.passed} passed, {checks.failed} failed", flush=True)
    return 1 if checks.failed else 0


if __name__ == "__main__":
    sys.exit(main())
