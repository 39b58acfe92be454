//! gbnfc's JSON Schema compiler against llama.cpp's `json_schema_to_grammar`, schema by
//! schema, on every JSONSchemaBench split, in one process.
//!
//! First, the compile-time bar (issue 25): the time of one generated token of the default
//! model is measured in the same process before and after the corpus (the faster counts),
//! and each split's slowest schema to compile is set against it; the bar holds when that
//! schema compiles in less than one token and the median time ratio to llama.cpp is at
//! most 1.5. The model must be present (`scripts/fetch-model`).
//!
//! For each schema both converters run once; where both succeed, each is timed as the
//! minimum of 5 runs (JSON text in, GBNF text out) and the grammar sizes are compared.
//! Prints Markdown tables, a row per split: schemas compiled and failed by each, and the
//! median over schemas of (gbnfc time / llama.cpp time) and (gbnfc bytes / llama.cpp
//! bytes); the same for gbnfc with `closed` (absent `additionalProperties` = false, as
//! llama.cpp reads it); an estimate of gbnfc's time without its self-check (`compile`
//! runs `check` on every grammar it makes; `self_check_work` replays that); and gbnfc's
//! default against llama.cpp given the same objects ([`open_reading`]: absent
//! `additionalProperties` written out as `true`, so both exclude declared names from
//! extra keys).
//!
//! Run: `cargo run --release -p gbnfc-benches --bin compile_report [-- [--trace] [--rows] [SPLIT…]]`.
//! `--trace` names each schema on stderr before llama.cpp sees it, to find one that
//! crashes the process (then list it in `benches/llama-cpp-crashes.txt`);
//! `--one gbnfc|llama.cpp Split/file.json` runs one converter on one schema, once,
//! and prints the grammar. `--rows` adds, per split, every schema both compile with its
//! time and size ratios, in order of time ratio.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::BTreeMap;
use std::hint::black_box;
use std::time::{Duration, Instant};

use gbnfc_bridge::chat::{conversation, render_prompt};
use gbnfc_bridge::generate::GrammarEngine;
use gbnfc_bridge::{generate, Engine, EngineOptions, GenerateOptions};

use gbnfc_benches::jsonschemabench::{
    gbnfc, gbnfc_closed, llama_cpp, llama_cpp_crashes, load_split, open_reading, self_check_work,
    split_names,
};

/// The highest median of gbnfc time / llama.cpp time per split the bar allows.
const MEDIAN_CEILING: f64 = 1.5;

/// Timed runs per schema and converter; the minimum counts.
const RUNS: usize = 5;

/// Seeds, and tokens per seed, of the unconstrained generations that time one token.
const TOKEN_SEEDS: u32 = 3;
const TOKEN_RUN: usize = 64;

/// Milliseconds one generated token takes on the default model (forward pass and
/// sampling, prompt evaluation excluded): the median over [`TOKEN_SEEDS`] unconstrained
/// generations of [`TOKEN_RUN`] tokens. The model must be present (`scripts/fetch-model`).
fn one_token_ms(engine: &Engine) -> f64 {
    let prompt = render_prompt(
        engine,
        &conversation(None, "Describe the weather in Chengdu for a travel guide."),
    )
    .expect("prompt renders");
    let per_token: Vec<f64> = (1..=TOKEN_SEEDS)
        .map(|seed| {
            let options = GenerateOptions {
                seed,
                temperature: 1.0,
                top_p: 1.0,
                max_tokens: TOKEN_RUN,
                repeat_penalty: 1.0,
                close_out: false,
                grammar_engine: GrammarEngine::Gbnfc,
                ..GenerateOptions::default()
            };
            let generation = generate(engine, &prompt, None, &options).expect("model generates");
            1e3 / generation.stats.tokens_per_second()
        })
        .collect();
    quantile(&sorted(per_token.into_iter()), 0.5)
}

