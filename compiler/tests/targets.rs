//! The other engines' spellings of grammars (`gbnf::Target`), read by the engines
//! themselves. Lark goes to llguidance: the `llguidance` crate is the Rust code behind the
//! PyPI package that vLLM's and SGLang's `llguidance` backend runs.
//!
//! - Every grammar that ships (`grammars/*.gbnf`), every seed example and MCP fixture
//!   compiled (every call syntax, tool choice `required` and `auto`), and every schema of
//!   the shared corpora that compiles, builds an llguidance parser from its Lark.
//! - On those grammars, sampled texts and the same texts with one character changed get
//!   the same verdict from llguidance as from gbnfc's recognizer,
//!   and llguidance refuses the first byte where the recognizer's viable prefix ends
//!   (fed one byte a token, so every text can be spelled).
//!
//! The XGrammar spelling (`Target::Xgrammar`) of the same grammars goes through XGrammar's
//! own parser and matcher, from the wheel on PyPI, by `scripts/xgrammar_check.py` (see
//! there why not through its Python package), with the same texts and verdicts. So do the
//! structural tags of the seed tool lists (`tools::structural_tag`): every call sequence
//! gbnfc's call grammar samples is one XGrammar accepts under the tag, and a call to a
//! tool not in the list is refused at the same character.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::OnceLock;

use gbnfc_compiler::gbnf::{parse, Grammar, Target};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{self, Options};
use gbnfc_compiler::tools::{self, Syntax, ToolChoice, ToolOptions};
use llguidance::api::TopLevelGrammar;
use llguidance::toktrie::{ApproximateTokEnv, InferenceCapabilities};
use llguidance::{Matcher, ParserFactory};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use serde_json::{json, Value};

/// llguidance over a tokenizer of single bytes (token `b` is byte `b`).
fn factory() -> &'static ParserFactory {
    static FACTORY: OnceLock<ParserFactory> = OnceLock::new();
    FACTORY.get_or_init(|| {
        let env = ApproximateTokEnv::single_byte_env();
        let mut factory = ParserFactory::new(&env, InferenceCapabilities::default(), &[]).unwrap();
        factory.quiet();
        factory
    })
}

/// llguidance's matcher for `grammar`'s Lark, or llguidance's error.
fn lark_matcher(grammar: &Grammar) -> Result<Matcher, String> {
    let lark = Target::Lark.render(grammar).map_err(|e| e.to_string())?;
    let parser = factory()
        .create_parser(TopLevelGrammar::from_lark(lark.clone()))
        .map_err(|e| format!("{e:#}\n{lark}"))?;
    Ok(Matcher::new(Ok(parser)))
}

/// How far llguidance gets through `text` (bytes, cut back to a character boundary) and
/// whether it accepts the whole.
fn follow(matcher: &mut Matcher, text: &str) -> (usize, bool) {
    matcher.reset().unwrap();
    let bytes: Vec<u32> = text.bytes().map(u32::from).collect();
    let mut consumed = matcher.try_consume_tokens(&bytes).unwrap();
    while !text.is_char_boundary(consumed) {
        consumed -= 1;
    }
    let accepted = consumed == text.len() && matcher.is_accepting().unwrap();
    (consumed, accepted)
}

/// `text` with the character at a random place replaced by a random printable ASCII one.
fn changed(text: &str, rng: &mut impl Rng) -> String {
    let mut chars: Vec<char> = text.chars().collect();
    if !chars.is_empty() {
        let at = rng.random_range(0..chars.len());
        chars[at] = rng.random_range('!'..='~');
    }
    chars.into_iter().collect()
}

/// `n` samples of `grammar` and each with a character changed (none when the grammar
/// cannot be sampled).
fn texts(grammar: &Grammar, seed: u64, n: usize) -> Vec<String> {
    let Ok(sampler) = Sampler::new(grammar) else {
        return Vec::new();
    };
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let options = SampleOptions {
        max_len: 200,
        ..SampleOptions::default()
    };
    let mut out = Vec::new();
    for _ in 0..n {
        let sample = sampler.sample(&mut rng, options);
        out.push(changed(&sample, &mut rng));
        out.push(sample);
    }
    out
}

/// A text and gbnfc's recognizer's verdict on it: where it first goes wrong (bytes) and
/// whether it is accepted.
struct Verdict {
    text: String,
    viable: usize,
    accepted: bool,
}

/// The recognizer's verdicts on `texts`.
fn verdicts(grammar: &Grammar, texts: Vec<String>) -> Vec<Verdict> {
    if texts.is_empty() {
        return Vec::new();
    }
    let recognizer = Recognizer::new(grammar).unwrap();
    texts
        .into_iter()
        .map(|text| {
            let ours = recognizer.recognize(&text);
            Verdict {
                text,
                viable: ours.viable_prefix,
                accepted: ours.accepted,
            }
        })
        .collect()
}

