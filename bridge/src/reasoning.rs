//! Reasoning models: a section of free thinking, then the answer under the grammar.
//!
//! Whether an engine's generations reason is settled when it loads ([`Reasoning::resolve`]):
//! the markers come from `--reasoning-markers`, else from the chat template
//! ([`ReasoningMarkers::in_template`]); `auto` reasons when there are markers, `on` insists,
//! `off` never does. Every grammar a reasoning engine generates under is then wrapped by
//! [`with_reasoning`]: the section is never constrained, the answer always is. Generation
//! writes the closing marker itself when the section's own budget
//! ([`GenerateOptions::reasoning_budget`](crate::GenerateOptions)) is spent, and splits the
//! section from the answer ([`Reasoning::split`]), so that what is validated, parsed as
//! tool calls or shown as `content` is the answer alone.

use std::borrow::Cow;
use std::fmt;
use std::ops::Range;

use gbnfc_compiler::gbnf::CheckedGrammar;
use gbnfc_compiler::reasoning::{with_reasoning, ReasoningMarkers};

use crate::BridgeError;

/// The reasoning budget when none is given: tokens the model may think before the closing
/// marker is written for it.
pub const DEFAULT_REASONING_BUDGET: usize = 256;

/// Whether generations reason (`--reasoning`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum ReasoningMode {
    /// When the markers are known (given, or found in the chat template).
    #[default]
    Auto,
    /// Always; loading fails when no markers are known.
    On,
    /// Never: the grammar applies from the first token.
    Off,
}

impl ReasoningMode {
    /// Reads `auto`, `on` or `off`.
    ///
    /// # Errors
    /// Any other word, with the three that are allowed.
    pub fn parse(word: &str) -> Result<ReasoningMode, String> {
        match word {
            "auto" => Ok(ReasoningMode::Auto),
            "on" => Ok(ReasoningMode::On),
            "off" => Ok(ReasoningMode::Off),
            other => Err(format!("reasoning {other:?}: expected auto, on or off")),
        }
    }
}

/// What the user asked about reasoning, before the model is known.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ReasoningRequest {
    /// Whether to reason.
    pub mode: ReasoningMode,
    /// The markers, over the template's.
    pub markers: Option<ReasoningMarkers>,
}

/// How an engine's generations reason: the markers, and whether the rendered prompt has
/// already written the opening one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Reasoning {
    markers: ReasoningMarkers,
    opened: bool,
}

/// A generation's text taken apart.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Split<'t> {
    /// The thinking, between the markers (to the end when the section never closed).
    pub reasoning: &'t str,
    /// What follows the closing marker and the spaces after it; empty when the section
    /// never closed.
    pub answer: &'t str,
}

impl Reasoning {
    /// Settles reasoning for a model whose chat template is `template`, and whose
    /// generation prompt (an assistant turn about to begin) is `prompt`.
    ///
    /// # Errors
    /// [`BridgeError::Reasoning`] for `on` when neither the request nor the template names
    /// markers.
    pub fn resolve(
        request: &ReasoningRequest,
        template: Option<&str>,
        prompt: &str,
    ) -> Result<Option<Reasoning>, BridgeError> {
        if request.mode == ReasoningMode::Off {
            return Ok(None);
        }
        let markers = request
            .markers
            .clone()
            .or_else(|| template.and_then(ReasoningMarkers::in_template));
        let Some(markers) = markers else {
            return match request.mode {
                ReasoningMode::On => Err(BridgeError::Reasoning(
                    "--reasoning on, but the model's chat template names no reasoning markers; \
                     give them with --reasoning-markers OPEN,CLOSE (for example <think>,</think>)"
                        .into(),
                )),
                _ => Ok(None),
            };
        };
        let end = prompt.trim_end();
        if request.mode == ReasoningMode::Auto && end.ends_with(markers.close()) {
            // The template closed the section itself (thinking switched off in it).
            return Ok(None);
        }
        Ok(Some(Reasoning {
            opened: end.ends_with(markers.open()),
            markers,
        }))
    }

