//! `pattern::pattern_expr`: ECMA-262 patterns as expressions over JSON string contents.
//!
//! - a table of patterns with strings they must and must not match;
//! - a property test against the `regex` crate (with each ECMA pattern's Rust spelling);
//! - samples from the grammars decode to strings the pattern matches;
//! - counted repetitions beyond llama.cpp's limits, and the error cases.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use gbnfc_compiler::gbnf::{check, is_clean, Grammar};
use gbnfc_compiler::json_text::encode_str;
use gbnfc_compiler::pattern::{pattern_expr, pattern_grammar, PatternError};
use gbnfc_compiler::recognize::Recognizer;
use gbnfc_compiler::sample::{SampleOptions, Sampler};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

fn grammar(pattern: &str) -> Grammar {
    let expr = pattern_expr(pattern).unwrap_or_else(|e| panic!("{pattern:?}: {e}"));
    let g = pattern_grammar(expr);
    let diagnostics = check(&g);
    assert!(is_clean(&diagnostics), "{pattern:?}:\n{g}\n{diagnostics:?}");
    assert!(g.rules[0].body.depth() < 1000, "{pattern:?}");
    g
}

fn recognizer(pattern: &str) -> Recognizer {
    Recognizer::new(&grammar(pattern)).unwrap()
}

fn accepts(r: &Recognizer, s: &str) -> bool {
    r.recognize(&encode_str(s)).accepted
}

fn decode(contents: &str) -> String {
    serde_json::from_str(&format!("\"{contents}\""))
        .unwrap_or_else(|e| panic!("{contents:?} is not JSON string contents: {e}"))
}

