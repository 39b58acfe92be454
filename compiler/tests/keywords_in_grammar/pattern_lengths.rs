//! `pattern` together with `minLength` / `maxLength`: the strings the pattern matches
//! (anywhere, unless anchored) whose length in characters is within bounds.

use super::Enforced;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use gbnfc_compiler::schema::{compile, Options};
use serde_json::{json, Value};

/// Patterns of the corpora's kinds: classes repeated and anchored, alternations, optional
/// groups, unanchored ends, escapes and non-ASCII characters.
const PATTERNS: &[&str] = &[
    r"^[A-Za-z0-9:_\-]+$",
    r"^([\w\/-]|[\w-][\w\/-]*[\w-])$",
    r"^(\d+\.\d+\.\d+.*)$",
    r"^[0-9a-z-]*$",
    r"^(?:\S+\s+){0,3}\S+$",
    r"[aA][12].*[zZ]",
    r"^(a|ab)*c?$",
    r"é.",
    r#"^[^,"]+$"#,
    r"^[a-z]{2,3}(-[A-Z]{2})?$",
];

/// Strings to judge: samples of the pattern alone (many lengths), each cut and grown by a
/// character, and a few fixed ones.
fn candidates(pattern: &str) -> Vec<String> {
    let alone = compile(
        &json!({"type": "string", "pattern": pattern}),
        &Options::default(),
    )
    .unwrap();
    let sampler = Sampler::new(&alone.grammar).unwrap();
    let options = SampleOptions {
        max_len: 24,
        ..SampleOptions::default()
    };
    let mut out: Vec<String> = Vec::new();
    for text in sampler.samples(7, 60, options) {
        let Ok(Value::String(s)) = serde_json::from_str::<Value>(&text) else {
            continue;
        };
        let chars: Vec<char> = s.chars().collect();
        if !chars.is_empty() {
            out.push(chars[..chars.len() - 1].iter().collect());
        }
        out.push(format!("{s}a"));
        out.push(s);
    }
    out.extend(["", "a", "ab", "a1-z", "1.2.3", "x y", "é", "\"", "a,b"].map(String::from));
    out
}

#[test]
fn patterns_within_lengths_agree_with_the_crate() {
    for pattern in PATTERNS {
        for (min, max) in [
            (0, Some(3)),
            (2, Some(6)),
            (4, None),
            (1, Some(1)),
            (3, Some(12)),
        ] {
            let mut schema = json!({"type": "string", "pattern": pattern, "minLength": min});
            if let Some(max) = max {
                schema["maxLength"] = json!(max);
            }
            let compiled = compile(&schema, &Options::default());
            if let Err(gbnfc_compiler::schema::CompileError::Unsatisfiable { .. }) = compiled {
                // No string of the pattern within the lengths: none of the candidates
                // may be valid.
                let validator = jsonschema::validator_for(&schema).unwrap();
                for s in candidates(pattern) {
                    assert!(!validator.is_valid(&json!(s)), "{s:?} valid under {schema}");
                }
                continue;
            }
            let enforced = Enforced::new(schema);
            for s in candidates(pattern) {
                enforced.agrees_on(&json!(s));
            }
            enforced.samples_validate(20);
        }
    }
}
