//! Close-out planning in tokens: whether the shortest completion of the text so far
//! still fits the tokens left, and the tokens that write it ([`crate::closeout::Closer`]
//! finds the text; this turns it into the fewest of the model's tokens that spell it,
//! finishing first a character that the last token left unfinished).
//!
//! The tokens are the vocabulary's fewest ([`Spelling`]), not the tokenizer's split: the
//! model never reads them (close-out ends the generation), so only their number matters,
//! and counting them with llama.cpp's tokenizer at every token within reach of the budget
//! was most of the grammar's cost per token on the weather card.

use llama_cpp_2::token::LlamaToken;

use crate::closeout::Closer;
use crate::engine::Engine;
use crate::mask::Spelling;

/// Characters a completion may have per token left before close-out gives up on it
/// (tokens of generated JSON are far shorter).
const CHARS_PER_TOKEN_CAP: usize = 64;

/// Would the shortest completion of what `closer` has followed (and of the unfinished
/// character `pending` starts) take at most `left` tokens?
///
/// Spelling the completion in tokens happens only within reach of the budget: a completion of no
/// more bytes than tokens left fits when the vocabulary has a token for each of its bytes
/// (a vocabulary may lack some: SmolLM2 has none for 0xF1, so it cannot write U+40000, and
/// a completion needing it never fits). On the weather card (512 tokens, SmolLM2, seeds
/// 1–3 at temperature 1) this took the budget guard from 0.21–0.28 ms to 0.05–0.08 ms per
/// token.
pub(crate) fn fits(
    engine: &Engine,
    closer: &mut Closer,
    spelling: &mut Spelling,
    pending: &[u8],
    left: usize,
) -> bool {
    if !pending.is_empty() {
        return close_plan(engine, closer, spelling, pending, left).is_some();
    }
    match closer.completion(left.saturating_mul(CHARS_PER_TOKEN_CAP)) {
        Some(text) => {
            (text.len() <= left && text.bytes().all(|b| engine.byte_token(b).is_some()))
                || spelling
                    .count(&engine.mask_vocab(), text.as_bytes())
                    .is_some_and(|count| count <= left)
        }
        None => false,
    }
}

/// The tokens that would close the output from here, if they number at most `left`:
/// first, when the text ends inside a multi-byte character (`pending` holds its first
/// bytes), single-byte tokens that finish it as some character; then the shortest
/// completion of the grammar. `closer` is left as it was, whatever the answer.
pub(crate) fn close_plan(
    engine: &Engine,
    closer: &mut Closer,
    spelling: &mut Spelling,
    pending: &[u8],
    left: usize,
) -> Option<Vec<LlamaToken>> {
    let mark = closer.len();
    let mut tokens = Vec::new();
    if !pending.is_empty() {
        let padding = utf8_padding(pending)?;
        let mut bytes = pending.to_vec();
        bytes.extend_from_slice(&padding);
        let c = std::str::from_utf8(&bytes).ok()?.chars().next()?;
        for &b in &padding {
            tokens.push(engine.byte_token(b)?);
        }
        if tokens.len() > left || !closer.push(c) {
            return None;
        }
    }
    let rest = completion_tokens(engine, closer, spelling, left - tokens.len());
    closer.truncate(mark);
    tokens.extend(rest?);
    Some(tokens)
}

/// Continuation bytes that finish the UTF-8 character `pending` starts (the smallest that
/// make a valid scalar value), or `None` if `pending` is not such a start.
fn utf8_padding(pending: &[u8]) -> Option<Vec<u8>> {
    let lead = *pending.first()?;
    let len: usize = match lead {
        0xC2..=0xDF => 2,
        0xE0..=0xEF => 3,
        0xF0..=0xF4 => 4,
        _ => return None,
    };
    let missing = len.checked_sub(pending.len()).filter(|&m| m > 0)?;
    let mut padding = vec![0x80u8; missing];
    if pending.len() == 1 {
        // The second byte's range depends on the lead (no overlong forms, no surrogates).
        padding[0] = match lead {
            0xE0 => 0xA0,
            0xF0 => 0x90,
            _ => 0x80,
        };
    }
    Some(padding)
}

/// The tokens of the shortest completion of what `closer` has followed, if they number
/// at most `left`.
fn completion_tokens(
    engine: &Engine,
    closer: &mut Closer,
    spelling: &mut Spelling,
    left: usize,
) -> Option<Vec<LlamaToken>> {
    let text = closer.completion(left.saturating_mul(CHARS_PER_TOKEN_CAP))?;
    let tokens = spelling.tokens(&engine.mask_vocab(), text.as_bytes())?;
    (tokens.len() <= left).then(|| tokens.into_iter().map(|t| LlamaToken(t as i32)).collect())
}
