//! The engine thread: one llama.cpp context whose sequences (slots) are decoded together,
//! one batch per step (continuous batching).
//!
//! Only this thread touches the llama.cpp context. Handlers hand it [`Job`]s over a
//! channel ([`Scheduler::submit`]); it admits them into free slots as they come, each
//! with its own grammar state, sampler chain, close-out and budget (a
//! `Run`), and every step decodes one token of every active
//! sequence in one batch. A job's text goes back as it grows (when it asked to stream)
//! and its [`Generation`] at the end.
//!
//! A new job takes the free slot whose cached tokens share the longest prefix with its
//! prompt, and only the rest of the prompt is evaluated (the last prompt token is always
//! evaluated again, for its logits). A job whose client went away (its cancel flag set, or
//! its stream's receiver dropped) or whose deadline passed ends at the next step and frees
//! its slot.

use std::collections::VecDeque;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::Arc;
use std::time::{Duration, Instant};

use gbnfc_compiler::gbnf::CheckedGrammar;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::llama_batch::LlamaBatch;
use llama_cpp_2::token::LlamaToken;
use tokio::sync::{mpsc as tokio_mpsc, oneshot};

use super::fault;
use super::metrics::Metrics;
use crate::chat_model::ChatModel;
use crate::engine::Engine;
use crate::generate::{GenerateOptions, Generation, Generator, ReadyGrammar, Run, Step};
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// Set when a job's client no longer wants its result; the engine thread stops the job
/// at its next step.
#[derive(Debug, Clone, Default)]
pub struct CancelFlag(Arc<AtomicBool>);

impl CancelFlag {
    /// Withdraws the job.
    pub fn cancel(&self) {
        self.0.store(true, Ordering::Relaxed);
    }

    /// Whether the job was withdrawn.
    pub fn is_cancelled(&self) -> bool {
        self.0.load(Ordering::Relaxed)
    }
}

/// Cancels its flag when dropped: held by a request handler, so that a handler dropped
/// with its connection withdraws the generation it waits for.
#[derive(Debug)]
pub struct CancelOnDrop(pub CancelFlag);

impl Drop for CancelOnDrop {
    fn drop(&mut self) {
        self.0.cancel();
    }
}

/// One generation asked of the engine thread.
pub struct Job {
    /// The templated prompt.
    pub prompt: String,
    /// The grammar the output must match, made ready once for all its generations.
    pub grammar: Option<Arc<ReadyGrammar>>,
    /// Sampling and budget.
    pub options: GenerateOptions,
    /// Where the output text goes as it grows (whole characters), when streaming.
    pub text: Option<tokio_mpsc::UnboundedSender<Piece>>,
    /// Where the finished generation (or the error) goes.
    pub reply: oneshot::Sender<Result<Generation, BridgeError>>,
    /// Set when the client no longer wants the result.
    pub cancel: CancelFlag,
    /// When the job must be over.
    pub deadline: Option<(Instant, Duration)>,
    /// Stop sequences: the output ends before the first one it contains (free text only).
    pub stop: Vec<String>,
}

/// A streamed job's new text: the thinking's or the answer's (whole characters).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Piece {
    /// Text of the reasoning section ([`crate::reasoning`]).
    Reasoning(String),
    /// Text of the answer.
    Answer(String),
}

/// The handle handlers use to reach the engine thread.
#[derive(Clone)]
pub struct Scheduler {
    engine: Arc<Engine>,
    jobs: mpsc::Sender<(Job, Instant)>,
}

