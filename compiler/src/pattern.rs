//! ECMA-262 `pattern`s as GBNF expressions over JSON string contents, parsed with regex-syntax.
//!
//! JSON Schema's `pattern` is an ECMA-262 regular expression applied with *search*
//! semantics: `"abc"` accepts every string that contains `abc`. [`pattern_expr`] turns a
//! pattern into an expression over the text between a JSON string's quotes that accepts
//! exactly the canonical spellings ([`crate::json_text`]) of the strings the pattern
//! matches.
//!
//! # How
//!
//! 1. **ECMA → regex-syntax.** A small lexer reads the pattern as ECMA-262 does with the `u`
//!    flag (Unicode mode: strings are sequences of code points, strict syntax) and writes an
//!    equivalent pattern in regex-syntax's dialect, in which every ECMA-specific meaning is
//!    spelled out explicitly:
//!    - `\d` = `[0-9]`, `\w` = `[0-9A-Za-z_]`, `\s` = ECMA's white space and line
//!      terminators (U+0009–U+000D, U+0020, U+00A0, U+1680, U+2000–U+200A, U+2028, U+2029,
//!      U+202F, U+205F, U+3000, U+FEFF), and their negations;
//!    - `.` = any character but the line terminators `\n`, `\r`, U+2028 and U+2029 (any
//!      character at all inside an ES2025 `(?s:…)` modifier group);
//!    - `[]` matches nothing and `[^]` any character; inside classes `[`, `&&`, `--` and
//!      `~~` are plain characters (regex-syntax would read set operations) and `\b` is
//!      U+0008;
//!    - `\cX`, `\0`, `\xHH`, `\uHHHH` (surrogate pairs combined), `\u{H…}`, `\f \n \r \t
//!      \v` and the identity escapes of syntax characters and `/`;
//!    - `\p{…}` / `\P{…}` pass through (regex-syntax's property names are a lenient superset
//!      of ECMA's, and its Unicode version may differ from a given JavaScript engine's);
//!    - every group becomes non-capturing; case-insensitivity comes only from ES2025
//!      modifier groups `(?i:…)` / `(?-i:…)`, which regex-syntax folds with Unicode simple
//!      case folding, as ECMA does in Unicode mode.
//!
//!    The lexer rejects as [`PatternError::Invalid`] what ECMA's Unicode mode rejects
//!    (`\a`, a lone `{` or `]`, `a**`, `(?i)`, a range out of order…), and as
//!    [`PatternError::Unsupported`] what is valid but not expressible as a context-free set
//!    of strings here: lookaround, backreferences, word boundaries `\b` `\B`, anchors under
//!    the multiline flag, lone surrogates, counts above 100 000.
//! 2. **regex-syntax → HIR** with Unicode mode on and every flag off.
//! 3. **HIR → [`Expr`].** The top level is split into branches by `^`/`$`: a branch may
//!    start with `^` and end with `$` (alternations and groups containing anchors are
//!    distributed, so `^a|b$` and `(^|,)x` work); anchors anywhere else are unsupported,
//!    unless they make a branch impossible (`a^b`). An unanchored end gets `cchar*`, a
//!    reference to the shared rule [`ANY_CHAR_RULE`] (any one character, canonically;
//!    [`pattern_grammar`] defines it for a standalone grammar). Characters become
//!    [`chars_expr`] / canonical literals.
//!    Counted repetitions keep their counts, split into chunks so that llama.cpp's limits
//!    (each bound ≤ 2000, generated rules × count ≤ 2000) hold; a repetition of something
//!    that can match the empty text repeats its non-empty part instead, so no unbounded
//!    repetition is nullable.
//!
//! Lazy and greedy quantifiers accept the same strings, so laziness is ignored.

use std::fmt::Write as _;
use std::sync::LazyLock;

use regex_syntax::hir::{self, Hir, HirKind, Look};

use crate::gbnf::{Expr, Grammar};
use crate::json_text::{any_canonical_char, chars_expr, encode_str};
use crate::recognize::Recognizer;

/// The largest repetition count accepted in a pattern (`x{n}`, `x{m,n}`).
const MAX_COUNT: u64 = 100_000;

/// llama.cpp's limit on repetition bounds and on rules generated per repetition.
const LLAMA_MAX_REPEAT: u64 = 2000;

/// Most nodes in a produced expression.
const MAX_NODES: usize = 100_000;

/// Deepest produced expression.
const MAX_DEPTH: usize = 1000;

/// Most top-level branches after distributing anchored alternations.
const MAX_BRANCHES: usize = 256;

/// Most chunks one counted repetition is split into.
const MAX_CHUNKS: u64 = 100;

/// regex-syntax's nesting limit (groups, classes, repetitions).
const NEST_LIMIT: u32 = 200;

/// Why a pattern has no expression.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PatternError {
    /// Not an ECMA-262 regular expression (Unicode mode).
    #[error("invalid pattern: {0}")]
    Invalid(String),
    /// A valid pattern using something this translation does not express.
    #[error("unsupported in patterns: {0}")]
    Unsupported(String),
    /// The pattern matches no string at all.
    #[error("the pattern matches no string")]
    Empty,
}

/// An expression over the contents of a JSON string (between, not including, the quotes)
/// that accepts exactly the canonical spellings of the strings `pattern` matches, with
/// JSON Schema's search semantics (unanchored unless `^` / `$` say otherwise).
///
/// ```
/// use gbnfc_compiler::gbnf::{check, is_clean};
/// use gbnfc_compiler::pattern::{pattern_expr, pattern_grammar};
/// use gbnfc_compiler::recognize::Recognizer;
///
/// let g = pattern_grammar(pattern_expr(r"^\d{3}-\d{4}$").unwrap());
/// assert!(is_clean(&check(&g)));
/// let r = Recognizer::new(&g).unwrap();
/// assert!(r.recognize("555-1234").accepted);
/// assert!(!r.recognize("555-12345").accepted);
/// ```
pub fn pattern_expr(pattern: &str) -> Result<Expr, PatternError> {
    match plain_text(pattern) {
        Some((text, start, end)) if !text.is_empty() => Ok(text_expr(text, start, end)),
        _ => parsed_pattern_expr(pattern),
    }
}

/// A pattern with no ECMA syntax outside its anchors, the commonest kind (`^x-`, `_id$`,
/// `99`): the text to find, whether it must start the string (`^`) and whether it must
/// end it (`$`).
fn plain_text(pattern: &str) -> Option<(&str, bool, bool)> {
    /// What ECMA reads as syntax outside a class.
    const SYNTAX: &[char] = &[
        '^', '$', '\\', '.', '*', '+', '?', '(', ')', '[', ']', '{', '}', '|',
    ];
    let (start, rest) = match pattern.strip_prefix('^') {
        Some(rest) => (true, rest),
        None => (false, pattern),
    };
    let (end, text) = match rest.strip_suffix('$') {
        Some(text) => (true, text),
        None => (false, rest),
    };
    (!text.contains(SYNTAX)).then_some((text, start, end))
}

