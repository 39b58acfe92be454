//! Any text through the whole GBNF core: parse never panics; a parsed grammar prints to
//! text that parses back to the same grammar; `check` never panics; and a grammar that
//! passes `check` yields samples that its recognizer accepts. A sample longer than
//! [`gbnfc_fuzz::MAX_TEXT`] (a grammar's shortest text can run to thousands of characters)
//! is checked on its cut: a prefix of an accepted text must be viable.
#![no_main]

use gbnfc_compiler::gbnf::{check, is_clean, parse};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_fuzz::cut;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(grammar) = parse(text) else {
        return;
    };
    let printed = grammar.to_string();
    match parse(&printed) {
        Ok(reparsed) => assert_eq!(reparsed, grammar, "round trip changed:\n{printed}"),
        Err(e) => panic!("printed grammar does not parse: {e}\n{printed}"),
    }
    if !is_clean(&check(&grammar)) {
        return;
    }
    let (Ok(recognizer), Ok(sampler)) = (Recognizer::new(&grammar), Sampler::new(&grammar)) else {
        return;
    };
    let options = SampleOptions {
        max_len: 64,
        ..SampleOptions::default()
    };
    for sample in sampler.samples(data.len() as u64, 3, options) {
        let checked = cut(&sample);
        let recognition = recognizer.recognize(checked);
        if checked.len() == sample.len() {
            assert!(
                recognition.accepted,
                "sample {sample:?} rejected by\n{printed}"
            );
        } else {
            assert_eq!(
                recognition.viable_prefix,
                checked.len(),
                "sample {sample:?} goes wrong early for\n{printed}"
            );
        }
    }
});