#[test]
fn table() {
    #[rustfmt::skip]
    let cases: &[(&str, &[&str], &[&str])] = &[
        (r"^[a-z]+$", &["abc", "z"], &["", "aBc", "abc1", "é", "abc\n"]),
        (r"abc", &["abc", "xxabcxx", "abcabc", "\"abc\\", "\nabc\n"], &["ab", "acb", "", "ABC"]),
        (r"^\d{3}-\d{4}$", &["555-1234", "000-0000"], &["555-12345", "5551234", "٣٣٣-1234", "55-1234"]),
        (r#"^"\\$"#, &["\"\\"], &["\"", "\\", "\"\\\\", "x\"\\"]),
        (r#"["\\]"#, &["\"", "a\\b"], &["", "abc", "/"]),
        (r"[^a-z]", &["A", "abc1", "é", "\n", "\u{0}"], &["abc", ""]),
        (r"^[^a-z]*$", &["", "ABC", "\n\t\"", "😀"], &["aB", "Bz"]),
        (r"^(cat|dog)s?$", &["cat", "dogs", "dog"], &["cats!", "catdog", "", "ca"]),
        (r"^((a|b)(c|d))+$", &["ac", "bdac", "bcbcbc"], &["a", "acb", "", "ab"]),
        (r"^(ab){2,3}$", &["abab", "ababab"], &["ab", "abababab", "aba", ""]),
        (r"^a|b$", &["a", "ax", "xb", "b", "ab", "a\n"], &["xa", "bx", "", "c"]),
        (r"(^|,)x", &["x", "a,x", "xa", ",x,"], &["ax", "", ","]),
        (r"x($|-)", &["x", "ax-", "x-y"], &["xa", ""]),
        (r"^$", &[""], &["a", " ", "\n"]),
        (r"", &["", "anything", "\n"], &[]),
        (r"x*", &["", "y"], &[]),
        (r"^é+😀$", &["é😀", "éé😀"], &["e😀", "é", "é😀😀"]),
        (r"^\s+$", &[" \t\n\r\u{b}\u{c}\u{a0}\u{feff}\u{2028}\u{2029}\u{3000}\u{1680}\u{200a}"], &["\u{85}", "\u{200b}", "a ", ""]),
        (r"^\S+$", &["abc", "\u{85}"], &["a b", "\u{feff}"]),
        (r"^\w+$", &["abc_123", "Z"], &["é", "ſ", "a-b", "٣"]),
        (r"^\W$", &["é", "-", " "], &["a", "_", "0"]),
        (r"^\D+$", &["abc", "٣"], &["a1"]),
        (r"^(?i:abc)$", &["ABC", "aBc", "abc"], &["abd", "ABCD"]),
        (r"^(?i:\w)$", &["a", "ſ", "\u{212A}"], &["é"]),
        (r"^(?i:a(?-i:b))$", &["Ab", "ab"], &["AB", "aB"]),
        (r"^.$", &["a", "😀", "\t", "\u{85}"], &["\n", "\r", "\u{2028}", "\u{2029}", "", "ab"]),
        (r"^(?s:.)$", &["\n", "\r", "a"], &["", "ab"]),
        (r"^a.c$", &["abc", "a c", "a\"c"], &["a\nc", "ac"]),
        (r"^[\b]$", &["\u{8}"], &["b", "\\b"]),
        (r"^\cJ\cm$", &["\n\r"], &["cJcm"]),
        (r"^\0$", &["\u{0}"], &["0", ""]),
        (r"^\x41\u0042\u{43}\t$", &["ABC\t"], &["ABC", "abc\t"]),
        (r"^\uD83D\uDE00$", &["😀"], &["😀😀", ""]),
        (r"^[^]$", &["a", "\n", "😀"], &["", "ab"]),
        (r"^[\u0000-\u001f]+$", &["\u{0}\u{1f}\n\t\u{8}\u{c}\r\u{1b}"], &[" ", "\u{7f}"]),
        (r"^\/\.\*\?\[\]\{\}\(\)\|\^\$\\$", &["/.*?[]{}()|^$\\"], &[""]),
        (r"^[a-c-e]$", &["a", "b", "c", "-", "e"], &["d", ""]),
        (r"^[\d-]+$", &["0-9", "-"], &["a"]),
        (r"^[\w.-]+@[\w-]+\.[a-z]{2,}$", &["john.doe@example.com", "a@b.io"], &["a@b.c", "@b.com", "a b@c.de"]),
        (r"^[[\]]+$", &["[", "]", "[]"], &["a"]),
        (r"^[a&&b]+$", &["a", "&&", "b&"], &["c"]),
        (r"^a*?b+?c??$", &["b", "aabbc", "abc"], &["", "ac", "bcc"]),
        (r"^(a|)+$", &["", "a", "aaa"], &["b"]),
        (r"^(a*b*)*$", &["", "abba", "bbb"], &["c", "abc"]),
        (r"^(?:a?b?){2,3}c$", &["c", "abc", "ababc", "abababc", "bbbc"], &["ababababc", "aaaac", "ab"]),
        (r"^(a?){3}$", &["", "a", "aaa"], &["aaaa"]),
        (r"^\p{Lu}\p{Ll}+$", &["Élan", "Abc"], &["abc", "A", "ABC"]),
        (r"^\P{L}$", &["1", " "], &["a", "é"]),
        (r"^(?<year>\d{4})-(?<month>\d{2})$", &["2024-01"], &["2024-1"]),
        (r"^[^\x00-\x7f]+$", &["é😀"], &["é a"]),
        (r"^\u{1F600}{2}$", &["😀😀"], &["😀"]),
        (r"^a{3000}$", &[], &[]),
        (r"()", &["", "a"], &[]),
        (r"^()$", &[""], &["a"]),
        (r"^^a$$", &["a"], &["aa"]),
        (r"$^", &[""], &["a"]),
        (r"(?:^)(?:a)", &["a", "ab"], &["ba"]),
    ];
    for (pattern, yes, no) in cases {
        let r = recognizer(pattern);
        for s in *yes {
            assert!(accepts(&r, s), "{pattern:?} should match {s:?}");
        }
        for s in *no {
            assert!(!accepts(&r, s), "{pattern:?} should not match {s:?}");
        }
    }
}

#[test]
fn errors() {
    for p in [
        r"\a",
        r"a{",
        r"(?i)abc",
        r"[z-a]",
        r"(a",
        r"a)",
        r"\u{110000}",
        r"+a",
    ] {
        assert!(
            matches!(pattern_expr(p), Err(PatternError::Invalid(_))),
            "{p}"
        );
    }
    for p in [
        r"a(?=b)",
        r"(?<!a)b",
        r"(a)\1",
        r"\bword\b",
        r"(?m:^a)",
        r"a{1000000}",
        r"(^a)*",
        r"(ab{0,2000})*",
        r"(a{0,2000}){0,2000}",
        &format!("{}a{}", "(".repeat(300), ")".repeat(300)),
    ] {
        assert!(
            matches!(pattern_expr(p), Err(PatternError::Unsupported(_))),
            "{p}: {:?}",
            pattern_expr(p).map(|_| ())
        );
    }
    for p in [
        r"[]",
        r"^a[]b",
        r"a^b",
        r"a$b",
        r"^[^\s\S]+$",
        r"^(?:[]|a$b)",
    ] {
        assert_eq!(pattern_expr(p), Err(PatternError::Empty), "{p}");
    }
}

#[test]
fn counted_repetitions_past_llama_limits() {
    let r = recognizer(r"^a{3000}$");
    assert!(accepts(&r, &"a".repeat(3000)));
    assert!(!accepts(&r, &"a".repeat(2999)));
    assert!(!accepts(&r, &"a".repeat(3001)));

    let r = recognizer(r"^(ab|c){0,5000}$");
    assert!(accepts(&r, &"ab".repeat(2600)));
    assert!(accepts(&r, &"c".repeat(5000)));
    assert!(!accepts(&r, &"c".repeat(5001)));

    let r = recognizer(r"^(a{1,5}b){500}$");
    assert!(accepts(&r, &"aab".repeat(500)));
    assert!(accepts(&r, &"aaaaab".repeat(500)));
    assert!(!accepts(&r, &"aab".repeat(499)));
    assert!(!accepts(&r, &"aab".repeat(501)));

    let r = recognizer(r"^(x?){3000}$");
    assert!(accepts(&r, ""));
    assert!(accepts(&r, &"x".repeat(3000)));
    assert!(!accepts(&r, &"x".repeat(3001)));

    let r = recognizer(r"^((a{2000}){3}){2}$");
    assert!(accepts(&r, &"a".repeat(12000)));
    assert!(!accepts(&r, &"a".repeat(11999)));

    let r = recognizer(r"^(a{2500,}|b)$");
    assert!(accepts(&r, &"a".repeat(2500)));
    assert!(accepts(&r, &"a".repeat(4100)));
    assert!(!accepts(&r, &"a".repeat(2499)));

    // A group holding 2000 generated rules can still be repeated, once per operator.
    let r = recognizer(r"^(?:a|b{0,1999}c){2}$");
    assert!(accepts(&r, "abbc"));
    assert!(!accepts(&r, "a"));

    grammar(r"^\d{100000}$");
    grammar(r"[a-z]{1,99999}");
}

/// ECMA patterns with their meaning spelled for the `regex` crate (which reads `\d`, `\w`,
/// `\s` and `.` differently).
#[rustfmt::skip]
const PROPERTY_PATTERNS: &[(&str, &str)] = &[
    (r"abc", r"abc"),
    (r"^a", r"^a"),
    (r"b$", r"b$"),
    (r"^a|b$", r"^a|b$"),
    (r"^[a-c]+$", r"^[a-c]+$"),
    (r"[^a-c]", r"[^a-c]"),
    (r"^\d+$", r"^[0-9]+$"),
    (r"\d-\d", r"[0-9]-[0-9]"),
    (r"^\w*$", r"^[0-9A-Za-z_]*$"),
    (r"\s", r"[\t\n\x0B\x0C\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]"),
    (r"^[^\s]*$", r"^[^\t\n\x0B\x0C\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]*$"),
    (r"^.+$", r"^[^\n\r\u{2028}\u{2029}]+$"),
    (r"a.c", r"a[^\n\r\u{2028}\u{2029}]c"),
    (r"^(ab|ba)*$", r"^(ab|ba)*$"),
    (r"^(a|b)(c|d)?$", r"^(a|b)(c|d)?$"),
    (r"^a{2,3}$", r"^a{2,3}$"),
    (r"(ab){2}", r"(ab){2}"),
    (r"^(a?b?)*c$", r"^(a?b?)*c$"),
    (r"^(a*|b)+$", r"^(a*|b)+$"),
    (r#"^"[^"\\]*"$"#, r#"^"[^"\\]*"$"#),
    (r"\\", r"\\"),
    (r#"^[\t\n"]+$"#, r#"^[\t\n"]+$"#),
    (r"é|😀", r"é|😀"),
    (r"^(?i:ab)", r"^(?i:ab)"),
    (r"(^|-)x", r"(^|-)x"),
    (r"x($|-)", r"x($|-)"),
    (r"^$", r"^$"),
    (r"", r""),
    (r"^(?:(a|b)c|d)e?$", r"^(?:(a|b)c|d)e?$"),
    (r"a{0,2}b{1,}$", r"a{0,2}b{1,}$"),
    (r"^\p{Lu}", r"^\p{Lu}"),
    (r"^[\u0000-\u001f]", r"^[\x00-\x1f]"),
    (r"(a|b)*c(a|b)*", r"(a|b)*c(a|b)*"),
    (r"^(a|ab)(c|bcd)(d*)$", r"^(a|ab)(c|bcd)(d*)$"),
    (r"^[\w-]{2,4}\.?$", r"^[0-9A-Za-z_-]{2,4}\.?$"),
    (r"^[^\d\s]+$", r"^[^0-9\t\n\x0B\x0C\r \u{a0}\u{1680}\u{2000}-\u{200a}\u{2028}\u{2029}\u{202f}\u{205f}\u{3000}\u{feff}]+$"),
];

const ALPHABET: &[char] = &[
    'a', 'b', 'c', 'd', 'e', 'x', 'A', 'B', '0', '5', '-', '_', '.', ' ', '\t', '\n', '\r', '"',
    '\\', '/', 'é', 'ſ', '\u{212A}', '٣', '\u{2028}', '\u{a0}', '😀', '\u{1}', '\u{7f}',
    '\u{feff}', '\u{85}',
];
const SMALL: &[char] = &['a', 'b', 'c', 'd', 'e', 'x', '-', '0'];

fn random_string(rng: &mut ChaCha8Rng) -> String {
    let len = rng.random_range(0..8);
    let small = rng.random_bool(0.6);
    (0..len)
        .map(|_| {
            let set = if small && rng.random_bool(0.9) {
                SMALL
            } else {
                ALPHABET
            };
            set[rng.random_range(0..set.len())]
        })
        .collect()
}

fn mutate(s: &str, rng: &mut ChaCha8Rng) -> String {
    let mut chars: Vec<char> = s.chars().collect();
    for _ in 0..rng.random_range(1..3) {
        let c = ALPHABET[rng.random_range(0..ALPHABET.len())];
        let at = rng.random_range(0..=chars.len());
        match rng.random_range(0..3) {
            0 => chars.insert(at, c),
            1 if at < chars.len() => {
                chars.remove(at);
            }
            _ if at < chars.len() => chars[at] = c,
            _ => chars.push(c),
        }
    }
    chars.into_iter().collect()
}

#[test]
fn agrees_with_the_regex_crate() {
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed);
    let mut checked = 0usize;
    let mut matched = 0usize;
    for (i, (ecma, rust)) in PROPERTY_PATTERNS.iter().enumerate() {
        let g = grammar(ecma);
        let r = Recognizer::new(&g).unwrap();
        let re = regex::Regex::new(rust).unwrap();
        let samples = Sampler::new(&g).unwrap().samples(
            i as u64,
            60,
            SampleOptions {
                max_len: 24,
                ..SampleOptions::default()
            },
        );
        let mut strings: Vec<String> = (0..120).map(|_| random_string(&mut rng)).collect();
        for sample in &samples {
            let decoded = decode(sample);
            strings.push(mutate(&decoded, &mut rng));
            strings.push(decoded);
        }
        for s in &strings {
            let expected = re.is_match(s);
            assert_eq!(
                accepts(&r, s),
                expected,
                "pattern {ecma:?} on {s:?} (regex says {expected})"
            );
            checked += 1;
            matched += usize::from(expected);
        }
    }
    assert!(checked > 8000, "{checked}");
    assert!(
        matched > checked / 4 && matched < checked * 3 / 4,
        "{matched} of {checked}"
    );
}

#[test]
fn samples_decode_to_matching_strings() {
    let mut patterns: Vec<&str> = PROPERTY_PATTERNS.iter().map(|(e, _)| *e).collect();
    patterns.extend([
        r"^\d{3}-\d{4}$",
        r"^[\w.-]+@[\w-]+\.[a-z]{2,}$",
        r"^(?i:[a-f0-9]{8})$",
        r"^[\u0000-\u001f\u007f]+$",
    ]);
    let rust_of = |ecma: &str| {
        PROPERTY_PATTERNS
            .iter()
            .find(|(e, _)| *e == ecma)
            .map_or_else(
                || {
                    ecma.replace(r"\d", "[0-9]")
                        .replace(r"\w", "[0-9A-Za-z_]")
                        .replace(r"\u0000", r"\x00")
                        .replace(r"\u001f", r"\x1f")
                        .replace(r"\u007f", r"\x7f")
                },
                |(_, r)| (*r).to_string(),
            )
    };
    let mut total = 0usize;
    for (i, ecma) in patterns.iter().enumerate() {
        let g = grammar(ecma);
        let re = regex::Regex::new(&rust_of(ecma)).unwrap();
        for sample in
            Sampler::new(&g)
                .unwrap()
                .samples(1000 + i as u64, 100, SampleOptions::default())
        {
            let decoded = decode(&sample);
            assert_eq!(encode_str(&decoded), sample, "{ecma:?}: not canonical");
            assert!(re.is_match(&decoded), "{ecma:?}: sample {decoded:?}");
            total += 1;
        }
    }
    assert!(total >= 4000);
}
