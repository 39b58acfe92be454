//! Lowering schemas to GBNF rules.
//!
//! The [`Emitter`] walks a schema: it intersects `allOf` members and a `$ref`'s target
//! with its siblings, distributes `anyOf`/`oneOf` into alternatives, `enum`/`const` into literal canonical texts,
//! and dispatches each allowed `type` to [`super::objects`], [`super::arrays`] or
//! [`super::scalars`]. Every `$ref` target becomes one named rule (so recursion works);
//! shared building blocks (`value`, `string`, `number`, …) are emitted once under stable
//! names. Names are derived from JSON pointers and made unique, so output is
//! deterministic.

use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use serde_json::{Map, Value};

use super::blocks;
use super::document::{at, Document, Location};
use super::ir::ShapeError;
use super::keywords::{self, Kind, TRUE};
use super::{CompileError, Compiled, KeywordStatus, Options, SchemaDiagnostic};
use crate::gbnf::ast::CompactString;
use crate::gbnf::{self, CheckedGrammar, Expr, Grammar, Rule};

mod conjunctions;
mod dispatch;
mod names;
mod references;

pub(crate) use conjunctions::{read_together, without_combinators, Member};

/// The deepest nesting of schemas compiled.
pub const MAX_DEPTH: usize = 256;

// `Emitter::shared` has one bit per shared block.
const _: () = assert!(blocks::SHARED.len() <= 32);

/// Turns a [`Document`] into a [`Compiled`] grammar.
pub struct Emitter<'d, 'r, 'o> {
    doc: &'d Document<'r>,
    /// The compilation settings.
    pub options: &'o Options<'o>,
    rules: Vec<Rule>,
    /// Rule names taken, besides `root` and the shared building blocks ([`blocks::SHARED`]).
    names: FxHashSet<CompactString>,
    /// For each name base met taken, the suffix `{base}-{n}` to try next: every smaller
    /// one was taken (names are never given back), so a base used many times is not
    /// probed from `-2` each time.
    next_suffix: FxHashMap<CompactString, u32>,
    ref_rules: FxHashMap<Location, CompactString>,
    /// The shared building blocks emitted so far: bit `i` for `blocks::SHARED[i]`.
    shared: u32,
    diagnostics: Vec<SchemaDiagnostic>,
    explained: FxHashSet<(String, String)>,
    explain: Vec<SchemaDiagnostic>,
    /// Where each pointer's entry sits in `explain`.
    explain_index: FxHashMap<String, usize>,
    /// Hashes of the diagnostics recorded: (pointer, keyword, message).
    noted: FxHashSet<u64>,
    /// The "did you mean" hint for each unknown keyword met (a schema often repeats one).
    hints: FxHashMap<String, String>,
    /// The rule made for each `pattern` compiled, so a repeated pattern shares it.
    pattern_rules: FxHashMap<String, Expr>,
    /// The reference targets being inlined into the expression being built.
    inlining: Vec<Location>,
    depth: usize,
}

impl<'d, 'r, 'o> Emitter<'d, 'r, 'o> {
    /// An emitter for `doc`.
    pub fn new(doc: &'d Document<'r>, options: &'o Options<'o>) -> Self {
        Emitter {
            doc,
            options,
            rules: Vec::new(),
            names: FxHashSet::default(),
            next_suffix: FxHashMap::default(),
            ref_rules: FxHashMap::default(),
            shared: 0,
            diagnostics: Vec::new(),
            explained: FxHashSet::default(),
            explain: Vec::new(),
            explain_index: FxHashMap::default(),
            noted: FxHashSet::default(),
            hints: FxHashMap::default(),
            pattern_rules: FxHashMap::default(),
            inlining: Vec::new(),
            depth: 0,
        }
    }

