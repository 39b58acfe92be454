//! One generation stepped token by token: sample without the grammar, check the token,
//! mask only when it is refused, and close out before the budget runs short.

use std::collections::VecDeque;
use std::time::Instant;

use gbnfc_compiler::gbnf::llama_stacks::LlamaStacks;
use llama_cpp_2::sampling::LlamaSampler;
use llama_cpp_2::token::data::LlamaTokenData;
use llama_cpp_2::token::data_array::LlamaTokenDataArray;
use llama_cpp_2::token::LlamaToken;

use super::grammar::{Checker, GrammarState};
use super::options::{Finish, GenerateOptions, Generation, Stats, PENALTY_WINDOW};
use crate::close_plan::{close_plan, fits};
use crate::closeout::Closer;
use crate::engine::Engine;
use crate::mask::Spelling;
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// What one step of a generation asks of its caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Step {
    /// Decode this token at the sequence's next position, then step again with the
    /// logits after it.
    Decode(LlamaToken),
    /// The generation is over.
    Done(Finish),
}

/// What a sampling step chose.
pub(super) enum Pick {
    Token(LlamaToken),
    /// The grammar allows no token but is complete: the output is done.
    End,
}

/// What the budget guard decided.
pub(super) enum Guard {
    /// Take the model's token; `followed`: the close-out parser has already followed
    /// its characters.
    Proceed { followed: bool },
    /// The completion was written instead; the run is over.
    ClosedOut(Finish),
}

/// The state of one generation, stepped by its caller: [`generate`] for one sequence
/// alone, the server's scheduler for several decoded together.
pub(crate) struct Run<'e> {
    pub(super) engine: &'e Engine,
    pub(super) grammar: Option<GrammarState>,
    pub(super) chain: LlamaSampler,
    pub(super) stats: Stats,
    /// Output bytes so far.
    pub(super) bytes: Vec<u8>,
    /// Bytes of a character whose token has not been completed yet.
    pub(super) pending: Vec<u8>,
    /// Close-out's last completion in tokens.
    pub(super) spelling: Spelling,
    pub(super) generated: usize,
    pub(super) budget: usize,
    /// The reasoning section, on an engine that reasons.
    pub(super) section: Option<Section>,
    /// Tokens written for the model, decoded one per step before it samples again.
    pub(super) forced: VecDeque<LlamaToken>,
}

/// A generation's reasoning section: its markers, the tokens the model may think, and
/// where it stands.
pub(super) struct Section {
    reasoning: Reasoning,
    /// The grammar holds the section, so its budget can be enforced (free text is only
    /// taken apart).
    enforced: bool,
    /// Tokens the model may draw inside the section.
    budget: usize,
    /// Tokens the model has drawn inside it.
    drawn: usize,
    /// Output bytes already searched for the closing marker (past the section's start).
    searched: usize,
    /// Tokens generated when the closing marker was complete.
    closed_after: Option<usize>,
}

