//! What the server generates on: the local model on the engine thread ([`Scheduler`]),
//! or remote engines behind a [`Pool`] — the gateway, `gbnfc serve --backend URL …`.
//!
//! Handlers see one [`Engines`]: its [`ChatModel`] renders prompts and compiles tool
//! lists; [`Engines::entry`] makes a compiled output ready (a local grammar sampler; for
//! remote engines nothing, the GBNF goes with each request); [`Engines::generator`] is
//! the non-streamed retry loop's [`Generator`]; [`Engines::submit`] starts a streamed job.

use std::sync::Arc;
use std::time::{Duration, Instant};

use gbnfc_compiler::gbnf::CheckedGrammar;

use super::cache::{Compiled, Entry};
use super::scheduler::{BlockingGenerator, CancelFlag, Job, Piece, Scheduler};
use crate::chat_model::ChatModel;
use crate::generate::{GenerateOptions, Generation, Generator, GrammarEngine};
use crate::reasoning::Reasoning;
use crate::remote::Call;
use crate::remote::Pool;
use crate::BridgeError;

/// The local engine thread, or a pool of remote engines.
#[derive(Clone)]
pub enum Engines {
    /// The model loaded in this process.
    Local(Scheduler),
    /// Remote engines, balanced and failed over.
    Remote(Arc<Pool>),
}

impl Engines {
    /// The model prompts are rendered for.
    pub fn model(&self) -> &dyn ChatModel {
        match self {
            Engines::Local(scheduler) => scheduler.engine_arc().as_ref(),
            Engines::Remote(pool) => pool.as_ref(),
        }
    }

    /// `compiled`, made ready for generation here.
    ///
    /// # Errors
    /// As [`Entry::new`].
    pub fn entry(&self, compiled: Compiled, kind: GrammarEngine) -> Result<Entry, BridgeError> {
        match self {
            Engines::Local(scheduler) => Entry::new(scheduler.engine_arc(), compiled, kind),
            Engines::Remote(_) => Ok(Entry {
                compiled,
                grammar: None,
            }),
        }
    }

    /// Why no request can be served now: no remote engine is up.
    pub fn unavailable(&self) -> Option<BridgeError> {
        match self {
            Engines::Remote(pool) if pool.up() == 0 => Some(pool.none_up()),
            _ => None,
        }
    }

    /// The generator of one non-streamed request's attempts.
    pub fn generator(&self, request: RequestScope) -> RequestGenerator<'_> {
        match self {
            Engines::Local(scheduler) => RequestGenerator::Local(BlockingGenerator {
                scheduler,
                cancel: request.cancel,
                deadline: Some(request.deadline),
                stop: request.stop,
                ready: request.entry.and_then(|entry| entry.grammar.clone()),
            }),
            Engines::Remote(pool) => RequestGenerator::Remote {
                pool,
                stop: request.stop,
                deadline: request.deadline.0,
                cancel: request.cancel,
            },
        }
    }

    /// Starts a streamed job: on the engine thread, or on a blocking task that streams
    /// from a remote engine (its grammar is `entry`'s).
    ///
    /// # Errors
    /// [`BridgeError::EngineStopped`] when the engine thread is gone.
    pub fn submit(&self, job: Job, entry: Option<Arc<Entry>>) -> Result<(), BridgeError> {
        match self {
            Engines::Local(scheduler) => scheduler.submit(job),
            Engines::Remote(pool) => {
                let pool = Arc::clone(pool);
                tokio::task::spawn_blocking(move || stream_remote(&pool, job, entry.as_deref()));
                Ok(())
            }
        }
    }
}

/// A streamed job on the pool: each piece of text to the job's channel until the client
/// is gone, then the generation (or the error) to its reply.
fn stream_remote(pool: &Pool, job: Job, entry: Option<&Entry>) {
    let Job {
        prompt,
        options,
        text,
        reply,
        cancel,
        deadline,
        stop,
        ..
    } = job;
    let mut on_text = |piece: &str| {
        !cancel.is_cancelled()
            && text
                .as_ref()
                .is_none_or(|t| t.send(Piece::Answer(piece.to_string())).is_ok())
    };
    let result = pool.complete(
        &prompt,
        entry.and_then(Entry::checked_grammar),
        &options,
        Call {
            stop: &stop,
            deadline: deadline.map(|d| d.0),
            on_text: Some(&mut on_text),
            cancelled: None,
        },
    );
    let _ = reply.send(result);
}

/// What one request gives its generator.
pub struct RequestScope {
    /// Set when the client is gone (the local engine withdraws the job).
    pub cancel: CancelFlag,
    /// When the request must be over, and the limit that sets it.
    pub deadline: (Instant, Duration),
    /// Its stop sequences.
    pub stop: Vec<String>,
    /// Its compiled output.
    pub entry: Option<Arc<Entry>>,
}

/// The generator of one request's attempts, local or remote.
pub enum RequestGenerator<'e> {
    /// Jobs of the engine thread.
    Local(BlockingGenerator<'e>),
    /// Generations on the pool.
    Remote {
        /// The pool.
        pool: &'e Pool,
        /// The request's stop sequences.
        stop: Vec<String>,
        /// When the request must be over.
        deadline: Instant,
        /// Set when the client is gone: the engine's generation is dropped.
        cancel: CancelFlag,
    },
}

impl RequestGenerator<'_> {
    fn model(&self) -> &dyn ChatModel {
        match self {
            RequestGenerator::Local(generator) => generator,
            RequestGenerator::Remote { pool, .. } => *pool,
        }
    }
}

impl ChatModel for RequestGenerator<'_> {
    fn name(&self) -> String {
        self.model().name()
    }

    fn chat_template(&self) -> Option<String> {
        self.model().chat_template()
    }

    fn ctx(&self) -> u32 {
        self.model().ctx()
    }

    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError> {
        self.model().count_tokens(text)
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        self.model().reasoning()
    }
}

impl Generator for RequestGenerator<'_> {
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError> {
        match self {
            RequestGenerator::Local(generator) => generator.generate(prompt, grammar, options),
            RequestGenerator::Remote {
                pool,
                stop,
                deadline,
                cancel,
            } => pool.complete(
                prompt,
                grammar,
                options,
                Call {
                    stop,
                    deadline: Some(*deadline),
                    on_text: None,
                    cancelled: Some(&|| cancel.is_cancelled()),
                },
            ),
        }
    }
}