    /// Compiles the document's root schema.
    ///
    /// # Errors
    /// See [`CompileError`].
    pub fn compile(mut self) -> Result<Compiled, CompileError> {
        let root = self.doc.root();
        let source = self.doc.source(&root);
        let value = source
            .as_deref()
            .and_then(|s| at(s, &root))
            .unwrap_or(&TRUE);
        let body = self.schema(value, &root)?;
        let mut grammar = Grammar {
            rules: Vec::with_capacity(1 + self.rules.len()),
        };
        grammar.rules.push(Rule {
            name: "root".into(),
            body,
            pos: gbnf::Pos::default(),
        });
        grammar.rules.append(&mut self.rules);
        let checked = match CheckedGrammar::new(grammar) {
            Err(rejected) if rejected.has("empty-language") || rejected.has("undefined-rule") => {
                // A `$ref` with no base case, or one whose target turned out unsatisfiable
                // (its rule is never made), behind an optional part or an alternative: the
                // schema is fine without that part, and so is the grammar.
                let mut grammar = rejected.grammar;
                if let Ok(gbnf::prune::Pruned::EmptyLanguage) = gbnf::prune::prune(&mut grammar) {
                    return Err(CompileError::Unsatisfiable {
                        pointer: String::new(),
                        message: "every value needs a `$ref` cycle with no base case, or a part that accepts nothing".to_string(),
                    });
                }
                CheckedGrammar::new(grammar)
            }
            checked => checked,
        };
        let grammar = checked.map_err(refusal)?;
        let explain = if self.options.explain {
            self.explain
        } else {
            Vec::new()
        };
        Ok(Compiled {
            grammar,
            diagnostics: self.diagnostics,
            explain,
        })
    }

    // ---- diagnostics ---------------------------------------------------------------

    /// Records that `keyword` at `at` is enforced by validation only; an error under
    /// `strict`.
    pub fn validation_only(
        &mut self,
        at: &Location,
        keyword: &str,
        message: impl Into<String>,
    ) -> Result<(), CompileError> {
        self.validation_only_at(&at.child(keyword), keyword, message)
    }

    /// Records that `keyword`, written at `written` (the keyword itself, as in
    /// [`Written::at`](crate::schema::ir::Written)), is enforced by validation only; an
    /// error under `strict`.
    pub fn validation_only_at(
        &mut self,
        written: &Location,
        keyword: &str,
        message: impl Into<String>,
    ) -> Result<(), CompileError> {
        let pointer = self.place(written.clone());
        let message = message.into();
        if self.options.strict {
            return Err(CompileError::Strict {
                pointer,
                keyword: keyword.to_string(),
                message,
            });
        }
        self.note(pointer, keyword, KeywordStatus::ValidationOnly, message);
        Ok(())
    }

    /// Records that the grammar accepts a subset of what `keyword`, written at `written`
    /// (or to be written there, when it is absent), allows (sound, not complete), with the
    /// reason.
    pub fn restricted(&mut self, written: &Location, keyword: &str, message: impl Into<String>) {
        let pointer = self.place(written.clone());
        self.note(pointer, keyword, KeywordStatus::Restricted, message.into());
    }

    /// How a diagnostic names `at`: the pointer (and document) where the user wrote it.
    fn place(&self, at: Location) -> String {
        at.into_description(self.doc)
    }

    fn note(&mut self, pointer: String, keyword: &str, status: KeywordStatus, message: String) {
        let diagnostic = SchemaDiagnostic {
            pointer,
            keyword: keyword.to_string(),
            status,
            message,
        };
        let new = self.first_noting(&diagnostic);
        if !self.options.explain {
            // The explanation is the diagnostics themselves (see `compile`).
            if new {
                self.diagnostics.push(diagnostic);
            }
            return;
        }
        if new {
            self.diagnostics.push(diagnostic.clone());
        }
        match self.explain_index.get(&diagnostic.pointer) {
            Some(&i) => self.explain[i] = diagnostic,
            None => {
                self.explain_index
                    .insert(diagnostic.pointer.clone(), self.explain.len());
                self.explain.push(diagnostic);
            }
        }
    }

    /// Is `diagnostic` (pointer, keyword, message) not recorded yet? Remembers it. Only a
    /// hash is kept: a repeated hash is confirmed against the diagnostics recorded.
    fn first_noting(&mut self, diagnostic: &SchemaDiagnostic) -> bool {
        let hash = FxBuildHasher.hash_one((
            &diagnostic.pointer,
            &diagnostic.keyword,
            &diagnostic.message,
        ));
        if self.noted.insert(hash) {
            return true;
        }
        !self.diagnostics.iter().any(|d| {
            d.pointer == diagnostic.pointer
                && d.keyword == diagnostic.keyword
                && d.message == diagnostic.message
        })
    }