/// The expression of a plain-text pattern ([`plain_text`], non-empty `text`), built
/// directly: what [`parsed_pattern_expr`] makes of it, without a regex parser.
fn text_expr(text: &str, start: bool, end: bool) -> Expr {
    let mut seq = Vec::with_capacity(3);
    if !start {
        seq.push(any_star());
    }
    seq.push(Expr::literal(encode_str(text)));
    if !end {
        seq.push(any_star());
    }
    Expr::seq(seq)
}

/// [`pattern_expr`] through regex-syntax's parser: any pattern.
fn parsed_pattern_expr(pattern: &str) -> Result<Expr, PatternError> {
    let translated = to_regex_syntax(pattern)?;
    let hir = parser().parse(&translated).map_err(syntax_error)?;
    let expr = search_expr(&hir)?;
    if expr.depth() > MAX_DEPTH {
        return Err(PatternError::Unsupported(format!(
            "the pattern nests too deeply (expression depth above {MAX_DEPTH})"
        )));
    }
    guard_size(&expr)?;
    Ok(expr)
}

/// regex-syntax's parser as the translation needs it: Unicode mode, every flag off.
fn parser() -> regex_syntax::Parser {
    regex_syntax::ParserBuilder::new()
        .unicode(true)
        .utf8(true)
        .case_insensitive(false)
        .multi_line(false)
        .dot_matches_new_line(false)
        .crlf(false)
        .ignore_whitespace(false)
        .octal(false)
        .nest_limit(NEST_LIMIT)
        .build()
}

/// A test of whole strings (property names, say) against a pattern, with search
/// semantics like [`pattern_expr`]'s: a plain-text pattern, the commonest kind in
/// `patternProperties` (`^x-`, `_id$`), is a string comparison; any other runs a
/// [`Recognizer`] over the pattern's expression.
pub enum PatternTest {
    /// The pattern is `text`, perhaps anchored at the start and the end.
    Text {
        /// The characters to find.
        text: String,
        /// `^`: only at the start of the string.
        start: bool,
        /// `$`: only at the end of the string.
        end: bool,
    },
    /// A recognizer of the canonical spellings [`pattern_expr`] accepts.
    Grammar(Recognizer),
}

impl PatternTest {
    /// The test for `pattern`, whose expression is `expr` (from [`pattern_expr`]).
    ///
    /// # Errors
    /// When `expr` cannot be recognized (too large to lower).
    pub fn new(pattern: &str, expr: &Expr) -> Result<Self, crate::recognize::RecognizeError> {
        if let Some((text, start, end)) = plain_text(pattern) {
            return Ok(PatternTest::Text {
                text: text.to_string(),
                start,
                end,
            });
        }
        Recognizer::new(&pattern_grammar(expr.clone())).map(PatternTest::Grammar)
    }

    /// Does the pattern match `name`?
    pub fn matches(&self, name: &str) -> bool {
        match self {
            PatternTest::Text { text, start, end } => match (start, end) {
                (true, true) => name == text,
                (true, false) => name.starts_with(text.as_str()),
                (false, true) => name.ends_with(text.as_str()),
                (false, false) => name.contains(text.as_str()),
            },
            PatternTest::Grammar(recognizer) => recognizer.recognize(&encode_str(name)).accepted,
        }
    }
}

/// Classifies regex-syntax's errors on the translated pattern. The lexer has already
/// refused invalid ECMA syntax, so what is left is mostly a matter of what regex-syntax
/// knows (property names of its Unicode version, its nesting limit).
fn syntax_error(err: regex_syntax::Error) -> PatternError {
    use regex_syntax::ast::ErrorKind as A;
    use regex_syntax::hir::ErrorKind as H;
    match &err {
        regex_syntax::Error::Parse(e) => match e.kind() {
            A::NestLimitExceeded(_) => {
                PatternError::Unsupported(format!("nesting deeper than {NEST_LIMIT}"))
            }
            A::UnsupportedLookAround => PatternError::Unsupported("lookaround".into()),
            A::UnsupportedBackreference => PatternError::Unsupported("backreferences".into()),
            kind => PatternError::Invalid(kind.to_string()),
        },
        regex_syntax::Error::Translate(e) => match e.kind() {
            H::UnicodePropertyNotFound | H::UnicodePropertyValueNotFound => {
                PatternError::Unsupported(format!("Unicode property: {}", e.kind()))
            }
            kind => PatternError::Unsupported(kind.to_string()),
        },
        other => PatternError::Unsupported(other.to_string()),
    }
}

// ---------------------------------------------------------------------------------------
// ECMA-262 (Unicode mode) → regex-syntax.
// ---------------------------------------------------------------------------------------

const DIGIT: &str = "[0-9]";
const NOT_DIGIT: &str = "[^0-9]";
const WORD: &str = "[0-9A-Za-z_]";
const NOT_WORD: &str = "[^0-9A-Za-z_]";
const SPACE: &str = r"[\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
const NOT_SPACE: &str = r"[^\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
const DOT: &str = "[^\\n\\r\u{2028}\u{2029}]";
const ANYTHING: &str = r"[\x{0}-\x{10FFFF}]";
const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";

/// ECMA's syntax characters plus `/`: the identity escapes Unicode mode allows.
const IDENTITY_ESCAPES: &str = "^$\\.*+?()[]{}|/";

/// Flags in force inside a group.
#[derive(Debug, Clone, Copy, Default)]
struct Flags {
    ignore_case: bool,
    dot_all: bool,
    multiline: bool,
}

/// One class atom: a character, or a class escape already written in regex-syntax syntax.
enum Atom {
    Char(char),
    Set(String),
}

/// Rewrites an ECMA-262 pattern (Unicode mode) into regex-syntax's dialect with the same
/// meaning; see the module documentation.
fn to_regex_syntax(pattern: &str) -> Result<String, PatternError> {
    Lexer {
        chars: pattern.chars().collect(),
        pos: 0,
        out: String::with_capacity(pattern.len() * 2),
        flags: vec![Flags::default()],
    }
    .run()
}

struct Lexer {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// One entry per open group, plus the pattern's own.
    flags: Vec<Flags>,
}

fn invalid(msg: impl Into<String>) -> PatternError {
    PatternError::Invalid(msg.into())
}

fn unsupported(msg: impl Into<String>) -> PatternError {
    PatternError::Unsupported(msg.into())
}

fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
    }
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn next_char(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn flags(&self) -> Flags {
        self.flags.last().copied().unwrap_or_default()
    }

    fn run(mut self) -> Result<String, PatternError> {
        // Whether the previous item can take a quantifier.
        let mut quantifiable = false;
        while let Some(c) = self.next_char() {
            match c {
                '\\' => {
                    match self.escape(false)? {
                        Atom::Char(c) => push_char(&mut self.out, c),
                        Atom::Set(set) => self.out.push_str(&set),
                    }
                    quantifiable = true;
                }
                '.' => {
                    let dot = if self.flags().dot_all { ANYTHING } else { DOT };
                    self.out.push_str(dot);
                    quantifiable = true;
                }
                '^' | '$' => {
                    if self.flags().multiline {
                        return Err(unsupported(format!("`{c}` under the multiline flag")));
                    }
                    self.out.push(c);
                    quantifiable = false;
                }
                '(' => {
                    self.group()?;
                    quantifiable = false;
                }
                ')' => {
                    if self.flags.len() <= 1 {
                        return Err(invalid("unmatched `)`"));
                    }
                    self.flags.pop();
                    self.out.push(')');
                    quantifiable = true;
                }
                '[' => {
                    self.class()?;
                    quantifiable = true;
                }
                '|' => {
                    self.out.push('|');
                    quantifiable = false;
                }
                '*' | '+' | '?' => {
                    if !quantifiable {
                        return Err(invalid(format!("nothing to repeat before `{c}`")));
                    }
                    self.out.push(c);
                    self.eat('?');
                    quantifiable = false;
                }
                '{' => {
                    let (min, max) = self.counts()?;
                    if !quantifiable {
                        return Err(invalid("nothing to repeat before `{`"));
                    }
                    match max {
                        Some(max) if max == min => {
                            let _ = write!(self.out, "{{{min}}}");
                        }
                        Some(max) => {
                            let _ = write!(self.out, "{{{min},{max}}}");
                        }
                        None => {
                            let _ = write!(self.out, "{{{min},}}");
                        }
                    }
                    self.eat('?');
                    quantifiable = false;
                }
                '}' | ']' => return Err(invalid(format!("lone `{c}` (escape it as `\\{c}`)"))),
                c => {
                    push_char(&mut self.out, c);
                    quantifiable = true;
                }
            }
        }
        if self.flags.len() > 1 {
            return Err(invalid("unclosed group"));
        }
        Ok(self.out)
    }

    /// `{n}`, `{n,}` or `{n,m}` after the `{`.
    fn counts(&mut self) -> Result<(u64, Option<u64>), PatternError> {
        let bad = || invalid("`{` that does not start a quantifier `{n}`, `{n,}` or `{n,m}`");
        let min = self.decimal().ok_or_else(bad)?;
        let max = if self.eat(',') {
            if self.peek() == Some('}') {
                None
            } else {
                Some(self.decimal().ok_or_else(bad)?)
            }
        } else {
            Some(min)
        };
        if !self.eat('}') {
            return Err(bad());
        }
        if max.is_some_and(|max| max < min) {
            return Err(invalid(format!(
                "repetition minimum {min} above its maximum {}",
                max.unwrap_or(0)
            )));
        }
        if min.max(max.unwrap_or(0)) > MAX_COUNT {
            return Err(unsupported(format!("repetition counts above {MAX_COUNT}")));
        }
        Ok((min, max))
    }

    fn decimal(&mut self) -> Option<u64> {
        let mut value: Option<u64> = None;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            value = Some(
                value
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u64::from(d)),
            );
        }
        value
    }

    /// A group, after its `(`.
    fn group(&mut self) -> Result<(), PatternError> {
        let mut flags = self.flags();
        if self.eat('?') {
            match self.next_char() {
                Some(':') => self.out.push_str("(?:"),
                Some('=' | '!') => return Err(unsupported("lookahead")),
                Some('<') if matches!(self.peek(), Some('=' | '!')) => {
                    return Err(unsupported("lookbehind"))
                }
                Some('<') => {
                    let mut name_len = 0usize;
                    loop {
                        match self.next_char() {
                            Some('>') => break,
                            Some(c)
                                if c == '$'
                                    || c == '_'
                                    || c.is_alphabetic()
                                    || (name_len > 0 && c.is_alphanumeric()) =>
                            {
                                name_len += 1;
                            }
                            _ => return Err(invalid("malformed group name")),
                        }
                    }
                    if name_len == 0 {
                        return Err(invalid("empty group name"));
                    }
                    self.out.push_str("(?:");
                }
                Some('i' | 'm' | 's' | '-') => {
                    self.pos -= 1;
                    flags = self.modifiers(flags)?;
                }
                _ => {
                    return Err(invalid(
                        "`(?` must be followed by `:`, `=`, `!`, `<` or modifiers",
                    ))
                }
            }
        } else {
            self.out.push_str("(?:");
        }
        self.flags.push(flags);
        Ok(())
    }

    /// ES2025 modifiers `(?ims-ims:`, after the `(?`.
    fn modifiers(&mut self, mut flags: Flags) -> Result<Flags, PatternError> {
        let mut seen = String::new();
        let mut adding = true;
        let mut case: Option<bool> = None;
        loop {
            match self.next_char() {
                Some(':') => break,
                Some('-') if adding => adding = false,
                Some(c @ ('i' | 'm' | 's')) => {
                    if seen.contains(c) {
                        return Err(invalid(format!("modifier `{c}` given twice")));
                    }
                    seen.push(c);
                    match c {
                        'i' => {
                            flags.ignore_case = adding;
                            case = Some(adding);
                        }
                        'm' => flags.multiline = adding,
                        _ => flags.dot_all = adding,
                    }
                }
                Some(')') => {
                    return Err(invalid(
                        "flag groups like `(?i)` are not ECMA-262; use a modifier group `(?i:…)`",
                    ))
                }
                _ => return Err(invalid("malformed modifier group")),
            }
        }
        if seen.is_empty() {
            return Err(invalid("empty modifier group"));
        }
        self.out.push_str(match case {
            Some(true) => "(?i:",
            Some(false) => "(?-i:",
            None => "(?:",
        });
        Ok(flags)
    }

    /// A character class, after its `[`.
    fn class(&mut self) -> Result<(), PatternError> {
        let negated = self.eat('^');
        let mut body = String::new();
        loop {
            match self.peek() {
                None => return Err(invalid("unterminated character class")),
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            let first = self.class_atom()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let last = self.class_atom()?;
                match (first, last) {
                    (Atom::Char(lo), Atom::Char(hi)) => {
                        if lo > hi {
                            return Err(invalid(format!(
                                "class range out of order: U+{:04X}-U+{:04X}",
                                u32::from(lo),
                                u32::from(hi)
                            )));
                        }
                        push_char(&mut body, lo);
                        body.push('-');
                        push_char(&mut body, hi);
                    }
                    _ => return Err(invalid("a class escape cannot bound a range")),
                }
            } else {
                match first {
                    Atom::Char(c) => push_char(&mut body, c),
                    Atom::Set(set) => body.push_str(&set),
                }
            }
        }
        if body.is_empty() {
            self.out.push_str(if negated { ANYTHING } else { NOTHING });
        } else {
            self.out.push('[');
            if negated {
                self.out.push('^');
            }
            self.out.push_str(&body);
            self.out.push(']');
        }
        Ok(())
    }

    fn class_atom(&mut self) -> Result<Atom, PatternError> {
        match self.next_char() {
            Some('\\') => self.escape(true),
            Some(c) => Ok(Atom::Char(c)),
            None => Err(invalid("unterminated character class")),
        }
    }

    /// An escape, after its `\`.
    fn escape(&mut self, in_class: bool) -> Result<Atom, PatternError> {
        let Some(c) = self.next_char() else {
            return Err(invalid("`\\` at the end of the pattern"));
        };
        let set = |s: &str| Ok(Atom::Set(s.to_string()));
        match c {
            'd' => set(DIGIT),
            'D' => set(NOT_DIGIT),
            'w' => set(WORD),
            'W' => set(NOT_WORD),
            's' => set(SPACE),
            'S' => set(NOT_SPACE),
            'p' | 'P' => self.property(c),
            'b' if in_class => Ok(Atom::Char('\u{8}')),
            'b' | 'B' if !in_class => Err(unsupported(format!("word boundary `\\{c}`"))),
            '-' if in_class => Ok(Atom::Char('-')),
            'f' => Ok(Atom::Char('\u{c}')),
            'n' => Ok(Atom::Char('\n')),
            'r' => Ok(Atom::Char('\r')),
            't' => Ok(Atom::Char('\t')),
            'v' => Ok(Atom::Char('\u{b}')),
            'c' => match self.next_char() {
                Some(l) if l.is_ascii_alphabetic() => Ok(Atom::Char(char::from((l as u8) % 32))),
                _ => Err(invalid("`\\c` must be followed by an ASCII letter")),
            },
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => Ok(Atom::Char('\0')),
            '0' => Err(invalid("octal escapes are not allowed in Unicode mode")),
            '1'..='9' if !in_class => Err(unsupported("backreferences")),
            'k' if !in_class => Err(unsupported("named backreferences")),
            'x' => {
                let hi = self.next_char().and_then(|c| c.to_digit(16));
                let lo = self.next_char().and_then(|c| c.to_digit(16));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => char::from_u32(hi * 16 + lo)
                        .map(Atom::Char)
                        .ok_or_else(|| invalid("bad `\\x` escape")),
                    _ => Err(invalid("`\\x` must be followed by two hex digits")),
                }
            }
            'u' => self.unicode_escape().map(Atom::Char),
            c if IDENTITY_ESCAPES.contains(c) => Ok(Atom::Char(c)),
            c => Err(invalid(format!(
                "`\\{c}` is not an escape in ECMA-262 Unicode mode"
            ))),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            value = value * 16 + self.peek()?.to_digit(16)?;
            self.pos += 1;
        }
        Some(value)
    }

    /// `\uHHHH` (a surrogate pair as two escapes) or `\u{H…}`, after the `u`.
    fn unicode_escape(&mut self) -> Result<char, PatternError> {
        let value = if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.pos += 1;
                digits += 1;
                value = value.saturating_mul(16).saturating_add(d);
            }
            if digits == 0 || !self.eat('}') || value > 0x10FFFF {
                return Err(invalid("malformed `\\u{…}` escape"));
            }
            value
        } else {
            let Some(first) = self.hex4() else {
                return Err(invalid(
                    "`\\u` must be followed by four hex digits or `{…}`",
                ));
            };
            if (0xD800..0xDC00).contains(&first)
                && self.peek() == Some('\\')
                && self.peek_at(1) == Some('u')
            {
                let save = self.pos;
                self.pos += 2;
                match self.hex4() {
                    Some(second) if (0xDC00..0xE000).contains(&second) => {
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    _ => {
                        self.pos = save;
                        first
                    }
                }
            } else {
                first
            }
        };
        char::from_u32(value).ok_or_else(|| unsupported("lone surrogates"))
    }

    /// `\p{…}` or `\P{…}`, after the letter.
    fn property(&mut self, letter: char) -> Result<Atom, PatternError> {
        if !self.eat('{') {
            return Err(invalid(format!("`\\{letter}` must be followed by `{{…}}`")));
        }
        let mut name = String::new();
        loop {
            match self.next_char() {
                Some('}') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '=' => name.push(c),
                _ => return Err(invalid("malformed Unicode property escape")),
            }
        }
        if name.is_empty() {
            return Err(invalid("empty Unicode property escape"));
        }
        Ok(Atom::Set(format!("\\{letter}{{{name}}}")))
    }
}

