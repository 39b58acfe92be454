//! One remote engine's HTTP: JSON requests and answers, Server-Sent Events, and which
//! failures mean the engine is down ([`BridgeError::BackendDown`]: it cannot be reached,
//! the connection broke, or it answers 503) rather than that it refused the request
//! ([`BridgeError::Remote`]).

use std::io::{BufRead, BufReader};
use std::time::{Duration, Instant};

use serde_json::Value;

use super::BackendUrl;
use crate::BridgeError;

/// How long connecting to the server may take.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);

/// How long one request may take when its caller sets no deadline, generation included:
/// past it the request fails rather than waiting on a server that stopped answering.
pub const REQUEST_TIMEOUT: Duration = Duration::from_secs(600);

/// How long an idle connection is kept for the next request: under the 5 s after which
/// llama-server (cpp-httplib's keep-alive timeout) and vLLM (uvicorn's) close idle
/// connections, so a request never goes out on a connection the engine is closing.
/// With the client's own default (90 s), a request now and then met a connection that
/// closed under it, and the engine was taken for down (a CI run of `cli/tests/gateway.rs`).
const IDLE_CONNECTION_KEPT: Duration = Duration::from_secs(2);

/// An engine's address and the client that reaches it.
#[derive(Debug, Clone)]
pub struct Http {
    url: BackendUrl,
    client: reqwest::blocking::Client,
}

impl Http {
    /// A client for the engine at `url`.
    ///
    /// # Errors
    /// [`BridgeError::Remote`] when the HTTP client cannot be made.
    pub fn new(url: &BackendUrl) -> Result<Http, BridgeError> {
        let client = reqwest::blocking::Client::builder()
            .connect_timeout(CONNECT_TIMEOUT)
            .timeout(REQUEST_TIMEOUT)
            .pool_idle_timeout(IDLE_CONNECTION_KEPT)
            .build()
            .map_err(|e| refused(url, format!("cannot make an HTTP client: {e}")))?;
        Ok(Http {
            url: url.clone(),
            client,
        })
    }

    /// The engine's URL.
    pub fn url(&self) -> &BackendUrl {
        &self.url
    }

    /// `GET path`'s JSON, within `timeout`.
    ///
    /// # Errors
    /// As [`Http::post`].
    pub fn get(&self, path: &str, timeout: Duration) -> Result<Value, BridgeError> {
        let response = self.get_request(path, timeout).send();
        self.json(path, response)
    }

    /// Whether `GET path` answers with a 2xx status within `timeout`, whatever its body.
    pub fn answers(&self, path: &str, timeout: Duration) -> bool {
        self.get_request(path, timeout)
            .send()
            .is_ok_and(|r| r.status().is_success())
    }

    /// `GET path`'s body as text, within `timeout`.
    ///
    /// # Errors
    /// As [`Http::post`], but any body is an answer.
    pub fn get_text(&self, path: &str, timeout: Duration) -> Result<String, BridgeError> {
        let response = self.get_request(path, timeout).send();
        self.text(path, response)
    }

    /// `GET path`, to be sent within `timeout`.
    fn get_request(&self, path: &str, timeout: Duration) -> reqwest::blocking::RequestBuilder {
        self.client
            .get(format!("{}{path}", self.url.base))
            .timeout(timeout)
    }

    /// `POST path` with `body`, answered by JSON before `deadline` (else the default
    /// request timeout).
    ///
    /// # Errors
    /// [`BridgeError::BackendDown`] when the engine cannot be reached, the connection
    /// breaks or it answers 503; [`BridgeError::Remote`] for any other error status, a
    /// timeout, or an answer that is not JSON.
    pub fn post(
        &self,
        path: &str,
        body: &Value,
        deadline: Option<Instant>,
    ) -> Result<Value, BridgeError> {
        let response = self.request(path, body, deadline).send();
        self.json(path, response)
    }