impl Scheduler {
    /// Starts the engine thread with `parallel` slots. Returns once its context exists.
    ///
    /// # Errors
    /// [`BridgeError::Context`] when llama.cpp cannot make the context;
    /// [`BridgeError::EngineStopped`] when the thread cannot start.
    pub fn start(
        engine: Arc<Engine>,
        parallel: u32,
        metrics: Arc<Metrics>,
    ) -> Result<Scheduler, BridgeError> {
        let (jobs, receiver) = mpsc::channel::<(Job, Instant)>();
        let (ready, started) = mpsc::channel::<Result<(), BridgeError>>();
        let thread_engine = Arc::clone(&engine);
        std::thread::Builder::new()
            .name("gbnfc-engine".into())
            .spawn(move || {
                let (ctx, per_sequence) = match thread_engine.new_parallel_context(parallel) {
                    Ok(made) => made,
                    Err(e) => {
                        let _ = ready.send(Err(e));
                        return;
                    }
                };
                let _ = ready.send(Ok(()));
                let mut engine_loop = EngineLoop {
                    engine: &thread_engine,
                    ctx,
                    per_sequence,
                    slots: (0..parallel.max(1)).map(|_| Slot::default()).collect(),
                    waiting: VecDeque::new(),
                    metrics,
                };
                engine_loop.run(&receiver);
            })
            .map_err(|e| BridgeError::EngineStopped(format!("cannot start its thread: {e}")))?;
        started
            .recv()
            .map_err(|_| BridgeError::EngineStopped("its thread ended while starting".into()))??;
        Ok(Scheduler { engine, jobs })
    }

    /// The engine (its model renders prompts and tokenizes on the caller's thread).
    pub fn engine_arc(&self) -> &Arc<Engine> {
        &self.engine
    }

    /// Hands a job to the engine thread.
    ///
    /// # Errors
    /// [`BridgeError::EngineStopped`] when the thread is gone.
    pub fn submit(&self, job: Job) -> Result<(), BridgeError> {
        self.jobs
            .send((job, Instant::now()))
            .map_err(|_| BridgeError::EngineStopped("its thread has stopped".into()))
    }
}

/// The scheduler as a [`Generator`] for the blocking retry loop: each generation is a job,
/// waited for on the calling thread, withdrawn with `cancel`, bounded by `deadline`.
pub struct BlockingGenerator<'s> {
    /// The engine thread.
    pub scheduler: &'s Scheduler,
    /// The request's cancel flag (every attempt shares it).
    pub cancel: CancelFlag,
    /// The request's deadline (every attempt shares it).
    pub deadline: Option<(Instant, Duration)>,
    /// The request's stop sequences.
    pub stop: Vec<String>,
    /// The request's grammar, made ready: what `generate` runs under when it is given a
    /// grammar (the retry loop passes the request's own). Without it, the grammar is
    /// made ready for each generation.
    pub ready: Option<Arc<ReadyGrammar>>,
}

impl ChatModel for BlockingGenerator<'_> {
    fn name(&self) -> String {
        self.scheduler.engine.name()
    }

    fn chat_template(&self) -> Option<String> {
        ChatModel::chat_template(self.scheduler.engine.as_ref())
    }

    fn ctx(&self) -> u32 {
        self.scheduler.engine.ctx()
    }

    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError> {
        self.scheduler.engine.count_tokens(text)
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        self.scheduler.engine.reasoning()
    }
}

impl Generator for BlockingGenerator<'_> {
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError> {
        let grammar = match (grammar, &self.ready) {
            (None, _) => None,
            (Some(_), Some(ready)) => Some(Arc::clone(ready)),
            (Some(grammar), None) => Some(Arc::new(ReadyGrammar::new(
                &self.scheduler.engine,
                grammar,
                options.grammar_engine,
            )?)),
        };
        let (reply, answer) = oneshot::channel();
        self.scheduler.submit(Job {
            prompt: prompt.to_string(),
            grammar,
            options: *options,
            text: None,
            reply,
            cancel: self.cancel.clone(),
            deadline: self.deadline,
            stop: self.stop.clone(),
        })?;
        answer
            .blocking_recv()
            .map_err(|_| BridgeError::EngineStopped("it dropped a job".into()))?
    }
}