// ---------------------------------------------------------------------------------------
// HIR → Expr.
// ---------------------------------------------------------------------------------------

/// One top-level branch: optionally anchored at either end, with anchor-free items.
#[derive(Default, Clone)]
struct Branch<'h> {
    start: bool,
    end: bool,
    items: Vec<&'h Hir>,
}

/// Any run of characters at an unanchored end: a reference to the shared rule
/// [`ANY_CHAR_RULE`] rather than its body, which every such end would repeat.
fn any_star() -> Expr {
    Expr::repeat(Expr::rule(ANY_CHAR_RULE), 0, None)
}

/// The rule the expressions of [`pattern_expr`] refer to for any one character in its
/// canonical spelling ([`any_canonical_char`]): the compiler's shared `cchar` block.
pub const ANY_CHAR_RULE: &str = "cchar";

/// Does `expr` (from [`pattern_expr`]) refer to [`ANY_CHAR_RULE`]?
pub fn refers_to_any_char(expr: &Expr) -> bool {
    let mut found = false;
    expr.walk(|e| found |= matches!(e, Expr::Ref { name, .. } if name == ANY_CHAR_RULE));
    found
}

/// A grammar whose `root` is `expr` (from [`pattern_expr`]), with [`ANY_CHAR_RULE`]
/// defined when `expr` refers to it.
pub fn pattern_grammar(expr: Expr) -> Grammar {
    let any = refers_to_any_char(&expr);
    let mut grammar = Grammar::default();
    grammar.push("root", expr);
    if any {
        grammar.push(ANY_CHAR_RULE, any_canonical_char());
    }
    grammar
}

/// Whether `h` matches the empty text.
fn nullable(h: &Hir) -> bool {
    min_len(h) == Some(0)
}