    /// `POST path` with `body`, answered by Server-Sent Events: each `data:` event's JSON
    /// goes to `event`, until it returns `false` (the answer is dropped, which ends the
    /// engine's work on it) or the stream ends. Returns whether `event` asked to stop.
    ///
    /// # Errors
    /// As [`Http::post`]; an `error` in an event is [`BridgeError::Remote`].
    pub fn post_events(
        &self,
        path: &str,
        body: &Value,
        deadline: Option<Instant>,
        mut event: impl FnMut(Value) -> bool,
    ) -> Result<bool, BridgeError> {
        let response = self
            .request(path, body, deadline)
            .send()
            .map_err(|e| self.unreachable(path, &e))?;
        let status = response.status();
        if !status.is_success() {
            let text = response.text().unwrap_or_default();
            return Err(self.status_error(path, status, &text));
        }
        for line in BufReader::new(response).lines() {
            let line =
                line.map_err(|e| down(&self.url, format!("{path}: the event stream broke: {e}")))?;
            let Some(data) = line.strip_prefix("data:") else {
                continue;
            };
            let data = data.trim();
            if data == "[DONE]" {
                break;
            }
            let value: Value = serde_json::from_str(data)
                .map_err(|e| refused(&self.url, format!("{path}: an event is not JSON: {e}")))?;
            if let Some(message) = value.pointer("/error/message").and_then(Value::as_str) {
                return Err(refused(&self.url, format!("{path}: {message}")));
            }
            if !event(value) {
                return Ok(true);
            }
        }
        Ok(false)
    }

    fn request(
        &self,
        path: &str,
        body: &Value,
        deadline: Option<Instant>,
    ) -> reqwest::blocking::RequestBuilder {
        let timeout = deadline.map_or(REQUEST_TIMEOUT, |d| {
            d.saturating_duration_since(Instant::now())
                .max(Duration::from_millis(1))
        });
        self.client
            .post(format!("{}{path}", self.url.base))
            .timeout(timeout)
            .json(body)
    }

    /// The body of a 2xx answer; anything else as an error, with the server's own message
    /// when it gave one.
    fn text(
        &self,
        path: &str,
        response: reqwest::Result<reqwest::blocking::Response>,
    ) -> Result<String, BridgeError> {
        let response = response.map_err(|e| self.unreachable(path, &e))?;
        let status = response.status();
        let text = response
            .text()
            .map_err(|e| down(&self.url, format!("{path}: the answer was cut: {e}")))?;
        if status.is_success() {
            Ok(text)
        } else {
            Err(self.status_error(path, status, &text))
        }
    }

    /// The JSON body of a 2xx answer; anything else as [`Http::text`] says.
    fn json(
        &self,
        path: &str,
        response: reqwest::Result<reqwest::blocking::Response>,
    ) -> Result<Value, BridgeError> {
        let text = self.text(path, response)?;
        serde_json::from_str(&text).map_err(|_| {
            refused(
                &self.url,
                format!(
                    "{path}: the answer is not JSON: is it {}?",
                    self.url.kind.describe()
                ),
            )
        })
    }

    /// A request that got no answer: the engine is down, unless it merely took too long.
    fn unreachable(&self, path: &str, e: &reqwest::Error) -> BridgeError {
        if e.is_timeout() {
            return refused(&self.url, format!("{path}: no answer in time: {e}"));
        }
        let what = if e.is_connect() {
            "cannot connect (is the server running?)"
        } else {
            "the connection failed"
        };
        down(&self.url, format!("{path}: {what}: {e}"))
    }

    fn status_error(&self, path: &str, status: reqwest::StatusCode, text: &str) -> BridgeError {
        let message = serde_json::from_str::<Value>(text)
            .ok()
            .and_then(|v| v.pointer("/error/message")?.as_str().map(str::to_string))
            .unwrap_or_else(|| text.chars().take(300).collect());
        let reason = format!("{path}: HTTP {status}: {message}");
        if status == reqwest::StatusCode::SERVICE_UNAVAILABLE {
            down(&self.url, reason)
        } else {
            refused(&self.url, reason)
        }
    }
}

/// The engine refused or could not serve one request.
pub fn refused(url: &BackendUrl, reason: String) -> BridgeError {
    BridgeError::Remote {
        url: url.to_string(),
        reason,
    }
}

/// The engine is down: another may serve the request.
pub fn down(url: &BackendUrl, reason: String) -> BridgeError {
    BridgeError::BackendDown {
        url: url.to_string(),
        reason,
    }
}
