//! Compiles JSONSchemaBench files (MaskBench form: the schema under `"schema"`) with gbnfc
//! `PASSES` times over, the way `compile_report` times gbnfc (JSON text in, GBNF text out),
//! for a profiler to count where the work goes. Prints the total grammar bytes.
//!
//! Run: `cargo build --release -p gbnfc-benches --example compile_loop`, then
//! `valgrind --tool=callgrind target/release/examples/compile_loop PASSES FILE…`; the
//! difference between two pass counts is the work of the extra passes alone.

use std::process::ExitCode;

use gbnfc_benches::jsonschemabench::gbnfc;
use serde_json::Value;

/// Deep schemas recurse in the compiler: the same stack `compile_report` gives it.
const STACK_BYTES: usize = 256 << 20;

fn main() -> ExitCode {
    let mut args = std::env::args().skip(1);
    let Some(passes) = args.next().and_then(|n| n.parse::<usize>().ok()) else {
        eprintln!("usage: compile_loop PASSES FILE…");
        return ExitCode::from(2);
    };
    let mut texts = Vec::new();
    for file in args {
        let read = std::fs::read_to_string(&file)
            .map_err(|e| e.to_string())
            .and_then(|text| serde_json::from_str::<Value>(&text).map_err(|e| e.to_string()));
        match read {
            Ok(case) => texts.push(case["schema"].to_string()),
            Err(e) => {
                eprintln!("{file}: {e}");
                return ExitCode::from(1);
            }
        }
    }
    let worker = std::thread::Builder::new()
        .stack_size(STACK_BYTES)
        .spawn(move || {
            let mut bytes = 0;
            for _ in 0..passes {
                for text in &texts {
                    bytes += gbnfc(text).map_or(0, |grammar| grammar.len());
                }
            }
            bytes
        });
    match worker.map(std::thread::JoinHandle::join) {
        Ok(Ok(bytes)) => {
            println!("{bytes}");
            ExitCode::SUCCESS
        }
        _ => {
            eprintln!("the compiling thread failed");
            ExitCode::from(1)
        }
    }
}
