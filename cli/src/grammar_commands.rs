//! The grammar subcommands: `check`, `fmt`, `accepts`, `sample`.

use std::io::{BufRead, Write};
use std::process::ExitCode;

use gbnfc_compiler::recognize::{Recognition, Recognizer};
use gbnfc_compiler::sample::{SampleOptions, Sampler};

use crate::input::{checked_grammar, parse, parse_and_check, read};
use crate::Failure;

/// `gbnfc check FILE`: prints diagnostics; fails on any error.
pub fn check(path: &str) -> Result<ExitCode, Failure> {
    let checked = parse_and_check(path)?;
    let origin = &checked.source.origin;
    let Some(grammar) = &checked.grammar else {
        eprintln!(
            "{origin}: {} error(s), {} warning(s)",
            checked.errors, checked.warnings
        );
        return Ok(ExitCode::from(1));
    };
    println!(
        "{origin}: ok ({} rules, {} warning(s))",
        grammar.rules.len(),
        checked.warnings
    );
    Ok(ExitCode::SUCCESS)
}

/// `gbnfc fmt FILE`: prints the grammar in canonical form.
pub fn fmt(path: &str) -> Result<ExitCode, Failure> {
    let source = read(path)?;
    let grammar = parse(&source)?;
    print!("{grammar}");
    Ok(ExitCode::SUCCESS)
}

/// `gbnfc accepts GRAMMAR [TEXT]`: exit 0 if the grammar accepts the text, 1 if not.
pub fn accepts(path: &str, text: Option<&str>, jsonl: bool) -> Result<ExitCode, Failure> {
    let grammar = checked_grammar(path)?;
    let recognizer = Recognizer::new(&grammar).map_err(|e| Failure::new(e.to_string()))?;
    if jsonl {
        return accepts_jsonl(&recognizer);
    }
    let text = match text {
        Some(text) => text.to_string(),
        None => read("-")?.text,
    };
    let result = recognizer.recognize(&text);
    if result.accepted {
        println!("accept");
        return Ok(ExitCode::SUCCESS);
    }
    println!("reject: {}", explain_rejection(&text, &result));
    Ok(ExitCode::from(1))
}

fn accepts_jsonl(recognizer: &Recognizer) -> Result<ExitCode, Failure> {
    let stdin = std::io::stdin();
    let mut stdout = std::io::stdout().lock();
    let mut bad_lines = 0usize;
    for (index, line) in stdin.lock().lines().enumerate() {
        let line = line.map_err(|e| Failure::new(format!("cannot read standard input: {e}")))?;
        let verdict = match serde_json::from_str::<String>(&line) {
            Ok(text) if recognizer.recognize(&text).accepted => "accept",
            Ok(_) => "reject",
            Err(e) => {
                eprintln!(
                    "error: line {}: not a JSON string literal ({e}); write each text as \"…\"",
                    index + 1
                );
                bad_lines += 1;
                "invalid"
            }
        };
        writeln!(stdout, "{verdict}").map_err(|e| Failure::new(e.to_string()))?;
    }
    Ok(if bad_lines > 0 {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Says where a rejected text goes wrong: line:column, the text before, what came next.
fn explain_rejection(text: &str, result: &Recognition) -> String {
    let at = result.viable_prefix;
    let before = &text[..at];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    let context: String = {
        let tail: Vec<char> = before.chars().rev().take(40).collect();
        tail.into_iter().rev().collect()
    };
    let problem = match text[at..].chars().next() {
        Some(c) => format!("unexpected {c:?}"),
        None => "the text ends too early".to_string(),
    };
    let mut message =
        format!("goes wrong at {line}:{column} (byte {at}), after {context:?}: {problem}");
    if let Some(len) = result.longest_match {
        message.push_str(&format!(
            "; the longest accepted prefix is {len} bytes: {:?}",
            &text[..len]
        ));
    }
    message
}

/// `gbnfc sample GRAMMAR`: prints random texts from the grammar, one per line.
pub fn sample(
    path: &str,
    count: usize,
    seed: u64,
    max_len: u64,
    jsonl: bool,
) -> Result<ExitCode, Failure> {
    let grammar = checked_grammar(path)?;
    let sampler = Sampler::new(&grammar).map_err(|e| Failure::new(e.to_string()))?;
    let options = SampleOptions {
        max_len,
        ..SampleOptions::default()
    };
    let mut stdout = std::io::stdout().lock();
    for text in sampler.samples(seed, count, options) {
        let line = if jsonl {
            serde_json::to_string(&text).map_err(|e| Failure::new(e.to_string()))?
        } else {
            text
        };
        writeln!(stdout, "{line}").map_err(|e| Failure::new(e.to_string()))?;
    }
    Ok(ExitCode::SUCCESS)
}
