//! The engine: one loaded model (its weights), and the settings every generation with it
//! shares — context size, threads, GPU offload.
//!
//! Loading checks the file first ([`crate::gguf::check_file`]), so a wrong path, a file
//! that is not GGUF or a download cut short is named as such rather than reported as
//! llama.cpp's bare "null model". Contexts are made per generation (they borrow the
//! model), one generation at a time per engine.

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock, PoisonError};
use std::time::Duration;

use indicatif::{ProgressBar, ProgressStyle};
use llama_cpp_2::context::params::LlamaContextParams;
use llama_cpp_2::context::session::SeqState;
use llama_cpp_2::context::LlamaContext;
use llama_cpp_2::model::params::LlamaModelParams;
use llama_cpp_2::model::LlamaModel;
use llama_cpp_2::token::LlamaToken;

use crate::chat::Message;
use crate::context_size::{self, KvShape};
use crate::mask::MaskVocab;
use crate::reasoning::{Reasoning, ReasoningMode, ReasoningRequest};
use crate::{backend::backend, gguf, model_path, BridgeError};

/// `true` when a GPU backend (`cuda`, `vulkan` or `metal`) is compiled in, or llama.cpp is
/// linked as shared libraries (`shared-llama`) that may carry one.
pub const GPU_COMPILED: bool = cfg!(any(
    feature = "cuda",
    feature = "vulkan",
    feature = "metal",
    feature = "shared-llama"
));

/// The default context size: 0, the model's trained context as far as memory allows
/// ([`crate::context_size`]).
pub const DEFAULT_CTX: u32 = 0;

/// The layers offloaded when `--n-gpu-layers` is not given: every layer when a GPU
/// backend is compiled in, none otherwise.
pub fn default_gpu_layers() -> u32 {
    if GPU_COMPILED {
        u32::MAX
    } else {
        0
    }
}

/// How to load a model and run it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EngineOptions {
    /// The model file; `None` resolves `GBNFC_MODEL`, then the default model
    /// ([`model_path::resolve`]).
    pub model: Option<PathBuf>,
    /// Layers to offload to the GPU; `None` is [`default_gpu_layers`].
    pub n_gpu_layers: Option<u32>,
    /// Context size in tokens (prompt and output together); 0 takes the model's trained
    /// context, as far as memory allows ([`crate::context_size`]).
    pub ctx: u32,
    /// Threads for evaluation; `None` uses every available core.
    pub threads: Option<i32>,
    /// No progress bar while loading.
    pub quiet: bool,
    /// A chat template over the model's own: a llama.cpp template name (`chatml`,
    /// `llama3`) or a template's text.
    pub chat_template: Option<String>,
    /// Whether generations reason ([`crate::reasoning`]).
    pub reasoning: ReasoningRequest,
}

impl Default for EngineOptions {
    /// The default model, [`DEFAULT_CTX`], default offload and threads, quiet (a library
    /// should not draw on the terminal unless asked; the CLI asks).
    fn default() -> Self {
        EngineOptions {
            model: None,
            n_gpu_layers: None,
            ctx: DEFAULT_CTX,
            threads: None,
            quiet: true,
            chat_template: None,
            reasoning: ReasoningRequest::default(),
        }
    }
}

/// A loaded model and the settings its generations share.
pub struct Engine {
    model: LlamaModel,
    path: PathBuf,
    ctx: u32,
    threads: i32,
    n_gpu_layers: u32,
    /// Control tokens that are not end-of-generation (`<|im_start|>`, …): never
    /// generated, since their text could otherwise slip into a grammar's strings.
    control: Vec<LlamaToken>,
    /// For each byte, a token whose text is that byte alone (byte-level vocabularies have
    /// one for every byte): close-out uses them to finish a split character.
    byte_tokens: Vec<Option<LlamaToken>>,
    /// One generation at a time: contexts borrow the model, and llama.cpp does not
    /// support creating them concurrently. The lock also guards the prompt cache.
    busy: Mutex<Vec<PromptCache>>,
    /// The vocabulary as the mask engine walks it, built on first use.
    mask_vocab: OnceLock<Arc<MaskVocab>>,
    /// The chat template given over the model's own.
    chat_template: Option<String>,
    /// How generations reason; `None`: they do not.
    reasoning: Option<Reasoning>,
}

