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
//!    [`chars_expr`](crate::json_text::chars_expr) / canonical literals.
//!    Counted repetitions keep their counts, split into chunks so that llama.cpp's limits
//!    (each bound ≤ 2000, generated rules × count ≤ 2000) hold; a repetition of something
//!    that can match the empty text repeats its non-empty part instead, so no unbounded
//!    repetition is nullable.
//!
//! Lazy and greedy quantifiers accept the same strings, so laziness is ignored.

use crate::gbnf::Expr;
use crate::json_text::encode_str;
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

mod ecma;
mod length;
mod lower;

use ecma::to_regex_syntax;
pub use length::pattern_with_length;
use lower::{any_star, guard_size, search_expr};
pub use lower::{pattern_grammar, refers_to_any_char, ANY_CHAR_RULE};

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::panic)]
    use super::lower::{atom, class_ranges, known_class_expr, prev_rules};
    use super::*;
    use crate::json_text::chars_expr;
    use regex_syntax::hir::HirKind;

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