impl<'e> Run<'e> {
    /// A generation of at most `options.max_tokens` tokens (and what the context leaves)
    /// after `prompt`, in a context of `n_ctx` tokens per sequence.
    ///
    /// # Errors
    /// [`BridgeError::Messages`] for an empty prompt, [`BridgeError::ContextTooSmall`],
    /// [`BridgeError::BudgetTooSmall`] when no complete output fits the budget.
    pub(crate) fn new(
        engine: &'e Engine,
        grammar: Option<GrammarState>,
        prompt: &[LlamaToken],
        n_ctx: usize,
        options: &GenerateOptions,
    ) -> Result<Run<'e>, BridgeError> {
        if prompt.is_empty() {
            return Err(BridgeError::Messages("the prompt is empty".into()));
        }
        if prompt.len() >= n_ctx {
            return Err(BridgeError::ContextTooSmall {
                prompt_tokens: prompt.len(),
                ctx: n_ctx as u32,
                needed: prompt.len() + options.max_tokens.max(1),
            });
        }
        let section = engine.reasoning().map(|reasoning| Section {
            reasoning: reasoning.clone(),
            enforced: grammar.as_ref().is_some_and(|state| state.reasoning),
            budget: options.reasoning_budget,
            drawn: 0,
            searched: reasoning.text_start(),
            closed_after: None,
        });
        // The section's budget, and its markers, which may be written for the model: the
        // answer keeps all of `max_tokens`.
        let thinking = section.as_ref().filter(|s| s.enforced).map_or(0, |s| {
            let markers = s.reasoning.markers();
            let marker_tokens = engine.tokenize_text(markers.open()).len()
                + engine.tokenize_text(markers.close()).len();
            s.budget.saturating_add(marker_tokens)
        });
        let budget = options
            .max_tokens
            .saturating_add(thinking)
            .min(n_ctx - prompt.len());
        let mut run = Run {
            engine,
            grammar,
            chain: sampler_chain(engine, options),
            stats: Stats {
                prompt_tokens: prompt.len(),
                budget,
                repeat_penalty: options.repeat_penalty,
                ..Stats::default()
            },
            bytes: Vec::new(),
            pending: Vec::new(),
            spelling: Spelling::default(),
            generated: 0,
            budget,
            section,
            forced: VecDeque::new(),
        };
        if let Some(closer) = run.grammar.as_mut().and_then(|s| s.closer.as_mut()) {
            // Close-out keeps "generated + shortest completion ≤ budget", which must hold
            // from the start: a budget below the shortest whole output can only truncate.
            let spelling = &mut run.spelling;
            if !fits(engine, closer, spelling, &[], budget) {
                match close_plan(engine, closer, spelling, &[], n_ctx).map(|t| t.len()) {
                    Some(shortest) => {
                        return Err(BridgeError::BudgetTooSmall { shortest, budget });
                    }
                    None => {
                        if let Some(state) = run.grammar.as_mut() {
                            state.closer = None;
                        }
                    }
                }
            }
        }
        run.stats.close_out = run.grammar.as_ref().is_some_and(|s| s.closer.is_some());
        run.stats.peak_stacks = run.grammar.as_ref().map_or(0, |s| s.checker.stacks());
        run.stats.grammar_engine = run.grammar.as_ref().map_or("", |s| s.checker.name());
        Ok(run)
    }

    /// One step over the logits after the last decoded token (the prompt's, at first):
    /// pick a token, guard the budget, take it; say whether to decode it or stop.
    ///
    /// # Errors
    /// [`BridgeError::DeadEnd`], [`BridgeError::GrammarTooAmbiguous`],
    /// [`BridgeError::GrammarRefused`].
    pub(crate) fn step(&mut self, logits: &[f32]) -> Result<Step, BridgeError> {
        if self.generated >= self.budget {
            return Ok(Step::Done(self.finish_at_budget()));
        }
        if self.forced.is_empty() && self.thinking_spent() {
            self.forced = self.closing_tokens().into();
        }
        if let Some(token) = self.forced.pop_front() {
            return self.take_forced(token);
        }
        let token = match self.pick(logits)? {
            Pick::Token(token) => token,
            Pick::End => return Ok(Step::Done(Finish::Stop)),
        };
        if self.engine.model().vocab().is_eog(token) {
            return Ok(Step::Done(Finish::Stop));
        }
        let followed = match self.guard_budget(token)? {
            Guard::Proceed { followed } => followed,
            Guard::ClosedOut(finish) => return Ok(Step::Done(finish)),
        };
        if let Some(section) = self.section.as_mut().filter(|s| s.closed_after.is_none()) {
            section.drawn += 1;
        }
        self.accept(token, followed)?;
        self.after_token(token)
    }

    /// After a token is taken: stop when the grammar is done or the budget spent, else
    /// decode it.
    fn after_token(&mut self, token: LlamaToken) -> Result<Step, BridgeError> {
        if self.grammar_finished() {
            return Ok(Step::Done(Finish::Stop));
        }
        if self.generated >= self.budget {
            return Ok(Step::Done(self.finish_at_budget()));
        }
        Ok(Step::Decode(token))
    }

    /// The output bytes so far (a character may be cut at the end).
    pub(crate) fn bytes(&self) -> &[u8] {
        &self.bytes
    }

    /// Cuts the output to its first `len` bytes (a stop sequence was found there; only
    /// for output no grammar constrains).
    pub(crate) fn cut(&mut self, len: usize) {
        self.bytes.truncate(len);
    }

    /// The costs so far.
    pub(crate) fn stats_mut(&mut self) -> &mut Stats {
        &mut self.stats
    }

    /// The output so far, for showing as it grows: the reasoning section's text and the
    /// answer's, apart (on an engine that does not reason, all of it is answer). What may
    /// be the start of a marker waits.
    pub(crate) fn parts(&self) -> (&[u8], &[u8]) {
        match &self.section {
            Some(section) => {
                let (reasoning, answer) = section.reasoning.ranges(&self.bytes, true);
                (&self.bytes[reasoning], &self.bytes[answer])
            }
            None => (&[], &self.bytes),
        }
    }

    /// The finished generation.
    pub(crate) fn into_generation(mut self, finish: Finish) -> Generation {
        self.stats.generated_tokens = self.generated;
        let text = match String::from_utf8(self.bytes) {
            Ok(text) => text,
            Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
        };
        let (text, reasoning) = match &self.section {
            Some(section) => {
                let reasoning = &section.reasoning;
                let began = reasoning.opened() || text.starts_with(reasoning.markers().open());
                if began {
                    self.stats.reasoning_tokens = section.closed_after.unwrap_or(self.generated);
                }
                let split = reasoning.split(&text);
                (split.answer.to_string(), Some(split.reasoning.to_string()))
            }
            None => (text, None),
        };
        Generation {
            text,
            reasoning,
            finish,
            stats: self.stats,
        }
    }

    /// The model has drawn its reasoning budget and the section is still open.
    fn thinking_spent(&self) -> bool {
        self.section
            .as_ref()
            .is_some_and(|s| s.enforced && s.closed_after.is_none() && s.drawn >= s.budget)
    }

    /// The tokens that close the reasoning section from here: the rest of the markers in
    /// the tokenizer's own split (the model reads them, and goes on to answer), or, after
    /// a character cut in two, close-out's plan up to the closing marker's end.
    fn closing_tokens(&mut self) -> Vec<LlamaToken> {
        let Some(section) = &self.section else {
            return Vec::new();
        };
        let reasoning = section.reasoning.clone();
        if !self.pending.is_empty() {
            return self.planned_close(&reasoning);
        }
        let (open, close) = (reasoning.markers().open(), reasoning.markers().close());
        let rest = if self.bytes.len() < reasoning.text_start() {
            // Inside the opening marker, which the grammar makes the output's start.
            format!(
                "{}{close}",
                open.get(self.bytes.len()..).unwrap_or_default()
            )
        } else {
            // Whole characters end the output (nothing pending), so this is a character
            // boundary of the marker too.
            let written = reasoning.close_begun(&self.bytes[reasoning.text_start()..]);
            close.get(written..).unwrap_or(close).to_string()
        };
        self.engine.tokenize_text(&rest)
    }

    /// Close-out's shortest completion, up to the token that ends the closing marker.
    fn planned_close(&mut self, reasoning: &Reasoning) -> Vec<LlamaToken> {
        let Some(closer) = self.grammar.as_mut().and_then(|s| s.closer.as_mut()) else {
            return Vec::new();
        };
        let left = self.budget - self.generated;
        let plan = close_plan(self.engine, closer, &mut self.spelling, &self.pending, left);
        let mut text = self.bytes.clone();
        let mut tokens = Vec::new();
        for token in plan.unwrap_or_default() {
            tokens.push(token);
            text.extend_from_slice(&self.engine.piece(token));
            if reasoning.closed_at(&text).is_some() {
                break;
            }
        }
        tokens
    }

    /// Takes a token written for the model: one the grammar must allow.
    fn take_forced(&mut self, token: LlamaToken) -> Result<Step, BridgeError> {
        let allowed = self
            .grammar
            .as_mut()
            .is_some_and(|s| s.checker.allows(token));
        if !allowed {
            self.forced.clear();
            return Ok(Step::Done(Finish::Truncated));
        }
        self.accept(token, false)?;
        self.after_token(token)
    }

    /// One sampling step over `logits`: draw without the grammar, check the draw, and
    /// only if it is rejected mask the vocabulary with the grammar and draw again.
    fn pick(&mut self, logits: &[f32]) -> Result<Pick, BridgeError> {
        let control: &[LlamaToken] = match &self.grammar {
            Some(state) if state.tokens => &[],
            _ => self.engine.control_tokens(),
        };
        let candidates = || {
            let mut data: Vec<LlamaTokenData> = logits
                .iter()
                .enumerate()
                .map(|(i, &logit)| LlamaTokenData::new(LlamaToken(i as i32), logit, 0.0))
                .collect();
            for &t in control {
                if let Some(d) = data.get_mut(t.0 as usize) {
                    d.set_logit(f32::NEG_INFINITY);
                }
            }
            LlamaTokenDataArray::new(data, false)
        };
        let started = Instant::now();
        let mut array = candidates();
        array.apply_sampler(&mut self.chain);
        let drawn = array.selected_token();
        self.stats.sampling_ms += ms_since(started);
        let Some(state) = self.grammar.as_mut() else {
            return drawn.map(Pick::Token).ok_or_else(|| self.dead_end());
        };
        let started = Instant::now();
        if let Some(token) = drawn {
            if state.checker.allows(token) {
                self.stats.grammar_ms += ms_since(started);
                return Ok(Pick::Token(token));
            }
        }
        self.stats.resampled += 1;
        let mut array = match &mut state.checker {
            Checker::Own(masker) => {
                // Only the allowed tokens go on: the chain's work is the mask's size.
                let Ok(mask) = masker.mask() else {
                    return Err(BridgeError::GrammarTooCostly {
                        generated: self.generated,
                        text: String::from_utf8_lossy(&self.bytes).into_owned(),
                    });
                };
                let mut data = Vec::new();
                mask.iter_set_entries(|id| {
                    if let Some(&logit) = logits.get(id) {
                        data.push(LlamaTokenData::new(LlamaToken(id as i32), logit, 0.0));
                    }
                });
                LlamaTokenDataArray::new(data, false)
            }
            Checker::Llama { sampler, .. } => {
                let mut array = candidates();
                array.apply_sampler(sampler);
                array
            }
        };
        let any = array.data.iter().any(|d| d.logit() > f32::NEG_INFINITY);
        self.stats.grammar_ms += ms_since(started);
        if !any {
            let complete = state.closer.as_ref().is_some_and(Closer::is_complete);
            return if complete {
                Ok(Pick::End)
            } else {
                Err(self.dead_end())
            };
        }
        let started = Instant::now();
        array.apply_sampler(&mut self.chain);
        let token = array.selected_token();
        self.stats.sampling_ms += ms_since(started);
        token.map(Pick::Token).ok_or_else(|| self.dead_end())
    }

    /// Before taking `token`: would the shortest completion after it still fit the
    /// budget? If not, write the completion of the text so far instead.
    ///
    /// When it fits, the parser keeps the token's characters, so that `accept` need not
    /// follow them again.
    fn guard_budget(&mut self, token: LlamaToken) -> Result<Guard, BridgeError> {
        let Some(closer) = self.grammar.as_mut().and_then(|s| s.closer.as_mut()) else {
            return Ok(Guard::Proceed { followed: false });
        };
        let started = Instant::now();
        let mut after = self.pending.clone();
        after.extend_from_slice(&self.engine.piece(token));
        let (chars, rest) = split_utf8(&after);
        let mark = closer.len();
        if !closer.push_str(&chars) {
            // gbnfc's parser and llama.cpp disagree; stop relying on close-out.
            if let Some(state) = self.grammar.as_mut() {
                state.closer = None;
            }
            self.stats.close_out = false;
            self.stats.grammar_ms += ms_since(started);
            return Ok(Guard::Proceed { followed: false });
        }
        let left = self.budget - (self.generated + 1);
        if fits(self.engine, closer, &mut self.spelling, &rest, left) {
            self.stats.grammar_ms += ms_since(started);
            return Ok(Guard::Proceed { followed: true });
        }
        closer.truncate(mark);
        let forced = close_plan(
            self.engine,
            closer,
            &mut self.spelling,
            &self.pending,
            self.budget - self.generated,
        );
        self.stats.grammar_ms += ms_since(started);
        let Some(forced) = forced else {
            // Should the plan be lost, the model carries on.
            return Ok(Guard::Proceed { followed: false });
        };
        for token in forced {
            let started = Instant::now();
            let allowed = self
                .grammar
                .as_mut()
                .is_some_and(|s| s.checker.allows(token));
            self.stats.grammar_ms += ms_since(started);
            if !allowed {
                return Ok(Guard::ClosedOut(Finish::Truncated));
            }
            self.accept(token, false)?;
            self.stats.closed_out_tokens += 1;
        }
        let complete = self.pending.is_empty()
            && self
                .grammar
                .as_ref()
                .and_then(|s| s.closer.as_ref())
                .is_some_and(Closer::is_complete);
        Ok(Guard::ClosedOut(if complete {
            Finish::Stop
        } else {
            Finish::Truncated
        }))
    }

    /// Takes `token`: the grammar sampler and the chain accept it (once each), its text
    /// joins the output, and the close-out parser follows it (unless `closer_followed`: the
    /// budget guard has already moved it over the token).
    fn accept(&mut self, token: LlamaToken, closer_followed: bool) -> Result<(), BridgeError> {
        let started = Instant::now();
        let piece = self.engine.piece(token);
        if let Some(state) = self.grammar.as_mut() {
            self.pending.extend_from_slice(&piece);
            let (chars, rest) = split_utf8(&self.pending);
            match &mut state.checker {
                Checker::Own(masker) => {
                    if !masker.accept(token.0 as u32) {
                        return Err(BridgeError::GrammarRefused(format!(
                            "gbnfc's grammar engine could not follow token {}",
                            token.0
                        )));
                    }
                }
                Checker::Llama { sampler, stacks } => {
                    let followed = match stacks.as_mut() {
                        Some(stacks) => stacks.accept(token.0 as u32, &chars),
                        None => Ok(true),
                    };
                    match followed {
                        Ok(true) => {
                            let held = stacks.as_ref().map_or(0, LlamaStacks::len);
                            self.stats.peak_stacks = self.stats.peak_stacks.max(held);
                        }
                        Ok(false) => *stacks = None,
                        Err(reason) => {
                            return Err(BridgeError::GrammarTooAmbiguous {
                                reason,
                                generated: self.generated,
                                text: String::from_utf8_lossy(&self.bytes).into_owned(),
                            })
                        }
                    }
                    sampler.try_accept(token).map_err(|e| {
                        BridgeError::GrammarRefused(format!(
                            "llama.cpp's grammar sampler failed on token {}: {e}",
                            token.0
                        ))
                    })?;
                }
            }
            if let Some(closer) = state.closer.as_mut().filter(|_| !closer_followed) {
                if !closer.push_str(&chars) {
                    state.closer = None;
                    self.stats.close_out = false;
                }
            }
            self.pending = rest;
        }
        self.stats.grammar_ms += ms_since(started);
        self.chain.accept(token);
        self.bytes.extend_from_slice(&piece);
        self.generated += 1;
        if let Some(section) = self.section.as_mut().filter(|s| s.closed_after.is_none()) {
            let close = section.reasoning.markers().close().len();
            let from = section.searched.saturating_sub(close - 1);
            if section.reasoning.close_in(&self.bytes, from).is_some() {
                section.closed_after = Some(self.generated);
            }
            section.searched = self.bytes.len().max(section.searched);
        }
        Ok(())
    }

    /// The grammar is complete and allows nothing more: no need to ask the model.
    fn grammar_finished(&self) -> bool {
        self.grammar
            .as_ref()
            .and_then(|s| s.closer.as_ref())
            .is_some_and(|c| c.is_complete() && !c.can_continue())
    }

    /// The budget is spent: complete if the grammar is, truncated otherwise.
    fn finish_at_budget(&mut self) -> Finish {
        let Some(state) = self.grammar.as_mut() else {
            return Finish::Truncated;
        };
        let complete = match &state.closer {
            Some(closer) => closer.is_complete() && self.pending.is_empty(),
            None => {
                let eos = self.engine.model().vocab().eos();
                eos.0 >= 0 && state.checker.allows(eos)
            }
        };
        if complete {
            Finish::Stop
        } else {
            Finish::Truncated
        }
    }

    fn dead_end(&self) -> BridgeError {
        BridgeError::DeadEnd {
            generated: self.generated,
            text: String::from_utf8_lossy(&self.bytes).into_owned(),
        }
    }
}

