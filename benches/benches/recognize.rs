//! Earley recognizer scaling benches: each group grows one size parameter by 10x steps,
//! so linear behaviour shows as ~10x time per step (criterion also reports throughput in
//! bytes of text, which stays flat when scaling is linear).
//!
//! Only `Recognizer::recognize` is timed; parsing and lowering the grammar is done once
//! per input, outside the measurement.
//!
//! Run: `cargo bench -p gbnfc-benches --bench recognize -- --warm-up-time 1 --measurement-time 3`

#![allow(missing_docs, clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::hint::black_box;

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use gbnfc_benches::cases;
use gbnfc_compiler::gbnf::parse;
use gbnfc_compiler::recognize::Recognizer;

fn recognize(c: &mut Criterion) {
    for case in cases() {
        let mut group = c.benchmark_group(case.name);
        // The largest inputs take tens of milliseconds; 10 samples keeps the run short.
        group.sample_size(10);
        for input in &case.inputs {
            let grammar = parse(&input.grammar).expect("bench grammar parses");
            let recognizer = Recognizer::new(&grammar).expect("bench grammar lowers");
            assert!(
                recognizer.recognize(&input.text).accepted,
                "{}/{}/{} is not accepted",
                case.name,
                input.shape,
                input.size
            );
            group.throughput(Throughput::Bytes(input.text.len() as u64));
            group.bench_with_input(
                BenchmarkId::new(input.shape, input.size),
                input.text.as_str(),
                |b, text| b.iter(|| recognizer.recognize(black_box(text))),
            );
        }
        group.finish();
    }
}

criterion_group!(benches, recognize);
criterion_main!(benches);
