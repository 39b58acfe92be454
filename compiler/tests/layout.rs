//! The shape of the code (issue 25): no source file of the workspace's crates over 800
//! lines (their code, tests, benches and examples), and no import cycle among the
//! compiler's modules (a module's `use` of `crate::…`/`super::…` paths, outside its tests
//! and comments; a parent and its own children do not count).
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

const MAX_LINES: usize = 800;

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_source_file_is_over_800_lines() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut files = Vec::new();
    for krate in ["compiler", "bridge", "cli", "benches"] {
        for folder in ["src", "tests", "benches", "examples"] {
            let dir = root.join(krate).join(folder);
            if dir.is_dir() {
                rust_files(&dir, &mut files);
            }
        }
    }
    let long: Vec<String> = files
        .iter()
        .map(|f| (f, std::fs::read_to_string(f).unwrap().lines().count()))
        .filter(|(_, n)| *n > MAX_LINES)
        .map(|(f, n)| format!("{}: {n} lines", f.display()))
        .collect();
    assert!(long.is_empty(), "split by idea: {long:#?}");
}

/// The module path of a file under `src` (`schema/emit/mod.rs` → `schema::emit`).
fn module_of(src: &Path, file: &Path) -> Vec<String> {
    let mut parts: Vec<String> = file
        .strip_prefix(src)
        .unwrap()
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts.last().map(String::as_str), Some("mod" | "lib")) {
        parts.pop();
    }
    parts
}

/// The code of a file without its tests module and its comments.
fn code(text: &str) -> String {
    let text = text.split("#[cfg(test)]\nmod tests").next().unwrap();
    text.lines()
        .map(|l| l.split("//").next().unwrap())
        .collect::<Vec<_>>()
        .join("\n")
}

/// The modules a path such as `super::merge::json_equal` names, seen from `module`: the
/// longest prefix that is a module.
fn target(module: &[String], path: &str, modules: &BTreeSet<Vec<String>>) -> Option<Vec<String>> {
    let mut segments = path.split("::").peekable();
    let mut base: Vec<String> = match *segments.peek()? {
        "crate" => {
            segments.next();
            Vec::new()
        }
        "super" => {
            let mut base = module.to_vec();
            while segments.peek() == Some(&"super") {
                segments.next();
                base.pop()?;
            }
            base
        }
        _ => return None,
    };
    let mut best = None;
    for segment in segments {
        base.push(segment.to_string());
        if modules.contains(&base) {
            best = Some(base.clone());
        }
    }
    best
}

#[test]
fn no_import_cycle_among_the_compilers_modules() {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let modules: BTreeSet<Vec<String>> = files.iter().map(|f| module_of(&src, f)).collect();
    let mut edges: BTreeMap<Vec<String>, BTreeSet<Vec<String>>> = BTreeMap::new();
    for file in &files {
        let module = module_of(&src, file);
        let text = code(&std::fs::read_to_string(file).unwrap());
        let mut targets = BTreeSet::new();
        for (i, _) in text
            .match_indices("crate::")
            .chain(text.match_indices("super::"))
        {
            let path: String = text[i..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == ':')
                .collect();
            if let Some(t) = target(&module, path.trim_end_matches(':'), &modules) {
                let related = t.starts_with(&module) || module.starts_with(&t);
                if !related {
                    targets.insert(t);
                }
            }
        }
        edges.insert(module, targets);
    }
    // A cycle exists when some module reaches itself.
    for start in edges.keys() {
        let mut seen = BTreeSet::new();
        let mut stack: Vec<&Vec<String>> = edges[start].iter().collect();
        while let Some(m) = stack.pop() {
            assert!(
                m != start,
                "{} takes part in an import cycle",
                start.join("::")
            );
            if seen.insert(m) {
                stack.extend(edges.get(m).into_iter().flatten());
            }
        }
    }
}
