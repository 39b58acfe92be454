//! The routes and the layers around them: `GET /health`, `GET /v1/models`,
//! `POST /v1/chat/completions`, `GET /metrics`; the API key (compared in constant time),
//! the body limit, CORS, request tracing, panics caught as 500s, every error answer
//! (axum's and tower-http's own included) in OpenAI's shape, and the count of answers
//! by status.

use std::sync::Arc;

use axum::extract::{Request, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use axum::{Json, Router};
use serde_json::json;
use subtle::ConstantTimeEq;
use tower_http::catch_panic::CatchPanicLayer;
use tower_http::cors::CorsLayer;
use tower_http::limit::RequestBodyLimitLayer;
use tower_http::trace::{DefaultOnResponse, TraceLayer};

use super::api_error::ApiError;
use super::completion;
use super::engines::Engines;
use super::{AppState, Ready};
use crate::openai::unix_time;

/// The application: routes, authentication and the layers.
pub fn router(state: Arc<AppState>) -> Router {
    let protected = Router::new()
        .route("/v1/models", get(models))
        .route("/v1/chat/completions", post(completion::chat_completions))
        .route("/metrics", get(metrics))
        .route_layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            authenticate,
        ));
    Router::new()
        .route("/health", get(health))
        .merge(protected)
        .fallback(not_found)
        .method_not_allowed_fallback(method_not_allowed)
        .layer(RequestBodyLimitLayer::new(state.options.max_body))
        .layer(CatchPanicLayer::custom(|_| {
            ApiError::new(
                StatusCode::INTERNAL_SERVER_ERROR,
                "server_error",
                "the server failed while answering this request; it goes on serving",
            )
            .into_response()
        }))
        .layer(middleware::from_fn_with_state(
            Arc::clone(&state),
            openai_errors,
        ))
        .layer(CorsLayer::permissive())
        .layer(
            TraceLayer::new_for_http()
                .on_response(DefaultOnResponse::new().level(tracing::Level::INFO)),
        )
        .with_state(state)
}

/// `GET /health`: 503 while the model loads, 200 once it serves; with remote engines,
/// each one's state, and 503 while none is up.
async fn health(State(state): State<Arc<AppState>>) -> Response {
    match state.ready.get() {
        Some(Ready {
            engines: Engines::Remote(pool),
            model,
        }) => {
            let up = pool.up() > 0;
            let status = if up {
                StatusCode::OK
            } else {
                StatusCode::SERVICE_UNAVAILABLE
            };
            let body = json!({
                "status": if up { "ok" } else { "unavailable" },
                "model": model,
                "backends": pool.status(),
            });
            (status, Json(body)).into_response()
        }
        Some(ready) => Json(json!({"status": "ok", "model": ready.model})).into_response(),
        None => (
            StatusCode::SERVICE_UNAVAILABLE,
            Json(json!({"status": "loading"})),
        )
            .into_response(),
    }
}

/// `GET /v1/models`: the one model served.
async fn models(State(state): State<Arc<AppState>>) -> Result<Response, ApiError> {
    let ready = completion::ready(&state)?;
    Ok(Json(json!({
        "object": "list",
        "data": [{
            "id": ready.model,
            "object": "model",
            "created": unix_time(),
            "owned_by": "gbnfc",
        }],
    }))
    .into_response())
}

/// `GET /metrics`: Prometheus text.
async fn metrics(State(state): State<Arc<AppState>>) -> Response {
    (
        [(
            header::CONTENT_TYPE,
            "application/openmetrics-text; version=1.0.0; charset=utf-8",
        )],
        state.metrics.render(),
    )
        .into_response()
}

async fn not_found(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::NOT_FOUND,
        "invalid_request_error",
        format!(
            "no route {} {} (this server has GET /health, GET /v1/models, \
             POST /v1/chat/completions and GET /metrics)",
            request.method(),
            request.uri().path()
        ),
    )
}

async fn method_not_allowed(request: Request) -> ApiError {
    ApiError::new(
        StatusCode::METHOD_NOT_ALLOWED,
        "invalid_request_error",
        format!(
            "{} is not allowed on {}",
            request.method(),
            request.uri().path()
        ),
    )
}

/// Checks `Authorization: Bearer KEY` when the server has a key.
async fn authenticate(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    request: Request,
    next: Next,
) -> Response {
    let Some(key) = &state.options.api_key else {
        return next.run(request).await;
    };
    let given = headers
        .get(header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "))
        .unwrap_or("");
    if bool::from(given.as_bytes().ct_eq(key.as_bytes())) {
        return next.run(request).await;
    }
    ApiError::new(
        StatusCode::UNAUTHORIZED,
        "invalid_request_error",
        "missing or incorrect API key: send it as `Authorization: Bearer KEY`",
    )
    .with_code("invalid_api_key")
    .into_response()
}

/// Counts every answer by status, and gives the error answers that do not come from a
/// handler (tower-http's 413, say) OpenAI's shape.
async fn openai_errors(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let response = next.run(request).await;
    let status = response.status();
    state.metrics.count_request(status.as_u16());
    let is_json = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/json"));
    if status.is_success() || is_json {
        return response;
    }
    let error = if status == StatusCode::PAYLOAD_TOO_LARGE {
        ApiError::body_too_large(state.options.max_body)
    } else {
        let body = axum::body::to_bytes(response.into_body(), 64 * 1024)
            .await
            .unwrap_or_default();
        let text = String::from_utf8_lossy(&body).trim().to_string();
        let message = if text.is_empty() {
            status.canonical_reason().unwrap_or("error").to_string()
        } else {
            text
        };
        let kind = if status.is_client_error() {
            "invalid_request_error"
        } else {
            "server_error"
        };
        ApiError::new(status, kind, message)
    };
    error.into_response()
}