/// One sequence of the context: the tokens its KV cache holds, and the job using it.
#[derive(Default)]
struct Slot<'e> {
    cached: Vec<LlamaToken>,
    active: Option<Active<'e>>,
}

/// A job being generated in a slot.
struct Active<'e> {
    run: Run<'e>,
    text: Option<tokio_mpsc::UnboundedSender<Piece>>,
    reply: oneshot::Sender<Result<Generation, BridgeError>>,
    cancel: CancelFlag,
    deadline: Option<(Instant, Duration)>,
    stop: Vec<String>,
    enqueued: Instant,
    /// The token to decode in the next batch.
    next: Option<LlamaToken>,
    /// Bytes of the answer already sent.
    sent: usize,
    /// Bytes of the thinking already sent.
    sent_reasoning: usize,
    first_token: bool,
    generation_started: Instant,
}

struct EngineLoop<'e> {
    engine: &'e Engine,
    ctx: LlamaContext<'e>,
    per_sequence: usize,
    slots: Vec<Slot<'e>>,
    waiting: VecDeque<(Job, Instant)>,
    metrics: Arc<Metrics>,
}

impl<'e> EngineLoop<'e> {
    /// Runs until every handle is gone and no job is left.
    fn run(&mut self, jobs: &mpsc::Receiver<(Job, Instant)>) {
        loop {
            let idle = self.waiting.is_empty() && self.slots.iter().all(|s| s.active.is_none());
            if idle {
                match jobs.recv() {
                    Ok(job) => self.waiting.push_back(job),
                    Err(_) => return,
                }
            }
            while let Ok(job) = jobs.try_recv() {
                self.waiting.push_back(job);
            }
            self.admit();
            self.metrics.set_queue_depth(self.waiting.len());
            self.decode_step();
        }
    }

    /// Moves waiting jobs into free slots, evaluating their prompts.
    fn admit(&mut self) {
        while self.slots.iter().any(|s| s.active.is_none()) {
            let Some((job, enqueued)) = self.waiting.pop_front() else {
                return;
            };
            if job.cancel.is_cancelled() {
                let _ = job.reply.send(Err(BridgeError::Cancelled));
                continue;
            }
            if let Some(error) = past_deadline(job.deadline) {
                let _ = job.reply.send(Err(error));
                continue;
            }
            let prompt = self.engine.tokenize_prompt(&job.prompt);
            let slot = self.best_slot(&prompt);
            let started = catch_failure(|| {
                fault::engine(&job.prompt);
                self.start(slot, &job, &prompt)
            });
            if matches!(started, Err(BridgeError::Internal(_))) {
                self.forget(slot);
            }
            match started {
                Ok((run, step)) => {
                    let active = Active {
                        run,
                        text: job.text,
                        reply: job.reply,
                        cancel: job.cancel,
                        deadline: job.deadline,
                        stop: job.stop,
                        enqueued,
                        next: None,
                        sent: 0,
                        sent_reasoning: 0,
                        first_token: false,
                        generation_started: Instant::now(),
                    };
                    self.slots[slot].active = self.after_step(active, Ok(step));
                }
                Err(error) => {
                    let _ = job.reply.send(Err(error));
                }
            }
        }
    }

    /// The free slot whose cached tokens share the longest prefix with `prompt`.
    fn best_slot(&self, prompt: &[LlamaToken]) -> usize {
        let mut best = (0, None);
        for (i, slot) in self.slots.iter().enumerate() {
            if slot.active.is_some() {
                continue;
            }
            let shared = common_prefix(&slot.cached, prompt);
            if best.1.is_none() || shared > best.0 {
                best = (shared, Some(i));
            }
        }
        best.1.unwrap_or(0)
    }

