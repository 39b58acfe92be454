//! The flags every command that runs a model shares (`run`, and the tool-call commands):
//! which model, how to run it, how to sample.

use std::path::PathBuf;

use clap::Args;
use gbnfc_bridge::engine::{EngineOptions, DEFAULT_CTX};
use gbnfc_bridge::generate::GrammarEngine;
use gbnfc_bridge::reasoning::{ReasoningMode, ReasoningRequest, DEFAULT_REASONING_BUDGET};
use gbnfc_bridge::remote::BackendUrl;
use gbnfc_bridge::tool_calls::TOOL_CALL_TEMPERATURE;
use gbnfc_bridge::{backend, AnyEngine, BridgeError, ChatModel, GenerateOptions};
use gbnfc_compiler::reasoning::ReasoningMarkers;

use crate::Failure;

/// Model and sampling flags; flatten into a command with `#[command(flatten)]`.
#[derive(Args, Debug, Clone)]
pub struct EngineArgs {
    /// The GGUF model (default: $GBNFC_MODEL, else models/SmolLM2-135M-Instruct.Q4_1.gguf,
    /// which scripts/fetch-model downloads).
    #[arg(long, value_name = "PATH", help_heading = "Model")]
    pub model: Option<PathBuf>,
    /// Generate on a remote engine instead of loading a model here:
    /// `llama-server+http://HOST:PORT` (llama.cpp's llama-server; scripts/llama-server
    /// starts some) or `vllm+http://HOST:PORT` (vLLM's OpenAI-compatible server, run with
    /// --enable-tokenizer-info-endpoint or given --chat-template). Repeat it for several engines of the same model: each generation
    /// goes to the least loaded, and to another when one is down. The prompt, grammar,
    /// validation and retries stay here; the model, its context and threads are the
    /// engines'. An output the token budget cuts off is closed out on its text.
    #[arg(long, value_name = "URL", action = clap::ArgAction::Append, value_parser = backend_url, conflicts_with_all = ["model", "n_gpu_layers", "threads"], help_heading = "Model")]
    pub backend: Vec<BackendUrl>,
    /// Layers to offload to the GPU (default: all when built with cuda, vulkan or metal;
    /// else 0).
    #[arg(long, value_name = "N", help_heading = "Model")]
    pub n_gpu_layers: Option<u32>,
    /// Context size in tokens, prompt and output together [default: the model's trained
    /// context, halved while its KV cache would take more than a quarter of the free
    /// memory, not below 4096].
    #[arg(long, value_name = "TOKENS", default_value_t = DEFAULT_CTX, hide_default_value = true, help_heading = "Model")]
    pub ctx: u32,
    /// Threads for evaluation (default: every core).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(i32).range(1..), help_heading = "Model")]
    pub threads: Option<i32>,
    /// A chat template over the model's own: a llama.cpp template name (`chatml`,
    /// `llama3`, `deepseek3`, …) or a file holding a template's text.
    #[arg(long, value_name = "NAME|FILE", help_heading = "Model")]
    pub chat_template: Option<String>,
    /// Reasoning: `auto` lets the model think before it answers when its chat template (or
    /// --reasoning-markers) names the markers, `on` insists, `off` applies the grammar from
    /// the first token. The thinking is never constrained, never validated and never shown
    /// as the answer.
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = ReasoningMode::parse, help_heading = "Reasoning")]
    pub reasoning: ReasoningMode,
    /// The reasoning markers, over those found in the chat template (for example
    /// `<think>,</think>`).
    #[arg(long, value_name = "OPEN,CLOSE", value_parser = ReasoningMarkers::parse, help_heading = "Reasoning")]
    pub reasoning_markers: Option<ReasoningMarkers>,
    /// Tokens the model may think; then the closing marker is written for it and the
    /// answer begins, with --max-tokens of its own. 0 skips the thinking.
    #[arg(long, value_name = "N", default_value_t = DEFAULT_REASONING_BUDGET, help_heading = "Reasoning")]
    pub reasoning_budget: usize,
    /// Random seed: the same seed, prompt and model give the same output.
    #[arg(long, default_value_t = 0, help_heading = "Sampling")]
    pub seed: u32,
    /// Sampling temperature (0: greedy) [default: 0.8; 0.2 for tool calls: `call`, `mcp`
    /// and requests with tools to `serve`].
    #[arg(long, value_parser = non_negative, help_heading = "Sampling")]
    pub temperature: Option<f32>,
    /// Nucleus sampling: keep the most likely tokens up to this probability mass.
    #[arg(long, default_value_t = 0.95, value_parser = probability, help_heading = "Sampling")]
    pub top_p: f32,
    /// Token budget of the output. Near it, the shortest completion of the grammar is
    /// written so the output ends complete; a budget too small for any complete output is
    /// an error, never a cut-off result.
    #[arg(long, value_name = "N", default_value_t = 512, value_parser = clap::value_parser!(u32).range(1..), help_heading = "Sampling")]
    pub max_tokens: u32,
    /// Repetition penalty over the last 64 tokens (1: off).
    #[arg(long, default_value_t = 1.0, value_parser = positive, help_heading = "Sampling")]
    pub repeat_penalty: f32,
    /// The grammar engine: `gbnfc` (its own token masks; grammars that name tokens run on
    /// llama.cpp's) or `llama` (llama.cpp's grammar sampler). Both allow the same tokens.
    #[arg(long, value_name = "ENGINE", default_value = "gbnfc", value_parser = grammar_engine, help_heading = "Sampling")]
    pub grammar_engine: GrammarEngine,
    /// No progress bar and no compiler notes.
    #[arg(short, long, help_heading = "Output")]
    pub quiet: bool,
    /// Show llama.cpp's own log.
    #[arg(short, long, help_heading = "Output")]
    pub verbose: bool,
}

