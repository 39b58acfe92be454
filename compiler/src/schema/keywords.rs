//! The JSON Schema vocabulary as gbnfc sees it: which words constrain values, which are
//! annotations, and the seven type names.

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

/// Is `keyword` an annotation (including `x-…` extensions)?
pub fn is_annotation(keyword: &str) -> bool {
    keyword.starts_with("x-") || ANNOTATIONS.contains(&keyword)
}

/// Is `keyword` one gbnfc knows?
pub fn is_known(keyword: &str) -> bool {
    is_annotation(keyword) || ASSERTIONS.contains(&keyword)
}

/// The known word closest to `word` (edit distance at most 2), for "did you mean".
pub fn suggest<'a>(word: &str, candidates: &[&'a str]) -> Option<&'a str> {
    let length = word.chars().count();
    candidates
        .iter()
        // Words whose lengths differ by more than 2 are more than 2 edits apart.
        .filter(|c| c.chars().count().abs_diff(length) <= 2)
        .map(|c| (edit_distance(word, c), *c))
        .filter(|(d, _)| *d <= 2)
        .min()
        .map(|(_, c)| c)
}

fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut previous: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut current = vec![i + 1];
        for (j, cb) in b.iter().enumerate() {
            let cost = usize::from(ca != *cb);
            current.push(
                (previous[j] + cost)
                    .min(previous[j + 1] + 1)
                    .min(current[j] + 1),
            );
        }
        previous = current;
    }
    previous[b.len()]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn suggests_close_words() {
        assert_eq!(suggest("strng", TYPES), Some("string"));
        assert_eq!(suggest("integr", TYPES), Some("integer"));
        assert_eq!(suggest("zzzzzz", TYPES), None);
        assert_eq!(suggest("maxLenght", ASSERTIONS), Some("maxLength"));
    }
}
