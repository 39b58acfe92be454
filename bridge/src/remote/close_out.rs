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

use crate::closeout::Closer;

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