/// The texts on which llguidance (`matcher`) and the recognizer disagree.
fn disagreements(matcher: &mut Matcher, verdicts: &[Verdict]) -> Vec<String> {
    let mut wrong = Vec::new();
    for Verdict {
        text,
        viable,
        accepted,
    } in verdicts
    {
        let theirs = follow(matcher, text);
        if theirs != (*viable, *accepted) {
            wrong.push(format!(
                "{text:?}: gbnfc {:?}, llguidance {theirs:?}",
                (viable, accepted)
            ));
        }
    }
    wrong
}

/// A grammar to read in the other spellings, and texts with the recognizer's verdicts.
struct Case {
    name: String,
    grammar: Grammar,
    verdicts: Vec<Verdict>,
}

/// Every grammar that ships and every example's (each with 20 samples and as many
/// changed), then every corpus schema's that compiles (one in 40 with 5 samples).
fn cases() -> &'static [Case] {
    static CASES: OnceLock<Vec<Case>> = OnceLock::new();
    CASES.get_or_init(|| {
        let mut cases = Vec::new();
        for (i, (name, grammar)) in shipped().into_iter().chain(examples()).enumerate() {
            let verdicts = verdicts(&grammar, texts(&grammar, i as u64, 20));
            cases.push(Case {
                name,
                grammar,
                verdicts,
            });
        }
        assert!(
            cases.len() > 90,
            "{} shipped and example grammars",
            cases.len()
        );
        for (i, (name, schema)) in common::corpus_schemas().into_iter().enumerate() {
            let Ok(compiled) = schema::compile(&schema, &Options::default()) else {
                continue;
            };
            let grammar = Grammar::clone(&compiled.grammar);
            let texts = if i % 40 == 0 {
                texts(&grammar, i as u64, 5)
            } else {
                Vec::new()
            };
            let verdicts = verdicts(&grammar, texts);
            cases.push(Case {
                name,
                grammar,
                verdicts,
            });
        }
        assert!(cases.len() > 7_000, "only {} grammars", cases.len());
        cases
    })
}

/// Every grammar that ships, named.
fn shipped() -> Vec<(String, Grammar)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../grammars");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "gbnf"))
        .collect();
    files.sort();
    assert!(files.len() >= 10, "{} grammar files", files.len());
    files
        .into_iter()
        .map(|path| {
            let grammar = parse(&std::fs::read_to_string(&path).unwrap()).unwrap();
            (path.display().to_string(), grammar)
        })
        .collect()
}

/// The grammars of every seed example and MCP fixture: schemas as they are, tool lists in
/// every syntax with tool choice `required` and `auto`.
fn examples() -> Vec<(String, Grammar)> {
    let mut inputs: Vec<(String, Value, bool)> = common::seed_examples();
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/mcp");
    let mut paths: Vec<_> = std::fs::read_dir(fixtures)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    for path in paths {
        let fixture = common::read(&path);
        inputs.push((path.display().to_string(), fixture["result"].clone(), false));
    }
    let mut out = Vec::new();
    for (name, input, is_schema) in inputs {
        if is_schema {
            let compiled = schema::compile(&input, &Options::default()).unwrap();
            out.push((name, Grammar::clone(&compiled.grammar)));
            continue;
        }
        for syntax in Syntax::ALL {
            for choice in [ToolChoice::Required, ToolChoice::Auto] {
                let options = ToolOptions {
                    syntax,
                    choice: Some(choice.clone()),
                    ..ToolOptions::default()
                };
                let compiled = tools::compile_tools(&input, &options).unwrap();
                let label = format!("{name} ({syntax:?}, {choice:?})");
                out.push((label, Grammar::clone(&compiled.grammar.unwrap())));
            }
        }
    }
    out
}

/// At most 20 of `wrong`, for a message.
fn first(wrong: &[String]) -> String {
    wrong[..wrong.len().min(20)].join("\n")
}

#[test]
fn every_grammar_reads_the_same_in_llguidance() {
    let mut refused = Vec::new();
    let mut wrong = Vec::new();
    for case in cases() {
        let mut matcher = match lark_matcher(&case.grammar) {
            Ok(matcher) => matcher,
            Err(e) => {
                refused.push(format!("{}: {e}", case.name));
                continue;
            }
        };
        for problem in disagreements(&mut matcher, &case.verdicts) {
            wrong.push(format!("{}: {problem}", case.name));
        }
    }
    assert!(
        refused.is_empty(),
        "llguidance refuses {} of {} grammars, e.g.\n{}",
        refused.len(),
        cases().len(),
        refused[..refused.len().min(5)].join("\n\n")
    );
    assert!(
        wrong.is_empty(),
        "{} disagreements, e.g.\n{}",
        wrong.len(),
        first(&wrong)
    );
}

