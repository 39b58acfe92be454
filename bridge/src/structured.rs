//! Structured output: a schema (or `response_format`, or a raw grammar) in, a validated
//! result out — `gbnfc run`.
//!
//! The schema is compiled to a grammar ([`gbnfc_compiler::schema::compile`]), the model
//! generates under it ([`crate::generate()`]), the text is parsed and validated with the
//! `jsonschema` crate ([`crate::validate`]). A result that fails — possible only for
//! keywords the grammar enforces by validation only, or when the token budget cut the
//! output — is retried up to [`StructuredOptions::retries`] times with the errors
//! appended to the conversation; then the run fails with every error. A truncated
//! output is never returned.

use gbnfc_compiler::gbnf::CheckedGrammar;
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::schema::{self, KeywordStatus, SchemaDiagnostic};
use serde_json::Value;

use crate::attempts::{self, Verdict};
use crate::chat::{self, Message};
use crate::generate::{has_token_refs, Finish, GenerateOptions, Generator, Stats};
use crate::openai::{self, FinishReason, Usage};
use crate::validate::{self, Validator};
use crate::BridgeError;

/// What the output must be.
#[derive(Debug, Clone)]
pub enum OutputSpec {
    /// A JSON Schema, or an OpenAI `response_format` (`json_schema` or `json_object`).
    Schema(Value),
    /// A GBNF grammar (start rule `root`), checked; the output is checked against it, and
    /// parsed as JSON when it is JSON.
    Grammar(CheckedGrammar),
}

/// Settings of a structured run.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct StructuredOptions {
    /// Sampling settings; retry `n` uses seed `seed + n`.
    pub generate: GenerateOptions,
    /// Further attempts after an invalid or truncated output.
    pub retries: usize,
    /// Show the schema to the model in the system prompt (a grammar constrains the form;
    /// the schema's names and descriptions tell the model what to write).
    pub schema_in_prompt: bool,
}

impl Default for StructuredOptions {
    /// Default sampling, 2 retries, schema in the prompt.
    fn default() -> Self {
        StructuredOptions {
            generate: GenerateOptions::default(),
            retries: 2,
            schema_in_prompt: true,
        }
    }
}

/// A compiled output spec: the grammar, and how to validate what it produces.
#[derive(Debug)]
pub struct Prepared {
    /// The grammar generation runs under.
    pub grammar: CheckedGrammar,
    /// The schema (unwrapped from a `response_format`), for the prompt and validation.
    pub schema: Option<Value>,
    /// The validator for `schema`.
    pub validator: Option<Validator>,
    /// What the compiler reported about keywords it does not simply enforce.
    pub diagnostics: Vec<SchemaDiagnostic>,
    /// For a raw grammar: gbnfc's own recognizer, which checks the output independently
    /// of llama.cpp (`None` for grammars with token references, which only the model's
    /// sampler can follow).
    recognizer: Option<Recognizer>,
}

impl Prepared {
    /// Compiles `spec`.
    ///
    /// # Errors
    /// [`BridgeError::Schema`] when the schema does not compile or `jsonschema` refuses it;
    /// [`BridgeError::GrammarCheck`] for a grammar without `root`.
    pub fn new(spec: &OutputSpec) -> Result<Prepared, BridgeError> {
        match spec {
            OutputSpec::Grammar(grammar) => Ok(Prepared {
                grammar: grammar.clone(),
                schema: None,
                validator: None,
                diagnostics: Vec::new(),
                recognizer: if has_token_refs(grammar) {
                    None
                } else {
                    Some(Recognizer::new(grammar).map_err(|e| {
                        BridgeError::GrammarCheck(format!("error[recognizer]: {e}"))
                    })?)
                },
            }),
            OutputSpec::Schema(input) => {
                let compiled = schema::compile(input, &schema::Options::default())
                    .map_err(|e| BridgeError::Schema(e.to_string()))?;
                let validator = Validator::new(input)?;
                Ok(Prepared {
                    grammar: compiled.grammar,
                    schema: Some(validate::schema_of(input)?),
                    validator: Some(validator),
                    diagnostics: compiled
                        .diagnostics
                        .into_iter()
                        .filter(|d| d.status != KeywordStatus::Annotation)
                        .collect(),
                    recognizer: None,
                })
            }
        }
    }

    /// `messages` as the model gets them: with the schema shown in the system prompt when
    /// `schema_in_prompt` (and there is a schema).
    pub fn conversation(&self, messages: &[Message], schema_in_prompt: bool) -> Vec<Message> {
        match (&self.schema, schema_in_prompt) {
            (Some(schema), true) => with_schema_instruction(messages, schema),
            _ => messages.to_vec(),
        }
    }