    /// Sets up `job` in `slot`: its run, its prompt in the slot's sequence (reusing the
    /// cached prefix), and its first step.
    fn start(
        &mut self,
        slot: usize,
        job: &Job,
        prompt: &[LlamaToken],
    ) -> Result<(Run<'e>, Step), BridgeError> {
        let started = Instant::now();
        let grammar = job
            .grammar
            .as_ref()
            .map(|ready| ready.state(job.options.close_out));
        let mut run = Run::new(
            self.engine,
            grammar,
            prompt,
            self.per_sequence,
            &job.options,
        )?;
        self.borrow_prefix(slot, prompt);
        // Keep the shared prefix, but evaluate at least the last prompt token again: its
        // logits are the first step's.
        let keep = common_prefix(&self.slots[slot].cached, prompt).min(prompt.len() - 1);
        let seq = slot as i32;
        if self
            .ctx
            .clear_kv_cache_seq(Some(slot as u32), Some(keep as u32), None)
            .map_or(true, |removed| !removed)
        {
            // This model's cache cannot drop a tail: start the sequence over.
            self.ctx
                .clear_kv_cache_seq(Some(slot as u32), None, None)
                .ok();
            self.slots[slot].cached.clear();
            return self.evaluate_prompt(slot, seq, 0, prompt, run, started);
        }
        self.slots[slot].cached.truncate(keep);
        run.stats_mut().prompt_cached = keep > 0;
        self.evaluate_prompt(slot, seq, keep, prompt, run, started)
    }

    /// When another slot (busy or not) holds a longer prefix of `prompt` than `slot` does,
    /// `slot` takes that prefix over: the context's cache is unified, so the copy shares
    /// the other sequence's cells instead of evaluating the prefix again (a system prompt
    /// with a schema or tool list, shared by concurrent requests).
    fn borrow_prefix(&mut self, slot: usize, prompt: &[LlamaToken]) {
        let own = common_prefix(&self.slots[slot].cached, prompt);
        let donor = (0..self.slots.len())
            .filter(|&i| i != slot)
            .map(|i| (common_prefix(&self.slots[i].cached, prompt), i))
            .max();
        let Some((shared, donor)) = donor.filter(|&(shared, _)| shared > own) else {
            return;
        };
        let cleared = self.ctx.clear_kv_cache_seq(Some(slot as u32), None, None);
        let copied =
            self.ctx
                .kv_cache_seq_cp(donor as i32, slot as i32, Some(0), Some(shared as u32));
        self.slots[slot].cached = if cleared.is_ok() && copied.is_ok() {
            self.slots[donor].cached[..shared].to_vec()
        } else {
            self.ctx
                .clear_kv_cache_seq(Some(slot as u32), None, None)
                .ok();
            Vec::new()
        };
    }

    /// Decodes `prompt[from..]` into sequence `seq` in chunks of the batch size, then takes
    /// the first step.
    fn evaluate_prompt(
        &mut self,
        slot: usize,
        seq: i32,
        from: usize,
        prompt: &[LlamaToken],
        mut run: Run<'e>,
        started: Instant,
    ) -> Result<(Run<'e>, Step), BridgeError> {
        let chunk = (self.ctx.n_batch() as usize).max(1);
        let last = prompt.len() - 1;
        let mut batch = LlamaBatch::new(chunk, 1);
        for (c, tokens) in prompt[from..].chunks(chunk).enumerate() {
            batch.clear();
            for (j, &token) in tokens.iter().enumerate() {
                let i = from + c * chunk + j;
                batch
                    .add(token, i as i32, &[seq], i == last)
                    .map_err(|e| BridgeError::Decode(e.to_string()))?;
            }
            if let Err(e) = self.ctx.decode(&mut batch) {
                self.ctx
                    .clear_kv_cache_seq(Some(slot as u32), None, None)
                    .ok();
                self.slots[slot].cached.clear();
                return Err(BridgeError::Decode(e.to_string()));
            }
            self.slots[slot].cached.extend_from_slice(tokens);
        }
        self.metrics.add_prompt_tokens(prompt.len() - from, from);
        run.stats_mut().prompt_ms = started.elapsed().as_secs_f64() * 1000.0;
        let step = run.step(self.ctx.get_logits_ith(batch.n_tokens() - 1))?;
        Ok((run, step))
    }