/// The sampler chain used without the grammar: penalty, then temperature, top-p and a
/// seeded draw — or greedy at temperature 0.
pub(super) fn sampler_chain(engine: &Engine, options: &GenerateOptions) -> LlamaSampler {
    let mut samplers = Vec::new();
    if options.repeat_penalty != 1.0 {
        samplers.push(LlamaSampler::penalties(
            engine.model().n_vocab(),
            PENALTY_WINDOW,
            options.repeat_penalty,
            0.0,
            0.0,
        ));
    }
    if options.temperature <= 0.0 {
        samplers.push(LlamaSampler::greedy());
    } else {
        samplers.push(LlamaSampler::temp(options.temperature));
        samplers.push(LlamaSampler::top_p(options.top_p.clamp(0.0, 1.0), 1));
        samplers.push(LlamaSampler::dist(options.seed));
    }
    LlamaSampler::chain_simple(samplers)
}

/// Splits bytes into the longest prefix of whole UTF-8 characters and the start of an
/// unfinished one. Invalid bytes become U+FFFD (the grammar never produces them).
pub(super) fn split_utf8(bytes: &[u8]) -> (String, Vec<u8>) {
    match std::str::from_utf8(bytes) {
        Ok(text) => (text.to_string(), Vec::new()),
        Err(e) if e.error_len().is_none() => {
            let valid = e.valid_up_to();
            (
                String::from_utf8_lossy(&bytes[..valid]).into_owned(),
                bytes[valid..].to_vec(),
            )
        }
        Err(_) => (String::from_utf8_lossy(bytes).into_owned(), Vec::new()),
    }
}

pub(super) fn ms_since(start: Instant) -> f64 {
    start.elapsed().as_secs_f64() * 1000.0
}