    /// Records what each keyword of `map` (at `at`) is: enforced, an annotation, unknown
    /// (always recorded, with a hint), for `--explain`. `ref_overrides`: the map's `$ref`
    /// overrides its other keywords (up to draft-07), so they constrain nothing.
    fn explain_keywords(&mut self, map: &Map<String, Value>, at: &Location, ref_overrides: bool) {
        for key in map.keys() {
            let (status, message) = match keywords::kind(key) {
                Some(Kind::Annotation) => (KeywordStatus::Annotation, ""),
                // Ignored by the grammar and by validation alike.
                Some(Kind::Assertion) if ref_overrides && key != "$ref" => (
                    KeywordStatus::Annotation,
                    "ignored: up to draft-07, a `$ref` overrides the keywords beside it",
                ),
                Some(Kind::Assertion) => (KeywordStatus::Enforced, ""),
                None => (KeywordStatus::Unknown, ""),
            };
            // Without --explain only unknown keywords are recorded: no pointer for the rest.
            if status != KeywordStatus::Unknown && !self.options.explain {
                continue;
            }
            let pointer = self.place(at.child(key));
            if !self.explained.insert((pointer.clone(), key.clone())) {
                continue;
            }
            if status == KeywordStatus::Unknown {
                let hint = self
                    .hints
                    .entry(key.clone())
                    .or_insert_with(|| {
                        keywords::suggest(key, keywords::ASSERTIONS)
                            .map(|s| format!("did you mean `{s}`?"))
                            .unwrap_or_default()
                    })
                    .clone();
                self.note(pointer, key, status, hint);
            } else if !self.explain_index.contains_key(&pointer) {
                self.explain_index
                    .insert(pointer.clone(), self.explain.len());
                self.explain.push(SchemaDiagnostic {
                    pointer,
                    keyword: key.clone(),
                    status,
                    message: message.to_string(),
                });
            }
        }
    }

    /// `strict: true` in an OpenAI `response_format`: objects are closed.
    pub fn closed_by_response_format(&self) -> bool {
        self.doc.openai_strict
    }

    /// Draft-04 or older: a number written with a fraction is no integer, so canonical
    /// text writes an integral number as `1.0` ([`super::canon::canonical_text`]).
    pub fn integral_numbers_keep_a_point(&self) -> bool {
        self.doc.draft4_or_older
    }

    /// The compile error for a keyword value of the wrong shape, placed where the user
    /// wrote it.
    pub fn shape_error(&self, err: ShapeError) -> CompileError {
        self.invalid(&err.at, err.message)
    }

    /// An error for an invalid keyword value.
    pub fn invalid(&self, at: &Location, message: impl Into<String>) -> CompileError {
        CompileError::Invalid {
            pointer: self.place(at.clone()),
            message: message.into(),
        }
    }

    /// An error for a schema whose grammar would break llama.cpp's limits.
    pub fn too_large(&self, at: &Location, message: impl Into<String>) -> CompileError {
        CompileError::TooLarge {
            pointer: self.place(at.clone()),
            message: message.into(),
        }
    }

    /// An error for a schema that accepts nothing.
    pub fn unsatisfiable(&self, at: &Location, message: impl Into<String>) -> CompileError {
        CompileError::Unsatisfiable {
            pointer: self.place(at.clone()),
            message: message.into(),
        }
    }
}