    /// What is wrong with `text`, one line each (empty when it is a valid result), and
    /// its JSON value when it parses.
    pub fn check(&self, text: &str) -> (Vec<String>, Option<Value>) {
        let parsed = serde_json::from_str::<Value>(text);
        match (&self.validator, parsed) {
            (Some(validator), Ok(value)) => (validator.errors(&value), Some(value)),
            (Some(_), Err(e)) => (vec![format!("$: not JSON: {e}")], None),
            (None, parsed) => {
                let accepted = self
                    .recognizer
                    .as_ref()
                    .is_none_or(|r| r.recognize(text).accepted);
                let errors = if accepted {
                    Vec::new()
                } else {
                    vec!["the grammar does not accept the output".to_string()]
                };
                (errors, parsed.ok())
            }
        }
    }
}

/// A validated result.
#[derive(Debug, Clone)]
pub struct Structured {
    /// The output text, exactly as generated.
    pub text: String,
    /// Its JSON value (always present for a schema; for a grammar, when it is JSON).
    pub value: Option<Value>,
    /// On an engine that reasons, the thinking before the answer (never validated).
    pub reasoning: Option<String>,
    /// Generations it took (1 + retries used).
    pub attempts: usize,
    /// Costs of all attempts together.
    pub stats: Stats,
}

impl Structured {
    /// Token counts over all attempts.
    pub fn usage(&self) -> Usage {
        Usage::of(&self.stats)
    }

    /// The assistant message carrying the result (and the thinking, as
    /// `reasoning_content`).
    pub fn message(&self) -> Message {
        Message::assistant(self.text.clone()).with_reasoning(self.reasoning.clone())
    }

    /// The result as an OpenAI `chat.completion` object.
    pub fn chat_completion(&self, model: &str) -> Value {
        openai::chat_completion(model, &self.message(), FinishReason::Stop, self.usage())
    }
}

/// The user message that sends a failed attempt back to the model.
pub fn feedback(errors: &[String]) -> String {
    format!(
        "That answer is not valid:\n{}\nAnswer again with corrected JSON only.",
        errors
            .iter()
            .map(|e| format!("- {e}"))
            .collect::<Vec<_>>()
            .join("\n")
    )
}

/// `messages` with the schema shown in the system prompt (appended to the first system
/// message, or in a new one at the start).
pub fn with_schema_instruction(messages: &[Message], schema: &Value) -> Vec<Message> {
    chat::with_system_text(
        messages,
        &format!("Answer with a JSON value that follows this JSON Schema:\n{schema}"),
    )
}

/// Runs `messages` to a result that satisfies `spec`.
///
/// # Errors
/// [`BridgeError::Schema`] for a bad schema; [`BridgeError::Truncated`] when every attempt
/// ran out of tokens; [`BridgeError::Invalid`] listing each attempt's errors otherwise;
/// any engine error.
pub fn run(
    generator: &(impl Generator + ?Sized),
    messages: &[Message],
    spec: &OutputSpec,
    options: &StructuredOptions,
) -> Result<Structured, BridgeError> {
    let prepared = Prepared::new(spec)?;
    run_prepared(generator, messages, &prepared, options)
}

/// [`run`] with an already compiled spec (compile once, run many).
///
/// # Errors
/// As [`run`].
pub fn run_prepared(
    generator: &(impl Generator + ?Sized),
    messages: &[Message],
    prepared: &Prepared,
    options: &StructuredOptions,
) -> Result<Structured, BridgeError> {
    let conversation = prepared.conversation(messages, options.schema_in_prompt);
    let grammar = Some(&prepared.grammar);
    attempts::with_retries(
        generator,
        conversation,
        grammar,
        None,
        &options.generate,
        options.retries,
        |generation, attempt| match generation.finish {
            Finish::Truncated => Verdict::Retry(vec![format!(
                "{}; write a shorter answer",
                attempts::cut_off(generation.stats.generated_tokens)
            )]),
            Finish::Stop => {
                let (problems, value) = prepared.check(&generation.text);
                if !problems.is_empty() {
                    return Verdict::Retry(problems);
                }
                Verdict::Accept(Structured {
                    text: generation.text.clone(),
                    value,
                    reasoning: generation.reasoning.clone(),
                    attempts: attempt.number,
                    stats: attempt.stats.clone(),
                })
            }
        },
    )
}