    /// Decodes the next token of every active sequence in one batch, then steps each.
    fn decode_step(&mut self) {
        let mut batch = LlamaBatch::new(self.slots.len(), 1);
        let mut in_batch = Vec::new();
        for (i, slot) in self.slots.iter_mut().enumerate() {
            let Some(active) = slot.active.as_mut() else {
                continue;
            };
            let Some(token) = active.next else {
                continue;
            };
            let position = slot.cached.len() as i32;
            if batch.add(token, position, &[i as i32], true).is_ok() {
                in_batch.push(i);
            }
        }
        if in_batch.is_empty() {
            return;
        }
        let started = Instant::now();
        if let Err(e) = self.ctx.decode(&mut batch) {
            for &i in &in_batch {
                self.ctx.clear_kv_cache_seq(Some(i as u32), None, None).ok();
                self.slots[i].cached.clear();
                if let Some(active) = self.slots[i].active.take() {
                    let _ = active.reply.send(Err(BridgeError::Decode(e.to_string())));
                }
            }
            return;
        }
        let decode_ms = started.elapsed().as_secs_f64() * 1000.0;
        for (b, &i) in in_batch.iter().enumerate() {
            let Some(mut active) = self.slots[i].active.take() else {
                continue;
            };
            if let Some(token) = active.next.take() {
                self.slots[i].cached.push(token);
            }
            active.run.stats_mut().decode_ms += decode_ms;
            let step = if active.cancel.is_cancelled() {
                Err(BridgeError::Cancelled)
            } else if let Some(error) = past_deadline(active.deadline) {
                Err(error)
            } else {
                let logits = self.ctx.get_logits_ith(b as i32);
                catch_failure(|| active.run.step(logits))
            };
            if matches!(step, Err(BridgeError::Internal(_))) {
                self.forget(i);
            }
            self.slots[i].active = self.after_step(active, step);
        }
    }

    /// Drops what `slot`'s sequence holds (after a panic in its job its cache is not
    /// trusted; other errors leave it consistent, and worth reusing).
    fn forget(&mut self, slot: usize) {
        self.ctx
            .clear_kv_cache_seq(Some(slot as u32), None, None)
            .ok();
        self.slots[slot].cached.clear();
    }

    /// Sends what a step produced; the job back while it goes on (its next token set),
    /// `None` once it is over (its reply sent).
    fn after_step(
        &self,
        mut active: Active<'e>,
        step: Result<Step, BridgeError>,
    ) -> Option<Active<'e>> {
        let step = match step {
            Ok(step) => step,
            Err(error) => {
                self.finish(active, Err(error));
                return None;
            }
        };
        let stopped = cut_at_stop(&mut active);
        if !active.first_token && !active.run.bytes().is_empty() {
            active.first_token = true;
            self.metrics.observe_first_token(active.enqueued.elapsed());
        }
        if !self.send_text(&mut active) {
            self.finish(active, Err(BridgeError::Cancelled));
            return None;
        }
        match step {
            _ if stopped => {
                self.finish(active, Ok(crate::Finish::Stop));
                None
            }
            Step::Decode(token) => {
                active.next = Some(token);
                Some(active)
            }
            Step::Done(finish) => {
                self.finish(active, Ok(finish));
                None
            }
        }
    }

    /// Sends the output's new whole characters, the thinking's before the answer's;
    /// `false` when the receiver is gone.
    fn send_text(&self, active: &mut Active<'e>) -> bool {
        let Some(text) = &active.text else {
            return true;
        };
        let (reasoning, answer) = active.run.parts();
        let new_reasoning = whole_chars(&reasoning[active.sent_reasoning.min(reasoning.len())..]);
        let unsent = &answer[active.sent.min(answer.len())..];
        let held = held_for_stop(&active.stop, unsent);
        let new_answer = whole_chars(&unsent[..unsent.len() - held]);
        let (reasoning_sent, answer_sent) = (new_reasoning.len(), new_answer.len());
        for (piece, len) in [
            (Piece::Reasoning(new_reasoning.to_string()), reasoning_sent),
            (Piece::Answer(new_answer.to_string()), answer_sent),
        ] {
            if len > 0 && text.send(piece).is_err() {
                return false;
            }
        }
        active.sent_reasoning += reasoning_sent;
        active.sent += answer_sent;
        true
    }

    /// Ends a job: its generation (or error) goes back.
    fn finish(&self, active: Active<'e>, outcome: Result<crate::Finish, BridgeError>) {
        let result = outcome.map(|finish| {
            let mut generation = active.run.into_generation(finish);
            generation.stats.generation_ms =
                active.generation_started.elapsed().as_secs_f64() * 1000.0;
            self.metrics
                .add_generated_tokens(generation.stats.generated_tokens);
            generation
        });
        let _ = active.reply.send(result);
    }
}

