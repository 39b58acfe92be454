//! What `GET /metrics` reports, in Prometheus' text format (through `prometheus-client`):
//! requests by status, prompt and generated tokens, the queue's depth, time to first
//! token, and the grammar cache's hits and misses.

use std::time::Duration;

use prometheus_client::encoding::text::encode;
use prometheus_client::encoding::EncodeLabelSet;
use prometheus_client::metrics::counter::Counter;
use prometheus_client::metrics::family::Family;
use prometheus_client::metrics::gauge::Gauge;
use prometheus_client::metrics::histogram::{exponential_buckets, Histogram};
use prometheus_client::registry::Registry;

/// The label of a request counter: the HTTP status answered.
#[derive(Debug, Clone, Hash, PartialEq, Eq, EncodeLabelSet)]
struct StatusLabel {
    status: u16,
}

/// The server's counters, shared by the handlers and the engine thread.
pub struct Metrics {
    registry: Registry,
    requests: Family<StatusLabel, Counter>,
    prompt_tokens: Counter,
    cached_prompt_tokens: Counter,
    generated_tokens: Counter,
    queue_depth: Gauge,
    in_flight: Gauge,
    first_token: Histogram,
    cache_hits: Counter,
    cache_misses: Counter,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics::new()
    }
}

impl Metrics {
    /// Every metric at zero, registered under the `gbnfc_` prefix.
    pub fn new() -> Metrics {
        let mut registry = Registry::with_prefix("gbnfc");
        let requests = Family::<StatusLabel, Counter>::default();
        registry.register(
            "http_requests",
            "HTTP requests answered, by status",
            requests.clone(),
        );
        let prompt_tokens = Counter::default();
        registry.register(
            "prompt_tokens",
            "Prompt tokens evaluated",
            prompt_tokens.clone(),
        );
        let cached_prompt_tokens = Counter::default();
        registry.register(
            "prompt_tokens_cached",
            "Prompt tokens reused from a slot's KV cache instead of evaluated",
            cached_prompt_tokens.clone(),
        );
        let generated_tokens = Counter::default();
        registry.register(
            "generated_tokens",
            "Tokens generated",
            generated_tokens.clone(),
        );
        let queue_depth = Gauge::default();
        registry.register(
            "queue_depth",
            "Generations waiting for a free slot",
            queue_depth.clone(),
        );
        let in_flight = Gauge::default();
        registry.register(
            "requests_in_flight",
            "Chat completion requests being answered or waiting",
            in_flight.clone(),
        );
        let first_token = Histogram::new(exponential_buckets(0.01, 2.0, 14));
        registry.register(
            "time_to_first_token_seconds",
            "Seconds from a generation's submission to its first output text",
            first_token.clone(),
        );
        let cache_hits = Counter::default();
        registry.register(
            "grammar_cache_hits",
            "Requests whose grammar came from the cache",
            cache_hits.clone(),
        );
        let cache_misses = Counter::default();
        registry.register(
            "grammar_cache_misses",
            "Requests whose grammar was compiled",
            cache_misses.clone(),
        );
        Metrics {
            registry,
            requests,
            prompt_tokens,
            cached_prompt_tokens,
            generated_tokens,
            queue_depth,
            in_flight,
            first_token,
            cache_hits,
            cache_misses,
        }
    }

    /// Counts a request answered with `status`.
    pub fn count_request(&self, status: u16) {
        self.requests.get_or_create(&StatusLabel { status }).inc();
    }

    /// Counts prompt tokens: `evaluated` decoded, `cached` reused.
    pub fn add_prompt_tokens(&self, evaluated: usize, cached: usize) {
        self.prompt_tokens.inc_by(evaluated as u64);
        self.cached_prompt_tokens.inc_by(cached as u64);
    }

    /// Counts generated tokens.
    pub fn add_generated_tokens(&self, tokens: usize) {
        self.generated_tokens.inc_by(tokens as u64);
    }

    /// Sets the number of generations waiting for a slot.
    pub fn set_queue_depth(&self, depth: usize) {
        self.queue_depth.set(depth as i64);
    }

    /// One more (`+1`) or one fewer (`-1`) request in flight.
    pub fn add_in_flight(&self, delta: i64) {
        self.in_flight.inc_by(delta);
    }

    /// Records a time to first token.
    pub fn observe_first_token(&self, elapsed: Duration) {
        self.first_token.observe(elapsed.as_secs_f64());
    }

    /// Counts a grammar-cache lookup.
    pub fn count_cache(&self, hit: bool) {
        if hit {
            self.cache_hits.inc();
        } else {
            self.cache_misses.inc();
        }
    }

    /// The Prometheus text exposition of every metric.
    pub fn render(&self) -> String {
        let mut text = String::new();
        if encode(&mut text, &self.registry).is_err() {
            text.clear();
        }
        text
    }
}
