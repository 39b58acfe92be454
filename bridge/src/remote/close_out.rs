//! Close-out on text, for engines that generate remotely.
//!
//! Locally, close-out steers each token ([`crate::closeout`]): when the model's next token
//! would leave too few tokens for the grammar's shortest completion, the completion is
//! written instead. A remote engine only says that it stopped at its token budget. What it
//! wrote is then closed here as the local engine would have closed it: back from the end,
//! the text is cut at the last token boundary where the tokens kept plus the shortest
//! completion of them fit the budget, and the completion is appended. The completion is
//! counted at one token per byte, a bound for every vocabulary (each token spells at least
//! one byte), so the result stays within the budget whatever the model's tokenizer.
//!
//! The cut falls where the local engine would have switched to close-out, or earlier by the
//! difference between a completion's bytes and its tokens; either way the text is a whole
//! text of the grammar, so it is validated like any other output.

use gbnfc_compiler::gbnf::CheckedGrammar;

use crate::closeout::Closer;
use crate::generate::{Finish, GenerateOptions, Stats};
use crate::BridgeError;

/// A text cut at the budget, closed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClosedText {
    /// The tokens kept of what the engine wrote, then the completion.
    pub text: String,
    /// How many of the engine's tokens were kept.
    pub kept_tokens: usize,
    /// The completion appended after them.
    pub completion: String,
}

/// Closes a text that the engine cut at `budget` tokens, given as its tokens' byte pieces
/// (concatenated, they are the text). `None` when no prefix of it, not even the empty one,
/// has a completion within the budget, or the grammar does not follow the text from its
/// start: the output then stays truncated.
pub fn close_text(closer: &mut Closer, pieces: &[Vec<u8>], budget: usize) -> Option<ClosedText> {
    // Token boundaries that fall between characters the grammar follows:
    // (tokens before, bytes before, characters before).
    let mut boundaries = vec![(0usize, 0usize, 0usize)];
    let mut bytes: Vec<u8> = Vec::new();
    let (mut valid_bytes, mut chars) = (0usize, 0usize);
    closer.truncate(0);
    'pieces: for (index, piece) in pieces.iter().enumerate() {
        bytes.extend_from_slice(piece);
        // A piece may end inside a character: the boundary counts once it is whole.
        let Ok(tail) = std::str::from_utf8(&bytes[valid_bytes..]) else {
            continue;
        };
        for c in tail.chars() {
            if !closer.push(c) {
                break 'pieces;
            }
            chars += 1;
        }
        valid_bytes = bytes.len();
        boundaries.push((index + 1, valid_bytes, chars));
    }
    for &(tokens, byte_len, char_len) in boundaries.iter().rev() {
        let Some(left) = budget.checked_sub(tokens) else {
            continue;
        };
        closer.truncate(char_len);
        let Some(completion) = closer.completion(left) else {
            continue;
        };
        if completion.len() <= left {
            let mut text = String::from_utf8_lossy(&bytes[..byte_len]).into_owned();
            text.push_str(&completion);
            return Some(ClosedText {
                text,
                kept_tokens: tokens,
                completion,
            });
        }
    }
    None
}

/// How a remote engine said its generation ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ending {
    /// At an end of its own: the end-of-generation token, or a stop sequence.
    Stopped,
    /// At the token budget it was asked for.
    AtBudget,
    /// Otherwise (the context ran out): nothing to close within.
    Cut,
}

/// Close-out of one remote generation under a grammar: made before the request, it says
/// how many tokens to ask for; after, it closes a text that stopped at the budget.
///
/// A text passed on as it streams cannot be cut back: such a generation asks for its
/// budget less a reserve ([`stream_reserve`]) and is closed within the reserve by
/// appending alone. Otherwise the engine gets the whole budget and the text is cut back
/// and closed ([`close_text`]) from its tokens' pieces.
pub struct TextCloseOut {
    closer: Option<Closer>,
    budget: usize,
    reserve: usize,
    passed_on: bool,
}

impl TextCloseOut {
    /// The close-out of a generation under `grammar` (none without one, or when
    /// `options` turn close-out off), its text `passed_on` as it streams or not.
    pub fn new(
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
        passed_on: bool,
    ) -> TextCloseOut {
        let closer = match grammar {
            Some(grammar) if options.close_out => Closer::new(grammar),
            _ => None,
        };
        let reserve = if passed_on && closer.is_some() {
            stream_reserve(options.max_tokens)
        } else {
            0
        };
        TextCloseOut {
            closer,
            budget: options.max_tokens,
            reserve,
            passed_on,
        }
    }

    /// Whether a text stopped at the budget can be closed (`--stats`' `close_out`).
    pub fn available(&self) -> bool {
        self.closer.is_some()
    }

    /// How many tokens to ask the engine for.
    pub fn tokens_to_ask(&self) -> usize {
        self.budget - self.reserve
    }

