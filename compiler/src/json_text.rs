//! How characters are spelled inside JSON strings, as GBNF expressions.
//!
//! The canonical spelling is serde_json's: `"` and `\` escaped with a backslash, the
//! control characters U+0008, U+0009, U+000A, U+000C and U+000D as `\b \t \n \f \r`, the
//! other controls below U+0020 as `\u00XX` with lowercase hex digits, everything else
//! (U+007F and all non-ASCII included) written as itself. Grammars that constrain a
//! string's characters accept exactly the canonical spellings of the allowed characters,
//! which keeps them sound (a text can only decode to allowed characters) and complete for
//! canonical text.

use std::fmt;

use crate::gbnf::ast::CompactString;
use crate::gbnf::{ClassRange, Expr};

/// Characters written as themselves: everything but `"`, `\` and U+0000–U+001F.
const PLAIN: [(u32, u32); 3] = [(0x20, 0x21), (0x23, 0x5B), (0x5D, 0x10FFFF)];

/// Lowercase hex digits: `\u` escapes as serde_json writes them, and the character codes
/// in extra-key rule names (`ko--5f-`).
pub(crate) const HEX_DIGITS: &[u8; 16] = b"0123456789abcdef";

/// The canonical JSON-string spelling of `c`, without quotes.
///
/// ```
/// use gbnfc_compiler::json_text::encode_char;
/// assert_eq!(encode_char('"'), "\\\"");
/// assert_eq!(encode_char('\u{1}'), "\\u0001");
/// assert_eq!(encode_char('é'), "é");
/// ```
pub fn encode_char(c: char) -> CompactString {
    if needs_escape(c) {
        let mut out = CompactString::default();
        push_encoded(&mut out, c);
        out
    } else {
        CompactString::new(c.encode_utf8(&mut [0; 4]))
    }
}

/// Is `c` spelled other than as itself inside a JSON string?
fn needs_escape(c: char) -> bool {
    matches!(c, '"' | '\\' | '\u{0}'..='\u{1f}')
}

/// Appends the canonical JSON-string spelling of `c` to `out`.
pub fn push_encoded(out: &mut impl fmt::Write, c: char) {
    // Writing to a String or CompactString cannot fail.
    let _ = match c {
        '"' => out.write_str("\\\""),
        '\\' => out.write_str("\\\\"),
        '\u{8}' => out.write_str("\\b"),
        '\t' => out.write_str("\\t"),
        '\n' => out.write_str("\\n"),
        '\u{c}' => out.write_str("\\f"),
        '\r' => out.write_str("\\r"),
        c if u32::from(c) < 0x20 => {
            // `\u00` and two lowercase hex digits, as serde_json writes them.
            let code = u32::from(c) as usize;
            out.write_str("\\u00")
                .and_then(|()| out.write_char(char::from(HEX_DIGITS[code >> 4])))
                .and_then(|()| out.write_char(char::from(HEX_DIGITS[code & 0xF])))
        }
        c => out.write_char(c),
    };
}

/// Appends the canonical JSON-string spelling of `s` to `out`.
pub fn push_encoded_str(out: &mut impl fmt::Write, s: &str) {
    // What needs escaping is ASCII, so it is found byte by byte, and the runs between
    // are written whole.
    let mut plain_from = 0;
    for (at, byte) in s.bytes().enumerate() {
        let c = char::from(byte);
        if needs_escape(c) {
            // Writing to a String or CompactString cannot fail.
            let _ = out.write_str(&s[plain_from..at]);
            push_encoded(out, c);
            plain_from = at + 1;
        }
    }
    let _ = out.write_str(&s[plain_from..]);
}

/// The canonical JSON-string spelling of a whole string, without quotes.
pub fn encode_str(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    push_encoded_str(&mut out, s);
    out
}

/// An expression matching the canonical spelling of exactly the characters in `ranges`
/// (inclusive ranges of scalar values, in any order, possibly overlapping). Returns `None`
/// for an empty set.
pub fn chars_expr(ranges: &[(u32, u32)]) -> Option<Expr> {
    let ranges = normalize(ranges);
    let mut arms = Vec::new();
    let plain: Vec<ClassRange> = intersect(&ranges, &PLAIN)
        .into_iter()
        .filter_map(|(lo, hi)| {
            Some(ClassRange {
                lo: char::from_u32(lo)?,
                hi: char::from_u32(hi)?,
            })
        })
        .collect();
    if !plain.is_empty() {
        arms.push(Expr::Class {
            negated: false,
            ranges: plain,
        });
    }
    let controls = intersect(&ranges, &[(0, 0x1F)]);
    if controls.iter().map(|(lo, hi)| hi - lo + 1).sum::<u32>() <= FEW_CONTROLS {
        for &(lo, hi) in &controls {
            arms.extend(
                (lo..=hi)
                    .filter_map(char::from_u32)
                    .map(|c| Expr::literal(encode_char(c))),
            );
        }
    } else {
        arms.push(controls_expr(&controls));
    }
    for special in ['"', '\\'] {
        if contains(&ranges, u32::from(special)) {
            arms.push(Expr::literal(encode_char(special)));
        }
    }
    if arms.is_empty() {
        None
    } else {
        Some(Expr::alt(arms))
    }
}