/// How many evaluated prompts an engine keeps.
pub(crate) const PROMPT_CACHE_SIZE: usize = 4;

/// The evaluated state of a recent prompt, so that generating again from the same prompt
/// (other seeds, benches) skips evaluating it.
pub(crate) struct PromptCache {
    /// The prompt's tokens.
    pub(crate) tokens: Vec<LlamaToken>,
    /// llama.cpp's state of sequence 0 after the prompt.
    pub(crate) state: SeqState,
    /// The logits after the prompt's last token.
    pub(crate) logits: Vec<f32>,
}

impl std::fmt::Debug for Engine {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Engine")
            .field("path", &self.path)
            .field("ctx", &self.ctx)
            .field("threads", &self.threads)
            .field("n_gpu_layers", &self.n_gpu_layers)
            .finish_non_exhaustive()
    }
}

impl Engine {
    /// Resolves, checks and loads the model.
    ///
    /// # Errors
    /// [`BridgeError::NoModel`] (no such file), [`BridgeError::NotGguf`],
    /// [`BridgeError::BadModelFile`] (truncated), [`BridgeError::ModelLoad`] (llama.cpp
    /// refused it),
    /// [`BridgeError::Backend`], [`BridgeError::Reasoning`] (`--reasoning on` and no
    /// markers known).
    pub fn load(options: &EngineOptions) -> Result<Engine, BridgeError> {
        let path = model_path::resolve(options.model.as_deref())?;
        gguf::check_file(&path)?;
        let backend = backend()?;
        let n_gpu_layers = options.n_gpu_layers.unwrap_or_else(default_gpu_layers);
        let mut params = LlamaModelParams::default().with_n_gpu_layers(n_gpu_layers);
        let bar = (!options.quiet).then(|| progress_bar(&path));
        if let Some(bar) = bar.clone() {
            params = params.with_progress_callback(move |progress| {
                bar.set_position((progress.clamp(0.0, 1.0) * 100.0) as u64);
                true
            });
        }
        let loaded = LlamaModel::load_from_file(backend, &path, &params);
        if let Some(bar) = &bar {
            bar.finish_and_clear();
        }
        let model = loaded.map_err(|e| BridgeError::ModelLoad {
            path: path.clone(),
            reason: format!(
                "{e} (the file may be corrupt, or its architecture unknown to this llama.cpp)"
            ),
        })?;
        let vocab = model.vocab();
        let control = vocab
            .tokens()
            .filter(|&t| vocab.is_control(t) && !vocab.is_eog(t))
            .collect();
        let mut byte_tokens = vec![None; 256];
        for token in vocab.tokens() {
            if vocab.is_control(token) || vocab.is_eog(token) {
                continue;
            }
            if let [byte] = vocab.token_to_piece(token, true, None)[..] {
                byte_tokens[usize::from(byte)].get_or_insert(token);
            }
        }
        let threads = options
            .threads
            .filter(|&t| t > 0)
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(4, |n| n.get() as i32));
        let ctx = match options.ctx {
            0 => context_size::fitting_context(
                model.n_ctx_train(),
                KvShape {
                    layers: u64::from(model.n_layer()),
                    embedding: u64::try_from(model.n_embd()).unwrap_or(0),
                    heads: u64::from(model.n_head()),
                    kv_heads: u64::from(model.n_head_kv()),
                },
                context_size::available_memory(),
            ),
            asked => asked,
        };
        let mut engine = Engine {
            model,
            path,
            ctx,
            threads,
            n_gpu_layers,
            control,
            byte_tokens,
            busy: Mutex::new(Vec::new()),
            mask_vocab: OnceLock::new(),
            chat_template: options.chat_template.clone(),
            reasoning: None,
        };
        if options.reasoning.mode != ReasoningMode::Off {
            // Only to see whether the prompt opens the section: a template llama.cpp cannot
            // apply fails where prompts are made, not here, where none may be.
            let probe =
                crate::chat::render_prompt(&engine, &[Message::user("Hello")]).unwrap_or_default();
            let template = crate::ChatModel::chat_template(&engine);
            engine.reasoning = Reasoning::resolve(&options.reasoning, template.as_deref(), &probe)?;
        }
        Ok(engine)
    }

    /// How generations reason (markers, and whether the prompt opens the section);
    /// `None` when they do not.
    pub fn reasoning(&self) -> Option<&Reasoning> {
        self.reasoning.as_ref()
    }

    /// The chat template given over the model's own (`--chat-template`), if any.
    pub fn chat_template_override(&self) -> Option<&str> {
        self.chat_template.as_deref()
    }

    /// The llama.cpp model.
    pub fn model(&self) -> &LlamaModel {
        &self.model
    }

    /// The model file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    /// The model's name for results: the file name without `.gguf`.
    pub fn name(&self) -> String {
        self.path
            .file_stem()
            .map_or_else(|| "model".to_string(), |s| s.to_string_lossy().into_owned())
    }

    /// The tokens one sequence may hold: `--ctx`, or the model's trained context as far
    /// as memory allows.
    pub fn ctx(&self) -> u32 {
        self.ctx
    }

    /// Threads used for evaluation.
    pub fn threads(&self) -> i32 {
        self.threads
    }

    /// Layers asked to be offloaded to the GPU (`u32::MAX`: all).
    pub fn n_gpu_layers(&self) -> u32 {
        self.n_gpu_layers
    }

    /// Control tokens that generation never picks.
    pub(crate) fn control_tokens(&self) -> &[LlamaToken] {
        &self.control
    }

    /// The vocabulary for [`crate::mask`]: every token's text as the grammar sampler reads
    /// it, control tokens left out (generation never picks them unless a grammar names
    /// them, and such grammars run on llama.cpp's sampler). Built on first use: 0.2 s for
    /// 262k tokens.
    pub fn mask_vocab(&self) -> Arc<MaskVocab> {
        let vocab = self.mask_vocab.get_or_init(|| {
            let model_vocab = self.model.vocab();
            let mut eog = Vec::new();
            let pieces: Vec<Vec<u8>> = model_vocab
                .tokens()
                .map(|token| {
                    if model_vocab.is_eog(token) {
                        eog.push(token.0 as u32);
                        Vec::new()
                    } else if model_vocab.is_control(token) {
                        Vec::new()
                    } else {
                        self.piece(token)
                    }
                })
                .collect();
            Arc::new(MaskVocab::new(&pieces, eog))
        });
        Arc::clone(vocab)
    }

    /// A token whose text is exactly `byte`, if the vocabulary has one.
    pub fn byte_token(&self, byte: u8) -> Option<LlamaToken> {
        self.byte_tokens.get(usize::from(byte)).copied().flatten()
    }

    /// Tokenizes a prompt, special tokens (`<|im_start|>`) included as such. A BOS token
    /// is added when the model wants one and the text does not already start with it.
    pub fn tokenize_prompt(&self, text: &str) -> Vec<LlamaToken> {
        let vocab = self.model.vocab();
        let bos = vocab.token_to_piece(vocab.bos(), true, None);
        let already = !bos.is_empty() && text.as_bytes().starts_with(&bos);
        let add_bos = vocab.should_add_bos() && !already;
        let mut tokens = vocab.tokenize(text.as_bytes(), false, true);
        if add_bos {
            tokens.insert(0, vocab.bos());
        }
        tokens
    }

    /// Tokenizes plain text, with no special tokens and no BOS.
    pub fn tokenize_text(&self, text: &str) -> Vec<LlamaToken> {
        self.model.vocab().tokenize(text.as_bytes(), false, false)
    }

    /// The id of the token a grammar's `<text>` reference names (`text` is what stands
    /// between the angle brackets), when that text is one token, as llama.cpp requires.
    pub fn token_id(&self, text: &str) -> Option<u32> {
        crate::vocab::token_id(&self.model, text)
    }

    /// The bytes a token stands for, as the grammar sampler sees them.
    pub fn piece(&self, token: LlamaToken) -> Vec<u8> {
        self.model.vocab().token_to_piece(token, true, None)
    }

    /// Waits for any other generation on this engine to end; the guard holds the cache of
    /// recent prompts, most recent last.
    pub(crate) fn lock(&self) -> MutexGuard<'_, Vec<PromptCache>> {
        self.busy.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A fresh context: `ctx` tokens (llama.cpp may round it up), `threads` threads.
    ///
    /// # Errors
    /// [`BridgeError::Context`] when llama.cpp cannot allocate it.
    pub(crate) fn new_context(&self) -> Result<LlamaContext<'_>, BridgeError> {
        let n_ctx = self.ctx;
        let params = self.context_params(n_ctx).with_n_batch(n_ctx);
        self.model
            .new_context(backend()?, params)
            .map_err(|e| BridgeError::Context {
                ctx: n_ctx,
                reason: format!("{e} (out of memory? try a smaller --ctx)"),
            })
    }
}

