//! A grammar and a text from one input (split at the first NUL byte): for a grammar that
//! passes `check`, building its recognizer and recognising any text never panics, and what
//! it reports is consistent — an accepted text is its own longest accepted prefix, and the
//! longest accepted prefix is accepted on its own. Texts are cut to [`MAX_TEXT`] bytes.
#![no_main]

use gbnfc_compiler::gbnf::{check, is_clean, parse};
use gbnfc_compiler::recognize::Recognizer;
use libfuzzer_sys::fuzz_target;

/// Where texts are cut (at the next character boundary). On an ambiguous grammar Earley's
/// time grows with the cube of the text's length — `root ::= item{0,20}` with
/// `item ::= . .+` takes 0.7 s on 250 characters and 7 s on 500 in a release build, ten
/// times that under the fuzzer's instrumentation — which is expected, not a fault to
/// find; cut here, the worst such grammars found stay well inside the 30 s timeout.
const MAX_TEXT: usize = 128;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (grammar_text, text) = input.split_once('\0').unwrap_or((input, ""));
    let cut = (MAX_TEXT..text.len())
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(text.len());
    let text = &text[..cut];
    let Ok(grammar) = parse(grammar_text) else {
        return;
    };
    if !is_clean(&check(&grammar)) {
        return;
    }
    let Ok(recognizer) = Recognizer::new(&grammar) else {
        return;
    };
    let result = recognizer.recognize(text);
    if result.accepted {
        assert_eq!(result.longest_match, Some(text.len()), "{text:?}");
    }
    if let Some(prefix) = result.longest_match {
        assert!(prefix <= result.viable_prefix);
        assert!(
            recognizer.recognize(&text[..prefix]).accepted,
            "longest accepted prefix {prefix} of {text:?} is not accepted alone"
        );
    }
});
