//! `gbnfc serve`: the OpenAI-compatible server. Parses flags and starts
//! [`gbnfc_bridge::server::serve`]; the model and sampling flags of `run` become every
//! request's defaults.

use std::net::IpAddr;
use std::process::ExitCode;
use std::time::Duration;

use clap::Args;
use gbnfc_bridge::backend;
use gbnfc_bridge::server::engines::Engines;
use gbnfc_bridge::server::{self, ServeOptions, DEFAULT_MAX_BODY, DEFAULT_PORT};

use crate::engine_args::{failure, EngineArgs};
use crate::retrieval_args::RetrievalArgs;
use crate::Failure;

/// The flags of `gbnfc serve`.
#[derive(Args, Debug, Clone)]
pub struct ServeArgs {
    /// The address to listen on. Anything but loopback needs --api-key (or --no-auth).
    #[arg(long, default_value = "127.0.0.1", help_heading = "Server")]
    pub host: IpAddr,
    /// The port (0: any free port; the URL printed when ready says which).
    #[arg(long, default_value_t = DEFAULT_PORT, help_heading = "Server")]
    pub port: u16,
    /// The key clients must send as `Authorization: Bearer KEY` (default: $GBNFC_API_KEY).
    #[arg(
        long,
        env = "GBNFC_API_KEY",
        hide_env_values = true,
        help_heading = "Server"
    )]
    pub api_key: Option<String>,
    /// Serve a non-loopback address without a key, on purpose.
    #[arg(long, help_heading = "Server")]
    pub no_auth: bool,
    /// Generations decoded together (one llama.cpp context, one sequence each; the
    /// context holds --ctx tokens per sequence).
    #[arg(long, default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256), help_heading = "Server")]
    pub parallel: u32,
    /// Requests that may wait for a free slot; past them, 429 with Retry-After.
    #[arg(long, default_value_t = 64, help_heading = "Server")]
    pub queue: usize,
    /// The largest request body in bytes; larger ones get 413.
    #[arg(long, value_name = "BYTES", default_value_t = DEFAULT_MAX_BODY, value_parser = bytes, help_heading = "Server")]
    pub max_body: usize,
    /// Seconds a request may take (queueing, compiling and generating); then 504.
    #[arg(long, value_name = "S", default_value_t = 600.0, value_parser = seconds, help_heading = "Server")]
    pub request_timeout: f64,
    /// Further attempts when a non-streamed answer fails validation.
    #[arg(long, value_name = "N", default_value_t = 2, help_heading = "Server")]
    pub retries: usize,
    #[command(flatten)]
    pub retrieval: RetrievalArgs,
    #[command(flatten)]
    pub engine: EngineArgs,
}

/// Runs `gbnfc serve` until interrupted (Ctrl-C or SIGTERM).
pub fn run(args: &ServeArgs) -> Result<ExitCode, Failure> {
    let options = ServeOptions {
        host: args.host,
        port: args.port,
        api_key: args.api_key.clone().filter(|k| !k.is_empty()),
        no_auth: args.no_auth,
        parallel: args.parallel,
        queue: args.queue,
        max_body: args.max_body,
        request_timeout: Duration::from_secs_f64(args.request_timeout),
        engine: args.engine.engine_options()?,
        backends: args.engine.backend.clone(),
        defaults: args.engine.generate_options(),
        tool_defaults: args.engine.tool_call_options(),
        retries: args.retries,
        retrieval: args.retrieval.retrieval(),
        compact_tools: args.retrieval.compact_tools,
    };
    options.check().map_err(|message| {
        Failure::new(message).help("loopback (127.0.0.1, the default) needs no key")
    })?;
    backend::set_verbose(args.engine.verbose);
    server::init_logging(args.engine.quiet);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| Failure::new(format!("cannot start the server's runtime: {e}")))?;
    let parallel = args.parallel;
    let on_ready = move |address: std::net::SocketAddr, ready: &server::Ready| {
        let engines = match &ready.engines {
            Engines::Local(_) => format!("{parallel} parallel"),
            Engines::Remote(pool) => format!(
                "{} of {} backends up, {} slots",
                pool.up(),
                pool.engines(),
                pool.slots()
            ),
        };
        eprintln!(
            "gbnfc serve: listening on http://{address} (model {}, {engines})",
            ready.model
        );
    };
    runtime
        .block_on(server::serve(options, on_ready, server::shutdown_signal()))
        .map_err(failure)?;
    Ok(ExitCode::SUCCESS)
}

fn seconds(text: &str) -> Result<f64, String> {
    let x: f64 = text.parse().map_err(|e| format!("{e}"))?;
    if x.is_finite() && x > 0.0 && x <= 1e9 {
        Ok(x)
    } else {
        Err("must be a number of seconds > 0".into())
    }
}

fn bytes(text: &str) -> Result<usize, String> {
    match text.parse::<usize>() {
        Ok(n) if n > 0 => Ok(n),
        Ok(_) => Err("must be at least 1 byte".into()),
        Err(e) => Err(format!("{e}")),
    }
}
