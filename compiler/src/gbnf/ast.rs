//! The GBNF abstract syntax tree.
//!
//! A [`Grammar`] is an ordered list of [`Rule`]s; each rule's body is an [`Expr`]. The tree
//! mirrors llama.cpp's surface syntax one to one, so printing a parsed grammar and parsing
//! it again gives back the same tree (`parse(print(g)) == g`).
//!
//! Trees built by hand should keep the *normal form* the parser produces, which the
//! printer relies on to round-trip:
//! - an [`Expr::Alt`] has at least two arms and no arm is itself an `Alt`;
//! - an [`Expr::Seq`] has zero or at least two items, none of which is a `Seq` or an `Alt`;
//! - a [`Expr::Repeat`] wraps an atom (anything but `Seq` and `Alt`; use [`Expr::Group`]).
//!
//! [`Expr::seq`], [`Expr::alt`] and [`Expr::repeat`] build that form from any input.
//!
//! Rule names and literal texts are [`CompactString`]s, stored inline up to 24 bytes:
//! compiling a schema makes many short ones, and a heap allocation each was a tenth of
//! the compile time when this was measured (benches/README.md).

use std::fmt;

pub use compact_str::CompactString;

/// A position in GBNF source text: 1-based line and column (in characters).
///
/// Positions are metadata: two positions always compare equal, so a tree parsed from
/// differently formatted text equals the tree parsed from its canonical print.
#[derive(Debug, Clone, Copy, Default, Eq)]
pub struct Pos {
    /// 1-based line number.
    pub line: u32,
    /// 1-based column number, counted in Unicode scalar values.
    pub column: u32,
}

impl PartialEq for Pos {
    fn eq(&self, _other: &Self) -> bool {
        true
    }
}

impl fmt::Display for Pos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}:{}", self.line, self.column)
    }
}

/// A whole grammar: rules in source order. The start rule is the one named `root`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Grammar {
    /// The rules, in the order they were written.
    pub rules: Vec<Rule>,
}

/// One rule, `name ::= body`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    /// The rule's name (llama.cpp accepts `[a-zA-Z0-9-]+`; `check` reports others).
    pub name: CompactString,
    /// The right-hand side.
    pub body: Expr,
    /// Where the rule's name starts in the source.
    pub pos: Pos,
}

/// One closed range of Unicode scalar values inside a character class.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct ClassRange {
    /// First character of the range.
    pub lo: char,
    /// Last character of the range (inclusive). `lo > hi` is an empty range, which `check` reports.
    pub hi: char,
}

/// A token reference: matches one token of the model's vocabulary rather than characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum TokenRef {
    /// `<[123]>`: a token by id.
    Id(u32),
    /// `<|im_end|>` or `<think>`: a token by its text, which must be a single token of the
    /// model's vocabulary. Holds the text between (not including) the angle brackets.
    Text(String),
}

/// An expression on the right-hand side of a rule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Expr {
    /// `a | b | c`: at least two arms.
    Alt(Vec<Expr>),
    /// `a b c`: zero items (the empty string) or at least two.
    Seq(Vec<Expr>),
    /// `"text"`: matches exactly this text (possibly empty; short texts are stored inline).
    Literal(CompactString),
    /// `[a-z_]` or `[^"\\]`: one character in (or, negated, not in) the ranges.
    Class {
        /// `true` for `[^…]`.
        negated: bool,
        /// The ranges; single characters are ranges with `lo == hi`. Never empty.
        ranges: Vec<ClassRange>,
    },
    /// `.`: any single character.
    Any,
    /// A reference to another rule by name.
    Ref {
        /// The referenced rule's name (short names are stored inline, without allocating).
        name: CompactString,
        /// Where the reference appears.
        pos: Pos,
    },
    /// `( … )`: a parenthesised expression.
    Group(Box<Expr>),
    /// `x*`, `x+`, `x?`, `x{m}`, `x{m,}`, `x{m,n}`.
    Repeat {
        /// What is repeated (an atom: not a bare `Seq` or `Alt`).
        expr: Box<Expr>,
        /// Least number of repetitions.
        min: u32,
        /// Greatest number of repetitions; `None` is unbounded.
        max: Option<u32>,
        /// Where the repetition operator appears.
        pos: Pos,
    },
    /// `<[123]>`, `<|name|>`, `!<[123]>`: a token reference, opaque to the character-level
    /// recognizer and sampler.
    Token {
        /// `true` for `!<…>`: any token but this one.
        negated: bool,
        /// Which token.
        token: TokenRef,
    },
}

