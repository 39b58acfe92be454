//! Lowering schemas to GBNF rules.
//!
//! The [`Emitter`] walks a schema: it inlines `$ref` siblings and `allOf` by merging,
//! turns `anyOf`/`oneOf` into alternatives, `enum`/`const` into literal canonical texts,
//! and dispatches each allowed `type` to [`super::objects`], [`super::arrays`] or
//! [`super::scalars`]. Every `$ref` target becomes one named rule (so recursion works);
//! shared building blocks (`value`, `string`, `number`, …) are emitted once under stable
//! names. Names are derived from JSON pointers and made unique, so output is
//! deterministic.

use std::borrow::Cow;

use std::hash::BuildHasher;

use rustc_hash::{FxBuildHasher, FxHashMap, FxHashSet};

use serde_json::{Map, Value};

use super::blocks;
use super::document::{at, Document, Location, Source};
use super::keywords::{self, is_annotation, is_assertion, Kind, TYPES};
use super::lookup::Lookup;
use super::merge::{self, merge_owned, restricts};
use super::provenance::{self, MergeSite, Origins};
use super::{canon, CompileError, Compiled, KeywordStatus, Options, SchemaDiagnostic, Whitespace};
use crate::gbnf::ast::CompactString;
use crate::gbnf::{self, Expr, Grammar, Rule};
use crate::pattern::PatternError;

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
    inlining: Vec<Location>,
    /// The merged schema objects being compiled, outermost first: diagnostics inside
    /// them are led back to where their keywords were written.
    merges: Vec<MergeSite>,
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
            merges: Vec::new(),
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
            body: Cow::Owned(body),
            pos: gbnf::Pos::default(),
        });
        grammar.rules.append(&mut self.rules);
        let mut findings = gbnf::check(&grammar);
        if findings
            .iter()
            .any(|d| d.code == "empty-language" || d.code == "undefined-rule")
        {
            // A `$ref` with no base case, or one whose target turned out unsatisfiable
            // (its rule is never made), behind an optional part or an alternative: the
            // schema is fine without that part, and so is the grammar.
            if let Ok(gbnf::prune::Pruned::EmptyLanguage) = gbnf::prune::prune(&mut grammar) {
                return Err(CompileError::Unsatisfiable {
                    pointer: String::new(),
                    message: "every value needs a `$ref` cycle with no base case, or a part that accepts nothing".to_string(),
                });
            }
            findings = gbnf::check(&grammar);
        }
        // Only when something is wrong is the printed text checked again, for positions.
        let mut printed = String::new();
        if findings.iter().any(|d| d.is_error()) {
            printed = grammar.to_string();
            if let Ok(reparsed) = gbnf::parse(&printed) {
                findings = gbnf::check(&reparsed);
            }
        }
        if let Some(empty) = findings.iter().find(|d| d.code == "empty-language") {
            return Err(CompileError::Unsatisfiable {
                pointer: String::new(),
                message: format!(
                    "a `$ref` cycle with no base case, or a required part that accepts nothing ({})",
                    empty.message
                ),
            });
        }
        if let Some(error) = findings.iter().find(|d| d.is_error()) {
            let rule = error
                .pos
                .and_then(|p| p.line.checked_sub(1))
                .and_then(|line| printed.lines().nth(line as usize).map(str::to_string))
                .unwrap_or_default();
            let rule: String = rule.chars().take(160).collect();
            return Err(CompileError::TooLarge {
                pointer: String::new(),
                message: format!(
                    "the grammar would break llama.cpp's limits: {} (in `{rule}`)",
                    error.message
                ),
            });
        }
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
        let pointer = self.place(at.child(keyword));
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

    /// Records that the grammar accepts a subset of what `keyword` allows (sound, not
    /// complete), with the reason.
    pub fn restricted(&mut self, at: &Location, keyword: &str, message: impl Into<String>) {
        let pointer = self.place(at.child(keyword));
        self.note(pointer, keyword, KeywordStatus::Restricted, message.into());
    }

    /// How a diagnostic names `at`: the pointer (and document) where the user wrote it,
    /// also inside a schema made by merging ([`provenance`]).
    fn place(&self, at: Location) -> String {
        let written = if self.merges.is_empty() {
            at
        } else {
            provenance::original(&self.merges, at)
        };
        written.into_description(self.doc)
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

    fn explain_keywords(&mut self, map: &Map<String, Value>, at: &Location) {
        for key in map.keys() {
            let status = match keywords::kind(key) {
                Some(Kind::Annotation) => KeywordStatus::Annotation,
                Some(Kind::Assertion) => KeywordStatus::Enforced,
                None => KeywordStatus::Unknown,
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
                    message: String::new(),
                });
            }
        }
    }

    /// `strict: true` in an OpenAI `response_format`: objects are closed.
    pub fn closed_by_response_format(&self) -> bool {
        self.doc.openai_strict
    }

    /// A non-negative integer keyword (`minLength`, `maxItems`, …): `2.0` counts as 2.
    ///
    /// # Errors
    /// [`CompileError::Invalid`] for negative or fractional values.
    pub fn count(
        &self,
        map: &Map<String, Value>,
        key: &str,
        at: &Location,
    ) -> Result<Option<u64>, CompileError> {
        match map.kw(key) {
            None => Ok(None),
            Some(Value::Number(n)) => match (n.as_u64(), n.as_f64()) {
                (Some(v), _) => Ok(Some(v)),
                (None, Some(f)) if f >= 0.0 && f.fract() == 0.0 => Ok(Some(f as u64)),
                _ => Err(self.invalid(
                    &at.child(key),
                    format!("`{key}` must be a non-negative integer"),
                )),
            },
            Some(_) => Err(self.invalid(
                &at.child(key),
                format!("`{key}` must be a non-negative integer"),
            )),
        }
    }

    /// An error for an input that is not a valid schema.
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

    // ---- rules and names -------------------------------------------------------------

    /// Adds a rule named after `hint` (made unique) and returns a reference to it.
    pub fn add_rule(&mut self, hint: &str, body: Expr) -> Expr {
        let name = self.fresh_name(hint);
        self.push_rule(name.clone(), Cow::Owned(body));
        Expr::rule(name)
    }

    /// A reference to the rule for the string contents `pattern` matches, compiled the
    /// first time only: a pattern repeated across the schema shares one rule.
    ///
    /// # Errors
    /// The pattern's [`PatternError`], each time it is asked for.
    pub fn pattern_rule(&mut self, pattern: &str, at: &Location) -> Result<Expr, PatternError> {
        if let Some(rule) = self.pattern_rules.get(pattern) {
            return Ok(rule.clone());
        }
        let contents = crate::pattern::pattern_expr(pattern)?;
        self.any_char_rule_for(&contents);
        let hint = format!("{}-pattern", self.hint(at));
        let rule = self.add_rule(&hint, contents);
        self.pattern_rules.insert(pattern.to_string(), rule.clone());
        Ok(rule)
    }

    /// Emits the shared rule a pattern's expression may refer to
    /// ([`crate::pattern::ANY_CHAR_RULE`]), if `expr` does.
    pub fn any_char_rule_for(&mut self, expr: &Expr) {
        if crate::pattern::refers_to_any_char(expr) {
            self.emit_shared(crate::pattern::ANY_CHAR_RULE);
        }
    }

    /// Adds fixed-name rules (a building block such as a string format) once, and returns
    /// a reference to the first.
    pub fn add_named_rules(&mut self, rules: &'static [(String, Expr)]) -> Expr {
        let entry = rules
            .first()
            .map(|(name, _)| name.clone())
            .unwrap_or_default();
        for (name, body) in rules {
            self.named_rule_with(name, |_| Cow::Borrowed(body));
        }
        Expr::rule(entry)
    }

    /// A reference to the fixed-name rule `name`, made from `body` the first time only
    /// (a building block shared by every schema in the grammar).
    pub fn named_rule(&mut self, name: &str, body: impl FnOnce(&mut Self) -> Expr) -> Expr {
        self.named_rule_with(name, |e| Cow::Owned(body(e)))
    }

    /// [`Emitter::named_rule`] for a body that may be borrowed (one of [`blocks`]).
    pub fn named_rule_with(
        &mut self,
        name: &str,
        body: impl FnOnce(&mut Self) -> Cow<'static, Expr>,
    ) -> Expr {
        if !self.names.contains(name) {
            let body = body(self);
            self.take_name(CompactString::from(name));
            self.push_rule(name.into(), body);
        }
        Expr::rule(name)
    }

    /// A prefix from `hint` under which numbered rules (`{prefix}-{n}`) cannot collide
    /// with any other rule.
    pub fn fresh_prefix(&mut self, hint: &str) -> String {
        loop {
            let prefix = self.fresh_name(hint);
            let clash = self.names.iter().any(|n| {
                n.strip_prefix(prefix.as_str())
                    .is_some_and(|rest| rest.starts_with('-'))
            });
            if !clash {
                return prefix.into();
            }
        }
    }

    /// Adds rules with the names they come with (under a prefix from
    /// [`Emitter::fresh_prefix`]).
    pub fn add_named_rules_exact(&mut self, rules: Vec<(String, Expr)>) {
        for (name, body) in rules {
            self.take_name(CompactString::from(name.as_str()));
            self.push_rule(name.into(), Cow::Owned(body));
        }
    }

    /// A rule name derived from `hint`: only `[a-zA-Z0-9-]`, unique.
    pub fn fresh_name(&mut self, hint: &str) -> CompactString {
        // Other characters become `-`; runs of `-` one; none at either end. Only the
        // first 48 characters are kept (below), so at most 64 are built: dashes dropped
        // from the end of those cannot reach the first 48. Read byte by byte: the bytes of
        // a character outside ASCII are all other than letters and digits, one run of `-`.
        let mut built = [0u8; 64];
        let mut len = 0;
        for c in hint.bytes() {
            if len == built.len() {
                break;
            }
            if c.is_ascii_alphanumeric() {
                built[len] = c;
                len += 1;
            } else if len > 0 && built[len - 1] != b'-' {
                built[len] = b'-';
                len += 1;
            }
        }
        while len > 0 && built[len - 1] == b'-' {
            len -= 1;
        }
        // Only ASCII letters, digits and `-` were written.
        let mut base = CompactString::from(std::str::from_utf8(&built[..len]).unwrap_or_default());
        if base.is_empty() {
            base.push_str("schema");
        }
        if RESERVED_PREFIXES.iter().any(|p| base.starts_with(p)) {
            // Reserved for string formats and extra keys' first characters.
            base.insert_str(0, "p-");
        }
        base.truncate(48);
        let taken = |names: &FxHashSet<CompactString>, name: &str| {
            name == "root" || blocks::SHARED.contains(&name) || names.contains(name)
        };
        if !taken(&self.names, &base) {
            self.take_name(base.clone());
            return base;
        }
        let mut n = self.next_suffix.get(&base).copied().unwrap_or(2);
        let mut name = compact_str::format_compact!("{base}-{n}");
        while taken(&self.names, &name) {
            n += 1;
            name = compact_str::format_compact!("{base}-{n}");
        }
        match self.next_suffix.get_mut(&base) {
            Some(next) => *next = n + 1,
            None => {
                self.next_suffix.insert(base, n + 1);
            }
        }
        self.take_name(name.clone());
        name
    }

    /// Adds the rule `name ::= body`. The list starts with room for a typical schema's
    /// rules when the first is added.
    fn push_rule(&mut self, name: CompactString, body: Cow<'static, Expr>) {
        if self.rules.capacity() == 0 {
            self.rules.reserve(32);
        }
        self.rules.push(Rule {
            name,
            body,
            pos: gbnf::Pos::default(),
        });
    }

    /// Records `name` as taken. The set starts with room for a typical schema's names the
    /// first time one is taken (it is rehashed, every name hashed again, each time it
    /// grows); a schema that names no rule allocates nothing.
    fn take_name(&mut self, name: CompactString) {
        if self.names.capacity() == 0 {
            self.names.reserve(64);
        }
        self.names.insert(name);
    }

    /// A readable hint for a rule name from a location's pointer: its last two tokens
    /// that are not schema keywords, joined by `-`.
    pub fn hint(&self, at: &Location) -> String {
        let words = at.pointer.split('/').filter(|s| {
            !s.is_empty()
                && !matches!(
                    *s,
                    "properties"
                        | "$defs"
                        | "definitions"
                        | "anyOf"
                        | "oneOf"
                        | "allOf"
                        | "prefixItems"
                )
        });
        let (mut last, mut before) = (None, None);
        for word in words {
            before = last.replace(word);
        }
        let mut hint = String::new();
        for word in before.into_iter().chain(last) {
            if !hint.is_empty() {
                hint.push('-');
            }
            hint.push_str(word);
        }
        if hint.contains('~') {
            hint = hint.replace("~1", "-").replace("~0", "-");
        }
        if hint.is_empty() {
            "schema".to_string()
        } else {
            hint
        }
    }

    /// Whitespace between tokens: nothing (compact) or the bounded `ws` rule.
    pub fn ws(&mut self) -> Expr {
        match self.options.whitespace {
            Whitespace::Compact => Expr::empty(),
            Whitespace::Flexible => self.shared_rule("ws"),
        }
    }

    /// `text` with optional whitespace around it (structural tokens `{ } [ ] , :`).
    pub fn token(&mut self, text: &str) -> Expr {
        match self.options.whitespace {
            Whitespace::Compact => Expr::literal(text),
            Whitespace::Flexible => {
                let ws = self.shared_rule("ws");
                Expr::seq([ws.clone(), Expr::literal(text), ws])
            }
        }
    }

    /// A shared building block, emitted once: `value`, `object`, `array`, `string`,
    /// `char` (any spelling), `cchar` (canonical spelling), `number`, `integer`,
    /// `boolean`, `null`, `ws`.
    pub fn shared_rule(&mut self, name: &'static str) -> Expr {
        self.emit_shared(name);
        Expr::rule(name)
    }

    /// Emits the shared rule `name` (and the blocks it refers to) unless it is already
    /// in the grammar; [`Emitter::shared_rule`] without the reference.
    pub fn emit_shared(&mut self, name: &'static str) {
        // A name that is no block (none is asked for) has no bit and no rule.
        let bit = blocks::SHARED
            .iter()
            .position(|shared| *shared == name)
            .map_or(0, |index| 1u32 << index);
        if self.shared & bit == 0 {
            self.shared |= bit;
            if let Some(block) = blocks::shared(name, self.options.whitespace) {
                for &referred in &block.refers_to {
                    self.emit_shared(referred);
                }
                self.push_rule(name.into(), Cow::Borrowed(&block.body));
            }
        }
    }

    // ---- schemas -----------------------------------------------------------------------

    /// The expression for values valid under `schema` (at `at`).
    ///
    /// # Errors
    /// See [`CompileError`]; [`CompileError::Unsatisfiable`] when no value is valid.
    pub fn schema(&mut self, schema: &Value, at: &Location) -> Result<Expr, CompileError> {
        match schema {
            Value::Bool(true) => Ok(self.shared_rule("value")),
            Value::Bool(false) => Err(self.unsatisfiable(at, "the schema is `false`")),
            Value::Object(map) => {
                self.depth += 1;
                if self.depth > MAX_DEPTH {
                    self.depth -= 1;
                    return Err(
                        self.too_large(at, format!("schemas nested more than {MAX_DEPTH} deep"))
                    );
                }
                let result = self.object_schema(map, at);
                self.depth -= 1;
                result
            }
            _ => Err(self.invalid(at, "a schema must be a JSON object or a boolean")),
        }
    }

    fn object_schema(
        &mut self,
        map: &Map<String, Value>,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        self.explain_keywords(map, at);
        for dynamic in ["$dynamicRef", "$recursiveRef"] {
            if let Some(reference) = map.kw(dynamic).and_then(Value::as_str) {
                self.validation_only(at, dynamic, "resolved statically, like `$ref`")?;
                let mut rest = without(map, dynamic);
                // The dynamic target may evaluate more than the static one.
                for key in UNEVALUATED {
                    self.unevaluated_left_to_validation(
                        &mut rest,
                        key,
                        at,
                        "beside a `$dynamicRef` resolved statically, what stays unevaluated is checked after generation",
                    )?;
                }
                rest.insert("$ref".to_string(), Value::String(reference.to_string()));
                let mut origins = provenance::written_at(&rest, at);
                origins.insert("$ref".to_string(), Some(at.child(dynamic)));
                return self.merged_schema(&rest, origins, at, at.child(dynamic));
            }
        }
        if let Some(reference) = map.kw("$ref") {
            let Some(reference) = reference.as_str() else {
                return Err(self.invalid(&at.child("$ref"), "`$ref` must be a string"));
            };
            let target = self.doc.resolve(at, reference)?;
            let constraining = !self.doc.ref_overrides_siblings
                && map.keys().any(|k| k != "$ref" && is_assertion(k));
            if !constraining {
                return self.ref_rule(&target);
            }
            let rest = without(map, "$ref");
            return match self.inline(&target)? {
                Some(target_map) => {
                    let rest_origins = provenance::written_at(&rest, at);
                    let (merged, origins) =
                        self.merge_at(rest, rest_origins, &target_map, &target, at, "$ref")?;
                    self.inlining.push(target);
                    let result = self.merged_schema(&merged, origins, at, at.child("$ref"));
                    self.inlining.pop();
                    result
                }
                None => {
                    // Recursive: keep the reference, enforce the siblings by validation.
                    for key in rest.keys().filter(|k| is_assertion(k)) {
                        self.validation_only(at, key, "beside a recursive `$ref`")?;
                    }
                    self.ref_rule(&target)
                }
            };
        }
        if let Some(all_of) = map.kw("allOf") {
            let Some(items) = all_of.as_array() else {
                return Err(self.invalid(&at.child("allOf"), "`allOf` must be an array of schemas"));
            };
            let mut merged = without(map, "allOf");
            let mut origins = provenance::written_at(&merged, at);
            let mut inlined = Vec::new();
            for (i, item) in items.iter().enumerate() {
                let item_at = at.child("allOf").index(i);
                let (item_map, written) = match item {
                    Value::Bool(true) => continue,
                    Value::Bool(false) => {
                        return Err(self.unsatisfiable(&item_at, "an `allOf` member is `false`"))
                    }
                    Value::Object(m) => {
                        if let Some(target) = self.inline_target(m, &item_at) {
                            inlined.push(target);
                        }
                        self.absolutize(m, &item_at)?
                    }
                    _ => return Err(self.invalid(&item_at, "`allOf` members must be schemas")),
                };
                (merged, origins) =
                    self.merge_at(merged, origins, &item_map, &written, at, "allOf")?;
            }
            // While the merged schema compiles, the targets inlined into it must not be
            // inlined again (a reference back to them stays a reference).
            let depth = self.inlining.len();
            self.inlining.extend(inlined);
            let result = self.merged_schema(&merged, origins, at, at.child("allOf"));
            self.inlining.truncate(depth);
            return result;
        }
        for key in ["anyOf", "oneOf"] {
            if let Some(branches) = map.kw(key) {
                return self.alternatives(map, key, branches, at);
            }
        }
        self.plain(map, at)
    }

    /// `$ref` and `allOf` members may hold further `$ref`s relative to their own location;
    /// merged elsewhere, those must be absolute. Returns the map with its own `$ref`
    /// inlined when it is only a reference, and where the returned map was written
    /// (`at`, or the inlined target).
    fn absolutize<'m>(
        &mut self,
        map: &'m Map<String, Value>,
        at: &Location,
    ) -> Result<(Cow<'m, Map<String, Value>>, Location), CompileError>
    where
        'r: 'm,
    {
        if let Some(reference) = map.kw("$ref").and_then(Value::as_str) {
            let only_ref = map.keys().all(|k| k == "$ref" || is_annotation(k));
            if only_ref {
                let target = self.doc.resolve(at, reference)?;
                if let Some(inlined) = self.inline(&target)? {
                    return Ok((inlined, target));
                }
            }
        }
        Ok((self.with_absolute_refs(map, at), at.clone()))
    }

    /// The location a reference-only member would be inlined from, if any.
    fn inline_target(&self, map: &Map<String, Value>, at: &Location) -> Option<Location> {
        let reference = map.kw("$ref").and_then(Value::as_str)?;
        if !map.keys().all(|k| k == "$ref" || is_annotation(k)) {
            return None;
        }
        let target = self.doc.resolve(at, reference).ok()?;
        (!self.inlining.contains(&target)).then_some(target)
    }

    /// The schema at `target` with every nested `$ref` made absolute, or `None` if it is
    /// being inlined already (recursion).
    fn inline(
        &mut self,
        target: &Location,
    ) -> Result<Option<Cow<'r, Map<String, Value>>>, CompileError> {
        if self.inlining.contains(target) || self.inlining.len() > 32 {
            return Ok(None);
        }
        match self.doc.source(target) {
            // The caller's input outlives the compilation: borrowed when nothing in it
            // needs rewriting.
            Some(Source::Input(input)) => self.as_object(at(input, target), target).map(Some),
            // A document made or fetched while compiling is held only here: copied.
            Some(Source::Loaded(doc)) => self
                .as_object(at(&doc, target), target)
                .map(|map| Some(Cow::Owned(map.into_owned()))),
            None => Err(self.invalid(target, "a `$ref` must point at a schema")),
        }
    }

    /// `found`, the schema at `target`, as an object with every nested `$ref` made
    /// absolute (`true` is `{}`, `false` is `{"not": {}}`).
    fn as_object<'v>(
        &self,
        found: Option<&'v Value>,
        target: &Location,
    ) -> Result<Cow<'v, Map<String, Value>>, CompileError> {
        match found {
            Some(Value::Object(map)) => Ok(self.with_absolute_refs(map, target)),
            Some(Value::Bool(true)) => Ok(Cow::Owned(Map::new())),
            Some(Value::Bool(false)) => {
                let mut never = Map::new();
                never.insert("not".to_string(), Value::Object(Map::new()));
                Ok(Cow::Owned(never))
            }
            _ => Err(self.invalid(target, "a `$ref` must point at a schema")),
        }
    }

    /// `map` with every nested `$ref` made absolute; `map` itself when it holds none.
    fn with_absolute_refs<'m>(
        &self,
        map: &'m Map<String, Value>,
        at: &Location,
    ) -> Cow<'m, Map<String, Value>> {
        // Where `#…` means the same everywhere, only other references need rewriting.
        let fragments_stay = self.doc.fragments_are_global();
        let own_ref = map.kw("$ref").is_some_and(|r| rewritten(r, fragments_stay));
        if !own_ref
            && !map
                .iter()
                .any(|(key, child)| holds_refs(key, child, 0, fragments_stay))
        {
            return Cow::Borrowed(map);
        }
        let mut out = map.clone();
        absolutize_refs(&mut out, at, self.doc);
        Cow::Owned(out)
    }

    fn merge_at(
        &mut self,
        a: Map<String, Value>,
        a_origins: Origins,
        b: &Map<String, Value>,
        b_at: &Location,
        at: &Location,
        keyword: &str,
    ) -> Result<(Map<String, Value>, Origins), CompileError> {
        if a.is_empty() {
            // Merged into nothing, `b` is kept as it is, each keyword where `b` has it:
            // the usual first member of an `allOf`, copied whole rather than key by key.
            self.merge_conflicts(merge::conflicts_alone(b), at, keyword)?;
            return Ok((b.clone(), provenance::written_at(b, b_at)));
        }
        let merged = merge_owned(a, b);
        self.merge_conflicts(merged.conflicts.iter().copied(), at, keyword)?;
        let origins = provenance::of_merge(&merged, a_origins, b, b_at);
        Ok((merged.schema, origins))
    }

    /// Reports the keywords a merge for `keyword` at `at` could not intersect exactly as
    /// validation-only.
    fn merge_conflicts<'k>(
        &mut self,
        conflicts: impl IntoIterator<Item = &'k str>,
        at: &Location,
        keyword: &str,
    ) -> Result<(), CompileError> {
        for conflict in conflicts {
            self.validation_only(
                at,
                keyword,
                format!("`{conflict}` appears on both sides and cannot be intersected exactly"),
            )?;
        }
        Ok(())
    }

    /// Takes `unevaluated` (one of [`UNEVALUATED`]) out of `map` when it restricts
    /// anything, reporting it as validation-only (`why`): the grammar then allows what
    /// it would have refused, never less than the schema.
    fn unevaluated_left_to_validation(
        &mut self,
        map: &mut Map<String, Value>,
        unevaluated: &str,
        at: &Location,
        why: &str,
    ) -> Result<(), CompileError> {
        if restricts(map, unevaluated) {
            self.validation_only(at, unevaluated, why)?;
            map.shift_remove(unevaluated);
        }
        Ok(())
    }

    /// Values valid under every one of `members` (each a schema and where it was written),
    /// compiled at `at` as a made-up `{"allOf": [..]}`.
    ///
    /// # Errors
    /// See [`CompileError`].
    pub fn all_of_written(
        &mut self,
        members: &[(&Value, Location)],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        if let [(schema, written)] = members {
            return self.schema(schema, written);
        }
        let schemas = members.iter().map(|(schema, _)| Value::clone(schema));
        let mut map = Map::new();
        map.insert("allOf".to_string(), Value::Array(schemas.collect()));
        let origins = provenance::members_written_at(members.iter().map(|(_, place)| place));
        self.merged_schema(&map, origins, at, at.clone())
    }

    /// Compiles `merged`, a schema object made by merging, at `at`; diagnostics inside it
    /// name where its keywords were written (`origins`), or `combined_at` for a keyword
    /// the merge combined.
    fn merged_schema(
        &mut self,
        merged: &Map<String, Value>,
        origins: Origins,
        at: &Location,
        combined_at: Location,
    ) -> Result<Expr, CompileError> {
        self.merges.push(MergeSite {
            at: at.clone(),
            origins,
            combined_at,
        });
        let result = self.object_schema(merged, at);
        self.merges.pop();
        result
    }

    /// One named rule per `$ref` target.
    fn ref_rule(&mut self, target: &Location) -> Result<Expr, CompileError> {
        if let Some(name) = self.ref_rules.get(target) {
            return Ok(Expr::rule(name.clone()));
        }
        let name = self.fresh_name(&self.hint(target));
        self.ref_rules.insert(target.clone(), name.clone());
        let source = self.doc.source(target);
        let schema = source
            .as_deref()
            .and_then(|s| at(s, target))
            .unwrap_or(&TRUE);
        // The target is read where it was written: no merge's made-up places apply.
        let merges = std::mem::take(&mut self.merges);
        let body = self.schema(schema, target);
        self.merges = merges;
        let body = match body {
            Ok(body) => body,
            Err(err) => {
                // Forget the name: a later reference must not point at a rule never made.
                self.ref_rules.remove(target);
                return Err(err);
            }
        };
        self.push_rule(name.clone(), Cow::Owned(body));
        Ok(Expr::rule(name))
    }

    /// `anyOf` / `oneOf`: each branch merged with the rest of the schema.
    fn alternatives(
        &mut self,
        map: &Map<String, Value>,
        key: &str,
        branches: &Value,
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let Some(branches) = branches.as_array() else {
            return Err(self.invalid(
                &at.child(key),
                format!("`{key}` must be an array of schemas"),
            ));
        };
        // The rest of the schema is copied only when it constrains the branches.
        let base_constrains = map.keys().any(|k| k != key && is_assertion(k));
        let mut base = if base_constrains {
            without(map, key)
        } else {
            Map::new()
        };
        if key == "anyOf" {
            // Every branch that matches evaluates keys (items); merged into one branch at a
            // time, `unevaluated*` would see only that branch's.
            for (unevaluated, evaluating) in UNEVALUATED.into_iter().zip(EVALUATING) {
                let evaluates = |b: &Value| {
                    b.as_object()
                        .is_some_and(|m| evaluating.iter().chain(&APPLICATORS).any(|k| m.has(k)))
                };
                if branches.iter().any(evaluates) {
                    self.unevaluated_left_to_validation(
                        &mut base,
                        unevaluated,
                        at,
                        "beside `anyOf`, what the matching branches leave unevaluated is checked after generation",
                    )?;
                }
            }
        }
        let base_origins = provenance::written_at(&base, at);
        let mut arms = Vec::new();
        // For `oneOf`, the branches as compiled, to tell whether they are disjoint.
        let one_of = key == "oneOf";
        let mut merged_branches: Vec<Cow<'_, Map<String, Value>>> = Vec::new();
        for (i, branch) in branches.iter().enumerate() {
            let branch_at = at.child(key).index(i);
            let result = if base_constrains {
                let (branch_map, written) = match branch {
                    Value::Bool(true) => (Cow::Owned(Map::new()), branch_at.clone()),
                    Value::Bool(false) => continue,
                    Value::Object(m) => self.absolutize(m, &branch_at)?,
                    _ => return Err(self.invalid(&branch_at, "branches must be schemas")),
                };
                let (merged, origins) = self.merge_at(
                    base.clone(),
                    base_origins.clone(),
                    &branch_map,
                    &written,
                    at,
                    key,
                )?;
                let result = self.merged_schema(&merged, origins, &branch_at, branch_at.clone());
                if one_of {
                    merged_branches.push(Cow::Owned(merged));
                }
                result
            } else {
                if one_of {
                    match branch {
                        Value::Object(m) => merged_branches.push(self.absolutize(m, &branch_at)?.0),
                        Value::Bool(true) => merged_branches.push(Cow::Owned(Map::new())),
                        _ => {}
                    }
                }
                self.schema(branch, &branch_at)
            };
            match result {
                Ok(expr) => arms.push(expr),
                Err(CompileError::Unsatisfiable { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if arms.is_empty() {
            return Err(self.unsatisfiable(
                &at.child(key),
                format!("no branch of `{key}` accepts any value"),
            ));
        }
        if one_of && !pairwise_disjoint(&merged_branches) {
            self.validation_only(
                at,
                "oneOf",
                "branches may overlap; the grammar accepts any branch (anyOf)",
            )?;
        }
        let hint = self.hint(at);
        Ok(if arms.len() == 1 {
            arms.pop().unwrap_or_else(Expr::empty)
        } else {
            self.add_rule(&hint, Expr::alt(arms))
        })
    }

    /// A schema without `$ref`, `allOf`, `anyOf`, `oneOf`.
    fn plain(&mut self, map: &Map<String, Value>, at: &Location) -> Result<Expr, CompileError> {
        let mut types = self.types(map, at)?;
        if let Some(not) = map.kw("not") {
            self.not(not, &mut types, at)?;
        }
        if is_conditional(map) {
            self.validation_only(at, "if", "conditional schemas are checked after generation")?;
        }
        if map.has("enum") || map.has("const") {
            return self.literals(map, &types, at);
        }
        if types.is_empty() {
            return Err(self.unsatisfiable(at, "no type is allowed"));
        }
        let mut arms = Vec::new();
        for t in &types {
            let result = match *t {
                "null" => Ok(self.shared_rule("null")),
                "boolean" => Ok(self.shared_rule("boolean")),
                "string" => super::scalars::string(self, map, at),
                "integer" => super::scalars::number(self, map, at, true),
                "number" => super::scalars::number(self, map, at, false),
                "object" => super::objects::object(self, map, at),
                "array" => super::arrays::array(self, map, at),
                _ => continue,
            };
            match result {
                Ok(expr) => arms.push(expr),
                Err(CompileError::Unsatisfiable { .. }) if types.len() > 1 => {}
                Err(e) => return Err(e),
            }
        }
        if arms.is_empty() {
            return Err(self.unsatisfiable(at, "no allowed type has a valid value"));
        }
        if arms.len() == 7 || (types.len() == 7 && arms.len() == 7) {
            // Nothing constrains the value beyond what `value` accepts.
        }
        Ok(Expr::alt(arms))
    }

    /// The allowed types, in a fixed order; `integer` is dropped when `number` is allowed
    /// (every integer is a number).
    fn types(
        &mut self,
        map: &Map<String, Value>,
        at: &Location,
    ) -> Result<Vec<&'static str>, CompileError> {
        let named: &[Value] = match map.kw("type") {
            None => {
                return Ok(vec![
                    "null", "boolean", "object", "array", "number", "string",
                ])
            }
            Some(one @ Value::String(_)) => std::slice::from_ref(one),
            Some(Value::Array(items)) => items,
            Some(_) => {
                return Err(self.invalid(
                    &at.child("type"),
                    "`type` must be a string or an array of strings",
                ))
            }
        };
        if !named.iter().all(Value::is_string) {
            return Err(self.invalid(&at.child("type"), "`type` entries must be strings"));
        }
        for name in named.iter().filter_map(Value::as_str) {
            if !TYPES.contains(&name) {
                let hint = keywords::suggest(name, TYPES)
                    .map(|s| format!("; did you mean \"{s}\"?"))
                    .unwrap_or_default();
                return Err(self.invalid(
                    &at.child("type"),
                    format!(
                        "unknown type \"{name}\" (the types are {}){hint}",
                        TYPES.join(", ")
                    ),
                ));
            }
        }
        let has = |t: &str| named.iter().any(|item| item.as_str() == Some(t));
        Ok([
            "null", "boolean", "object", "array", "number", "integer", "string",
        ]
        .into_iter()
        .filter(|t| has(t) && !(*t == "integer" && has("number")))
        .collect())
    }

    /// `not`: `{"type": …}` removes types exactly; anything else is validation-only.
    fn not(
        &mut self,
        not: &Value,
        types: &mut Vec<&'static str>,
        at: &Location,
    ) -> Result<(), CompileError> {
        match not {
            Value::Object(inner) if inner.len() == 1 && inner.has("type") => {
                let excluded = self.types(inner, &at.child("not"))?;
                if excluded.contains(&"integer")
                    && types.contains(&"number")
                    && !excluded.contains(&"number")
                {
                    self.validation_only(at, "not", "non-integral numbers only")?;
                }
                let numbers_out = excluded.contains(&"number");
                types.retain(|t| !(excluded.contains(t) || (numbers_out && *t == "integer")));
                Ok(())
            }
            Value::Bool(false) => Ok(()),
            Value::Bool(true) => {
                types.clear();
                Ok(())
            }
            Value::Object(inner) if inner.is_empty() => {
                types.clear();
                Ok(())
            }
            _ => self.validation_only(at, "not", "a general `not` is checked after generation"),
        }
    }

    /// `enum` / `const`: the canonical texts of the values that fit the rest of the schema.
    fn literals(
        &mut self,
        map: &Map<String, Value>,
        types: &[&str],
        at: &Location,
    ) -> Result<Expr, CompileError> {
        let mut values: Vec<Value> = match map.kw("enum") {
            Some(Value::Array(values)) => values.clone(),
            Some(_) => return Err(self.invalid(&at.child("enum"), "`enum` must be an array")),
            None => Vec::new(),
        };
        if let Some(c) = map.kw("const") {
            values = if map.has("enum") {
                values
                    .into_iter()
                    .filter(|v| super::merge::json_equal(v, c))
                    .collect()
            } else {
                vec![c.clone()]
            };
        }
        let mut texts: Vec<String> = Vec::new();
        let mut unchecked = false;
        for value in &values {
            match canon::fits(value, map, types) {
                canon::Fit::No => continue,
                canon::Fit::Unchecked => unchecked = true,
                canon::Fit::Yes => {}
            }
            let text = canon::canonical_text_of(value, map);
            if !texts.contains(&text) {
                texts.push(text);
            }
        }
        if unchecked {
            self.validation_only(
                at,
                "enum",
                "some values are not checked against the other keywords",
            )?;
        }
        if texts.is_empty() {
            return Err(self.unsatisfiable(at, "no `enum`/`const` value satisfies the schema"));
        }
        Ok(Expr::alt(texts.into_iter().map(Expr::literal)))
    }
}

/// The bodies of `char`, `cchar` and `cesc`: the same in every grammar, so worked out
/// once per process.
/// The schema `true`, for places that hold no schema.
pub static TRUE: Value = Value::Bool(true);

/// Does `map` hold a conditional (`if` with `then` or `else`)? The grammar leaves it to
/// validation.
pub fn is_conditional(map: &Map<String, Value>) -> bool {
    map.has("if") && (map.has("then") || map.has("else"))
}

/// Prefixes of rule names made for string formats and extra keys' first characters,
/// which rules named after the schema may not take.
const RESERVED_PREFIXES: [&str; 3] = [
    "fmt-",
    super::objects::OTHER_START_PREFIX,
    super::objects::OR_STOP_PREFIX,
];

/// The keywords that apply to what the rest of the schema leaves unevaluated.
pub const UNEVALUATED: [&str; 2] = ["unevaluatedProperties", "unevaluatedItems"];

/// For each of [`UNEVALUATED`], the keywords that evaluate what it applies to.
const EVALUATING: [&[&str]; 2] = [
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
const APPLICATORS: [&str; 7] = [
    "allOf",
    "anyOf",
    "oneOf",
    "$ref",
    "$dynamicRef",
    "if",
    "dependencies",
];

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

/// Keywords whose values are instances, not schemas: a `$ref` inside is data.
const INSTANCE_KEYWORDS: [&str; 4] = ["enum", "const", "default", "examples"];

/// Does [`absolutize_refs`] find a `$ref` to rewrite in the value of `key`?
fn holds_refs(key: &str, value: &Value, depth: usize, fragments_stay: bool) -> bool {
    if depth > super::document::MAX_DEPTH || INSTANCE_KEYWORDS.contains(&key) {
        return false;
    }
    match value {
        Value::Object(map) => {
            map.kw("$ref").is_some_and(|r| rewritten(r, fragments_stay))
                || map
                    .iter()
                    .any(|(key, child)| holds_refs(key, child, depth + 1, fragments_stay))
        }
        Value::Array(items) => items
            .iter()
            .any(|item| holds_refs("", item, depth + 1, fragments_stay)),
        _ => false,
    }
}

/// Whether [`absolutize_refs`] would rewrite the `$ref` value `reference`: a string, and
/// not a `#…` fragment when those mean the same everywhere (`fragments_stay`).
fn rewritten(reference: &Value, fragments_stay: bool) -> bool {
    reference
        .as_str()
        .is_some_and(|r| !(fragments_stay && r.starts_with('#')))
}

fn absolutize_refs(map: &mut Map<String, Value>, at: &Location, doc: &Document<'_>) {
    fn walk(value: &mut Value, base_location: &Location, doc: &Document<'_>, depth: usize) {
        if depth > super::document::MAX_DEPTH {
            return;
        }
        match value {
            Value::Object(map) => {
                if let Some(Value::String(reference)) = map.get_mut("$ref") {
                    if let Ok(target) = doc.resolve(base_location, reference) {
                        *reference = doc.absolute_uri(&target);
                    }
                }
                for (key, child) in map.iter_mut() {
                    if !INSTANCE_KEYWORDS.contains(&key.as_str()) {
                        walk(child, base_location, doc, depth + 1);
                    }
                }
            }
            Value::Array(items) => items
                .iter_mut()
                .for_each(|i| walk(i, base_location, doc, depth + 1)),
            _ => {}
        }
    }
    let mut value = Value::Object(std::mem::take(map));
    walk(&mut value, at, doc, 0);
    if let Value::Object(m) = value {
        *map = m;
    }
}

/// Are the branches provably disjoint? Different types, disjoint `const`/`enum` values,
/// or (where one branch admits objects only) a property both require with disjoint
/// `const`/`enum` values.
fn pairwise_disjoint(branches: &[Cow<'_, Map<String, Value>>]) -> bool {
    for (i, a) in branches.iter().enumerate() {
        for b in &branches[i + 1..] {
            if !disjoint(a, b) {
                return false;
            }
        }
    }
    true
}

fn disjoint(a: &Map<String, Value>, b: &Map<String, Value>) -> bool {
    fn types(m: &Map<String, Value>) -> Option<Vec<&str>> {
        let mut set: Vec<&str> = match m.kw("type")? {
            Value::String(s) => vec![s.as_str()],
            Value::Array(items) => items.iter().filter_map(Value::as_str).collect(),
            _ => return None,
        };
        if set.contains(&"number") {
            set.push("integer");
        }
        Some(set)
    }
    fn literal_values(m: &Map<String, Value>) -> Option<&[Value]> {
        if let Some(c) = m.kw("const") {
            return Some(std::slice::from_ref(c));
        }
        m.kw("enum").and_then(Value::as_array).map(Vec::as_slice)
    }
    if let (Some(ta), Some(tb)) = (types(a), types(b)) {
        if ta.iter().all(|t| !tb.contains(t)) {
            return true;
        }
    }
    let values_disjoint = |va: &[Value], vb: &[Value]| {
        va.iter()
            .all(|x| !vb.iter().any(|y| super::merge::json_equal(x, y)))
    };
    if let (Some(va), Some(vb)) = (literal_values(a), literal_values(b)) {
        if values_disjoint(va, vb) {
            return true;
        }
    }
    let required = |m: &Map<String, Value>, k: &str| {
        m.kw("required")
            .and_then(Value::as_array)
            .is_some_and(|r| r.iter().any(|x| x.as_str() == Some(k)))
    };
    // A required property with disjoint values tells objects apart; values of other types
    // ignore `properties`, so one branch at least must admit objects only.
    let only_objects =
        |m: &Map<String, Value>| types(m).is_some_and(|t| t.iter().all(|t| *t == "object"));
    if !(only_objects(a) || only_objects(b)) {
        return false;
    }
    if let (Some(pa), Some(pb)) = (
        a.kw("properties").and_then(Value::as_object),
        b.kw("properties").and_then(Value::as_object),
    ) {
        for (key, sa) in pa {
            let Some(sb) = pb.get(key) else { continue };
            if !(required(a, key) && required(b, key)) {
                continue;
            }
            if let (Value::Object(ma), Value::Object(mb)) = (sa, sb) {
                if let (Some(va), Some(vb)) = (literal_values(ma), literal_values(mb)) {
                    if values_disjoint(va, vb) {
                        return true;
                    }
                }
            }
        }
    }
    false
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use serde_json::json;

    use crate::recognize::Recognizer;
    use crate::schema::{compile, Options};

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