/// The length in characters of the shortest text `h` matches; `None` when it matches
/// nothing. (regex-syntax's `minimum_len` is `None` for `[]*` and `(|[])`, which match
/// the empty text.)
fn min_len(h: &Hir) -> Option<u64> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(0),
        HirKind::Literal(hir::Literal(bytes)) => {
            Some(std::str::from_utf8(bytes).map_or(bytes.len(), |s| s.chars().count()) as u64)
        }
        HirKind::Class(hir::Class::Unicode(c)) => (!c.ranges().is_empty()).then_some(1),
        HirKind::Class(hir::Class::Bytes(c)) => (!c.ranges().is_empty()).then_some(1),
        HirKind::Capture(c) => min_len(&c.sub),
        HirKind::Concat(items) => items
            .iter()
            .try_fold(0u64, |n, item| Some(n.saturating_add(min_len(item)?))),
        HirKind::Alternation(arms) => arms.iter().filter_map(min_len).min(),
        HirKind::Repetition(r) => {
            if r.max == Some(0) {
                return Some(0);
            }
            match min_len(&r.sub) {
                Some(n) => Some(n.saturating_mul(u64::from(r.min))),
                None if r.min == 0 => Some(0),
                None => None,
            }
        }
    }
}

/// Whether every text `h` matches is empty (vacuously when it matches nothing).
fn only_empty_texts(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(_) => false,
        HirKind::Class(_) => min_len(h).is_none(),
        HirKind::Capture(c) => only_empty_texts(&c.sub),
        HirKind::Concat(items) => {
            items.iter().all(only_empty_texts) || items.iter().any(|i| min_len(i).is_none())
        }
        HirKind::Alternation(arms) => arms.iter().all(only_empty_texts),
        HirKind::Repetition(r) => r.max == Some(0) || only_empty_texts(&r.sub),
    }
}

/// Search semantics: `Σ* R Σ*`, with the `Σ*` dropped where an anchor stands.
fn search_expr(hir: &Hir) -> Result<Expr, PatternError> {
    let mut arms = Vec::new();
    for branch in expand(hir)? {
        let mut items = Vec::new();
        let mut empty = false;
        for item in &branch.items {
            match expr(item)? {
                Some(e) => items.push(e),
                None => empty = true,
            }
        }
        if empty {
            continue;
        }
        let matches_empty = branch.items.iter().all(|h| nullable(h));
        if matches_empty && !(branch.start && branch.end) {
            // `R Σ*`, `Σ* R` and `Σ* R Σ*` are all `Σ*` when R matches the empty text.
            return Ok(any_star());
        }
        let mut seq = Vec::new();
        if !branch.start {
            seq.push(any_star());
        }
        seq.extend(items);
        if !branch.end {
            seq.push(any_star());
        }
        arms.push(Expr::seq(seq));
    }
    if arms.is_empty() {
        return Err(PatternError::Empty);
    }
    Ok(Expr::alt(arms))
}

/// Whether the items can only match the empty text; `Some(false)` when they cannot match
/// it at all; `None` when they may match both.
fn only_empty(items: &[&Hir]) -> Option<bool> {
    if items.iter().all(|h| only_empty_texts(h)) {
        Some(true)
    } else if items.iter().any(|h| !nullable(h)) {
        Some(false)
    } else {
        None
    }
}

/// Splits `h` into branches at its anchors (distributing alternations that contain them).
fn expand(h: &Hir) -> Result<Vec<Branch<'_>>, PatternError> {
    if h.properties().look_set().is_empty() {
        return Ok(vec![Branch {
            items: vec![h],
            ..Branch::default()
        }]);
    }
    match h.kind() {
        HirKind::Look(Look::Start) => Ok(vec![Branch {
            start: true,
            ..Branch::default()
        }]),
        HirKind::Look(Look::End) => Ok(vec![Branch {
            end: true,
            ..Branch::default()
        }]),
        HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
        HirKind::Capture(c) => expand(&c.sub),
        HirKind::Alternation(arms) => {
            let mut out = Vec::new();
            for arm in arms {
                out.extend(expand(arm)?);
                if out.len() > MAX_BRANCHES {
                    return Err(unsupported("too many anchored alternatives"));
                }
            }
            Ok(out)
        }
        HirKind::Concat(items) => {
            let mut acc = vec![Branch::default()];
            for item in items {
                let parts = expand(item)?;
                let mut next = Vec::new();
                for before in &acc {
                    for part in &parts {
                        if part.start && !before.items.is_empty() {
                            match only_empty(&before.items) {
                                Some(true) => {}
                                Some(false) => continue, // `a^`: never matches.
                                None => return Err(unsupported("`^` after something optional")),
                            }
                        }
                        if before.end && !part.items.is_empty() {
                            match only_empty(&part.items) {
                                Some(true) => {}
                                Some(false) => continue, // `$a`: never matches.
                                None => return Err(unsupported("`$` before something optional")),
                            }
                        }
                        let mut items = before.items.clone();
                        items.extend(part.items.iter().copied());
                        next.push(Branch {
                            start: before.start || part.start,
                            end: before.end || part.end,
                            items,
                        });
                    }
                }
                if next.len() > MAX_BRANCHES {
                    return Err(unsupported("too many anchored alternatives"));
                }
                acc = next;
            }
            Ok(acc)
        }
        HirKind::Repetition(_) => Err(unsupported("an anchor inside a repetition")),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => Ok(vec![Branch {
            items: vec![h],
            ..Branch::default()
        }]),
    }
}

/// The expression for an anchor-free `h`; `None` when it matches nothing.
fn expr(h: &Hir) -> Result<Option<Expr>, PatternError> {
    match h.kind() {
        HirKind::Empty => Ok(Some(Expr::empty())),
        HirKind::Literal(hir::Literal(bytes)) => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some(Expr::literal(encode_str(text)))),
            Err(_) => Err(unsupported("a literal that is not UTF-8")),
        },
        HirKind::Class(class) => class_expr(class),
        HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
        HirKind::Capture(c) => expr(&c.sub),
        HirKind::Concat(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match expr(item)? {
                    Some(e) => out.push(e),
                    None => return Ok(None),
                }
            }
            Ok(Some(Expr::seq(out)))
        }
        HirKind::Alternation(arms) => {
            let mut out = Vec::with_capacity(arms.len());
            for arm in arms {
                out.extend(expr(arm)?);
            }
            Ok(alternatives(out))
        }
        HirKind::Repetition(r) => repetition(r),
    }
}

/// An alternation; an empty arm becomes `?` on the others.
fn alternatives(arms: Vec<Expr>) -> Option<Expr> {
    let has_empty = arms.iter().any(|a| *a == Expr::empty());
    let rest: Vec<Expr> = arms.into_iter().filter(|a| *a != Expr::empty()).collect();
    match (rest.is_empty(), has_empty) {
        (true, true) => Some(Expr::empty()),
        (true, false) => None,
        (false, false) => Some(Expr::alt(rest)),
        (false, true) => Some(Expr::repeat(atom(Expr::alt(rest)), 0, Some(1))),
    }
}

fn class_expr(class: &hir::Class) -> Result<Option<Expr>, PatternError> {
    let ranges = class_ranges(class)?;
    if let Some(known) = known_class_expr(&ranges) {
        return Ok(Some(known));
    }
    Ok(chars_expr(&ranges))
}