    /// The text as returned and how it finished: when the engine stopped at the budget,
    /// closed (its pieces read by `pieces`, `None` when the engine cannot tell them; the
    /// completion's tokens counted by `count`, into `stats`), else as it is — complete
    /// when the engine stopped of itself, [`Finish::Truncated`] otherwise.
    ///
    /// # Errors
    /// What `pieces` or `count` return.
    pub fn finish(
        &mut self,
        text: String,
        ending: Ending,
        stats: &mut Stats,
        pieces: impl FnOnce(&str) -> Result<Option<Vec<Vec<u8>>>, BridgeError>,
        count: impl FnOnce(&str) -> Result<usize, BridgeError>,
    ) -> Result<(String, Finish), BridgeError> {
        stats.close_out = self.available();
        let closed = match self.closer.as_mut() {
            Some(closer) if ending == Ending::AtBudget && self.passed_on => {
                append_close(closer, &text, self.reserve).map(|completion| ClosedText {
                    text: format!("{text}{completion}"),
                    kept_tokens: stats.generated_tokens,
                    completion,
                })
            }
            Some(closer) if ending == Ending::AtBudget => {
                pieces(&text)?.and_then(|pieces| close_text(closer, &pieces, self.budget))
            }
            _ => None,
        };
        Ok(match closed {
            Some(closed) => {
                stats.closed_out_tokens = count(&closed.completion)?;
                stats.generated_tokens = closed.kept_tokens + stats.closed_out_tokens;
                (closed.text, Finish::Stop)
            }
            None if ending == Ending::Stopped => (text, Finish::Stop),
            None => (text, Finish::Truncated),
        })
    }
}

/// The tokens a streamed generation under a grammar keeps back from its budget for
/// close-out: a quarter, at most 64 (the completions of the example schemas at their
/// budgets take 1 to 13 bytes).
pub fn stream_reserve(budget: usize) -> usize {
    (budget / 4).min(64)
}

/// The shortest completion of `text`, if it takes at most `reserve` bytes (so at most
/// `reserve` tokens).
fn append_close(closer: &mut Closer, text: &str, reserve: usize) -> Option<String> {
    closer.truncate(0);
    if !closer.push_str(text) {
        return None;
    }
    closer.completion(reserve).filter(|c| c.len() <= reserve)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;

    fn closer(grammar: &str) -> Closer {
        Closer::new(&gbnfc_compiler::gbnf::parse(grammar).unwrap()).unwrap()
    }

    fn pieces(parts: &[&str]) -> Vec<Vec<u8>> {
        parts.iter().map(|p| p.as_bytes().to_vec()).collect()
    }

    const NUMBERS: &str = "root ::= \"{\\\"n\\\":\" [0-9]+ \"}\"\n";

    #[test]
    fn a_text_cut_inside_a_number_is_closed_within_the_budget() {
        let mut c = closer(NUMBERS);
        // Five tokens, budget five: the last digit token makes room for "}".
        let cut = pieces(&["{\"", "n", "\":", "12", "34"]);
        let closed = close_text(&mut c, &cut, 5).unwrap();
        assert_eq!(closed.text, "{\"n\":12}");
        assert_eq!(closed.kept_tokens, 4);
        assert_eq!(closed.completion, "}");
    }

    #[test]
    fn a_complete_text_stays_as_it_is() {
        let mut c = closer(NUMBERS);
        let whole = pieces(&["{\"", "n", "\":", "1", "}"]);
        let closed = close_text(&mut c, &whole, 5).unwrap();
        assert_eq!(closed.text, "{\"n\":1}");
        assert_eq!(closed.kept_tokens, 5);
        assert_eq!(closed.completion, "");
    }

    #[test]
    fn the_cut_backs_off_as_far_as_the_completion_needs() {
        let mut c = closer(NUMBERS);
        // Budget 3: every prefix leaves more completion than tokens ("0}" after all three,
        // "{\"n\":0}" after none), so nothing fits...
        let cut = pieces(&["{\"", "n", "\":"]);
        assert_eq!(close_text(&mut c, &cut, 3), None);
        // ...while a budget of 5 keeps the three tokens and writes "0}".
        let closed = close_text(&mut c, &cut, 5).unwrap();
        assert_eq!(closed.text, "{\"n\":0}");
        assert_eq!(closed.kept_tokens, 3);
    }

    #[test]
    fn a_piece_that_ends_inside_a_character_is_no_boundary() {
        let mut c = closer("root ::= \"\\\"\" [^\"]* \"\\\"\"\n");
        // "é" is 0xC3 0xA9, split over two tokens; the budget forces a cut before the end.
        let cut = vec![b"\"a".to_vec(), vec![0xC3], vec![0xA9], b"b".to_vec()];
        let closed = close_text(&mut c, &cut, 3).unwrap();
        // Three tokens kept leave no room for the closing quote and two end inside "é",
        // so one is kept.
        assert_eq!(closed.text, "\"a\"");
        assert_eq!(closed.kept_tokens, 1);
    }

    #[test]
    fn a_text_the_grammar_does_not_follow_keeps_only_its_followed_prefix() {
        let mut c = closer(NUMBERS);
        let wrong = pieces(&["{\"", "m", "\":", "1"]);
        let closed = close_text(&mut c, &wrong, 10).unwrap();
        assert_eq!(closed.text, "{\"n\":0}");
        assert_eq!(closed.kept_tokens, 1);
    }
}
