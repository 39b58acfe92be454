//! The JSON Schema vocabulary as gbnfc sees it: which words constrain values, which are
//! annotations, the seven type names, and which keywords evaluate what `unevaluated*`
//! applies to.

use serde_json::{Map, Value};

/// Keywords that only annotate: they constrain nothing.
pub const ANNOTATIONS: &[&str] = &[
    "$schema",
    "$id",
    "id",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$vocabulary",
    "$defs",
    "definitions",
    "title",
    "description",
    "default",
    "examples",
    "example",
    "deprecated",
    "readOnly",
    "writeOnly",
    "contentEncoding",
    "contentMediaType",
    "contentSchema",
    "$recursiveAnchor",
    "markdownDescription",
    "enumDescriptions",
    "markdownEnumDescriptions",
    "deprecationMessage",
    "errorMessage",
    "discriminator",
    "nullable",
    "x-",
];

/// Keywords that constrain values (each handled, or reported as validation-only).
pub const ASSERTIONS: &[&str] = &[
    "type",
    "enum",
    "const",
    "properties",
    "required",
    "additionalProperties",
    "patternProperties",
    "propertyNames",
    "minProperties",
    "maxProperties",
    "dependentRequired",
    "dependentSchemas",
    "dependencies",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "items",
    "prefixItems",
    "additionalItems",
    "minItems",
    "maxItems",
    "uniqueItems",
    "contains",
    "minContains",
    "maxContains",
    "anyOf",
    "oneOf",
    "allOf",
    "not",
    "if",
    "then",
    "else",
    "$ref",
    "$dynamicRef",
    "$recursiveRef",
    "unevaluatedProperties",
    "unevaluatedItems",
];

/// The seven JSON Schema type names.
pub const TYPES: &[&str] = &[
    "null", "boolean", "object", "array", "number", "integer", "string",
];

/// What a keyword is to gbnfc.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// It says something about values without constraining them (`title`, `x-…`).
    Annotation,
    /// It constrains values: enforced by the grammar or by validation.
    Assertion,
}

/// What `keyword` is to gbnfc (`x-…` extensions are annotations); `None` when unknown.
///
/// [`ANNOTATIONS`] and [`ASSERTIONS`] by name: every key of every schema object is looked
/// up, so a hash beats scanning seventy names.
pub fn kind(keyword: &str) -> Option<Kind> {
    static KINDS: std::sync::LazyLock<rustc_hash::FxHashMap<&'static str, Kind>> =
        std::sync::LazyLock::new(|| {
            let annotations = ANNOTATIONS.iter().map(|k| (*k, Kind::Annotation));
            // An assertion listed as an annotation too stays an annotation.
            let assertions = ASSERTIONS
                .iter()
                .filter(|k| !ANNOTATIONS.contains(k))
                .map(|k| (*k, Kind::Assertion));
            assertions.chain(annotations).collect()
        });
    if keyword.starts_with("x-") {
        return Some(Kind::Annotation);
    }
    KINDS.get(keyword).copied()
}

/// Is `keyword` an annotation (including `x-…` extensions)?
pub fn is_annotation(keyword: &str) -> bool {
    kind(keyword) == Some(Kind::Annotation)
}

/// Does `keyword` constrain values (known, and no annotation)?
pub fn is_assertion(keyword: &str) -> bool {
    kind(keyword) == Some(Kind::Assertion)
}

/// The known word closest to `word` (edit distance at most 2), for "did you mean".
pub fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    const MOST: usize = 2;
    let word: Vec<char> = word.chars().collect();
    let mut rows = (Vec::new(), Vec::new());
    candidates
        .iter()
        // Words whose lengths differ by more than 2 are more than 2 edits apart.
        .filter(|c| c.chars().count().abs_diff(word.len()) <= MOST)
        .filter(|c| bag_distance(&word, c) <= MOST)
        .filter_map(|c| {
            let distance = edit_distance_within(&word, c, MOST, &mut rows)?;
            Some((distance, *c))
        })
        .min()
        .map(|(_, c)| c)
}

