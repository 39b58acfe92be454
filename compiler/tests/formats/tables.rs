//! Each format's accept/reject table, and exhaustive comparisons with the `jsonschema`
//! crate's format checks.

use super::*;

#[test]
fn date_table() {
    Format::new("date").table(
        &[
            "2024-02-29",
            "2000-02-29",
            "0000-02-29",
            "1600-02-29",
            "2024-01-31",
            "2023-02-28",
            "2023-04-30",
            "2023-12-31",
            "1970-01-01",
            "9999-12-31",
        ],
        &[
            "2023-02-29",
            "1900-02-29",
            "2100-02-29",
            "2024-02-30",
            "2024-04-31",
            "2024-13-01",
            "2024-00-10",
            "2024-01-00",
            "2024-01-32",
            "24-01-01",
            "2024-1-01",
            "2024/01/01",
            "2024-01-01T00:00:00Z",
            "",
            "２０２４-01-01",
        ],
        &[],
    );
}

#[test]
fn date_agrees_exactly_with_the_crate() {
    let f = Format::new("date");
    // Every year's 29 February (and 28th) decides leap years entirely.
    for year in 0..10_000 {
        for day in ["28", "29"] {
            let s = format!("{year:04}-02-{day}");
            assert_eq!(f.sound(&s), f.crate_accepts(&s), "{s}");
        }
    }
    for year in [
        "0000", "0004", "1900", "2000", "2023", "2024", "2100", "9996",
    ] {
        for month in 0..=13 {
            for day in 0..=32 {
                let s = format!("{year}-{month:02}-{day:02}");
                assert_eq!(f.sound(&s), f.crate_accepts(&s), "{s}");
            }
        }
    }
}

#[test]
fn time_table() {
    Format::new("time").table(
        &[
            "13:45:00Z",
            "00:00:00Z",
            "23:59:59Z",
            "13:45:00z",
            "13:45:00.5Z",
            "13:45:00.123456789+05:30",
            "13:45:00-08:00",
            "13:45:00+23:59",
            "23:59:60Z",
            "23:59:60.25z",
            "23:59:60+00:00",
            "23:59:60-00:00",
        ],
        &[
            "13:45:00",
            "13:45Z",
            "24:00:00Z",
            "12:60:00Z",
            "12:00:61Z",
            "12:00:60Z",
            "12:00:00.Z",
            "12:00:00+24:00",
            "12:00:00+05:60",
            "12:00:00+0530",
            "12:00:00 Z",
            "1:00:00Z",
        ],
        // Leap seconds at the end of the UTC day, written in another zone.
        &["00:59:60+01:00", "18:29:60-05:30"],
    );
}

#[test]
fn time_is_sound_and_complete_apart_from_zoned_leap_seconds() {
    let f = Format::new("time");
    let offsets = [
        "Z", "z", "+00:00", "-00:00", "+01:00", "-05:30", "+23:59", "+24:00", "-00:60", "", "Y",
    ];
    for hour in 0..=24 {
        for minute in [0, 1, 30, 59, 60] {
            for second in [0, 9, 59, 60, 61] {
                for frac in ["", ".0", ".123456", "."] {
                    for offset in offsets {
                        let s = format!("{hour:02}:{minute:02}:{second:02}{frac}{offset}");
                        let grammar = f.sound(&s);
                        let utc = matches!(offset, "Z" | "z" | "+00:00" | "-00:00");
                        if second != 60 || utc {
                            assert_eq!(grammar, f.crate_accepts(&s), "{s}");
                        }
                    }
                }
            }
        }
    }
}

#[test]
fn date_time_table() {
    Format::new("date-time").table(
        &[
            "2024-01-15T10:30:00+02:00",
            "2024-01-15T10:30:00Z",
            "2024-01-15t10:30:00z",
            "2024-02-29T23:59:60Z",
            "1999-12-31T23:59:59.999-12:00",
        ],
        &[
            "2024-01-15 10:30:00Z",
            "2024-01-15T10:30:00",
            "2023-02-29T10:30:00Z",
            "2024-01-15T25:30:00Z",
            "2024-01-15",
            "2024-01-15TT10:30:00Z",
        ],
        &["2024-01-15T00:59:60+01:00"],
    );
}