    /// The markers.
    pub fn markers(&self) -> &ReasoningMarkers {
        &self.markers
    }

    /// Whether the prompt ends with the opening marker, so that the output begins inside
    /// the section.
    pub fn opened(&self) -> bool {
        self.opened
    }

    /// `answer` with the reasoning section before it.
    ///
    /// # Errors
    /// [`BridgeError::GrammarCheck`] should the wrapped grammar fail llama.cpp's checks
    /// (the section adds only literals and character classes, so it does not).
    pub fn wrap<'g>(
        &self,
        answer: &'g CheckedGrammar,
    ) -> Result<Cow<'g, CheckedGrammar>, BridgeError> {
        let grammar = with_reasoning(answer, &self.markers, self.opened);
        CheckedGrammar::new(grammar)
            .map(Cow::Owned)
            .map_err(|rejected| {
                BridgeError::GrammarCheck(format!(
                    "the grammar with a reasoning section fails its checks: {rejected}"
                ))
            })
    }

    /// Where the section's text begins in the output: after the opening marker, unless
    /// the prompt wrote it.
    pub fn text_start(&self) -> usize {
        if self.opened {
            0
        } else {
            self.markers.open().len()
        }
    }

    /// Where the closing marker first ends in `output`, if it has been written.
    pub fn closed_at(&self, output: &[u8]) -> Option<usize> {
        self.close_in(output, 0)
    }

    /// Where the first closing marker that begins at `from` or later ends in `output`
    /// (a generation searches only what its last token could have completed).
    pub fn close_in(&self, output: &[u8], from: usize) -> Option<usize> {
        let close = self.markers.close().as_bytes();
        let from = from.max(self.text_start()).min(output.len());
        output[from..]
            .windows(close.len())
            .position(|w| w == close)
            .map(|at| from + at + close.len())
    }

    /// How many bytes at the end of `text` begin the closing marker (but not all of it).
    pub fn close_begun(&self, text: &[u8]) -> usize {
        let close = self.markers.close().as_bytes();
        (1..close.len().min(text.len() + 1))
            .rev()
            .find(|&k| text.ends_with(&close[..k]))
            .unwrap_or(0)
    }

    /// Takes `output` apart into the thinking and the answer. Output that does not begin
    /// with the opening marker (when the prompt has not written it) has no section: it is
    /// all answer, or nothing when it stops inside the marker.
    pub fn split<'t>(&self, output: &'t str) -> Split<'t> {
        let (reasoning, answer) = self.ranges(output.as_bytes(), false);
        Split {
            reasoning: output.get(reasoning).unwrap_or_default(),
            answer: output.get(answer).unwrap_or_default(),
        }
    }

    /// The byte ranges of the thinking and of the answer in `output`, as [`split`] takes
    /// them. While the output still grows (`growing`), the end of the thinking that may be
    /// the start of the closing marker is in neither, so that what is shown of each part
    /// never has to be taken back.
    ///
    /// [`split`]: Reasoning::split
    pub fn ranges(&self, output: &[u8], growing: bool) -> (Range<usize>, Range<usize>) {
        let n = output.len();
        let open = self.markers.open().as_bytes();
        if !self.opened && !output.starts_with(open) {
            return if open.starts_with(output) {
                (0..0, 0..0)
            } else {
                (0..0, 0..n)
            };
        }
        let start = self.text_start();
        match self.closed_at(output) {
            Some(end) => {
                let close = self.markers.close().len();
                let gap = output[end..]
                    .iter()
                    .take_while(|b| matches!(b, b' ' | b'\n'))
                    .count();
                (start..end - close, end + gap..n)
            }
            None => {
                let held = if growing {
                    self.close_begun(&output[start..])
                } else {
                    0
                };
                (start..n - held, n..n)
            }
        }
    }
}