/// The Levenshtein distance from `a` to `b` when it is at most `most`; `None` when it is
/// more (the rows are scratch space, reused between calls).
/// A lower bound of the edit distance between `a` and `b`, cheap to compute: how many
/// more of some characters one word holds than the other (each edit changes that by at
/// most one). Characters are counted modulo 32 (ASCII letters of one case apart), which
/// can only lower the bound.
fn bag_distance(a: &[char], b: &str) -> usize {
    let mut counts = [0i32; 32];
    for c in a {
        counts[(u32::from(*c) % 32) as usize] += 1;
    }
    for c in b.chars() {
        counts[(u32::from(c) % 32) as usize] -= 1;
    }
    let (more, fewer) = counts.iter().fold((0, 0), |(more, fewer), &n| {
        (more + n.max(0), fewer + (-n).max(0))
    });
    more.max(fewer) as usize
}

fn edit_distance_within(
    a: &[char],
    b: &str,
    most: usize,
    rows: &mut (Vec<usize>, Vec<usize>),
) -> Option<usize> {
    let (previous, current) = rows;
    previous.clear();
    previous.extend(0..=b.chars().count());
    current.clear();
    current.resize(previous.len(), 0);
    for (i, ca) in a.iter().enumerate() {
        current[0] = i + 1;
        for (j, cb) in b.chars().enumerate() {
            let cost = usize::from(*ca != cb);
            current[j + 1] = (previous[j] + cost)
                .min(previous[j + 1] + 1)
                .min(current[j] + 1);
        }
        std::mem::swap(previous, current);
        if previous.iter().min().is_some_and(|&m| m > most) {
            return None;
        }
    }
    previous.last().copied().filter(|&d| d <= most)
}

/// The schema `true`, for places that hold no schema.
pub static TRUE: Value = Value::Bool(true);

/// The schema `false`, which accepts nothing.
pub static FALSE: Value = Value::Bool(false);

/// The keywords that apply to what the rest of the schema leaves unevaluated.
pub const UNEVALUATED: [&str; 2] = ["unevaluatedProperties", "unevaluatedItems"];

/// For each of [`UNEVALUATED`], the keywords that evaluate what it applies to.
pub const EVALUATING: [&[&str]; 2] = [
    &[
        "properties",
        "patternProperties",
        "additionalProperties",
        "dependentSchemas",
        "unevaluatedProperties",
    ],
    &[
        "prefixItems",
        "items",
        "additionalItems",
        "contains",
        "unevaluatedItems",
    ],
];

/// Keywords whose subschemas' evaluations count as the schema's own.
pub const APPLICATORS: [&str; 7] = [
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "dependencies",
];

/// Does `map` hold `key` with a schema other than `true` (one that restricts anything)?
pub fn restricts(map: &Map<String, Value>, key: &str) -> bool {
    map.get(key).is_some_and(|v| v != &TRUE)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn suggests_close_words() {
        assert_eq!(suggest("strng", TYPES), Some("string"));
        assert_eq!(suggest("integr", TYPES), Some("integer"));
        assert_eq!(suggest("zzzzzz", TYPES), None);
        assert_eq!(suggest("maxLenght", ASSERTIONS), Some("maxLength"));
        assert_eq!(suggest("requird", ASSERTIONS), Some("required"));
        assert_eq!(suggest("itemz", ASSERTIONS), Some("items"));
        assert_eq!(suggest("esriDocumentation", ASSERTIONS), None);
        assert_eq!(suggest("typ", ASSERTIONS), Some("type"));
        // Three edits away: no suggestion.
        assert_eq!(suggest("tpyx", TYPES), None);
    }

    #[test]
    fn the_bag_distance_never_exceeds_the_edit_distance() {
        let words = [
            "maxLenght",
            "requird",
            "ddd",
            "comment",
            "é",
            "typ",
            "€uro",
            "",
        ];
        let mut rows = (Vec::new(), Vec::new());
        for word in words.iter().chain(ASSERTIONS) {
            let chars: Vec<char> = word.chars().collect();
            for other in ASSERTIONS.iter().chain(&words) {
                let exact = edit_distance_within(&chars, other, usize::MAX, &mut rows).unwrap();
                assert!(bag_distance(&chars, other) <= exact, "{word} / {other}");
            }
        }
    }
}