/// The expression of a class the translation writes for ECMA's `.`, `\D`, `\W`, `\s`
/// or `\S` when `ranges` is exactly its set: these are large sets, slow to spell out, so
/// each is spelled once per process and copied.
fn known_class_expr(ranges: &[(u32, u32)]) -> Option<Expr> {
    /// A set of characters (ranges of scalar values) and its expression.
    type Spelled = (Vec<(u32, u32)>, Expr);
    static KNOWN: LazyLock<Vec<Spelled>> = LazyLock::new(|| {
        [DOT, NOT_DIGIT, NOT_WORD, SPACE, NOT_SPACE]
            .iter()
            .filter_map(|class| {
                let hir = parser().parse(class).ok()?;
                let HirKind::Class(class) = hir.kind() else {
                    return None;
                };
                let ranges = class_ranges(class).ok()?;
                let expr = chars_expr(&ranges)?;
                Some((ranges, expr))
            })
            .collect()
    });
    KNOWN
        .iter()
        .find(|(known, _)| known.as_slice() == ranges)
        .map(|(_, expr)| expr.clone())
}

/// A class's ranges of scalar values.
fn class_ranges(class: &hir::Class) -> Result<Vec<(u32, u32)>, PatternError> {
    Ok(match class {
        hir::Class::Unicode(c) => c
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        hir::Class::Bytes(c) => {
            if c.ranges().iter().any(|r| r.end() > 0x7F) {
                return Err(unsupported("a byte class beyond ASCII"));
            }
            c.ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect()
        }
    })
}

/// `L(h)` without the empty string; `None` when that is empty.
fn nonempty(h: &Hir) -> Result<Option<Expr>, PatternError> {
    if !nullable(h) {
        return expr(h);
    }
    match h.kind() {
        HirKind::Empty => Ok(None),
        HirKind::Literal(_) | HirKind::Class(_) => expr(h),
        HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
        HirKind::Capture(c) => nonempty(&c.sub),
        HirKind::Alternation(arms) => {
            let mut out = Vec::with_capacity(arms.len());
            for arm in arms {
                out.extend(nonempty(arm)?);
            }
            // No arm is empty any more.
            Ok(alternatives(out))
        }
        HirKind::Concat(items) => {
            // Every item is nullable (the concatenation is). A non-empty text starts with a
            // non-empty match of some item i, the items before it matching the empty text.
            let mut whole = Vec::with_capacity(items.len());
            for item in items {
                match expr(item)? {
                    Some(e) => whole.push(e),
                    None => return Ok(None),
                }
            }
            let mut arms = Vec::new();
            let mut nodes = 0usize;
            for (i, item) in items.iter().enumerate() {
                if let Some(head) = nonempty(item)? {
                    let arm =
                        Expr::seq(std::iter::once(head).chain(whole[i + 1..].iter().cloned()));
                    nodes = nodes.saturating_add(count_nodes(&arm));
                    if nodes > MAX_NODES {
                        return Err(too_large());
                    }
                    arms.push(arm);
                }
            }
            Ok(alternatives(arms))
        }
        HirKind::Repetition(r) => {
            if r.max == Some(0) {
                return Ok(None);
            }
            if nullable(&r.sub) {
                // x{m,n} = x'{0,n} when x matches the empty text; without it, x'{1,n}.
                match nonempty(&r.sub)? {
                    Some(body) => counted(body, 1, r.max.map(u64::from)).map(Some),
                    None => Ok(None),
                }
            } else {
                // Nullable only through a zero minimum.
                match expr(&r.sub)? {
                    Some(body) => counted(body, 1, r.max.map(u64::from)).map(Some),
                    None => Ok(None),
                }
            }
        }
    }
}

fn repetition(r: &hir::Repetition) -> Result<Option<Expr>, PatternError> {
    if r.max == Some(0) {
        return Ok(Some(Expr::empty()));
    }
    let max = r.max.map(u64::from);
    if nullable(&r.sub) {
        // x{m,n} = x'{0,n} where x' is x without the empty text.
        return match nonempty(&r.sub)? {
            Some(body) => counted(body, 0, max).map(Some),
            None => Ok(Some(Expr::empty())),
        };
    }
    match expr(&r.sub)? {
        Some(body) => counted(body, u64::from(r.min), max).map(Some),
        None if r.min == 0 => Ok(Some(Expr::empty())),
        None => Ok(None),
    }
}

fn too_large() -> PatternError {
    unsupported(format!(
        "the pattern's grammar would exceed {MAX_NODES} expression nodes"
    ))
}

/// `e` as an operand of a repetition operator: sequences, alternations and repetitions
/// grouped.
fn atom(e: Expr) -> Expr {
    match e {
        e @ (Expr::Seq(_) | Expr::Alt(_) | Expr::Repeat { .. }) => Expr::Group(Box::new(e)),
        e => e,
    }
}

/// Rules llama.cpp creates while parsing `e` (its `handle_repetitions` bookkeeping, as
/// replayed by `gbnf::check`).
fn symbols(e: &Expr) -> u64 {
    match e {
        Expr::Alt(items) | Expr::Seq(items) => {
            items.iter().fold(0u64, |n, i| n.saturating_add(symbols(i)))
        }
        Expr::Group(inner) => symbols(inner).saturating_add(1),
        Expr::Repeat { expr, min, max, .. } => {
            symbols(expr).saturating_add(max.map_or(1, |max| u64::from(max.saturating_sub(*min))))
        }
        _ => 0,
    }
}

/// llama.cpp's `n_prev_rules` for an atom about to be repeated.
fn prev_rules(atom: &Expr) -> u64 {
    match atom {
        Expr::Group(_) => symbols(atom).max(1),
        _ => 1,
    }
}

/// `body{min,max}` (`max` `None`: unbounded) for a `body` that does not match the empty
/// text, split so that every repetition passes llama.cpp's limits.
fn counted(body: Expr, min: u64, max: Option<u64>) -> Result<Expr, PatternError> {
    if min == 1 && max == Some(1) {
        return Ok(body);
    }
    if max == Some(0) {
        return Ok(Expr::empty());
    }
    let body = atom(body);
    let per = LLAMA_MAX_REPEAT / prev_rules(&body);
    if per == 0 {
        return Err(unsupported(
            "a repetition of a group too complex for llama.cpp's repetition limits",
        ));
    }
    let fits = |n: u64| u32::try_from(n).ok().filter(|&n| u64::from(n) <= per);
    // One operator when the counts allow it.
    let total = max.unwrap_or(min.max(1));
    if let (Some(lo), Some(hi)) = (fits(min), fits(total)) {
        // `total` is `max` when there is one.
        return Ok(Expr::repeat(body, lo, max.map(|_| hi)));
    }
    let optional = max.map(|max| max - min);
    let chunks = min.div_ceil(per) + optional.map_or(1, |k| k.div_ceil(per));
    if chunks > MAX_CHUNKS
        || count_nodes(&body)
            .saturating_mul(usize::try_from(chunks).unwrap_or(usize::MAX))
            .saturating_mul(2)
            > MAX_NODES
    {
        return Err(too_large());
    }
    let mut parts = Vec::new();
    let mut left = min;
    while left > 0 {
        let n = left.min(per);
        parts.push(exactly(&body, n)?);
        left -= n;
    }
    match optional {
        None => parts.push(Expr::repeat(body, 0, None)),
        Some(k) => parts.push(at_most(&body, k, per)?),
    }
    Ok(Expr::seq(parts))
}

