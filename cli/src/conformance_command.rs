//! `gbnfc conformance DIR…`: runs the conformance check over test corpora and reports
//! per split, beside llguidance's recorded results.
//!
//! A directory is either a JSON-Schema-Test-Suite draft folder (files of
//! `[{description, schema, tests}]`, with `optional/format/` included) or a MaskBench
//! split (files of `{schema, tests}`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use gbnfc_compiler::conformance::{check_schema, instances, InstanceOutcome, SchemaOutcome};
use gbnfc_compiler::schema::Options;
use serde_json::{json, Map, Value};

use crate::schema_commands::ref_dir_resolver;
use crate::Failure;

/// Flags of `gbnfc conformance`.
pub struct ConformanceArgs {
    /// Corpus directories.
    pub dirs: Vec<PathBuf>,
    /// Where remote `$ref`s resolve from (the test suite's `remotes/`).
    pub remotes: Option<PathBuf>,
    /// Write per-schema results (anchor format) here.
    pub out: Option<PathBuf>,
    /// Write a Markdown report here.
    pub markdown: Option<PathBuf>,
    /// llguidance's recorded results (`llguidance-*-expected.json`) to compare with.
    pub anchors: Option<PathBuf>,
    /// Fail when a split passes fewer than this baseline records.
    pub baseline: Option<PathBuf>,
    /// Write the current pass counts as the new baseline.
    pub write_baseline: Option<PathBuf>,
}

/// Totals for one split.
#[derive(Default, Clone)]
struct Totals {
    kind: &'static str,
    schemas: usize,
    schemas_passed: usize,
    tests: usize,
    tests_passed: usize,
    compile_errors: usize,
    unsound: usize,
    unsound_enforced: usize,
    incomplete: usize,
    /// Schemas with at least one keyword the grammar leaves to validation.
    validation_only: usize,
    anchor_passed: Option<usize>,
}