impl fmt::Display for Reasoning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} … {}{}",
            self.markers.open(),
            self.markers.close(),
            if self.opened {
                " (opened by the prompt)"
            } else {
                ""
            }
        )
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    fn think() -> ReasoningRequest {
        ReasoningRequest::default()
    }

    #[test]
    fn auto_follows_the_template_and_the_prompt() {
        let template = "{% if x %}<think>{% endif %}</think>";
        let r = Reasoning::resolve(&think(), Some(template), "<|im_start|>assistant\n")
            .unwrap()
            .unwrap();
        assert!(!r.opened());
        let r = Reasoning::resolve(&think(), Some(template), "assistant\n<think>\n")
            .unwrap()
            .unwrap();
        assert!(r.opened());
        let closed = Reasoning::resolve(&think(), Some(template), "<think>\n\n</think>\n\n");
        assert_eq!(closed.unwrap(), None);
        assert_eq!(
            Reasoning::resolve(&think(), Some("plain"), "x").unwrap(),
            None
        );
        assert_eq!(Reasoning::resolve(&think(), None, "x").unwrap(), None);
    }

    #[test]
    fn on_needs_markers_and_off_ignores_them() {
        let on = ReasoningRequest {
            mode: ReasoningMode::On,
            markers: None,
        };
        let err = Reasoning::resolve(&on, Some("plain"), "x").unwrap_err();
        assert!(err.to_string().contains("--reasoning-markers"), "{err}");
        let given = ReasoningRequest {
            mode: ReasoningMode::On,
            markers: Some(ReasoningMarkers::parse("[T],[/T]").unwrap()),
        };
        let r = Reasoning::resolve(&given, Some("<think></think>"), "x")
            .unwrap()
            .unwrap();
        assert_eq!(r.markers().close(), "[/T]");
        let off = ReasoningRequest {
            mode: ReasoningMode::Off,
            markers: given.markers.clone(),
        };
        assert_eq!(
            Reasoning::resolve(&off, Some("<think></think>"), "x").unwrap(),
            None
        );
        assert!(ReasoningMode::parse("maybe")
            .unwrap_err()
            .contains("auto, on or off"));
    }

    #[test]
    fn split_takes_the_first_closing_marker() {
        let r = Reasoning::resolve(&think(), Some("<think></think>"), "x")
            .unwrap()
            .unwrap();
        let split = r.split("<think>a </think> b</think>\n\n{\"x\": \"</think>\"}");
        assert_eq!(split.reasoning, "a ");
        assert_eq!(split.answer, "b</think>\n\n{\"x\": \"</think>\"}");
        let split = r.split("<think>\n\n</think>\n\n{}");
        assert_eq!((split.reasoning, split.answer), ("\n\n", "{}"));
        let split = r.split("<think>still going");
        assert_eq!((split.reasoning, split.answer), ("still going", ""));
        let split = r.split("<thi");
        assert_eq!((split.reasoning, split.answer), ("", ""));
        let split = r.split("no section");
        assert_eq!((split.reasoning, split.answer), ("", "no section"));
        let opened = Reasoning::resolve(&think(), Some("<think></think>"), "<think>\n")
            .unwrap()
            .unwrap();
        assert_eq!(opened.split("hm</think> 1").answer, "1");
        assert_eq!(opened.closed_at(b"hm</think> 1"), Some(10));
    }

    #[test]
    fn a_growing_output_holds_back_what_may_be_a_marker() {
        let r = Reasoning::resolve(&think(), Some("</think>"), "x")
            .unwrap()
            .unwrap();
        assert_eq!(r.ranges(b"<th", true), (0..0, 0..0));
        assert_eq!(r.ranges(b"<think>so </th", true), (7..10, 14..14));
        assert_eq!(r.ranges(b"<think>so </th", false), (7..14, 14..14));
        assert_eq!(r.ranges(b"<think>so </think>\n", true), (7..10, 19..19));
        assert_eq!(r.ranges(b"<think>so </think>\n{", true), (7..10, 19..20));
        assert_eq!(r.ranges(b"plain", true), (0..0, 0..5));
    }
}
