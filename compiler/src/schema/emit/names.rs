//! The [`Emitter`]'s rules and their names: unique, derived from JSON pointers, with the
//! shared building blocks under stable names.

use rustc_hash::FxHashSet;

use super::Emitter;
use crate::gbnf::ast::CompactString;
use crate::gbnf::{self, Expr, Rule};
use crate::pattern::PatternError;
use crate::schema::blocks;
use crate::schema::document::Location;
use crate::schema::Whitespace;

/// Prefixes of rule names made for string formats and extra keys' first characters,
/// which rules named after the schema may not take.
const RESERVED_PREFIXES: [&str; 3] = [
    "fmt-",
    crate::schema::objects::OTHER_START_PREFIX,
    crate::schema::objects::OR_STOP_PREFIX,
];

impl<'d, 'r, 'o> Emitter<'d, 'r, 'o> {
    /// Adds a rule named after `hint` (made unique) and returns a reference to it.
    pub fn add_rule(&mut self, hint: &str, body: Expr) -> Expr {
        let name = self.fresh_name(hint);
        self.push_rule(name.clone(), body);
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
            self.named_rule(name, |_| body.clone());
        }
        Expr::rule(entry)
    }

    /// A reference to the fixed-name rule `name`, made from `body` the first time only
    /// (a building block shared by every schema in the grammar).
    pub fn named_rule(&mut self, name: &str, body: impl FnOnce(&mut Self) -> Expr) -> Expr {
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
            self.push_rule(name.into(), body);
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
    pub(super) fn push_rule(&mut self, name: CompactString, body: Expr) {
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
    pub(super) fn take_name(&mut self, name: CompactString) {
        if self.names.capacity() == 0 {
            self.names.reserve(64);
        }
        self.names.insert(name);
    }

    /// A readable hint for a rule name from a location's pointer: its last two tokens
    /// that are not schema keywords, joined by `-`.
    pub fn hint(&self, at: &Location) -> String {
        // An `allOf` member's index names nothing: its schema is part of its parent's.
        let mut after_all_of = false;
        let words = at.pointer.split('/').filter(|s| {
            let member_index = std::mem::replace(&mut after_all_of, *s == "allOf");
            !s.is_empty()
                && !member_index
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
                self.push_rule(name.into(), block.body.clone());
            }
        }
    }
}
