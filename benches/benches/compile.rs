//! JSON Schema → GBNF: gbnfc's compiler against llama.cpp's own `json_schema_to_grammar`,
//! side by side in one process, on the JSONSchemaBench splits.
//!
//! Per split, one group with three functions, each compiling a whole sample of the split
//! once per iteration (JSON text in, GBNF text out): `gbnfc` (default options),
//! `gbnfc-closed` (absent `additionalProperties` = false, as llama.cpp reads it) and
//! `llama.cpp`. The sample is the first [`SAMPLE`] schemas of the split by file name, less
//! those that any of the three fails on (and those in `benches/llama-cpp-crashes.txt`), so
//! all three do the same schemas; the counts go to stderr.
//!
//! Run: `cargo bench -p gbnfc-benches --bench compile -- --warm-up-time 1 --measurement-time 5`
//! (a split name as filter, e.g. `-- BFCL`, runs one group). The per-schema report, with
//! medians of ratios over every schema, is the `compile_report` binary.

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use gbnfc_benches::jsonschemabench::{
    gbnfc, gbnfc_closed, llama_cpp, llama_cpp_crashes, load_split, split_names,
};

/// Schemas per split (the first ones by file name).
const SAMPLE: usize = 200;

fn compile(c: &mut Criterion) {
    let crashes = llama_cpp_crashes();
    for name in split_names().expect("corpus folder readable") {
        let split = load_split(&name).expect("split loads");
        let first: Vec<_> = split.schemas.into_iter().take(SAMPLE).collect();
        let taken = first.len();
        let (mut gbnfc_fail, mut closed_fail, mut llama_fail) = (0, 0, 0);
        let mut texts = Vec::new();
        for schema in first {
            let key = format!("{name}/{}", schema.name);
            let ours = gbnfc(&schema.text).is_ok();
            let closed = gbnfc_closed(&schema.text).is_ok();
            let theirs = !crashes.contains(&key) && llama_cpp(&schema.text).is_ok();
            gbnfc_fail += usize::from(!ours);
            closed_fail += usize::from(!closed);
            llama_fail += usize::from(!theirs);
            if ours && closed && theirs {
                texts.push(schema.text);
            }
        }
        eprintln!(
            "{name}: {} of the first {taken} schemas timed; skipped: gbnfc fails {gbnfc_fail}, \
             gbnfc-closed fails {closed_fail}, llama.cpp fails {llama_fail}",
            texts.len()
        );
        let mut group = c.benchmark_group(format!("compile/{name}"));
        group.sample_size(10);
        group.throughput(Throughput::Elements(texts.len() as u64));
        group.bench_function("gbnfc", |b| {
            b.iter(|| {
                for text in &texts {
                    black_box(gbnfc(black_box(text)).ok());
                }
            });
        });
        group.bench_function("gbnfc-closed", |b| {
            b.iter(|| {
                for text in &texts {
                    black_box(gbnfc_closed(black_box(text)).ok());
                }
            });
        });
        group.bench_function("llama.cpp", |b| {
            b.iter(|| {
                for text in &texts {
                    black_box(llama_cpp(black_box(text)).ok());
                }
            });
        });
        group.finish();
    }
}

criterion_group!(benches, compile);
criterion_main!(benches);