/// One schema that gbnfc (default options) and llama.cpp both compile.
struct Row {
    name: String,
    /// gbnfc time / llama.cpp time.
    time: f64,
    /// gbnfc's and llama.cpp's times.
    times: (Duration, Duration),
    /// gbnfc bytes / llama.cpp bytes.
    size: f64,
    /// The same for gbnfc with `closed`, where it compiles.
    closed: Option<(f64, f64)>,
    /// (gbnfc time − time of the self-check's work, estimated) / llama.cpp time.
    time_without_self_check: f64,
    /// gbnfc time and bytes over llama.cpp's given [`open_reading`] (the same objects as
    /// gbnfc's default), where llama.cpp compiles that.
    open: Option<(f64, f64)>,
}

/// What one split gave.
#[derive(Default)]
struct SplitReport {
    name: String,
    schemas: usize,
    unreadable: usize,
    gbnfc_ok: usize,
    gbnfc_failures: BTreeMap<&'static str, usize>,
    closed_ok: usize,
    llama_ok: usize,
    llama_failures: usize,
    llama_crashes: usize,
    only_gbnfc: usize,
    only_llama: usize,
    both: Vec<Row>,
    gbnfc_total: Duration,
    llama_total: Duration,
    /// The schema gbnfc (default options) took longest to compile, and that time.
    slowest: Option<(String, Duration)>,
    /// Examples of gbnfc failures where llama.cpp succeeds: (schema, message).
    only_llama_examples: Vec<(String, String)>,
}

fn min_time<T>(mut f: impl FnMut() -> T) -> Duration {
    (0..RUNS)
        .map(|_| {
            let start = Instant::now();
            black_box(f());
            start.elapsed()
        })
        .min()
        .unwrap_or_default()
}

fn ratio(a: Duration, b: Duration) -> f64 {
    a.as_secs_f64() / b.as_secs_f64().max(1e-9)
}

/// The `q` quantile of sorted values, interpolating between neighbours.
fn quantile(sorted: &[f64], q: f64) -> f64 {
    if sorted.is_empty() {
        return f64::NAN;
    }
    let index = q * (sorted.len() - 1) as f64;
    let (lo, hi) = (index.floor() as usize, index.ceil() as usize);
    let weight = index - lo as f64;
    sorted[lo] * (1.0 - weight) + sorted[hi] * weight
}

fn sorted(values: impl Iterator<Item = f64>) -> Vec<f64> {
    let mut values: Vec<f64> = values.collect();
    values.sort_by(f64::total_cmp);
    values
}

