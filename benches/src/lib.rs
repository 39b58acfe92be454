//! Inputs for gbnfc's criterion benches (the benches themselves live in `benches/`).
//!
//! Each [`Case`] is a family of (grammar, text) pairs parameterised by a size, so a bench
//! can show how the recognizer's time grows with that size. The same inputs are checked
//! by this crate's unit tests, so every bench input is known to be accepted.
//!
//! [`jsonschemabench`] loads the JSONSchemaBench corpus for the `compile` bench and the
//! `compile_report` binary, which compare gbnfc's schema compiler with llama.cpp's.

pub mod jsonschemabench;

use std::net::SocketAddr;
use std::time::Duration;

use gbnfc_bridge::server::{self, ServeOptions};

/// Starts `gbnfc serve` under `options` in this process, on a thread of its own, and
/// returns its URL once it listens (`serve_report`, `gateway_report`).
///
/// # Panics
/// When the server does not start within `startup` or fails to (a report cannot go on).
#[allow(clippy::expect_used)]
pub fn serve_in_process(options: ServeOptions, startup: Duration) -> String {
    let (ready, address) = std::sync::mpsc::channel::<SocketAddr>();
    std::thread::spawn(move || {
        let runtime = tokio::runtime::Runtime::new().expect("a tokio runtime");
        let on_ready = move |address: SocketAddr, _: &server::Ready| {
            let _ = ready.send(address);
        };
        runtime
            .block_on(server::serve(options, on_ready, std::future::pending()))
            .expect("the server failed");
    });
    let address = address
        .recv_timeout(startup)
        .expect("the server did not start (the default model: scripts/fetch-model)");
    format!("http://{address}")
}

/// The allocator the `gbnfc` binary uses, so every bench and report binary measures
/// gbnfc as it ships (llama.cpp's C++ code keeps its own allocator either way).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The compact JSON grammar (`grammars/json.gbnf`).
pub const JSON_GRAMMAR: &str = include_str!(concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/../grammars/json.gbnf"
));

/// A highly ambiguous grammar: `n` a's split into runs of 1, 2 or 3 in
/// exponentially many (tribonacci-many) ways.
pub const AMBIGUOUS_GRAMMAR: &str = "root ::= x*\nx ::= \"a\" | \"a\" \"a\" | \"a\" \"a\" \"a\"\n";

/// `root ::= "a"? "a"? … "a"?` with `k` optionals: every way of choosing which optionals
/// produce the a's is a separate derivation, which is what makes backtracking blow up.
pub fn optional_chain_grammar(k: usize) -> String {
    let mut grammar = String::from("root ::=");
    for _ in 0..k {
        grammar.push_str(" \"a\"?");
    }
    grammar.push('\n');
    grammar
}

/// The text for [`optional_chain_grammar`]`(k)`: `k / 2` a's.
pub fn optional_chain_text(k: usize) -> String {
    "a".repeat(k / 2)
}

/// `depth` nested JSON arrays: `[[[…]]]`.
pub fn nested_json_array(depth: usize) -> String {
    let mut text = String::with_capacity(2 * depth);
    text.push_str(&"[".repeat(depth));
    text.push_str(&"]".repeat(depth));
    text
}

/// `depth` nested JSON objects ending in `null`: `{"a":{"a":…null…}}`.
pub fn nested_json_object(depth: usize) -> String {
    let mut text = String::with_capacity(6 * depth + 4);
    text.push_str(&"{\"a\":".repeat(depth));
    text.push_str("null");
    text.push_str(&"}".repeat(depth));
    text
}

/// A JSON string literal whose contents are `len` characters long (quotes not counted):
/// mostly ASCII letters, with a two-character escape (`\n`), a non-ASCII letter (`é`) and
/// a six-character `\u` escape mixed in so every branch of the grammar's `char` is used.
pub fn json_string(len: usize) -> String {
    const PIECES: [&str; 4] = ["\\n", "é", "\\u00e9", "\\\""];
    let mut text = String::with_capacity(len + 2);
    text.push('"');
    let mut written = 0;
    let mut turn = 0;
    while written < len {
        // Every 64th character starts an escape or a non-ASCII letter, when it fits.
        let piece = PIECES[turn % PIECES.len()];
        let piece_len = piece.chars().count();
        if written % 64 == 63 && written + piece_len <= len {
            text.push_str(piece);
            written += piece_len;
            turn += 1;
        } else {
            text.push(char::from(b'a' + (written % 26) as u8));
            written += 1;
        }
    }
    text.push('"');
    text
}

/// The text for [`AMBIGUOUS_GRAMMAR`]: `n` a's.
pub fn ambiguous_text(n: usize) -> String {
    "a".repeat(n)
}

/// One bench input: a grammar, a text it accepts, and the size it was built for.
#[derive(Debug, Clone)]
pub struct Input {
    /// The shape within the case (the criterion function name), e.g. `"array"`.
    pub shape: &'static str,
    /// The size parameter (the criterion parameter), e.g. the nesting depth.
    pub size: usize,
    /// GBNF source of the grammar.
    pub grammar: String,
    /// A text the grammar accepts.
    pub text: String,
}

/// A family of inputs that grow with a size parameter (a criterion benchmark group).
#[derive(Debug, Clone)]
pub struct Case {
    /// The group name, e.g. `"nested-json"`.
    pub name: &'static str,
    /// The inputs, smallest first within each shape.
    pub inputs: Vec<Input>,
}