/// `body{n}` for `1 <= n <= per`.
fn exactly(body: &Expr, n: u64) -> Result<Expr, PatternError> {
    if n == 1 {
        return Ok(body.clone());
    }
    let n = u32::try_from(n).map_err(|_| too_large())?;
    Ok(Expr::repeat(body.clone(), n, Some(n)))
}

/// `body{0,k}` with no repetition count above `per`, unambiguously: splitting it into
/// `body{0,per} body{0,per} …` would let a text split among the chunks in many ways, which
/// makes Earley recognition (and llama.cpp's stacks) blow up. Instead, with
/// `k = levels × per + rem`: `O₀ = body{0,rem}` and `Oⱼ₊₁ = body{0,per-1} | body{per} Oⱼ`,
/// whose alternatives cover disjoint counts.
fn at_most(body: &Expr, k: u64, per: u64) -> Result<Expr, PatternError> {
    let (levels, rem) = (k / per, k % per);
    let upto = |n: u64| -> Result<Expr, PatternError> {
        Ok(match n {
            0 => Expr::empty(),
            n => Expr::repeat(
                body.clone(),
                0,
                Some(u32::try_from(n).map_err(|_| too_large())?),
            ),
        })
    };
    let mut e = upto(rem)?;
    for _ in 0..levels {
        let more = Expr::seq([exactly(body, per)?, e]);
        e = alternatives(vec![more, upto(per - 1)?]).unwrap_or_else(Expr::empty);
    }
    Ok(e)
}

/// The number of nodes in `e`, stopping early past [`MAX_NODES`].
fn count_nodes(e: &Expr) -> usize {
    let mut n = 0usize;
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        n += 1;
        if n > MAX_NODES {
            break;
        }
        stack.extend(e.children());
    }
    n
}

