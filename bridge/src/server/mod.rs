//! `gbnfc serve`: an OpenAI-compatible HTTP server whose structured outputs and tool calls
//! are exact.
//!
//! ```text
//! HTTP (axum, tower-http) ──► request::read ──► compile (cache) ──► Scheduler ──► engine thread
//!                                                                     ▲  one batch per step over
//!  JSON answer ◄── validate / retry (blocking task) ◄── Generation ───┘  every active slot
//!  SSE chunks  ◄── stream (tool calls read incrementally) ◄── text as it grows
//! ```
//!
//! Start at [`serve`]. The listener is bound first and `/health` answers 503 while the
//! model loads; then the engine thread ([`scheduler`]) owns one llama.cpp context with
//! `parallel` sequences. Handlers never touch that context: they read the request
//! ([`request`]), compile its schema, grammar or tool list through the LRU
//! [`cache`], render the prompt with the model's template, and hand jobs to the
//! scheduler. Non-streamed answers run the bridge's retry loop on a blocking task
//! ([`scheduler::BlockingGenerator`]); streamed ones ([`stream`]) take one generation's
//! text as it grows. At most `parallel + queue` requests are admitted at once; past that,
//! 429 with `Retry-After`. Every error is OpenAI-shaped ([`api_error`]).
//!
//! As a gateway (`backends` given), no model loads: [`engines`] puts a pool of remote
//! engines ([`crate::remote::Pool`]) where the scheduler was, the grammar goes with each
//! request instead of being made ready here, and a thread checks the engines' health.

pub mod api_error;
pub mod cache;
pub mod completion;
pub mod engines;
pub mod fault;
pub mod metrics;
pub mod request;
pub mod routes;
pub mod scheduler;
pub mod stream;

use std::net::{IpAddr, SocketAddr};
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use tokio::sync::Semaphore;

use crate::engine::{Engine, EngineOptions};
use crate::generate::GenerateOptions;
use crate::remote::{pool::HEALTH_INTERVAL, BackendUrl, Pool};
use crate::tool_retrieval::Retrieval;
use crate::BridgeError;
use cache::GrammarCache;
use engines::Engines;
use metrics::Metrics;
use scheduler::Scheduler;

/// The default port.
pub const DEFAULT_PORT: u16 = 8080;

/// The default largest request body: 8 MiB.
pub const DEFAULT_MAX_BODY: usize = 8 * 1024 * 1024;

/// Compiled outputs the cache keeps.
pub const GRAMMAR_CACHE_SIZE: usize = 64;

/// How to run the server.
#[derive(Debug, Clone)]
pub struct ServeOptions {
    /// The address to bind.
    pub host: IpAddr,
    /// The port (0: any free one; the bound address is reported when ready).
    pub port: u16,
    /// The key clients must send as `Authorization: Bearer KEY`; `None`: no key.
    pub api_key: Option<String>,
    /// Serve a non-loopback address without a key (refused unless set).
    pub no_auth: bool,
    /// Generations decoded together (with `backends`, their slots say it instead).
    pub parallel: u32,
    /// Requests that may wait for a slot beyond `parallel`; more get 429.
    pub queue: usize,
    /// The largest request body in bytes; larger ones get 413.
    pub max_body: usize,
    /// How long a request may take; then 504 (or an error event in a stream).
    pub request_timeout: Duration,
    /// The model and how to run it.
    pub engine: EngineOptions,
    /// Remote engines to generate on instead of a local model (the gateway); of
    /// `engine`, only the chat template applies then.
    pub backends: Vec<BackendUrl>,
    /// Sampling settings for whatever a request leaves out.
    pub defaults: GenerateOptions,
    /// The same for requests with `tools` (a lower temperature:
    /// [`crate::tool_calls::TOOL_CALL_TEMPERATURE`]).
    pub tool_defaults: GenerateOptions,
    /// Further attempts when a non-streamed answer fails validation.
    pub retries: usize,
    /// Which tools a request with `tools` shows the model, where it does not say
    /// (`tools_top_k`).
    pub retrieval: Retrieval,
    /// Show tools in the compact rendering ([`crate::compact_tools`]).
    pub compact_tools: bool,
}

impl ServeOptions {
    /// Refuses settings that would serve the network without a key, or nothing at all.
    ///
    /// # Errors
    /// A message saying what to change.
    pub fn check(&self) -> Result<(), String> {
        if !self.host.is_loopback() && self.api_key.is_none() && !self.no_auth {
            return Err(format!(
                "refusing to serve {} without an API key: pass --api-key (or set \
                 GBNFC_API_KEY), or --no-auth to serve it open on purpose",
                self.host
            ));
        }
        if self.parallel == 0 {
            return Err("--parallel must be at least 1".into());
        }
        if self.max_body == 0 {
            return Err("--max-body must be at least 1 byte".into());
        }
        if self.request_timeout.is_zero() {
            return Err("--request-timeout must be more than 0 seconds".into());
        }
        Ok(())
    }
}

/// What requests find once the model is loaded.
pub struct Ready {
    /// The engine thread, or the remote engines.
    pub engines: Engines,
    /// The model's name (`/v1/models`, and `model` when a request leaves it out).
    pub model: String,
}