fn run_split(name: &str, trace: bool) -> SplitReport {
    let split = load_split(name).expect("split loads");
    let crashes = llama_cpp_crashes();
    let mut report = SplitReport {
        name: name.to_owned(),
        schemas: split.schemas.len(),
        unreadable: split.unreadable.len(),
        ..SplitReport::default()
    };
    for schema in &split.schemas {
        let key = format!("{name}/{}", schema.name);
        let ours = gbnfc(&schema.text);
        let ours_closed = gbnfc_closed(&schema.text);
        let theirs = if crashes.contains(&key) {
            report.llama_crashes += 1;
            None
        } else {
            if trace {
                eprintln!("llama.cpp: {key}");
            }
            let start = Instant::now();
            let result = llama_cpp(&schema.text);
            if trace {
                let outcome = if result.is_ok() { "ok" } else { "error" };
                let ms = start.elapsed().as_secs_f64() * 1e3;
                eprintln!("llama.cpp: {key}: {outcome} in {ms:.1} ms");
            }
            Some(result)
        };
        let ours_t = match &ours {
            Ok(_) => {
                report.gbnfc_ok += 1;
                let time = min_time(|| gbnfc(&schema.text));
                if report.slowest.as_ref().is_none_or(|(_, t)| time > *t) {
                    report.slowest = Some((schema.name.clone(), time));
                }
                time
            }
            Err(e) => {
                *report.gbnfc_failures.entry(e.kind).or_default() += 1;
                Duration::ZERO
            }
        };
        if ours_closed.is_ok() {
            report.closed_ok += 1;
        }
        match &theirs {
            Some(Ok(_)) => report.llama_ok += 1,
            Some(Err(_)) | None => report.llama_failures += 1,
        }
        match (ours, theirs) {
            (Ok(our_grammar), Some(Ok(their_grammar))) => {
                let theirs_t = min_time(|| llama_cpp(&schema.text));
                let parsed = gbnfc_compiler::gbnf::parse(&our_grammar).ok();
                let check_t = parsed
                    .as_ref()
                    .map_or(Duration::ZERO, |g| min_time(|| self_check_work(g)));
                let closed = ours_closed.ok().map(|closed_grammar| {
                    let closed_t = min_time(|| gbnfc_closed(&schema.text));
                    (
                        ratio(closed_t, theirs_t),
                        closed_grammar.len() as f64 / their_grammar.len().max(1) as f64,
                    )
                });
                let open_text = open_reading(&schema.text);
                let open = llama_cpp(&open_text).ok().map(|open_grammar| {
                    let open_t = min_time(|| llama_cpp(&open_text));
                    (
                        ratio(ours_t, open_t),
                        our_grammar.len() as f64 / open_grammar.len().max(1) as f64,
                    )
                });
                report.gbnfc_total += ours_t;
                report.llama_total += theirs_t;
                report.both.push(Row {
                    name: schema.name.clone(),
                    time: ratio(ours_t, theirs_t),
                    times: (ours_t, theirs_t),
                    size: our_grammar.len() as f64 / their_grammar.len().max(1) as f64,
                    closed,
                    time_without_self_check: ratio(ours_t.saturating_sub(check_t), theirs_t),
                    open,
                });
            }
            (Ok(_), _) => report.only_gbnfc += 1,
            (Err(e), Some(Ok(_))) => {
                report.only_llama += 1;
                if report.only_llama_examples.len() < 3 {
                    report
                        .only_llama_examples
                        .push((schema.name.clone(), e.message));
                }
            }
            (Err(_), _) => {}
        }
    }
    report
}

/// The compile-time bar (issue 25): on every schema, compiling costs less than generating
/// one token of the default model, timed in the same run; and the median time ratio to
/// llama.cpp's converter stays within [`MEDIAN_CEILING`].
fn print_bar(reports: &[SplitReport], token_ms: f64) {
    println!(
        "One generated token of the default model: {token_ms:.2} ms (the faster of two \
         measurements, before and after the corpus).\n"
    );
    println!(
        "| split | gbnfc ok | slowest schema | its compile ms | compile / one token \
         | median time ratio to llama.cpp | bar holds |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in reports {
        let Some((name, time)) = &r.slowest else {
            continue;
        };
        let ms = time.as_secs_f64() * 1e3;
        let median = quantile(&sorted(r.both.iter().map(|b| b.time)), 0.5);
        let holds = ms < token_ms && median <= MEDIAN_CEILING;
        println!(
            "| {} | {} | {name} | {ms:.3} | {:.3} | {median:.2} | {} |",
            r.name,
            r.gbnfc_ok,
            ms / token_ms,
            if holds { "yes" } else { "no" },
        );
    }
    println!();
}