impl Expr {
    /// A reference to the rule `name`, at no particular position.
    pub fn rule(name: impl Into<CompactString>) -> Expr {
        Expr::Ref {
            name: name.into(),
            pos: Pos::default(),
        }
    }

    /// A literal; the empty literal is the empty sequence (normal form has no `Literal("")`).
    pub fn literal(text: impl Into<CompactString>) -> Expr {
        let text = text.into();
        if text.is_empty() {
            Expr::empty()
        } else {
            Expr::Literal(text)
        }
    }

    /// The empty string.
    pub fn empty() -> Expr {
        Expr::Seq(Vec::new())
    }

    /// A sequence in normal form: nested sequences are flattened, alternations grouped,
    /// and a one-item sequence is that item. A `Vec` already in normal form is kept as is.
    pub fn seq(items: impl IntoIterator<Item = Expr>) -> Expr {
        let mut items: Vec<Expr> = items.into_iter().collect();
        // Empty sequences (the usual nested ones) go in place, without a new vector.
        items.retain(|item| !matches!(item, Expr::Seq(inner) if inner.is_empty()));
        if items.iter().any(|item| matches!(item, Expr::Seq(_))) {
            items = spliced(items, Nesting::Seq);
        }
        for item in &mut items {
            if matches!(item, Expr::Alt(_)) {
                let alt = std::mem::replace(item, Expr::empty());
                *item = Expr::Group(Box::new(alt));
            }
        }
        if items.len() == 1 {
            items.pop().unwrap_or_else(Expr::empty)
        } else {
            Expr::Seq(items)
        }
    }

    /// An alternation in normal form: nested alternations are flattened and a one-arm
    /// alternation is that arm. A `Vec` already in normal form is kept as is.
    pub fn alt(arms: impl IntoIterator<Item = Expr>) -> Expr {
        let mut arms: Vec<Expr> = arms.into_iter().collect();
        if arms.iter().any(|arm| matches!(arm, Expr::Alt(_))) {
            arms = spliced(arms, Nesting::Alt);
        }
        if arms.len() == 1 {
            arms.pop().unwrap_or_else(Expr::empty)
        } else {
            Expr::Alt(arms)
        }
    }

    /// `expr{min,max}` in normal form: a sequence, an alternation or a `x{0}` is grouped first.
    pub fn repeat(expr: Expr, min: u32, max: Option<u32>) -> Expr {
        let atom = match expr {
            e @ (Expr::Seq(_) | Expr::Alt(_)) => Expr::Group(Box::new(e)),
            Expr::Literal(text) if text.is_empty() => Expr::Group(Box::new(Expr::empty())),
            // llama.cpp drops `x{0}` entirely, leaving nothing for a further operator.
            e @ Expr::Repeat { max: Some(0), .. } => Expr::Group(Box::new(e)),
            e => e,
        };
        Expr::Repeat {
            expr: Box::new(atom),
            min,
            max,
            pos: Pos::default(),
        }
    }

    /// One of `chars` (sorted, without repeats): a literal for a single character, else a
    /// class in which consecutive characters form one range.
    pub fn one_of(chars: impl IntoIterator<Item = char>) -> Expr {
        let mut chars = chars.into_iter();
        let mut ranges: Vec<ClassRange> = Vec::new();
        if let Some(first) = chars.next() {
            let Some(second) = chars.next() else {
                return Expr::literal(&*first.encode_utf8(&mut [0; 4]));
            };
            ranges.push(ClassRange {
                lo: first,
                hi: first,
            });
            for c in std::iter::once(second).chain(chars) {
                match ranges.last_mut() {
                    Some(last) if u32::from(last.hi) + 1 == u32::from(c) => last.hi = c,
                    _ => ranges.push(ClassRange { lo: c, hi: c }),
                }
            }
        }
        Expr::Class {
            negated: false,
            ranges,
        }
    }

