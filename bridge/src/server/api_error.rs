//! Errors in OpenAI's shape: `{"error": {"message", "type", "param", "code"}}`, with the
//! HTTP status each kind of failure gets.

use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::{json, Value};

use crate::BridgeError;

/// An error answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ApiError {
    /// The HTTP status.
    pub status: StatusCode,
    /// What went wrong and what to do.
    pub message: String,
    /// OpenAI's error type: `invalid_request_error`, `authentication_error`, …
    pub kind: &'static str,
    /// The request field at fault (`response_format.json_schema.schema`), if one is.
    pub param: Option<String>,
    /// A stable code, if there is one.
    pub code: Option<&'static str>,
}

impl ApiError {
    /// A 400 about `param`.
    pub fn bad_request(message: impl Into<String>, param: Option<&str>) -> ApiError {
        ApiError {
            status: StatusCode::BAD_REQUEST,
            message: message.into(),
            kind: "invalid_request_error",
            param: param.map(str::to_string),
            code: None,
        }
    }

    /// An error of any status.
    pub fn new(status: StatusCode, kind: &'static str, message: impl Into<String>) -> ApiError {
        ApiError {
            status,
            message: message.into(),
            kind,
            param: None,
            code: None,
        }
    }

    /// The 413 for a body over the server's `limit` bytes.
    pub fn body_too_large(limit: usize) -> ApiError {
        ApiError::new(
            StatusCode::PAYLOAD_TOO_LARGE,
            "invalid_request_error",
            format!(
                "the request body is larger than the server's limit of {limit} bytes (--max-body)"
            ),
        )
    }

    /// The same error with a code.
    pub fn with_code(mut self, code: &'static str) -> ApiError {
        self.code = Some(code);
        self
    }

    /// The same error about `param`.
    pub fn with_param(mut self, param: &str) -> ApiError {
        self.param = Some(param.to_string());
        self
    }

    /// The body: `{"error": {...}}`.
    pub fn body(&self) -> Value {
        json!({"error": {
            "message": self.message,
            "type": self.kind,
            "param": self.param,
            "code": self.code,
        }})
    }

    /// A bridge error as an answer: what the request could have done differently is a 4xx
    /// naming the field; the engine's own failures are 5xx.
    pub fn from_bridge(error: &BridgeError, param: Option<&str>) -> ApiError {
        use BridgeError as E;
        let message = error.to_string();
        match error {
            E::Schema(_) | E::Tools(_) | E::GrammarCheck(_) | E::GrammarRefused(_) => {
                ApiError::bad_request(message, param)
            }
            E::GrammarTooAmbiguous { .. } => {
                ApiError::bad_request(message, param).with_code("grammar_too_ambiguous")
            }
            E::Messages(_) | E::ChatTemplate(_) => ApiError::bad_request(message, Some("messages")),
            E::ContextTooSmall { .. } => ApiError::bad_request(message, Some("messages"))
                .with_code("context_length_exceeded"),
            E::BudgetTooSmall { .. } | E::Truncated { .. } => {
                ApiError::bad_request(message, Some("max_tokens")).with_code("max_tokens_too_small")
            }
            E::Invalid { .. } => ApiError::new(
                StatusCode::UNPROCESSABLE_ENTITY,
                "invalid_output_error",
                message,
            )
            .with_code("invalid_output"),
            E::TimedOut { .. } => {
                ApiError::new(StatusCode::GATEWAY_TIMEOUT, "timeout_error", message)
            }
            E::Cancelled => ApiError::new(StatusCode::REQUEST_TIMEOUT, "cancelled", message),
            E::EngineStopped(_) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "server_error", message)
            }
            E::BackendDown { .. } | E::NoBackend(_) => {
                ApiError::new(StatusCode::SERVICE_UNAVAILABLE, "server_error", message)
                    .with_code("backend_unavailable")
            }
            _ => ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, "server_error", message),
        }
    }
}

impl IntoResponse for ApiError {
    fn into_response(self) -> Response {
        let mut response = (self.status, axum::Json(self.body())).into_response();
        if self.status == StatusCode::TOO_MANY_REQUESTS {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static("1"));
        }
        response
    }
}