/// Optional-chain sizes (number of optionals `k`; the text is `k / 2` a's, so grammar
/// and text grow together).
pub const OPTIONAL_CHAIN_SIZES: [usize; 3] = [10, 100, 1000];
/// Optional-chain text lengths against a fixed 1000-optional grammar (shape
/// `len-at-k1000`): the text alone grows.
pub const OPTIONAL_CHAIN_TEXT_LENGTHS: [usize; 3] = [5, 50, 500];
/// Optional-chain grammar sizes against a fixed 50-character text (shape `k-at-len50`):
/// the grammar alone grows.
pub const OPTIONAL_CHAIN_GRAMMAR_SIZES: [usize; 3] = [100, 1000, 10_000];
/// Nested-JSON nesting depths.
pub const NESTED_JSON_DEPTHS: [usize; 4] = [10, 100, 1000, 10_000];
/// Long-string lengths (characters inside the quotes).
pub const LONG_STRING_LENGTHS: [usize; 3] = [1_000, 10_000, 100_000];
/// Ambiguous-grammar text lengths.
pub const AMBIGUOUS_LENGTHS: [usize; 3] = [100, 1_000, 10_000];

/// Every bench case: `optional-chain` (shapes `k`, `len-at-k1000`, `k-at-len50`),
/// `nested-json` (`array`, `object`), `long-string` (`chars`) and `ambiguous` (`len`).
pub fn cases() -> Vec<Case> {
    let json = |shape, size, text| Input {
        shape,
        size,
        grammar: JSON_GRAMMAR.to_owned(),
        text,
    };
    vec![
        Case {
            name: "optional-chain",
            inputs: OPTIONAL_CHAIN_SIZES
                .iter()
                .map(|&k| Input {
                    shape: "k",
                    size: k,
                    grammar: optional_chain_grammar(k),
                    text: optional_chain_text(k),
                })
                .chain(OPTIONAL_CHAIN_TEXT_LENGTHS.iter().map(|&n| Input {
                    shape: "len-at-k1000",
                    size: n,
                    grammar: optional_chain_grammar(1000),
                    text: "a".repeat(n),
                }))
                .chain(OPTIONAL_CHAIN_GRAMMAR_SIZES.iter().map(|&k| Input {
                    shape: "k-at-len50",
                    size: k,
                    grammar: optional_chain_grammar(k),
                    text: "a".repeat(50),
                }))
                .collect(),
        },
        Case {
            name: "nested-json",
            inputs: NESTED_JSON_DEPTHS
                .iter()
                .map(|&d| json("array", d, nested_json_array(d)))
                .chain(
                    NESTED_JSON_DEPTHS
                        .iter()
                        .map(|&d| json("object", d, nested_json_object(d))),
                )
                .collect(),
        },
        Case {
            name: "long-string",
            inputs: LONG_STRING_LENGTHS
                .iter()
                .map(|&n| json("chars", n, json_string(n)))
                .collect(),
        },
        Case {
            name: "ambiguous",
            inputs: AMBIGUOUS_LENGTHS
                .iter()
                .map(|&n| Input {
                    shape: "len",
                    size: n,
                    grammar: AMBIGUOUS_GRAMMAR.to_owned(),
                    text: ambiguous_text(n),
                })
                .collect(),
        },
    ]
}

/// The `q` quantile (nearest rank) of `values`; 0 when there are none.
pub fn quantile(values: &[f64], q: f64) -> f64 {
    let mut sorted = values.to_vec();
    sorted.sort_by(f64::total_cmp);
    let rank = ((q * sorted.len() as f64).ceil() as usize).clamp(1, sorted.len().max(1));
    sorted.get(rank - 1).copied().unwrap_or(0.0)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

    use std::time::{Duration, Instant};

    use gbnfc_compiler::gbnf::parse;
    use gbnfc_compiler::recognize::Recognizer;

    use super::*;

    fn recognizer(grammar: &str) -> Recognizer {
        let grammar = parse(grammar).unwrap();
        Recognizer::new(&grammar).unwrap()
    }

    #[test]
    fn every_bench_input_is_accepted() {
        for case in cases() {
            for input in &case.inputs {
                let r = recognizer(&input.grammar);
                let result = r.recognize(&input.text);
                assert!(
                    result.accepted,
                    "{}/{}/{} rejected: {result:?}",
                    case.name, input.shape, input.size
                );
                // And the acceptance is not vacuous: a stray trailing character is refused.
                let spoiled = format!("{}~", input.text);
                assert!(
                    !r.recognize(&spoiled).accepted,
                    "{}/{}/{} accepts a spoiled text",
                    case.name,
                    input.shape,
                    input.size
                );
            }
        }
    }

    #[test]
    fn inputs_have_the_advertised_sizes() {
        assert_eq!(optional_chain_text(1000).len(), 500);
        assert_eq!(optional_chain_grammar(3), "root ::= \"a\"? \"a\"? \"a\"?\n");
        assert_eq!(nested_json_array(3), "[[[]]]");
        assert_eq!(nested_json_object(2), "{\"a\":{\"a\":null}}");
        for n in LONG_STRING_LENGTHS {
            let s = json_string(n);
            assert_eq!(s.chars().count(), n + 2);
        }
        // Too many optionals for the text: the chain must stay satisfiable.
        let r = recognizer(&optional_chain_grammar(4));
        assert!(r.recognize("aaaa").accepted);
        assert!(!r.recognize("aaaaa").accepted);
    }

    #[test]
    fn deep_json_array_is_fast() {
        let r = recognizer(JSON_GRAMMAR);
        let text = nested_json_array(10_000);
        let started = Instant::now();
        let result = r.recognize(&text);
        let took = started.elapsed();
        assert!(result.accepted);
        assert!(
            took < Duration::from_secs(10),
            "depth-10000 array took {took:?}"
        );
    }
}