impl EngineArgs {
    /// How to load the model; a `--chat-template` that names a file is read from it.
    pub fn engine_options(&self) -> Result<EngineOptions, Failure> {
        let chat_template = match &self.chat_template {
            Some(given) if std::path::Path::new(given).is_file() => {
                Some(std::fs::read_to_string(given).map_err(|e| {
                    Failure::new(format!("cannot read the chat template {given}: {e}"))
                })?)
            }
            other => other.clone(),
        };
        Ok(EngineOptions {
            model: self.model.clone(),
            n_gpu_layers: self.n_gpu_layers,
            ctx: self.ctx,
            threads: self.threads,
            quiet: self.quiet,
            chat_template,
            reasoning: ReasoningRequest {
                mode: self.reasoning,
                markers: self.reasoning_markers.clone(),
            },
        })
    }

    /// How to sample free text and structured output.
    pub fn generate_options(&self) -> GenerateOptions {
        GenerateOptions {
            seed: self.seed,
            temperature: self
                .temperature
                .unwrap_or(GenerateOptions::default().temperature),
            top_p: self.top_p,
            max_tokens: self.max_tokens as usize,
            repeat_penalty: self.repeat_penalty,
            close_out: true,
            grammar_engine: self.grammar_engine,
            reasoning_budget: self.reasoning_budget,
        }
    }

    /// How to sample tool calls: [`TOOL_CALL_TEMPERATURE`] unless `--temperature` is given.
    pub fn tool_call_options(&self) -> GenerateOptions {
        GenerateOptions {
            temperature: self.temperature.unwrap_or(TOOL_CALL_TEMPERATURE),
            ..self.generate_options()
        }
    }

    /// Loads the model (with llama.cpp's log on under `-v`), or connects to the
    /// `--backend`, the chat template read from its file when `--chat-template` names one.
    pub fn load(&self) -> Result<AnyEngine, Failure> {
        backend::set_verbose(self.verbose);
        let engine = AnyEngine::open(&self.backend, &self.engine_options()?).map_err(failure)?;
        if self.verbose {
            if let Some(reasoning) = engine.reasoning() {
                eprintln!("reasoning: {reasoning}");
            }
        }
        Ok(engine)
    }
}

/// A bridge error as the CLI shows it, with advice where there is some.
pub fn failure(error: BridgeError) -> Failure {
    let help = match &error {
        BridgeError::NoModel(_) => {
            Some("run scripts/fetch-model for the default model, or pass --model PATH")
        }
        BridgeError::NotGguf { .. } => Some("--model must name a .gguf model file"),
        BridgeError::BadModelFile { .. } => {
            Some("fetch the model again (scripts/fetch-model for the default model)")
        }
        BridgeError::ModelLoad { .. } => Some("fetch the model again; -v shows llama.cpp's log"),
        BridgeError::Schema(_) => Some("fix the schema; `gbnfc compile` shows what it makes of it"),
        BridgeError::Truncated { .. } => Some("raise --max-tokens"),
        BridgeError::Invalid { .. } => {
            Some("raise --retries, or relax the keywords reported as validation-only")
        }
        BridgeError::GrammarCheck(_) => Some("`gbnfc check` shows where"),
        BridgeError::Remote { .. }
        | BridgeError::BackendDown { .. }
        | BridgeError::NoBackend(_) => {
            Some("check the --backend URL and that the engine there is up (GET /health)")
        }
        BridgeError::Reasoning(_) => {
            Some("pass --reasoning-markers OPEN,CLOSE, or --reasoning auto to go on without")
        }
        _ => None,
    };
    let failure = Failure::new(error.to_string());
    match help {
        Some(help) => failure.help(help),
        None => failure,
    }
}

fn backend_url(text: &str) -> Result<BackendUrl, String> {
    text.parse()
}

fn grammar_engine(text: &str) -> Result<GrammarEngine, String> {
    match text {
        "gbnfc" => Ok(GrammarEngine::Gbnfc),
        "llama" => Ok(GrammarEngine::Llama),
        _ => Err("must be `gbnfc` or `llama`".into()),
    }
}

fn non_negative(text: &str) -> Result<f32, String> {
    let x: f32 = text.parse().map_err(|e| format!("{e}"))?;
    if x.is_finite() && x >= 0.0 {
        Ok(x)
    } else {
        Err("must be a number ≥ 0".into())
    }
}

fn positive(text: &str) -> Result<f32, String> {
    let x: f32 = text.parse().map_err(|e| format!("{e}"))?;
    if x.is_finite() && x > 0.0 {
        Ok(x)
    } else {
        Err("must be a number > 0".into())
    }
}

fn probability(text: &str) -> Result<f32, String> {
    let x: f32 = text.parse().map_err(|e| format!("{e}"))?;
    if x > 0.0 && x <= 1.0 {
        Ok(x)
    } else {
        Err("must be a number in (0, 1]".into())
    }
}