#[test]
fn duration_table() {
    Format::new("duration").table(
        &[
            "P1Y2M3DT4H5M6S",
            "P1D",
            "P0D",
            "P01D",
            "P1W",
            "PT1H",
            "PT36H",
            "PT0S",
            "P1M1D",
            "P1Y1M",
            "PT1M1S",
            "P1DT1H",
            "P123456789012345678901234567890D",
        ],
        &[
            "P", "PT", "P1Y1D", "PT1H1S", "P1W1D", "P1WT1H", "P1DT", "P1.5D", "PT0.5S", "P1D1Y",
            "P1Y1Y", "1D", "p1d", "P1d", "P-1D",
        ],
        &[],
    );
}

#[test]
fn duration_agrees_exactly_with_the_crate() {
    let f = Format::new("duration");
    let tokens = ["1Y", "2M", "3W", "4D", "T", "5H", "6S", "7", "08M"];
    let mut strings = vec![String::from("P")];
    let mut frontier = vec![String::from("P")];
    for _ in 0..5 {
        let mut next = Vec::new();
        for s in &frontier {
            for t in tokens {
                next.push(format!("{s}{t}"));
            }
        }
        strings.extend(next.iter().cloned());
        frontier = next;
    }
    let mut accepted = 0;
    for s in &strings {
        let grammar = f.sound(s);
        assert_eq!(grammar, f.crate_accepts(s), "{s}");
        accepted += usize::from(grammar);
    }
    assert!(accepted > 100, "{accepted}");
}

#[test]
fn email_table() {
    let long_local = "a".repeat(64);
    let too_long_local = "a".repeat(65);
    let dotted_local = "a.".repeat(31) + "bc"; // 64 characters
    Format::new("email").table(
        &[
            "user.name+tag@example.com",
            "a@b",
            "a@b.co",
            "x@localhost",
            "first_last@sub.example.co.uk",
            "o'brien@example.ie",
            "!#$%&'*+-/=?^_`{|}~@example.com",
            "USER@EXAMPLE.COM",
            "1234@127.0.0.1",
            &format!("{long_local}@example.com"),
            &format!("{dotted_local}@example.com"),
        ],
        &[
            ".a@b.com",
            "a.@b.com",
            "a..b@c.com",
            "@example.com",
            "a@",
            "a@-b.com",
            "a@b-.com",
            "a@b..com",
            "a@b.com.",
            "a b@c.com",
            "a@b@c.com",
            "plainaddress",
            "a@ab--cd.com",
            "a\"b@c.com",
            &format!("{too_long_local}@example.com"),
        ],
        // Quoted local parts, domain literals, non-ASCII-free A-labels.
        &[
            "\"a b\"@c.com",
            "\"a\\\"b\"@c.com",
            "a@[1.2.3.4]",
            "a@[IPv6:::1]",
            "a@xn--bcher-kva.example",
        ],
    );
}

#[test]
fn hostname_table() {
    let l63 = "a".repeat(63);
    let l64 = "a".repeat(64);
    // 63 + 63 + 63 + 55 characters and three dots: 247, the longest the budget admits.
    let longest = format!("{l63}.{l63}.{l63}.{}", "b".repeat(55));
    assert_eq!(longest.len(), 247);
    let seven = vec!["abcdefg"; 31].join("."); // 31 labels of 7: 247 characters
    let ones = vec!["a"; 31].join(".");
    Format::new("hostname").table(
        &[
            "example.com",
            "localhost",
            "a",
            "a-b.c-d.e",
            "a--b.com",
            "abc",
            "sub.domain.example.co.uk",
            "192.168.0.1",
            "EXAMPLE.COM",
            "0.0",
            &l63,
            &longest,
            &seven,
            &ones,
        ],
        &[
            "",
            "-a.com",
            "a-.com",
            "a..com",
            ".a.com",
            "a.com.",
            "a_b.com",
            "a b.com",
            "ab--cd.com",
            "xn--abc.com",
            "exämple.com",
            &l64,
            &format!("{l63}.{l63}.{l63}.{l63}"),
        ],
        // Valid A-labels; long names whose labels spend more than the budget.
        &[
            "xn--bcher-kva.example",
            &format!("{l63}.{l63}.{l63}.{}", "b".repeat(61)),
            &vec!["a"; 32].join("."),
            &format!("{}abcdefgh", "abcdefg.".repeat(30)),
        ],
    );
}