fn guard_size(e: &Expr) -> Result<(), PatternError> {
    if count_nodes(e) > MAX_NODES {
        Err(too_large())
    } else {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::*;

    #[test]
    fn plain_text_patterns_skip_the_parser_and_get_the_same_expression() {
        for pattern in [
            "99",
            "^x-",
            "_id$",
            "^exact$",
            "a-b c/d",
            "say \"hi\"",
            "tab\there",
            "ünï",
            "😀",
            "^-$",
            "x,y:z",
            "=&%#@!~`'<>;",
        ] {
            assert!(plain_text(pattern).is_some(), "{pattern}");
            assert_eq!(
                pattern_expr(pattern).unwrap(),
                parsed_pattern_expr(pattern).unwrap(),
                "{pattern}"
            );
        }
        // Syntax, or nothing to find between the anchors: the parser's.
        for pattern in [
            "a.b", "a|b", "^$", "", "^", "$", "a\\.b", "(a)", "a{2}", "[ab]", "a+",
        ] {
            assert!(
                plain_text(pattern).is_none_or(|(text, ..)| text.is_empty()),
                "{pattern}"
            );
        }
    }

    #[test]
    fn lexer_spells_out_ecma_meanings() {
        let cases = [
            (r"^\d$", "^[0-9]$"),
            (r"a.b", "a[^\\n\\r\u{2028}\u{2029}]b"),
            (r"(?s:.)", r"(?:[\x{0}-\x{10FFFF}])"),
            (r"[]", r"[^\x{0}-\x{10FFFF}]"),
            (r"[^]", r"[\x{0}-\x{10FFFF}]"),
            (r"[a-z-]", r"[a-z\x{2D}]"),
            (r"[[&&]", r"[\x{5B}\x{26}\x{26}]"),
            (r"[\b]", r"[\x{8}]"),
            (r"\cJ\0\x41\u0042\u{43}", r"\x{A}\x{0}ABC"),
            (r"\uD83D\uDE00", r"\x{1F600}"),
            (r"(a)(?<n>b)(?:c)", "(?:a)(?:b)(?:c)"),
            (r"(?i:a)(?-i:b)", "(?i:a)(?-i:b)"),
            (r"a{2}b{2,}c{2,3}?d*?", "a{2}b{2,}c{2,3}d*"),
            (r"\/\.\p{L}\P{Lu}", r"\x{2F}\x{2E}\p{L}\P{Lu}"),
        ];
        for (ecma, expected) in cases {
            assert_eq!(to_regex_syntax(ecma).unwrap(), expected, "{ecma}");
        }
    }

    #[test]
    fn known_classes_are_spelled_as_chars_expr_spells_them() {
        // `.`, `\D`, `\W`, `\s`, `\S`: each found, and a copy of what chars_expr builds.
        for pattern in [".", r"\D", r"\W", r"\s", r"\S"] {
            let hir = parser().parse(&to_regex_syntax(pattern).unwrap()).unwrap();
            let HirKind::Class(class) = hir.kind() else {
                panic!("{pattern} is no class");
            };
            let ranges = class_ranges(class).unwrap();
            assert_eq!(known_class_expr(&ranges), chars_expr(&ranges), "{pattern}");
            assert!(known_class_expr(&ranges).is_some(), "{pattern}");
        }
        // Other classes are spelled afresh.
        assert_eq!(known_class_expr(&[(0x61, 0x7A)]), None);
    }

    #[test]
    fn text_patterns_match_names_as_their_grammars_do() {
        let patterns = ["a", "^x-", "_id$", "^$", "^", "$", "", "^é!$", "b/c", "-"];
        let names = [
            "", "a", "x-a", "ax-", "user_id", "_idx", "é!", "é!x", "b/c", "-",
        ];
        for pattern in patterns {
            let expr = pattern_expr(pattern).unwrap();
            let test = PatternTest::new(pattern, &expr).unwrap();
            assert!(matches!(test, PatternTest::Text { .. }), "{pattern}");
            let by_grammar = PatternTest::Grammar(Recognizer::new(&pattern_grammar(expr)).unwrap());
            for name in names {
                assert_eq!(
                    test.matches(name),
                    by_grammar.matches(name),
                    "{pattern:?} on {name:?}"
                );
            }
        }
        for pattern in [r"a\$", "a.", "(a)", "a|b", "^a+$"] {
            let test = PatternTest::new(pattern, &pattern_expr(pattern).unwrap()).unwrap();
            assert!(matches!(test, PatternTest::Grammar(_)), "{pattern}");
        }
    }

    #[test]
    fn lexer_classifies_errors() {
        let invalid = [
            r"\a",
            r"a{",
            r"a}",
            r"]",
            r"a**",
            r"(?i)a",
            r"[z-a]",
            r"[\d-z]",
            r"(a",
            r"a)",
            r"\c1",
            r"\x4",
            r"\u12",
            r"\u{110000}",
            r"\01",
            r"*a",
            r"^*",
            r"a{3,2}",
            r"[a",
            r"\",
            r"\p",
            r"(?<>a)",
            r"(?ii:a)",
            r"(?-:a)",
            r"\-",
        ];
        for p in invalid {
            assert!(
                matches!(pattern_expr(p), Err(PatternError::Invalid(_))),
                "{p}: {:?}",
                pattern_expr(p)
            );
        }
        let unsupported = [
            r"a(?=b)",
            r"a(?!b)",
            r"(?<=a)b",
            r"(?<!a)b",
            r"(a)\1",
            r"(?<n>a)\k<n>",
            r"\bword",
            r"a\B",
            r"(?m:^a)",
            r"\uD800",
            r"a{100001}",
            r"(?:^)?b",
            r"(^a)*",
            r"a*^b",
            r"\p{NotAProperty}",
        ];
        for p in unsupported {
            assert!(
                matches!(pattern_expr(p), Err(PatternError::Unsupported(_))),
                "{p}: {:?}",
                pattern_expr(p)
            );
        }
        for p in [r"[]", r"a[]", r"a^b", r"a$b", r"^[^\s\S]$"] {
            assert_eq!(pattern_expr(p), Err(PatternError::Empty), "{p}");
        }
    }

    #[test]
    fn llama_bookkeeping_matches_check() {
        // `symbols` / `prev_rules` must agree with `gbnf::check`: a repetition right at the
        // limit passes, one over fails.
        let group = atom(Expr::seq([
            Expr::literal("a"),
            Expr::repeat(Expr::literal("b"), 1, Some(5)),
        ]));
        let n = prev_rules(&group);
        assert_eq!(n, 5);
        let ok = Expr::repeat(group.clone(), 0, Some(u32::try_from(2000 / n).unwrap()));
        let bad = Expr::repeat(group, 0, Some(u32::try_from(2000 / n + 1).unwrap()));
        let clean = |e: Expr| {
            let mut g = crate::gbnf::Grammar::default();
            g.push("root", e);
            crate::gbnf::is_clean(&crate::gbnf::check(&g))
        };
        assert!(clean(ok));
        assert!(!clean(bad));
    }

    /// A random pattern in the common subset of ECMA and regex-syntax syntax.
    fn random_pattern(rng: &mut rand_chacha::ChaCha8Rng, depth: u32) -> String {
        use rand::Rng;
        let mut out = String::new();
        let branches = rng.random_range(1..=if depth == 0 { 3 } else { 2 });
        for b in 0..branches {
            if b > 0 {
                out.push('|');
            }
            // Anchors mostly at the ends of top-level branches, sometimes anywhere.
            let anchor_odds = if depth == 0 { 0.45 } else { 0.05 };
            if rng.random_bool(anchor_odds) {
                out.push('^');
            }
            for _ in 0..rng.random_range(0..4) {
                let atoms = ["a", "b", "c", "[ab]", "[^a]", ".", r"\d", "()", "[]", "é"];
                if depth < 3 && rng.random_bool(0.25) {
                    let open = if rng.random_bool(0.5) { "(" } else { "(?:" };
                    out.push_str(open);
                    out.push_str(&random_pattern(rng, depth + 1));
                    out.push(')');
                } else {
                    out.push_str(atoms[rng.random_range(0..atoms.len())]);
                }
                let quantifiers = [
                    "", "", "", "*", "+", "?", "{0,2}", "{2}", "{1,}", "{0}", "{2,3}?",
                ];
                out.push_str(quantifiers[rng.random_range(0..quantifiers.len())]);
                if depth > 0 && rng.random_bool(0.02) {
                    out.push('$');
                }
            }
            if rng.random_bool(anchor_odds) {
                out.push('$');
            }
        }
        out
    }

    #[test]
    fn random_patterns_agree_with_their_regex_syntax_spelling() {
        use rand::{Rng, SeedableRng};
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(7);
        let alphabet = ['a', 'b', 'c', '0', '\n', 'é', '"'];
        let (mut compared, mut matched, mut unsupported, mut empty) =
            (0usize, 0usize, 0usize, 0usize);
        for _ in 0..4000 {
            let pattern = random_pattern(&mut rng, 0);
            let rust = regex::Regex::new(&to_regex_syntax(&pattern).unwrap()).unwrap();
            let strings: Vec<String> = (0..40)
                .map(|_| {
                    (0..rng.random_range(0..7))
                        .map(|_| alphabet[rng.random_range(0..alphabet.len())])
                        .collect()
                })
                .collect();
            match pattern_expr(&pattern) {
                Ok(e) => {
                    let g = pattern_grammar(e);
                    let diagnostics = crate::gbnf::check(&g);
                    assert!(
                        crate::gbnf::is_clean(&diagnostics),
                        "{pattern}\n{g}\n{diagnostics:?}"
                    );
                    let r = crate::recognize::Recognizer::new(&g).unwrap();
                    for s in &strings {
                        let expected = rust.is_match(s);
                        assert_eq!(
                            r.recognize(&encode_str(s)).accepted,
                            expected,
                            "{pattern:?} on {s:?}\n{g}"
                        );
                        compared += 1;
                        matched += usize::from(expected);
                    }
                    let sampler = crate::sample::Sampler::new(&g).unwrap();
                    let options = crate::sample::SampleOptions {
                        max_len: 12,
                        ..Default::default()
                    };
                    for sample in sampler.samples(compared as u64, 4, options) {
                        let text: String = serde_json::from_str(&format!("\"{sample}\"")).unwrap();
                        assert_eq!(encode_str(&text), sample);
                        assert!(rust.is_match(&text), "{pattern:?}: sample {text:?}");
                    }
                }
                Err(PatternError::Empty) => {
                    empty += 1;
                    assert!(strings.iter().all(|s| !rust.is_match(s)), "{pattern:?}");
                }
                Err(PatternError::Unsupported(why)) => {
                    unsupported += 1;
                    // Only misplaced anchors are unsupported here.
                    assert!(
                        why.contains('^') || why.contains('$') || why.contains("anchor"),
                        "{pattern:?}: {why}"
                    );
                }
                Err(e) => panic!("{pattern:?}: {e}"),
            }
        }
        let summary = format!(
            "{compared} compared ({matched} matched), {unsupported} unsupported, {empty} empty"
        );
        eprintln!("{summary}");
        assert!(compared > 100_000, "{summary}");
        assert!(
            matched > compared / 5 && matched < compared * 4 / 5,
            "{summary}"
        );
    }
}
