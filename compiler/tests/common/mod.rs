//! What the compiler's tests share: the seed examples in `../shared/examples` and the
//! schemas of the shared corpora.
#![allow(clippy::unwrap_used, clippy::panic, dead_code)]

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The folder of the seed examples (CI lays `../shared` beside the clone).
pub fn examples() -> PathBuf {
    Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/../../shared/examples"
    ))
    .to_path_buf()
}

/// A JSON file, read and parsed.
pub fn read(path: &Path) -> Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| {
        panic!(
            "{}: {e} (CI lays ../shared beside the clone)",
            path.display()
        )
    });
    serde_json::from_str(&text).unwrap()
}

/// Every seed example, by file name, in name order, and whether it is a schema or a
/// response format (the others are tool lists).
pub fn seed_examples() -> Vec<(String, Value, bool)> {
    let mut paths: Vec<PathBuf> = std::fs::read_dir(examples())
        .unwrap_or_else(|e| panic!("{}: {e}", examples().display()))
        .map(|e| e.unwrap().path())
        .collect();
    paths.sort();
    paths
        .into_iter()
        .map(|path| {
            let name = path.file_name().unwrap().to_string_lossy().into_owned();
            let schema = name.ends_with(".schema.json") || name.ends_with(".response-format.json");
            (name, read(&path), schema)
        })
        .collect()
}

/// The shared corpora (CI lays `../shared` beside the clone).
pub fn corpora() -> PathBuf {
    let corpora = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../shared/corpora");
    assert!(
        corpora.is_dir(),
        "the shared corpora are missing at {}: CI lays ../shared beside the clone",
        corpora.display()
    );
    corpora
}

fn json_files(dir: &Path) -> Vec<PathBuf> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .collect();
    files.sort();
    files
}

/// Every schema of the corpora (the JSONSchemaBench splits, then JSON-Schema-Test-Suite
/// draft2020-12), each with a name for messages, in a fixed order.
pub fn corpus_schemas() -> Vec<(String, Value)> {
    let corpora = corpora();
    let mut out = Vec::new();
    let mut splits: Vec<PathBuf> = std::fs::read_dir(corpora.join("jsonschemabench"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .collect();
    splits.sort();
    for split in splits {
        for file in json_files(&split) {
            let Ok(text) = std::fs::read_to_string(&file) else {
                continue;
            };
            let Ok(mut value) = serde_json::from_str::<Value>(&text) else {
                continue;
            };
            if let Some(schema) = value.get_mut("schema").map(Value::take) {
                out.push((file.display().to_string(), schema));
            }
        }
    }
    for file in json_files(&corpora.join("json-schema-test-suite/draft2020-12")) {
        let text = std::fs::read_to_string(&file).unwrap();
        let groups: Vec<Value> = serde_json::from_str(&text).unwrap();
        for (i, mut group) in groups.into_iter().enumerate() {
            if let Some(schema) = group.get_mut("schema").map(Value::take) {
                out.push((format!("{}[{i}]", file.display()), schema));
            }
        }
    }
    out
}