/// Runs one job's part of a step; a panic inside it becomes that job's error, so one
/// failing request cannot stop the engine thread (the others go on).
fn catch_failure<T>(work: impl FnOnce() -> Result<T, BridgeError>) -> Result<T, BridgeError> {
    std::panic::catch_unwind(std::panic::AssertUnwindSafe(work)).unwrap_or_else(|_| {
        Err(BridgeError::Internal(
            "the engine failed on this request; it goes on serving".into(),
        ))
    })
}

/// Cuts the output before the first stop sequence it contains; whether it found one.
fn cut_at_stop(active: &mut Active<'_>) -> bool {
    if active.stop.is_empty() {
        return false;
    }
    let longest = active.stop.iter().map(String::len).max().unwrap_or(0);
    // Stop sequences end the answer (a thinking model's section is not cut); the answer
    // is the output's end.
    let (_, answer) = active.run.parts();
    let start = active.run.bytes().len() - answer.len();
    // Only the unsent text and what a stop sequence could reach back into can hold a
    // new match.
    let from = active.sent.saturating_sub(longest).min(answer.len());
    let found = active
        .stop
        .iter()
        .filter(|s| !s.is_empty())
        .filter_map(|s| find(&answer[from..], s.as_bytes()).map(|at| from + at))
        .min();
    match found {
        Some(at) => {
            active.run.cut(start + at);
            true
        }
        None => false,
    }
}

/// The whole characters at the start of `bytes` (a character the last token cut waits).
fn whole_chars(bytes: &[u8]) -> &str {
    match std::str::from_utf8(bytes) {
        Ok(s) => s,
        Err(e) => std::str::from_utf8(&bytes[..e.valid_up_to()]).unwrap_or_default(),
    }
}

/// How many bytes at the end of `unsent` could begin a stop sequence, and so wait.
fn held_for_stop(stop: &[String], unsent: &[u8]) -> usize {
    stop.iter()
        .flat_map(|s| (1..s.len().min(unsent.len() + 1)).map(move |n| (s, n)))
        .filter(|(s, n)| unsent.ends_with(&s.as_bytes()[..*n]))
        .map(|(_, n)| n)
        .max()
        .unwrap_or(0)
}

/// Where `needle` first occurs in `haystack`.
fn find(haystack: &[u8], needle: &[u8]) -> Option<usize> {
    haystack.windows(needle.len()).position(|w| w == needle)
}

/// The error for a deadline that has passed.
fn past_deadline(deadline: Option<(Instant, Duration)>) -> Option<BridgeError> {
    let (at, limit) = deadline?;
    (Instant::now() >= at).then_some(BridgeError::TimedOut {
        seconds: limit.as_secs_f64(),
    })
}

/// How many leading tokens `a` and `b` share.
fn common_prefix(a: &[LlamaToken], b: &[LlamaToken]) -> usize {
    a.iter().zip(b).take_while(|(x, y)| x == y).count()
}