/// What every handler shares.
pub struct AppState {
    /// The settings.
    pub options: ServeOptions,
    /// Set once the model is loaded.
    pub ready: OnceLock<Ready>,
    /// The counters of `/metrics`.
    pub metrics: Arc<Metrics>,
    /// Compiled schemas, grammars and tool lists.
    pub cache: GrammarCache,
    /// Admission: `parallel + queue` permits.
    pub admission: Arc<Semaphore>,
}

impl AppState {
    /// The state before the model is loaded.
    pub fn new(options: ServeOptions) -> AppState {
        let permits = (options.parallel as usize).saturating_add(options.queue);
        AppState {
            options,
            ready: OnceLock::new(),
            metrics: Arc::new(Metrics::new()),
            cache: GrammarCache::new(GRAMMAR_CACHE_SIZE),
            admission: Arc::new(Semaphore::new(permits.min(Semaphore::MAX_PERMITS))),
        }
    }

    /// Loads the model and starts the engine thread, or connects to the remote engines
    /// and starts their health checks (blocking).
    ///
    /// # Errors
    /// Any loading error; [`BridgeError::Context`] for the engine's context; as
    /// [`Pool::connect`] for remote engines.
    pub fn load(&self) -> Result<&Ready, BridgeError> {
        let engines = if self.options.backends.is_empty() {
            let engine = Arc::new(Engine::load(&self.options.engine)?);
            Engines::Local(Scheduler::start(
                engine,
                self.options.parallel,
                Arc::clone(&self.metrics),
            )?)
        } else {
            let pool = Arc::new(Pool::connect(&self.options.backends, &self.options.engine)?);
            // The engines decode their slots at once; admission follows them.
            let parallel = self.options.parallel as usize;
            self.admission
                .add_permits(pool.slots().saturating_sub(parallel));
            watch_health(&pool);
            Engines::Remote(pool)
        };
        let model = engines.model().name();
        Ok(self.ready.get_or_init(|| Ready { engines, model }))
    }
}

/// Checks the pool's engines every [`HEALTH_INTERVAL`] on a thread of its own, until
/// the pool is dropped.
fn watch_health(pool: &Arc<Pool>) {
    let pool = Arc::downgrade(pool);
    let _ = std::thread::Builder::new()
        .name("gbnfc-health".into())
        .spawn(move || loop {
            std::thread::sleep(HEALTH_INTERVAL);
            match pool.upgrade() {
                Some(pool) => pool.check_health(),
                None => return,
            }
        });
}

/// Runs the server until `shutdown` completes: binds, then loads the model while `/health`
/// answers 503, then calls `on_ready` with the bound address and serves.
///
/// # Errors
/// A bind failure, a loading failure, or settings [`ServeOptions::check`] refuses.
pub async fn serve(
    options: ServeOptions,
    on_ready: impl FnOnce(SocketAddr, &Ready) + Send + 'static,
    shutdown: impl std::future::Future<Output = ()> + Send + 'static,
) -> Result<(), BridgeError> {
    options.check().map_err(BridgeError::Serve)?;
    let listener = tokio::net::TcpListener::bind((options.host, options.port))
        .await
        .map_err(|e| {
            BridgeError::Serve(format!(
                "cannot listen on {}:{}: {e}",
                options.host, options.port
            ))
        })?;
    let address = listener
        .local_addr()
        .map_err(|e| BridgeError::Serve(format!("cannot read the bound address: {e}")))?;
    let state = Arc::new(AppState::new(options));
    let app = routes::router(Arc::clone(&state));
    let (failed, failure) = tokio::sync::oneshot::channel::<BridgeError>();
    let loader = Arc::clone(&state);
    tokio::task::spawn_blocking(move || match loader.load() {
        Ok(ready) => on_ready(address, ready),
        Err(error) => {
            let _ = failed.send(error);
        }
    });
    let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
    // Streamed chunks are small writes: without TCP_NODELAY each waits on the client's
    // delayed acknowledgement of the one before.
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    let server = axum::serve(listener, app).with_graceful_shutdown(async move {
        let _ = stopped.await;
    });
    let server = tokio::spawn(async move { server.await });
    let outcome = tokio::select! {
        () = shutdown => Ok(()),
        Ok(error) = failure => Err(error),
    };
    let _ = stop.send(());
    let _ = tokio::time::timeout(Duration::from_secs(5), server).await;
    outcome
}

/// Logs one line per request on standard error (`GBNFC_LOG` sets the filter, in
/// `tracing-subscriber`'s syntax; `quiet`: warnings only). Does nothing when a logger is
/// already installed.
pub fn init_logging(quiet: bool) {
    let default = if quiet {
        "warn"
    } else {
        "warn,tower_http=info,gbnfc_bridge=info"
    };
    let filter = tracing_subscriber::EnvFilter::try_from_env("GBNFC_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new(default));
    let _ = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .with_ansi(false)
        .try_init();
}

/// Completes on Ctrl-C or, on Unix, SIGTERM.
pub async fn shutdown_signal() {
    let interrupt = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut signal) => {
                signal.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = interrupt => {}
        () = terminate => {}
    }
}