/// The compile error for a grammar the check refused: a required part that accepts nothing,
/// or a limit of llama.cpp's, named with the rule's printed line.
fn refusal(rejected: gbnf::Rejected) -> CompileError {
    if let Some(empty) = rejected.errors().find(|d| d.code == "empty-language") {
        return CompileError::Unsatisfiable {
            pointer: String::new(),
            message: format!(
                "a `$ref` cycle with no base case, or a required part that accepts nothing ({})",
                empty.message
            ),
        };
    }
    // The built grammar has no positions: the printed text is checked again for them.
    let printed = rejected.grammar.to_string();
    let reparsed = gbnf::parse(&printed)
        .ok()
        .and_then(|g| CheckedGrammar::new(g).err());
    let errors = reparsed.as_ref().unwrap_or(&rejected);
    let Some(error) = errors.errors().next() else {
        return CompileError::TooLarge {
            pointer: String::new(),
            message: format!("the grammar would break llama.cpp's limits: {rejected}"),
        };
    };
    let rule = error
        .pos
        .and_then(|p| p.line.checked_sub(1))
        .and_then(|line| printed.lines().nth(line as usize).map(str::to_string))
        .unwrap_or_default();
    let rule: String = rule.chars().take(160).collect();
    CompileError::TooLarge {
        pointer: String::new(),
        message: format!(
            "the grammar would break llama.cpp's limits: {} (in `{rule}`)",
            error.message
        ),
    }
}