    /// A character class matching the given characters and ranges.
    pub fn class(negated: bool, ranges: impl IntoIterator<Item = (char, char)>) -> Expr {
        Expr::Class {
            negated,
            ranges: ranges
                .into_iter()
                .map(|(lo, hi)| ClassRange { lo, hi })
                .collect(),
        }
    }

    /// The direct sub-expressions of this expression, in order.
    pub fn children(&self) -> &[Expr] {
        match self {
            Expr::Alt(items) | Expr::Seq(items) => items,
            Expr::Group(inner) => std::slice::from_ref(inner),
            Expr::Repeat { expr, .. } => std::slice::from_ref(expr),
            Expr::Literal(_)
            | Expr::Class { .. }
            | Expr::Any
            | Expr::Ref { .. }
            | Expr::Token { .. } => &[],
        }
    }

    /// Calls `visit` on this expression and every sub-expression, parents first, without
    /// recursion (so even very deep hand-built trees cannot overflow the stack).
    pub fn walk<'a>(&'a self, mut visit: impl FnMut(&'a Expr)) {
        let mut stack = vec![self];
        while let Some(expr) = stack.pop() {
            visit(expr);
            stack.extend(expr.children().iter().rev());
        }
    }

    /// Renames every rule reference in this expression for which `rename` gives a new
    /// name, without recursion.
    pub fn rename_refs(&mut self, rename: impl Fn(&str) -> Option<CompactString>) {
        let mut stack: Vec<&mut Expr> = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Ref { name, .. } => {
                    if let Some(new) = rename(name.as_str()) {
                        *name = new;
                    }
                }
                Expr::Alt(items) | Expr::Seq(items) => stack.extend(items.iter_mut()),
                Expr::Group(inner) => stack.push(inner.as_mut()),
                Expr::Repeat { expr, .. } => stack.push(expr.as_mut()),
                Expr::Literal(_) | Expr::Class { .. } | Expr::Any | Expr::Token { .. } => {}
            }
        }
    }

    /// How deeply expressions nest inside this one (an atom has depth 1).
    pub fn depth(&self) -> usize {
        let mut deepest = 0;
        let mut stack = vec![(self, 1usize)];
        while let Some((expr, depth)) = stack.pop() {
            deepest = deepest.max(depth);
            stack.extend(expr.children().iter().map(|c| (c, depth + 1)));
        }
        deepest
    }
}

impl Grammar {
    /// Renames the rule `from` to `to`, its definitions and every reference to it.
    pub fn rename(&mut self, from: &str, to: &str) {
        for rule in &mut self.rules {
            if rule.name == from {
                rule.name = to.into();
            }
            rule.body
                .rename_refs(|name| (name == from).then(|| to.into()));
        }
    }

    /// The rule called `name`, if any (the first one when it is defined twice).
    pub fn rule(&self, name: &str) -> Option<&Rule> {
        self.rules.iter().find(|r| r.name == name)
    }

    /// Appends a rule `name ::= body`.
    pub fn push(&mut self, name: impl Into<CompactString>, body: Expr) {
        self.rules.push(Rule {
            name: name.into(),
            body,
            pos: Pos::default(),
        });
    }
}

/// Which list [`spliced`] opens: sequences inside a sequence, or alternations inside an
/// alternation.
#[derive(Clone, Copy)]
enum Nesting {
    Seq,
    Alt,
}

/// `items` with each nested list of the kind `nesting` names replaced by its own items,
/// in one vector of the final length.
fn spliced(items: Vec<Expr>, nesting: Nesting) -> Vec<Expr> {
    let nested = |item: &Expr| match (nesting, item) {
        (Nesting::Seq, Expr::Seq(inner)) | (Nesting::Alt, Expr::Alt(inner)) => Some(inner.len()),
        _ => None,
    };
    let len = items.iter().map(|item| nested(item).unwrap_or(1)).sum();
    let mut flat = Vec::with_capacity(len);
    for item in items {
        match (nesting, item) {
            (Nesting::Seq, Expr::Seq(inner)) | (Nesting::Alt, Expr::Alt(inner)) => {
                flat.extend(inner);
            }
            (_, other) => flat.push(other),
        }
    }
    flat
}