#[test]
fn hostname_labels_agree_with_the_crate() {
    // Every label of up to five characters over a small alphabet, alone and in a name.
    let f = Format::new("hostname");
    let alphabet = ['a', '0', '-', 'Z', '.', '_'];
    let mut labels = vec![String::new()];
    let mut frontier = vec![String::new()];
    for _ in 0..5 {
        let mut next = Vec::new();
        for s in &frontier {
            for c in alphabet {
                next.push(format!("{s}{c}"));
            }
        }
        labels.extend(next.iter().cloned());
        frontier = next;
    }
    for label in &labels {
        for s in [label.clone(), format!("x.{label}.com")] {
            assert_eq!(f.sound(&s), f.crate_accepts(&s), "{s:?}");
        }
    }
    // Labels of every length up to 64, with hyphens in the third and fourth place.
    for len in 1..=64 {
        for s in [
            "a".repeat(len),
            format!("ab--{}", "c".repeat(len.saturating_sub(4))),
            format!("ab-{}", "c".repeat(len.saturating_sub(3))),
        ] {
            let s = s.chars().take(len).collect::<String>();
            if s.len() < 100 {
                assert_eq!(f.sound(&s), f.crate_accepts(&s), "{s:?}");
            }
        }
    }
}

#[test]
fn every_hostname_of_up_to_61_characters_fits_the_budget() {
    let f = Format::new("hostname");
    let mut rng = ChaCha8Rng::seed_from_u64(61);
    for _ in 0..5_000 {
        let mut labels: Vec<String> = Vec::new();
        loop {
            let len = if rng.random_bool(0.6) {
                1
            } else {
                rng.random_range(1..=63)
            };
            let label: String = (0..len)
                .map(|i| {
                    if i == 0 || i + 1 == len || rng.random_bool(0.8) {
                        char::from(b'a' + rng.random_range(0..26u8))
                    } else {
                        '-'
                    }
                })
                .collect();
            let label = if label.len() >= 4 && &label[2..4] == "--" {
                label.replacen("--", "-x", 1)
            } else {
                label
            };
            let total: usize = labels.iter().map(|l| l.len() + 1).sum::<usize>() + label.len();
            if total > 61 {
                break;
            }
            labels.push(label);
        }
        if labels.is_empty() {
            continue;
        }
        let s = labels.join(".");
        assert!(f.crate_accepts(&s), "{s}");
        assert!(f.sound(&s), "{s}");
    }
}

#[test]
fn ipv4_table() {
    Format::new("ipv4").table(
        &[
            "192.168.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "10.0.0.254",
            "1.2.3.4",
        ],
        &[
            "256.1.1.1",
            "01.1.1.1",
            "1.1.1.00",
            "1.1.1",
            "1.1.1.1.1",
            "1.1.1.1.",
            "a.b.c.d",
            "1.1.1.-1",
            "",
            " 1.1.1.1",
        ],
        &[],
    );
}

#[test]
fn ipv4_octets_agree_with_the_crate() {
    let f = Format::new("ipv4");
    let mut octets: Vec<String> = (0..=300).map(|n| n.to_string()).collect();
    octets.extend(["00", "01", "001", "000", "0255", "", "+1", "1a"].map(String::from));
    for octet in &octets {
        for s in [format!("{octet}.1.2.3"), format!("1.2.3.{octet}")] {
            assert_eq!(f.sound(&s), f.crate_accepts(&s), "{s}");
        }
    }
}

#[test]
fn ipv6_table() {
    Format::new("ipv6").table(
        &[
            "::1",
            "::",
            "1::",
            "2001:db8::8a2e:370:7334",
            "2001:0db8:85a3:0000:0000:8a2e:0370:7334",
            "2001:DB8::1",
            "fe80::1:2",
            "1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7::",
            "::2:3:4:5:6:7:8",
            "::ffff:192.168.0.1",
            "1:2:3:4:5:6:1.2.3.4",
            "1:2:3:4:5::1.2.3.4",
            "::1.2.3.4",
        ],
        &[
            "1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:8:9",
            "1::2::3",
            ":1:2:3:4:5:6:7",
            "1:2:3:4:5:6:7:",
            "::1:2:3:4:5:6:7:8",
            "1:2:3:4:5:6:7::8",
            "12345::",
            "::g",
            "1:2:3:4:5:6::1.2.3.4",
            "::01.2.3.4",
            "::256.1.1.1",
            "1.2.3.4::",
            ":::",
            "",
        ],
        // Zone identifiers are no part of the format.
        &[],
    );
}

