//! What the compiler's tool-list tests share: the seed examples in `../shared/examples`.
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