fn print(reports: &[SplitReport]) {
    println!("gbnfc with default options against llama.cpp:\n");
    println!(
        "| split | schemas | gbnfc ok | gbnfc fail | llama.cpp ok | llama.cpp fail (crash) \
         | both ok | median time ratio | p90 time ratio | total time ratio | median size ratio |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    for r in reports {
        let times = sorted(r.both.iter().map(|b| b.time));
        let sizes = sorted(r.both.iter().map(|b| b.size));
        let gbnfc_fail: usize = r.gbnfc_failures.values().sum();
        println!(
            "| {} | {} | {} | {} | {} | {} ({}) | {} | {:.2} | {:.2} | {:.2} | {:.2} |",
            r.name,
            r.schemas,
            r.gbnfc_ok,
            gbnfc_fail,
            r.llama_ok,
            r.llama_failures,
            r.llama_crashes,
            r.both.len(),
            quantile(&times, 0.5),
            quantile(&times, 0.9),
            ratio(r.gbnfc_total, r.llama_total),
            quantile(&sizes, 0.5),
        );
    }
    println!(
        "\ngbnfc with `closed` (absent `additionalProperties` = false, as llama.cpp reads it), \
         and gbnfc's default time less its self-check (estimate), on the schemas both compile:\n"
    );
    println!(
        "| split | gbnfc closed ok | gbnfc closed fail | both ok | median time ratio, closed \
         | median size ratio, closed | median time ratio, default less self-check |"
    );
    println!("|---|---|---|---|---|---|---|");
    for r in reports {
        let closed: Vec<(f64, f64)> = r.both.iter().filter_map(|b| b.closed).collect();
        let times = sorted(closed.iter().map(|c| c.0));
        let sizes = sorted(closed.iter().map(|c| c.1));
        let unchecked = sorted(r.both.iter().map(|b| b.time_without_self_check));
        println!(
            "| {} | {} | {} | {} | {:.2} | {:.2} | {:.2} |",
            r.name,
            r.closed_ok,
            r.schemas - r.closed_ok,
            closed.len(),
            quantile(&times, 0.5),
            quantile(&sizes, 0.5),
            quantile(&unchecked, 0.5),
        );
    }
    println!(
        "\ngbnfc with default options against llama.cpp given the same objects: every object \
         schema with `properties` and no `additionalProperties` gets `\"additionalProperties\": \
         true` written out (absent means allowed, as gbnfc reads it), so llama.cpp builds its own \
         extra-key exclusion; on the schemas both compile:\n"
    );
    println!("| split | both ok | median time ratio | p90 time ratio | median size ratio |");
    println!("|---|---|---|---|---|");
    for r in reports {
        let open: Vec<(f64, f64)> = r.both.iter().filter_map(|b| b.open).collect();
        let times = sorted(open.iter().map(|c| c.0));
        let sizes = sorted(open.iter().map(|c| c.1));
        println!(
            "| {} | {} | {:.2} | {:.2} | {:.2} |",
            r.name,
            open.len(),
            quantile(&times, 0.5),
            quantile(&times, 0.9),
            quantile(&sizes, 0.5),
        );
    }
    println!();
    for r in reports {
        println!("## {}", r.name);
        if r.unreadable > 0 {
            println!("- unreadable files: {}", r.unreadable);
        }
        println!("- gbnfc failures by kind: {:?}", r.gbnfc_failures);
        println!(
            "- only gbnfc compiles: {}; only llama.cpp compiles: {}",
            r.only_gbnfc, r.only_llama
        );
        for (name, message) in &r.only_llama_examples {
            let short: String = message.chars().take(160).collect();
            println!("  - gbnfc fails, llama.cpp compiles: {name}: {short}");
        }
        let times = sorted(r.both.iter().map(|b| b.time));
        let sizes = sorted(r.both.iter().map(|b| b.size));
        println!(
            "- time ratio p10 / p50 / p90 / max: {:.2} / {:.2} / {:.2} / {:.2}; \
             schemas with ratio ≤ 1: {}, > 2: {}, > 10: {}",
            quantile(&times, 0.1),
            quantile(&times, 0.5),
            quantile(&times, 0.9),
            times.last().copied().unwrap_or(f64::NAN),
            times.iter().filter(|&&t| t <= 1.0).count(),
            times.iter().filter(|&&t| t > 2.0).count(),
            times.iter().filter(|&&t| t > 10.0).count(),
        );
        println!(
            "- size ratio p10 / p50 / p90 / max: {:.2} / {:.2} / {:.2} / {:.2}",
            quantile(&sizes, 0.1),
            quantile(&sizes, 0.5),
            quantile(&sizes, 0.9),
            sizes.last().copied().unwrap_or(f64::NAN),
        );
        let mut worst: Vec<&Row> = r.both.iter().collect();
        worst.sort_by(|a, b| b.time.total_cmp(&a.time));
        for row in worst.iter().take(5) {
            println!(
                "  - slowest relative: {}: time ratio {:.2}, size ratio {:.2}",
                row.name, row.time, row.size
            );
        }
        println!();
    }
}