#[test]
fn ipv6_agrees_with_the_crate_on_random_token_strings() {
    let f = Format::new("ipv6");
    let tokens = [
        "1",
        "ab",
        "FFFF",
        "0000",
        "12345",
        ":",
        ":",
        "::",
        "1.2.3.4",
        "255.0.0.1",
        "g",
    ];
    let mut rng = ChaCha8Rng::seed_from_u64(42);
    let mut accepted = 0;
    for _ in 0..20_000 {
        let n = rng.random_range(1..=17);
        let s: String = (0..n)
            .map(|_| tokens[rng.random_range(0..tokens.len())])
            .collect();
        let grammar = f.sound(&s);
        assert_eq!(grammar, f.crate_accepts(&s), "{s}");
        accepted += usize::from(grammar);
    }
    // Well-formed candidates: groups joined by single colons, one `::` somewhere.
    for _ in 0..20_000 {
        let groups = rng.random_range(0..=9);
        let mut parts: Vec<&str> = (0..groups)
            .map(|_| ["0", "a1", "FfFf", "0db8", "1.2.3.4"][rng.random_range(0..5)])
            .collect();
        if rng.random_bool(0.7) {
            let at = rng.random_range(0..=parts.len());
            parts.insert(at, "");
            if parts.len() == 1 {
                parts.push("");
            }
            if at == 0 {
                parts.insert(0, "");
            } else if at == parts.len() - 1 {
                parts.push("");
            }
        }
        let s = parts.join(":");
        let grammar = f.sound(&s);
        assert_eq!(grammar, f.crate_accepts(&s), "{s}");
        accepted += usize::from(grammar);
    }
    assert!(accepted > 2_000, "{accepted}");
}

#[test]
fn uuid_table() {
    Format::new("uuid").table(
        &[
            "123e4567-e89b-12d3-a456-426614174000",
            "123E4567-E89B-12D3-A456-426614174000",
            "123e4567-E89B-12d3-a456-426614174000",
            "00000000-0000-0000-0000-000000000000",
            "ffffffff-ffff-ffff-ffff-ffffffffffff",
        ],
        &[
            "123e4567e89b12d3a456426614174000",
            "123e4567-e89b-12d3-a456-42661417400",
            "123e4567-e89b-12d3-a456-4266141740000",
            "g23e4567-e89b-12d3-a456-426614174000",
            "123e4567-e89b-12d3-a4564-26614174000",
            "{123e4567-e89b-12d3-a456-426614174000}",
            "",
        ],
        &[],
    );
}

#[test]
fn uri_table() {
    Format::new("uri").table(
        &[
            "https://example.com/path?q=1#frag",
            "http://example.com",
            "https://user:pass@example.com:8443/a/b/../c;p?x=1&y=%20#top",
            "ftp://ftp.example.com/file.txt",
            "file:///etc/hosts",
            "mailto:user@example.com",
            "urn:isbn:0451450523",
            "urn:uuid:123e4567-e89b-12d3-a456-426614174000",
            "tel:+1-201-555-0123",
            "data:text/plain;charset=utf-8,hello",
            "a:",
            "a://",
            "git+ssh://git@github.com/o/r.git",
            "http://example.com/~user/it's(1)*!$",
            "http://example.com?",
            "http://example.com#",
            "x:/a//b",
            "x:a:b",
        ],
        &[
            "/relative/path",
            "example.com",
            "",
            "1http://example.com",
            "http://exa mple.com",
            "http://example.com/a b",
            "http://example.com/%zz",
            "http://example.com/%4",
            "http://host:port/",
            "http://a@b@c/",
            "http://example.com/<>",
            "http://example.com/\"",
            "http://example.com/a\\b",
            "://example.com",
        ],
        // IP literals; non-ASCII is not URI syntax at all.
        &["http://[::1]/", "http://[2001:db8::1]:8080/x"],
    );
}

#[test]
fn uri_reference_table() {
    Format::new("uri-reference").table(
        &[
            "",
            "https://example.com/path?q=1#frag",
            "/relative/path",
            "relative/path",
            "rel/x:y",
            "./a:b",
            "../up",
            "//host/path",
            "//user@host:80",
            "?query",
            "#fragment",
            "a@b",
            "rel:x",
            "file.txt",
            "%20",
        ],
        &[
            "a b",
            "%zz",
            "1a:b",
            "http://a@b@c",
            "//host:port",
            "\\path",
            "a\"b",
            "{x}",
        ],
        &["//[::1]/a"],
    );
}