/// The canonical spelling of any one character.
pub fn any_canonical_char() -> Expr {
    static ANY: std::sync::LazyLock<Expr> =
        std::sync::LazyLock::new(|| chars_expr(&[(0, 0x10FFFF)]).unwrap_or_else(Expr::empty));
    ANY.clone()
}

/// Any one character of a JSON string in any valid spelling: raw, a short escape, or any
/// `\uXXXX` (surrogate pairs included). For strings whose characters are unconstrained.
pub fn any_string_char() -> Expr {
    Expr::alt([
        Expr::class(true, [('"', '"'), ('\\', '\\'), ('\u{0}', '\u{1f}')]),
        Expr::seq([
            Expr::literal("\\"),
            Expr::Group(Box::new(Expr::alt([
                Expr::class(
                    false,
                    [
                        ('"', '"'),
                        ('\\', '\\'),
                        ('/', '/'),
                        ('b', 'b'),
                        ('f', 'f'),
                        ('n', 'n'),
                        ('r', 'r'),
                        ('t', 't'),
                    ],
                ),
                unicode_escape(),
            ]))),
        ]),
    ])
}

/// `u` and four hex digits for one character: a code unit outside the surrogate range, or
/// a high surrogate followed by `\u` and a low one (a pair spells one character, so a
/// length counts it once; lone surrogates are no characters at all).
fn unicode_escape() -> Expr {
    let hex = || Expr::class(false, [('0', '9'), ('a', 'f'), ('A', 'F')]);
    let two_hex = || Expr::repeat(hex(), 2, Some(2));
    let d = || Expr::class(false, [('d', 'd'), ('D', 'D')]);
    Expr::seq([
        Expr::literal("u"),
        Expr::Group(Box::new(Expr::alt([
            Expr::seq([
                Expr::class(
                    false,
                    [('0', '9'), ('a', 'c'), ('A', 'C'), ('e', 'f'), ('E', 'F')],
                ),
                Expr::repeat(hex(), 3, Some(3)),
            ]),
            Expr::seq([d(), Expr::class(false, [('0', '7')]), two_hex()]),
            Expr::seq([
                d(),
                Expr::class(false, [('8', '9'), ('a', 'b'), ('A', 'B')]),
                two_hex(),
                Expr::literal("\\u"),
                d(),
                Expr::class(false, [('c', 'f'), ('C', 'F')]),
                two_hex(),
            ]),
        ]))),
    ])
}

/// Up to this many control characters are spelled one literal each; more share the
/// prefixes of their escapes ([`controls_expr`]).
const FEW_CONTROLS: u32 = 3;

/// The control characters with a short escape (`\b \t \n \f \r`), by code.
const SHORT_ESCAPES: [(u32, char); 5] =
    [(0x8, 'b'), (0x9, 't'), (0xA, 'n'), (0xC, 'f'), (0xD, 'r')];

/// The canonical spellings of the control characters in `controls` (ranges within
/// U+0000–U+001F, normalized, not empty), sharing the escapes' prefixes: `"\\" [bt]`
/// for the short escapes, `"\\u00" ("0" [0-7] | "1" [0-9a-f])` for the rest.
fn controls_expr(controls: &[(u32, u32)]) -> Expr {
    let mut letters = Vec::new();
    // The low hex digit of each `\u000X` and `\u001X` spelling.
    let mut digits: [Vec<char>; 2] = [Vec::new(), Vec::new()];
    for code in controls.iter().flat_map(|&(lo, hi)| lo..=hi) {
        match SHORT_ESCAPES.iter().find(|(c, _)| *c == code) {
            Some(&(_, letter)) => letters.push(letter),
            None => {
                digits[(code >> 4) as usize].push(char::from(HEX_DIGITS[(code & 0xF) as usize]))
            }
        }
    }
    letters.sort_unstable();
    let mut arms = Vec::new();
    if !letters.is_empty() {
        arms.push(after("\\", &letters));
    }
    match (digits[0].is_empty(), digits[1].is_empty()) {
        (true, true) => {}
        (false, true) => arms.push(after("\\u000", &digits[0])),
        (true, false) => arms.push(after("\\u001", &digits[1])),
        (false, false) => arms.push(Expr::seq([
            Expr::literal("\\u00"),
            Expr::Group(Box::new(Expr::alt([
                after("0", &digits[0]),
                after("1", &digits[1]),
            ]))),
        ])),
    }
    Expr::alt(arms)
}