impl Engine {
    /// Context parameters of `n_ctx` tokens on the engine's threads.
    fn context_params(&self, n_ctx: u32) -> LlamaContextParams {
        LlamaContextParams::default()
            .with_n_ctx(NonZeroU32::new(n_ctx))
            .with_n_threads(self.threads)
            .with_n_threads_batch(self.threads)
    }

    /// One context holding `sequences` sequences of [`Engine::ctx`] tokens each (the
    /// server's slots, decoded together in one batch per step), and the tokens each
    /// sequence may hold. The KV cache is unified: one pool of cells for every sequence,
    /// so that a batch is one graph (a split cache decodes each sequence apart: batches
    /// of 2 measured 1.8× the time of 1) and a shared prompt prefix is copied between
    /// sequences without evaluating it again.
    ///
    /// # Errors
    /// [`BridgeError::Context`] when llama.cpp cannot allocate it.
    pub fn new_parallel_context(
        &self,
        sequences: u32,
    ) -> Result<(LlamaContext<'_>, usize), BridgeError> {
        let per_sequence = self.ctx;
        let sequences = sequences.max(1);
        let n_ctx = per_sequence.saturating_mul(sequences);
        let params = self
            .context_params(n_ctx)
            .with_n_batch(per_sequence.max(sequences))
            .with_n_seq_max(sequences)
            .with_kv_unified(true);
        let ctx = self
            .model
            .new_context(backend()?, params)
            .map_err(|e| BridgeError::Context {
                ctx: n_ctx,
                reason: format!("{e} (out of memory? try a smaller --ctx or --parallel)"),
            })?;
        let each = ctx.n_ctx() as usize / sequences as usize;
        Ok((ctx, each))
    }
}

/// The loading bar: percent of the model read, on standard error (hidden when standard
/// error is not a terminal).
fn progress_bar(path: &Path) -> ProgressBar {
    let bar = ProgressBar::new(100);
    if let Ok(style) = ProgressStyle::with_template("{msg} [{bar:30}] {pos:>3}%") {
        bar.set_style(style.progress_chars("=> "));
    }
    let name = path
        .file_name()
        .map_or_else(String::new, |n| n.to_string_lossy().into_owned());
    bar.set_message(format!("loading {name}"));
    bar.enable_steady_tick(Duration::from_millis(200));
    bar
}
