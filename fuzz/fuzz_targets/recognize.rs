//! A grammar and a text from one input (split at the first NUL byte): for a grammar that
//! passes `check`, building its recognizer and recognising any text never panics, and what
//! it reports is consistent — an accepted text is its own longest accepted prefix, and the
//! longest accepted prefix is accepted on its own. Texts are cut to
//! [`gbnfc_fuzz::MAX_TEXT`] bytes.
#![no_main]

use gbnfc_compiler::gbnf::{check, is_clean, parse};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_fuzz::cut;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(input) = std::str::from_utf8(data) else {
        return;
    };
    let (grammar_text, text) = input.split_once('\0').unwrap_or((input, ""));
    let text = cut(text);
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
