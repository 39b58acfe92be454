//! The conformance gate: over the shared corpora (JSON-Schema-Test-Suite draft2020-12 and
//! the JSONSchemaBench splits), no split may pass fewer cases, or have more schemas with a
//! validation-only keyword, than `conformance/baseline.json` records, and no invalid
//! instance may be accepted by a grammar whose schema has no validation-only keyword.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::Path;
use std::process::Command;

#[test]
fn corpora_stay_at_or_above_the_baseline_with_no_unsound_enforced_keyword() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let corpora = repo.join("../shared/corpora");
    assert!(
        corpora.is_dir(),
        "the shared corpora are missing at {}: CI lays ../shared beside the clone",
        corpora.display()
    );
    let mut dirs = vec![corpora.join("json-schema-test-suite/draft2020-12")];
    let mut splits: Vec<_> = std::fs::read_dir(corpora.join("jsonschemabench"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    splits.sort();
    assert!(splits.len() >= 5, "expected the JSONSchemaBench splits");
    dirs.extend(splits);
    let out = Command::new(env!("CARGO_BIN_EXE_gbnfc"))
        .arg("conformance")
        .args(&dirs)
        .arg("--remotes")
        .arg(corpora.join("json-schema-test-suite/remotes"))
        .arg("--anchors")
        .arg(corpora.join("anchors"))
        .arg("--baseline")
        .arg(repo.join("conformance/baseline.json"))
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    println!("{stdout}");
    assert!(
        out.status.success(),
        "conformance regressed:\n{stdout}\n{stderr}"
    );
    assert!(
        stdout.contains("draft2020-12") && stdout.contains("Github_easy"),
        "{stdout}"
    );
}