/// `prefix` followed by one of `chars` (sorted): one literal when there is one.
fn after(prefix: &str, chars: &[char]) -> Expr {
    match chars {
        [only] => Expr::literal(format!("{prefix}{only}")),
        _ => Expr::seq([Expr::literal(prefix), Expr::one_of(chars.iter().copied())]),
    }
}

fn normalize(ranges: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut sorted: Vec<(u32, u32)> = ranges.iter().copied().filter(|(lo, hi)| lo <= hi).collect();
    sorted.sort_unstable();
    let mut merged: Vec<(u32, u32)> = Vec::new();
    for (lo, hi) in sorted {
        match merged.last_mut() {
            Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
            _ => merged.push((lo, hi)),
        }
    }
    merged
}

fn intersect(a: &[(u32, u32)], b: &[(u32, u32)]) -> Vec<(u32, u32)> {
    let mut out = Vec::new();
    for &(alo, ahi) in a {
        for &(blo, bhi) in b {
            let (lo, hi) = (alo.max(blo), ahi.min(bhi));
            if lo <= hi {
                out.push((lo, hi));
            }
        }
    }
    normalize(&out)
}

fn contains(ranges: &[(u32, u32)], v: u32) -> bool {
    ranges.iter().any(|&(lo, hi)| lo <= v && v <= hi)
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::gbnf::Grammar;
    use crate::recognize::Recognizer;

    fn recognizer(body: Expr) -> Recognizer {
        let mut g = Grammar::default();
        g.push("root", body);
        assert!(crate::gbnf::is_clean(&crate::gbnf::check(&g)), "{g}");
        Recognizer::new(&g).unwrap()
    }

    #[test]
    fn encoding_matches_serde_json() {
        for v in (0..0x300u32).chain([0x7F, 0x2028, 0xFFFF, 0x1F600]) {
            let c = char::from_u32(v).unwrap();
            let serde = serde_json::to_string(&c.to_string()).unwrap();
            assert_eq!(format!("\"{}\"", encode_char(c)), serde, "U+{v:04X}");
        }
    }

    #[test]
    fn strings_are_encoded_as_serde_json_encodes_them() {
        // Escapes at either end, next to each other, between runs of plain text, and
        // beside characters whose UTF-8 bytes are all above ASCII.
        let texts = [
            "",
            "plain",
            "\"quoted\"",
            "a\\b\u{1}c\n",
            "\t\u{1f}\"é😀\u{2028}x\\",
            "日本\r語",
        ];
        for text in texts {
            let serde = serde_json::to_string(text).unwrap();
            assert_eq!(format!("\"{}\"", encode_str(text)), serde, "{text:?}");
        }
    }

    #[test]
    fn class_expressions_accept_exactly_the_canonical_spellings() {
        let sets: [&[(u32, u32)]; 11] = [
            &[(0, 0x10FFFF)],
            &[(0x41, 0x5A)],
            &[(0, 0x7F)],
            &[(0x5, 0x9), (0x22, 0x22)],
            // ECMA's `.`: every character but the line terminators.
            &[(0, 0x9), (0xB, 0xC), (0xE, 0x2027), (0x202A, 0x10FFFF)],
            // Controls in part: short escapes only, one half of the `\u00` forms, both.
            &[(0x8, 0xA), (0xC, 0xD), (0x41, 0x41)],
            &[(0x9, 0x9), (0xC, 0xC), (0xE, 0xF), (0x7F, 0x7F)],
            &[(0x0, 0x7)],
            &[(0x10, 0x1F)],
            &[(0x1, 0x1), (0x1E, 0x1F), (0x5C, 0x5C)],
            &[(0xA, 0x11)],
        ];
        for set in sets {
            let r = recognizer(chars_expr(set).unwrap());
            for v in 0..0x200u32 {
                let c = char::from_u32(v).unwrap();
                let inside = contains(set, v);
                assert_eq!(
                    r.recognize(&encode_char(c)).accepted,
                    inside,
                    "U+{v:04X} in {set:?}"
                );
            }
            assert!(!r.recognize("\\u0041").accepted);
        }
        assert!(chars_expr(&[]).is_none());
    }

    #[test]
    fn any_string_char_takes_every_spelling() {
        let r = recognizer(any_string_char());
        for text in ["a", "\\\"", "\\/", "\\u00E9", "\\n", "é"] {
            assert!(r.recognize(text).accepted, "{text}");
        }
        assert!(
            r.recognize("\\uD83D\\uDE00").accepted,
            "a surrogate pair is one character"
        );
        for text in ["\"", "\\", "\n", "\\x", "\\uD800", "\\uDC00"] {
            assert!(!r.recognize(text).accepted, "{text:?}");
        }
    }
}