/// `--one gbnfc|llama.cpp Split/file.json`: runs one converter on one schema, once,
/// and prints the grammar.
fn one(converter: &str, key: &str) {
    let (split, file) = key.split_once('/').expect("Split/file.json");
    let split = load_split(split).expect("split loads");
    let schema = split
        .schemas
        .iter()
        .find(|s| s.name == file)
        .expect("schema exists");
    let result = match converter {
        "gbnfc" => gbnfc(&schema.text).map_err(|e| e.message),
        "llama.cpp" => llama_cpp(&schema.text),
        _ => panic!("converter: gbnfc or llama.cpp"),
    };
    match result {
        Ok(grammar) => {
            println!("{grammar}");
            eprintln!("{converter}: {key}: {} bytes", grammar.len());
        }
        Err(e) => println!("{converter}: {key}: error: {e}"),
    }
}

fn main() {
    let mut trace = false;
    let mut rows = false;
    let mut splits = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(arg) = args.next() {
        if arg == "--trace" {
            trace = true;
        } else if arg == "--rows" {
            rows = true;
        } else if arg == "--one" {
            let converter = args.next().expect("--one CONVERTER KEY");
            let key = args.next().expect("--one CONVERTER KEY");
            let worker = std::thread::Builder::new()
                .stack_size(256 << 20)
                .spawn(move || one(&converter, &key))
                .expect("worker thread starts");
            worker.join().expect("worker thread finishes");
            return;
        } else {
            splits.push(arg);
        }
    }
    if splits.is_empty() {
        splits = split_names().expect("corpus folder readable");
    }
    let engine = Engine::load(&EngineOptions::default()).expect("the default model loads");
    let token_before = one_token_ms(&engine);
    // Both converters recurse over the schema; give them room.
    let worker = std::thread::Builder::new()
        .stack_size(256 << 20)
        .spawn(move || {
            let mut reports = Vec::new();
            for name in &splits {
                let start = Instant::now();
                let report = run_split(name, trace);
                eprintln!(
                    "{name}: {} schemas in {:.1} s",
                    report.schemas,
                    start.elapsed().as_secs_f64()
                );
                reports.push(report);
            }
            reports
        })
        .expect("worker thread starts");
    let reports = worker.join().expect("worker thread finishes");
    let token_ms = token_before.min(one_token_ms(&engine));
    print_bar(&reports, token_ms);
    print(&reports);
    if rows {
        print_rows(&reports);
    }
}

/// `--rows`: each split's schemas that both converters compile, by time ratio.
fn print_rows(reports: &[SplitReport]) {
    for r in reports {
        let mut both: Vec<&Row> = r.both.iter().collect();
        both.sort_by(|a, b| a.time.total_cmp(&b.time));
        println!("\n{}, every schema both compile, by time ratio:\n", r.name);
        println!("| rank | schema | gbnfc µs | llama.cpp µs | time ratio | size ratio |");
        println!("|---|---|---|---|---|---|");
        for (rank, row) in both.iter().enumerate() {
            println!(
                "| {} | {} | {:.1} | {:.1} | {:.3} | {:.2} |",
                rank + 1,
                row.name,
                row.times.0.as_secs_f64() * 1e6,
                row.times.1.as_secs_f64() * 1e6,
                row.time,
                row.size
            );
        }
    }
}
