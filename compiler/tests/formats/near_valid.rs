//! Soundness near valid texts: valid texts changed a token at a time are accepted only when
//! the crate accepts them.

use super::*;

/// Valid texts mutated at random (characters deleted, tokens inserted or swapped in):
/// whatever the grammar accepts, the crate accepts.
fn sound_near_valid_texts(format: &'static str, bases: &[&str], tokens: &[&str], seed: u64) {
    let f = Format::new(format);
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let mut s: Vec<char> = bases[rng.random_range(0..bases.len())].chars().collect();
        for _ in 0..rng.random_range(1..=3) {
            let at = rng.random_range(0..=s.len());
            let token: Vec<char> = tokens[rng.random_range(0..tokens.len())].chars().collect();
            match rng.random_range(0..3) {
                0 if at < s.len() => {
                    s.remove(at);
                }
                1 if at < s.len() => {
                    s.splice(at..at + 1, token);
                }
                _ => {
                    s.splice(at..at, token);
                }
            }
        }
        let s: String = s.into_iter().collect();
        accepted += usize::from(f.sound(&s));
    }
    assert!(accepted > 300, "{format}: {accepted}");
}

#[test]
fn uri_grammars_are_sound_near_valid_texts() {
    let bases = [
        "https://user:pw@example.com:8080/a/b?q=1&r=%20#frag",
        "mailto:a@b.c",
        "urn:x:y",
        "//host/p",
        "/a/b",
        "a/b:c",
        "?q#f",
        "",
    ];
    let tokens = [
        "a", "1", ":", "//", "/", "?", "#", "@", "%2F", "%", "%g", ".", "-", "+", "~", "!", "'",
        "=", ":80", "[", "]", " ", "\"", "\\", "é", "{", "|",
    ];
    sound_near_valid_texts("uri", &bases, &tokens, 7);
    sound_near_valid_texts("uri-reference", &bases, &tokens, 8);
}

#[test]
fn email_grammar_is_sound_near_valid_texts() {
    let bases = ["user.name+tag@example.com", "a@b", "x_y@sub.example.co.uk"];
    let tokens = [
        "a", "1", ".", "@", "-", "+", "_", "'", "\"", "\\", " ", "[", "]", "--", "xn--", "é", "..",
        "(", ")", "<", ">", ",", ";", ":",
    ];
    sound_near_valid_texts("email", &bases, &tokens, 9);
}

#[test]
fn hostname_and_ip_grammars_are_sound_near_valid_texts() {
    let tokens = [
        "a", "1", "0", "00", ".", "-", "--", ":", "::", "f", "G", "_", " ", "256", "25",
    ];
    sound_near_valid_texts(
        "hostname",
        &["example.com", "a-b.c", "ab-cd.ef"],
        &tokens,
        10,
    );
    sound_near_valid_texts("ipv4", &["192.168.0.1", "0.0.0.0"], &tokens, 11);
    sound_near_valid_texts(
        "ipv6",
        &["2001:db8::8a2e:370:7334", "::1", "1:2:3:4:5:6:1.2.3.4"],
        &tokens,
        12,
    );
}

#[test]
fn time_grammars_are_sound_near_valid_texts() {
    let tokens = [
        "0", "1", "2", "9", "3", "6", ":", "-", "+", "T", "t", "Z", "z", ".", " ", "W", "D", "H",
        "M", "S", "P", "Y",
    ];
    let cases: [(&str, &[&str]); 4] = [
        ("date", &["2024-02-29", "1999-12-31", "2023-06-30"]),
        ("time", &["23:59:60Z", "13:45:00.5z", "00:00:00+05:30"]),
        (
            "date-time",
            &["2024-01-15T10:30:00+02:00", "2024-02-29t23:59:60.1Z"],
        ),
        ("duration", &["P1Y2M3DT4H5M6S", "PT1M", "P2W", "P1D"]),
    ];
    for (i, (format, bases)) in cases.into_iter().enumerate() {
        sound_near_valid_texts(format, bases, &tokens, 20 + i as u64);
    }
}

/// A format whose grammar leaves valid strings out says so: a `Restricted` note on the
/// `format` keyword, and each such format has a valid string (per the crate) that its
/// grammar rejects; an exact format gets no note.
#[test]
fn formats_that_leave_valid_strings_out_say_so() {
    use gbnfc_compiler::schema::{compile, KeywordStatus, Options};
    let left_out = [
        ("time", "01:29:60+01:30"),
        ("date-time", "1998-12-31T15:59:60.123-08:00"),
        ("email", "\"joe bloggs\"@example.com"),
        ("hostname", "xn--9n2bp8q.xn--9t4b11yi5a"),
        ("uri", "ldap://[2001:db8::7]/c=GB?objectClass?one"),
        ("uri-reference", "//[2001:db8::7]/a"),
    ];
    for name in FORMATS {
        let compiled = compile(
            &json!({"type": "string", "format": name}),
            &Options::default(),
        )
        .unwrap();
        let noted = compiled
            .diagnostics
            .iter()
            .any(|d| d.status == KeywordStatus::Restricted && d.pointer == "/format");
        match left_out.iter().find(|(format, _)| *format == name) {
            Some((_, example)) => {
                let format = Format::new(name);
                assert!(
                    format.validator.is_valid(&json!(example)),
                    "{name}: {example}"
                );
                assert!(!format.grammar_accepts(example), "{name}: {example}");
                assert!(noted, "{name} leaves {example} out without saying so");
            }
            None => assert!(!noted, "{name} is exact but has a note"),
        }
    }
}