/// Runs the command.
pub fn run(args: &ConformanceArgs) -> Result<ExitCode, Failure> {
    let resolver = args.remotes.clone().map(ref_dir_resolver);
    let options = Options {
        remote: resolver
            .as_ref()
            .map(|r| r as &dyn Fn(&str) -> Option<Value>),
        ..Options::default()
    };
    let anchors = load_anchors(args.anchors.as_deref())?;
    let mut suite_results = Map::new();
    let mut bench_results = Map::new();
    let mut totals: BTreeMap<String, Totals> = BTreeMap::new();
    for dir in &args.dirs {
        let split = dir
            .file_name()
            .and_then(|n| n.to_str())
            .unwrap_or("corpus")
            .to_string();
        let files = json_files(dir)?;
        let mut t = Totals::default();
        for file in &files {
            let text = std::fs::read_to_string(file)
                .map_err(|e| Failure::new(format!("cannot read `{}`: {e}", file.display())))?;
            let Ok(doc) = serde_json::from_str::<Value>(&text) else {
                return Err(Failure::new(format!("`{}` is not JSON", file.display())));
            };
            let name = file
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("")
                .to_string();
            match doc {
                Value::Array(groups) => {
                    t.kind = "tests";
                    let stem = file
                        .strip_prefix(dir)
                        .unwrap_or(file)
                        .with_extension("")
                        .to_string_lossy()
                        .replace('\\', "/");
                    let mut file_results = Map::new();
                    for group in &groups {
                        let cases = instances(group.get("tests").unwrap_or(&Value::Null));
                        let schema = group.get("schema").cloned().unwrap_or(Value::Bool(true));
                        let result = check_schema(&schema, &cases, &options);
                        let mut group_results = Map::new();
                        for (description, outcome) in &result.instances {
                            t.tests += 1;
                            let verdict = match outcome {
                                InstanceOutcome::Pass => {
                                    t.tests_passed += 1;
                                    "pass".to_string()
                                }
                                InstanceOutcome::Unsound => {
                                    t.unsound += 1;
                                    if !result.validation_only {
                                        t.unsound_enforced += 1;
                                    }
                                    "unsound: accepted an invalid instance".to_string()
                                }
                                InstanceOutcome::Incomplete => {
                                    t.incomplete += 1;
                                    "incomplete: rejected a valid instance".to_string()
                                }
                                InstanceOutcome::CompileError(e) => {
                                    t.compile_errors += 1;
                                    format!("compile_error: {e}")
                                }
                            };
                            group_results.insert(description.clone(), Value::String(verdict));
                        }
                        t.schemas += 1;
                        t.validation_only += usize::from(result.validation_only);
                        if result.outcome == SchemaOutcome::Pass {
                            t.schemas_passed += 1;
                        }
                        let key = group
                            .get("description")
                            .and_then(Value::as_str)
                            .unwrap_or("")
                            .to_string();
                        file_results.insert(key, Value::Object(group_results));
                    }
                    suite_results.insert(stem, Value::Object(file_results));
                }
                Value::Object(ref entry) => {
                    t.kind = "schemas";
                    let cases = instances(entry.get("tests").unwrap_or(&Value::Null));
                    let schema = entry.get("schema").cloned().unwrap_or(Value::Bool(true));
                    let result = check_schema(&schema, &cases, &options);
                    t.schemas += 1;
                    t.validation_only += usize::from(result.validation_only);
                    t.tests += cases.len();
                    let verdict = match &result.outcome {
                        SchemaOutcome::Pass => {
                            t.schemas_passed += 1;
                            json!({})
                        }
                        SchemaOutcome::CompileError(e) => {
                            t.compile_errors += 1;
                            json!({"compile_error": e})
                        }
                        SchemaOutcome::Unsound => {
                            t.unsound += 1;
                            if !result.validation_only {
                                t.unsound_enforced += 1;
                            }
                            json!({"unsound": "accepted an invalid instance", "validation_only": result.validation_only})
                        }
                        SchemaOutcome::Incomplete => {
                            t.incomplete += 1;
                            json!({"incomplete": "rejected a valid instance"})
                        }
                    };
                    t.tests_passed += result
                        .instances
                        .iter()
                        .filter(|(_, o)| *o == InstanceOutcome::Pass)
                        .count();
                    bench_results.insert(name, verdict);
                }
                _ => {}
            }
        }
        t.anchor_passed = anchor_count(&anchors, &split, t.kind, &files, dir);
        totals.insert(split, t);
    }
    let report = render(&totals);
    print!("{report}");
    if let Some(out) = &args.out {
        let mut all = Map::new();
        if !suite_results.is_empty() {
            all.insert("draft2020-12".to_string(), Value::Object(suite_results));
        }
        all.extend(bench_results);
        write(
            out,
            &serde_json::to_string_pretty(&Value::Object(all)).unwrap_or_default(),
        )?;
    }
    let baseline = read_baseline(args.baseline.as_deref())?;
    if let Some(markdown) = &args.markdown {
        write(markdown, &markdown_report(&totals, &baseline))?;
    }
    if let Some(path) = &args.write_baseline {
        let baseline: Map<String, Value> = totals
            .iter()
            .map(|(split, t)| {
                let counts =
                    json!({"passed": passed(t), "validation_only_schemas": t.validation_only});
                (split.clone(), counts)
            })
            .collect();
        write(
            path,
            &format!(
                "{}\n",
                serde_json::to_string_pretty(&Value::Object(baseline)).unwrap_or_default()
            ),
        )?;
    }
    let mut failed = false;
    for (split, t) in &totals {
        if t.unsound_enforced > 0 {
            eprintln!(
                "error: {split}: {} unsound result(s) with no validation-only keyword",
                t.unsound_enforced
            );
            failed = true;
        }
    }
    for (split, t) in &totals {
        let Some(recorded) = baseline.get(split) else {
            continue;
        };
        if recorded.passed.is_some_and(|expected| passed(t) < expected) {
            eprintln!(
                "error: {split}: {} passed, below the baseline of {}",
                passed(t),
                recorded.passed.unwrap_or_default()
            );
            failed = true;
        }
        if recorded
            .validation_only
            .is_some_and(|expected| t.validation_only > expected)
        {
            eprintln!(
                "error: {split}: {} schemas with a validation-only keyword, above the baseline of {}",
                t.validation_only,
                recorded.validation_only.unwrap_or_default()
            );
            failed = true;
        }
    }
    Ok(if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

fn passed(t: &Totals) -> usize {
    if t.kind == "tests" {
        t.tests_passed
    } else {
        t.schemas_passed
    }
}

fn total(t: &Totals) -> usize {
    if t.kind == "tests" {
        t.tests
    } else {
        t.schemas
    }
}

fn render(totals: &BTreeMap<String, Totals>) -> String {
    let mut out = String::from("split            counted   passed      %  llguidance  compile-err  unsound (enforced)  incomplete  validation-only\n");
    for (split, t) in totals {
        let pct = 100.0 * passed(t) as f64 / total(t).max(1) as f64;
        let anchor = t.anchor_passed.map_or("-".to_string(), |a| a.to_string());
        out.push_str(&format!(
            "{split:<16} {:>7}   {:>6} {pct:>6.1}  {anchor:>10}  {:>11}  {:>7} ({:>7})  {:>10}  {:>15}\n",
            format!("{} {}", total(t), if t.kind == "tests" { "t" } else { "s" }),
            passed(t),
            t.compile_errors,
            t.unsound,
            t.unsound_enforced,
            t.incomplete,
            t.validation_only
        ));
    }
    out
}

/// One split's counts in a baseline file.
#[derive(Default)]
struct Recorded {
    passed: Option<usize>,
    validation_only: Option<usize>,
}

/// The counts a baseline file records, by split (none without a file).
fn read_baseline(path: Option<&Path>) -> Result<BTreeMap<String, Recorded>, Failure> {
    let Some(path) = path else {
        return Ok(BTreeMap::new());
    };
    let text = std::fs::read_to_string(path)
        .map_err(|e| Failure::new(format!("cannot read baseline `{}`: {e}", path.display())))?;
    let baseline: Map<String, Value> = serde_json::from_str(&text).map_err(|e| {
        Failure::new(format!(
            "baseline `{}` is not a JSON object of splits: {e}",
            path.display()
        ))
    })?;
    let count = |counts: &Value, key: &str| {
        counts
            .get(key)
            .and_then(Value::as_u64)
            .and_then(|n| usize::try_from(n).ok())
    };
    Ok(baseline
        .iter()
        .map(|(split, counts)| {
            let recorded = Recorded {
                passed: count(counts, "passed"),
                validation_only: count(counts, "validation_only_schemas"),
            };
            (split.clone(), recorded)
        })
        .collect())
}

fn markdown_report(
    totals: &BTreeMap<String, Totals>,
    baseline: &BTreeMap<String, Recorded>,
) -> String {
    let mut out = String::from(
        "# Conformance\n\nProduced by `scripts/conformance` (`gbnfc conformance`). For every schema of the\n\
         shared corpora: compile; for every test instance, its canonical text must be accepted\n\
         by the grammar exactly when the instance is valid. The test suite counts test\n\
         instances; MaskBench splits count schemas (a schema passes when all its instances\n\
         agree). *Unsound* counts accepted invalid instances (test suite) or schemas (MaskBench);\n\
         *enforced* is the part with no validation-only keyword, which must stay 0.\n\
         *Validation-only schemas* counts the schemas (test-suite groups) with at least one\n\
         keyword the grammar leaves to validation, beside the count in\n\
         `conformance/baseline.json` when the run is given it.\n\n\
         | split | counted | gbnfc passed | % | llguidance passed | % | compile errors | unsound (enforced) | incomplete | validation-only schemas (baseline) |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
    );
    for (split, t) in totals {
        let n = total(t).max(1) as f64;
        let (anchor, anchor_pct) = match t.anchor_passed {
            Some(a) => (a.to_string(), format!("{:.1}", 100.0 * a as f64 / n)),
            None => ("-".to_string(), "-".to_string()),
        };
        let recorded = baseline
            .get(split)
            .and_then(|r| r.validation_only)
            .map_or("-".to_string(), |r| r.to_string());
        out.push_str(&format!(
            "| {split} | {} {} | {} | {:.1} | {anchor} | {anchor_pct} | {} | {} ({}) | {} | {} ({recorded}) |\n",
            total(t),
            t.kind,
            passed(t),
            100.0 * passed(t) as f64 / n,
            t.compile_errors,
            t.unsound,
            t.unsound_enforced,
            t.incomplete,
            t.validation_only
        ));
    }
    out
}

fn load_anchors(dir: Option<&Path>) -> Result<Map<String, Value>, Failure> {
    let mut anchors = Map::new();
    let Some(dir) = dir else { return Ok(anchors) };
    for file in json_files(dir)? {
        let text = std::fs::read_to_string(&file)
            .map_err(|e| Failure::new(format!("cannot read `{}`: {e}", file.display())))?;
        if let Ok(Value::Object(map)) = serde_json::from_str::<Value>(&text) {
            anchors.extend(map);
        }
    }
    Ok(anchors)
}

fn anchor_count(
    anchors: &Map<String, Value>,
    split: &str,
    kind: &str,
    files: &[PathBuf],
    dir: &Path,
) -> Option<usize> {
    if kind == "tests" {
        let suite = anchors.get(split)?.as_object()?;
        let count = suite
            .values()
            .filter_map(Value::as_object)
            .flat_map(|groups| groups.values())
            .filter_map(Value::as_object)
            .flat_map(|tests| tests.values())
            .filter(|v| v.as_str() == Some("pass"))
            .count();
        return Some(count);
    }
    let _ = dir;
    let mut found = false;
    let mut count = 0;
    for file in files {
        let name = file.file_name()?.to_str()?;
        if let Some(v) = anchors.get(name) {
            found = true;
            if v.as_object().is_some_and(Map::is_empty) {
                count += 1;
            }
        }
    }
    found.then_some(count)
}

/// The `.json` files under `dir`: top level, plus `optional/format/` for the test suite.
fn json_files(dir: &Path) -> Result<Vec<PathBuf>, Failure> {
    let mut files = Vec::new();
    let mut dirs = vec![dir.to_path_buf()];
    let format_dir = dir.join("optional").join("format");
    if format_dir.is_dir() {
        dirs.push(format_dir);
    }
    for d in dirs {
        let entries = std::fs::read_dir(&d)
            .map_err(|e| Failure::new(format!("cannot read `{}`: {e}", d.display())))?;
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "json") && path.is_file() {
                files.push(path);
            }
        }
    }
    files.sort();
    Ok(files)
}

fn write(path: &Path, text: &str) -> Result<(), Failure> {
    std::fs::write(path, text)
        .map_err(|e| Failure::new(format!("cannot write `{}`: {e}", path.display())))
}
