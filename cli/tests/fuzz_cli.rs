//! `gbnfc fuzz` on every example in ../shared/examples — schemas, response_formats and tool
//! lists — exits 0 without a model (grammar samples) and with the default model
//! (generations); and an output that breaks its schema makes it exit 1 with the output
//! and the validation error shown.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

mod common;

use std::path::PathBuf;
use std::process::Output;

use common::{gbnfc, repo};

fn examples() -> Vec<PathBuf> {
    let dir = repo().join("../shared/examples");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| {
            panic!(
                "{}: {e} (CI lays ../shared beside the clone)",
                dir.display()
            )
        })
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    assert!(files.len() >= 5);
    files
}

fn show(out: &Output) -> String {
    format!(
        "status {:?}\nstdout:\n{}\nstderr:\n{}",
        out.status.code(),
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn every_example_fuzzes_clean_from_the_grammar() {
    for file in examples() {
        let path = file.display().to_string();
        let out = gbnfc(&["fuzz", &path, "-n", "200", "--quiet"]);
        assert!(out.status.success(), "{path}: {}", show(&out));
        let summary = String::from_utf8_lossy(&out.stdout);
        assert!(
            summary.contains("outputs valid (100.0%)"),
            "{path}: {summary}"
        );
    }
}

#[test]
fn every_example_fuzzes_clean_on_the_model() {
    for file in examples() {
        let path = file.display().to_string();
        let out = gbnfc(&[
            "fuzz",
            &path,
            "-n",
            "2",
            "--with-model",
            "--quiet",
            "--threads",
            "2",
            "--max-tokens",
            "160",
        ]);
        assert!(out.status.success(), "{path}: {}", show(&out));
        let summary = String::from_utf8_lossy(&out.stdout);
        assert!(
            summary.starts_with("2 of 2 outputs valid"),
            "{path}: {summary}"
        );
    }
}

#[test]
fn an_invalid_output_fails_the_run() {
    // `uniqueItems` over a range of integers is enforced by validation only (the grammar
    // keeps it for a few listed values), so some samples repeat an item.
    let dir = std::env::temp_dir().join(format!("gbnfc-fuzz-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let schema = dir.join("unique.json");
    std::fs::write(
        &schema,
        r#"{"type": "array", "items": {"type": "integer", "minimum": 1, "maximum": 2}, "minItems": 2, "maxItems": 2, "uniqueItems": true}"#,
    )
    .unwrap();
    let out = gbnfc(&["fuzz", &schema.display().to_string(), "-n", "50", "--quiet"]);
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(out.status.code(), Some(1), "{}", show(&out));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("INVALID:"), "{text}");
    assert!(text.contains("[1,1]") || text.contains("[2,2]"), "{text}");
}