/// `map` without `key`, to be merged with other schemas and compiled again at the same
/// place. `$defs` and `definitions` are left out too: they constrain nothing, references
/// reach them through the document, and they were explained where they were written.
fn without(map: &Map<String, Value>, key: &str) -> Map<String, Value> {
    map.iter()
        .filter(|(k, _)| *k != key && !DEFINITION_CONTAINERS.contains(&k.as_str()))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The keywords that hold schemas only for references to reach.
const DEFINITION_CONTAINERS: [&str; 2] = ["$defs", "definitions"];

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use crate::recognize::Recognizer;
    use crate::schema::{compile, KeywordStatus, Options};

    /// Found by the `schema_compile` fuzz target: without `"type": "object"`, `null` is
    /// valid under both branches, so a property discriminator proves nothing.
    #[test]
    fn one_of_told_apart_by_a_property_only_when_a_branch_admits_objects_only() {
        let branch =
            |tag: &str| json!({"properties": {"kind": {"const": tag}}, "required": ["kind"]});
        let loose = json!({"oneOf": [branch("a"), branch("b")]});
        let compiled = compile(&loose, &Options::default()).unwrap();
        assert!(compiled.needs_validation());
        let mut typed = branch("a");
        typed["type"] = json!("object");
        let strict = json!({"oneOf": [typed, branch("b")]});
        let compiled = compile(&strict, &Options::default()).unwrap();
        assert!(!compiled.needs_validation());
        let r = Recognizer::new(&compiled.grammar).unwrap();
        assert!(r.recognize(r#"{"kind":"a"}"#).accepted);
        assert!(r.recognize("null").accepted);
    }

    /// The rest of the schema narrows a branch's property without hiding the branch's
    /// values: `{"type": "string"}` beside each branch's `enum` still tells the branches
    /// apart, and `oneOf` is enforced by the grammar. (Merged as JSON, the property was
    /// one `allOf` whose values nobody read.)
    #[test]
    fn one_of_told_apart_through_a_property_the_rest_also_constrains() {
        let branch =
            |tag: &str| json!({"properties": {"kind": {"enum": [tag]}}, "required": ["kind"]});
        let schema = json!({
            "type": "object",
            "properties": {"kind": {"type": "string"}, "n": {"type": "integer"}},
            "oneOf": [branch("a"), branch("b")]
        });
        let compiled = compile(&schema, &Options::default()).unwrap();
        assert!(!compiled.needs_validation(), "{:?}", compiled.diagnostics);
        let r = Recognizer::new(&compiled.grammar).unwrap();
        assert!(r.recognize(r#"{"kind":"b","n":3}"#).accepted);
        for refused in [r#"{"kind":"c"}"#, r#"{"n":3}"#, r#"{"kind":"a","n":"x"}"#] {
            assert!(!r.recognize(refused).accepted, "{refused}");
        }
    }

    /// A schema referred to from inside a branch it inlined is a rule of its own: there
    /// the branch is inlined again and meets the keywords beside it, rather than being
    /// taken for a recursive reference whose siblings are left to validation.
    #[test]
    fn a_rule_reached_from_an_inlined_branch_inlines_that_branch_again() {
        let schema = json!({
            "type": "object",
            "required": ["kind"],
            "properties": {"kind": {"type": "string"}, "tag": {"type": "integer"}},
            "oneOf": [{"$ref": "#/$defs/group"}, {"$ref": "#/$defs/leaf"}],
            "$defs": {
                "group": {
                    "required": ["children"],
                    "properties": {
                        "kind": {"enum": ["group"]},
                        "children": {"type": "array", "items": {"$ref": "#"}}
                    }
                },
                "leaf": {"properties": {"kind": {"enum": ["leaf"]}}}
            }
        });
        let compiled = compile(&schema, &Options::default()).unwrap();
        assert!(!compiled.needs_validation(), "{:?}", compiled.diagnostics);
        let r = Recognizer::new(&compiled.grammar).unwrap();
        let nested =
            r#"{"kind":"group","tag":1,"children":[{"kind":"group","tag":2,"children":[]}]}"#;
        assert!(r.recognize(nested).accepted, "{}", compiled.grammar);
        let untyped = r#"{"kind":"group","children":[{"kind":"group","tag":"x","children":[]}]}"#;
        assert!(!r.recognize(untyped).accepted);
    }

    /// A keyword beside a `$ref` and one in its target are each reported where they were
    /// written (not both at `/$ref`).
    #[test]
    fn keywords_beside_a_ref_and_in_its_target_keep_their_places() {
        let schema = json!({
            "$ref": "#/$defs/s",
            "not": {"minLength": 3},
            "$defs": {"s": {"type": "string", "not": {"maxLength": 1}}}
        });
        let compiled = compile(&schema, &Options::default()).unwrap();
        let mut places: Vec<&str> = compiled
            .diagnostics
            .iter()
            .map(|d| d.pointer.as_str())
            .collect();
        places.sort_unstable();
        assert_eq!(places, ["/$defs/s/not", "/not"]);
    }

    /// A `#…` reference kept as written (not made absolute) must still mean the place
    /// it meant where it was written. Here the target of the root's `$ref` is its own
    /// resource (`$id`); merged with the root's `minLength`, its `#/$defs/s` must still
    /// name `sub.json`'s `$defs`, which the root does not have.
    #[test]
    fn fragment_references_merged_into_another_resource_keep_their_target() {
        let schema = json!({
            "$id": "http://example.com/root.json",
            "$ref": "sub.json",
            "minLength": 2,
            "$defs": {
                "sub": {
                    "$id": "sub.json",
                    "allOf": [{"$ref": "#/$defs/s"}],
                    "$defs": {"s": {"type": "string", "maxLength": 3}}
                }
            }
        });
        let compiled = compile(&schema, &Options::default()).unwrap();
        let r = Recognizer::new(&compiled.grammar).unwrap();
        assert!(r.recognize(r#""ab""#).accepted);
        for refused in [r#""a""#, r#""abcd""#, "12", "{}"] {
            assert!(!r.recognize(refused).accepted, "{refused}");
        }
    }

    /// Draft-07 and older ignore the keywords beside a `$ref`; 2019-09 and later apply
    /// them with it (here `type: string` and an object target leave nothing).
    /// `--explain` calls a keyword beside a draft-07 `$ref` what it is: ignored, by the
    /// grammar and by the validator alike (it was listed as enforced).
    #[test]
    fn explain_lists_the_siblings_of_a_draft7_ref_as_ignored() {
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "definitions": {"n": {"type": "string"}},
            "oneOf": [{"$ref": "#/definitions/n", "minLength": 2}, {"type": "null"}]
        });
        let options = Options {
            explain: true,
            ..Options::default()
        };
        let compiled = compile(&schema, &options).unwrap();
        let status = |pointer: &str| {
            let found = compiled.explain.iter().find(|d| d.pointer == pointer);
            found.map(|d| (d.status, d.message.contains("ignored")))
        };
        assert_eq!(
            status("/oneOf/0/minLength"),
            Some((KeywordStatus::Annotation, true))
        );
        assert_eq!(
            status("/oneOf/0/$ref"),
            Some((KeywordStatus::Enforced, false))
        );
        assert_eq!(
            status("/oneOf/1/type"),
            Some((KeywordStatus::Enforced, false))
        );
        // The validator ignores it too, and so does the grammar.
        let validator = jsonschema::validator_for(&schema).unwrap();
        assert!(validator.is_valid(&json!("a")));
        let r = Recognizer::new(&compiled.grammar).unwrap();
        assert!(r.recognize(r#""a""#).accepted);
    }

    #[test]
    fn a_draft7_ref_ignores_its_own_siblings_but_not_those_merged_beside_it() {
        let draft7 = |extra: serde_json::Value| {
            let mut schema = json!({
                "$schema": "http://json-schema.org/draft-07/schema#",
                "definitions": {"n": {"type": "string"}}
            });
            for (key, value) in extra.as_object().unwrap() {
                schema[key] = value.clone();
            }
            schema
        };
        let member = json!([{"$ref": "#/definitions/n", "type": "integer"}]);
        // The outer `type` applies to the member's reference, whose own `type` is ignored.
        for combinator in ["allOf", "anyOf"] {
            let schema = draft7(json!({"type": "object", combinator: member}));
            assert!(
                matches!(
                    compile(&schema, &Options::default()),
                    Err(crate::schema::CompileError::Unsatisfiable { .. })
                ),
                "{schema}"
            );
        }
        // Both branches admit every string: `oneOf` cannot be told apart by the ignored type.
        let schema = draft7(json!({"oneOf": [member[0].clone(), {"type": "string"}]}));
        let compiled = compile(&schema, &Options::default()).unwrap();
        assert!(compiled.diagnostics.iter().any(|d| d.pointer == "/oneOf"));
        // A member that only refers to a recursive target keeps the keywords beside it,
        // left to validation.
        let schema = draft7(json!({
            "definitions": {"tree": {"type": "object", "properties": {
                "kids": {"type": "array", "items": {"allOf": [{"$ref": "#/definitions/tree"}], "required": ["id"]}}
            }}},
            "$ref": "#/definitions/tree"
        }));
        let compiled = compile(&schema, &Options::default()).unwrap();
        assert!(
            compiled.diagnostics.iter().any(|d| d.keyword == "required"),
            "{:?}",
            compiled.diagnostics
        );
    }

    #[test]
    fn keywords_beside_a_ref_apply_from_2019_09_on() {
        let schema = |declared: Option<&str>| {
            let mut schema = json!({
                "type": "object",
                "properties": {"a": {"type": "string", "$ref": "#/definitions/obj"}},
                "required": ["a"],
                "definitions": {"obj": {"type": "object"}}
            });
            if let Some(declared) = declared {
                schema["$schema"] = json!(declared);
            }
            schema
        };
        let draft7 = schema(Some("http://json-schema.org/draft-07/schema#"));
        let compiled = compile(&draft7, &Options::default()).unwrap();
        let r = Recognizer::new(&compiled.grammar).unwrap();
        assert!(r.recognize(r#"{"a":{}}"#).accepted);
        assert!(!r.recognize(r#"{"a":"s"}"#).accepted);
        assert!(compile(&schema(None), &Options::default()).is_err());
        let later = schema(Some("https://json-schema.org/draft/2019-09/schema"));
        assert!(compile(&later, &Options::default()).is_err());
    }

    /// `-0` reads as the float -0.0, no integer under draft-04: integers never spell it,
    /// and zero's canonical text is `0`.
    #[test]
    fn integers_never_spell_minus_zero() {
        let compiled = compile(&json!({"type": "integer"}), &Options::default()).unwrap();
        let r = Recognizer::new(&compiled.grammar).unwrap();
        for (text, accepted) in [("0", true), ("-1", true), ("10", true), ("-0", false)] {
            assert_eq!(r.recognize(text).accepted, accepted, "{text}");
        }
        let number = compile(&json!({"type": "number"}), &Options::default()).unwrap();
        let r = Recognizer::new(&number.grammar).unwrap();
        assert!(r.recognize("-0").accepted && r.recognize("-0.5").accepted);
        let minus_zero: serde_json::Value = serde_json::from_str("-0.0").unwrap();
        let n = minus_zero.as_number().unwrap();
        assert_eq!(crate::schema::canon::number_text(n), "0");
    }
}