/// The repository's root.
fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// Runs `scripts/xgrammar_check.py` on `input` (its JSON lines) and asserts that XGrammar
/// read all `cases` of them and agreed with every verdict.
fn xgrammar_agrees(input: String, cases: usize) {
    let python = repo().join("target/openai-venv/bin/python");
    assert!(
        python.exists(),
        "{} is missing: run scripts/setup, which installs XGrammar there",
        python.display()
    );
    let mut child = Command::new(&python)
        .arg(repo().join("scripts/xgrammar_check.py"))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || stdin.write_all(input.as_bytes()));
    let output = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    let report = String::from_utf8_lossy(&output.stdout);
    let lines: Vec<&str> = report.lines().collect();
    assert!(
        output.status.success(),
        "XGrammar disagrees:\n{}",
        lines[..lines.len().min(20)].join("\n")
    );
    let closing = lines.last().copied().unwrap_or_default();
    eprintln!("{closing}");
    let read = format!("{cases} grammars read");
    assert!(closing.contains(&read), "{closing}");
}

#[test]
fn every_grammar_reads_the_same_in_xgrammar() {
    let mut input = String::new();
    for case in cases() {
        let grammar = Target::Xgrammar
            .render(&case.grammar)
            .unwrap_or_else(|e| panic!("{}: {e}", case.name));
        let texts: Vec<Value> = case
            .verdicts
            .iter()
            .map(|v| {
                json!({
                    "text": v.text,
                    "viable": v.text[..v.viable].chars().count(),
                    "accepted": v.accepted,
                })
            })
            .collect();
        let line = json!({"name": case.name, "grammar": grammar, "texts": texts});
        input.push_str(&line.to_string());
        input.push('\n');
    }
    xgrammar_agrees(input, cases().len());
}

#[test]
fn structural_tags_take_every_call_sequence_in_xgrammar() {
    let mut input = String::new();
    let mut count = 0;
    for (name, list, is_schema) in common::seed_examples() {
        if is_schema {
            continue;
        }
        for syntax in Syntax::ALL {
            for choice in [ToolChoice::Required, ToolChoice::Auto] {
                for parallel in [false, true] {
                    let options = ToolOptions {
                        syntax,
                        choice: Some(choice.clone()),
                        parallel: Some(parallel),
                        ..ToolOptions::default()
                    };
                    let compiled = tools::compile_tools(&list, &options).unwrap();
                    let tag = tools::structural_tag::structural_tag(&compiled).unwrap();
                    // The calls alone: under `auto`, the lazy grammar.
                    let calls = compiled
                        .lazy_grammar
                        .as_ref()
                        .or(compiled.grammar.as_ref())
                        .unwrap();
                    let sampler = Sampler::new(calls).unwrap();
                    let mut texts: Vec<Value> = sampler
                        .samples(count, 20, SampleOptions::default())
                        .into_iter()
                        .map(|text| {
                            json!({"text": text, "viable": text.chars().count(), "accepted": true})
                        })
                        .collect();
                    // A call to a tool not in the list: both refuse it where its name starts.
                    let (open, _) = syntax.wrap();
                    let stray = format!("{}{open}{}", syntax.open(), syntax.call_head("~stray"));
                    let verdict = Recognizer::new(calls).unwrap().recognize(&stray);
                    assert!(!verdict.accepted);
                    texts.push(json!({
                        "text": stray,
                        "viable": stray[..verdict.viable_prefix].chars().count(),
                        "accepted": false,
                    }));
                    let name = format!("{name} {syntax} {choice} parallel={parallel}");
                    let line = json!({"name": name, "structural_tag": tag, "texts": texts});
                    input.push_str(&line.to_string());
                    input.push('\n');
                    count += 1;
                }
            }
        }
    }
    xgrammar_agrees(input, count as usize);
}

/// llguidance's lexer is greedy: inside a lexeme that can go on, it never returns to a
/// shorter one. Found by a generated grammar: with `"aaa"` as one lexeme, `aaua` failed
/// after `aa`. Written one character a string, both ways stay open.
#[test]
fn a_long_literal_never_hides_a_shorter_way() {
    let grammar = parse("root ::= \"aaa\" \"a\" | . [^b] [^a] \"a\"\n").unwrap();
    let mut matcher = lark_matcher(&grammar).unwrap();
    for text in ["aaua", "aaaa", "xyza"] {
        assert_eq!(follow(&mut matcher, text), (4, true), "{text}");
    }
    assert_eq!(follow(&mut matcher, "abb"), (1, false));
}
