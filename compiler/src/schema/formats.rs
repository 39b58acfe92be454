//! String formats (`date`, `email`, `uuid`, …) as GBNF expressions over JSON string contents.
//!
//! [`format_rules`] gives the rules for the *contents* of a JSON string (what lies between
//! the quotes) in one of the [`FORMATS`]; the first rule, `fmt-<format>` ([`entry_rule`]),
//! is the entry point. Every rule of a format is named `fmt-<format>` or
//! `fmt-<format>-…`, and no format's rules use a name another format's rules use, so the
//! rules of several formats can sit in one grammar side by side (each format at most
//! once). [`format_grammar`] wraps one format in a complete grammar whose `root` is the
//! quoted string.
//!
//! # Soundness
//!
//! Every text these grammars accept decodes to a string that the `jsonschema` crate
//! (0.61, format validation on, draft 2020-12) accepts for the format; the tests sample
//! each grammar and validate the samples. Where checking the whole format in a grammar
//! would be impractical the grammars are stricter than the format (each restriction is
//! listed on the format below), but they accept the forms real data uses.
//!
//! Every character these grammars accept is printable ASCII other than `"` and `\`, so
//! its canonical JSON spelling ([`crate::json_text`]) is the character itself.
//!
//! | format | accepted language |
//! |---|---|
//! | `date` | `YYYY-MM-DD`, any four-digit year, real calendar days (29 February in Gregorian leap years only) |
//! | `time` | `HH:MM:SS(.d+)?` then `Z`, `z` or `±HH:MM`; the leap second only as `23:59:60` in UTC (`Z`, `z`, `+00:00`, `-00:00`) |
//! | `date-time` | a `date`, `T` or `t`, a `time` |
//! | `duration` | ISO 8601 / RFC 3339 `P…`: `nW` alone, or date parts `Y M D` and time parts `T H M S` in order, none skipped in the middle (`P1Y1D` and `PT1H1S` are invalid), integers only |
//! | `email` | dot-atom local part (ASCII `atext`, at most 64 characters) `@` a `hostname` |
//! | `hostname` | dot-separated labels of `[A-Za-z0-9-]`, 1–63 characters, no `-` first or last, never `--` in the third and fourth place (so no `xn--` A-labels); total length at most 247 (see below) |
//! | `ipv4` | dotted quad, octets 0–255 without leading zeros |
//! | `ipv6` | RFC 4291 text: eight groups of 1–4 hex digits (either case), `::` for one or more zero groups, optional dotted-quad tail |
//! | `uuid` | `8-4-4-4-12` hex digits, either case |
//! | `uri` | RFC 3986 `URI` without IP literals (`[…]` hosts) |
//! | `uri-reference` | RFC 3986 `URI-reference` without IP literals |
//!
//! What the crate accepts and these grammars do not: leap seconds written in a zone other
//! than UTC (`00:59:60+01:00`); hostnames (and email domains) with A-labels (`xn--…`,
//! whose Punycode the crate decodes and checks) or beyond the length budget below; email
//! addresses with quoted local parts or domain literals (`a@[1.2.3.4]`); URIs with IP
//! literals (`http://[::1]/`). Everything else is exact for `date`, `duration`, `ipv4`,
//! `ipv6`, `uuid` and (apart from leap seconds) `time` and `date-time`. A schema using a
//! format with such a gap gets a `Restricted` note saying what is left out ([`left_out`]).
//!
//! The hostname length limit (253) cannot be counted character by character in a small
//! grammar, so labels are budgeted instead: a label of length `L` costs `⌈(L + 1) / 8⌉`
//! units and a hostname may spend 31 units, which keeps it within 247 characters. Every
//! hostname of at most 61 characters fits (a label never costs more than half its length
//! plus its dot), and so do long ones made of long labels: three labels of 63 and one of
//! 55, or 31 labels of 7.

use crate::gbnf::{Expr, Grammar};

/// The formats [`format_rules`] knows, in alphabetical order.
pub const FORMATS: [&str; 11] = [
    "date",
    "date-time",
    "duration",
    "email",
    "hostname",
    "ipv4",
    "ipv6",
    "time",
    "uri",
    "uri-reference",
    "uuid",
];

/// What valid strings of `format` its grammar does not accept (the module documentation
/// lists them), or `None` where the grammar is exact.
///
/// ```
/// use gbnfc_compiler::schema::formats::left_out;
/// assert!(left_out("date").is_none());
/// assert!(left_out("email").unwrap().contains("quoted"));
/// ```
pub fn left_out(format: &str) -> Option<&'static str> {
    match format {
        "time" | "date-time" => {
            Some("a leap second is generated only in UTC (`23:59:60Z`), not in other zones")
        }
        "hostname" => Some(
            "A-labels (`xn--…`) and names past about 247 characters are not generated",
        ),
        "email" => Some(
            "quoted local parts, domain literals (`a@[1.2.3.4]`) and A-label domains are not generated",
        ),
        "uri" | "uri-reference" => Some("IP-literal hosts (`http://[::1]/`) are not generated"),
        _ => None,
    }
}

/// The name of the entry rule of `format`'s rules: `fmt-<format>`.
pub fn entry_rule(format: &str) -> String {
    format!("fmt-{format}")
}

/// GBNF rules for the contents of a JSON string (between the quotes, in canonical JSON
/// spelling) in `format`, entry rule first (named [`entry_rule`]`(format)`), or `None` for
/// a format not in [`FORMATS`].
///
/// All rule names start with `fmt-<format>`; see the [module documentation](self) for the
/// language each format accepts.
///
/// ```
/// use gbnfc_compiler::schema::formats::format_rules;
/// let rules = format_rules("date").unwrap();
/// assert_eq!(rules[0].0, "fmt-date");
/// assert!(format_rules("color").is_none());
/// ```
pub fn format_rules(format: &str) -> Option<Vec<(String, Expr)>> {
    built_rules(format).map(<[_]>::to_vec)
}

/// [`format_rules`] as built once per process: the rules never change, so a compiled
/// grammar copies them rather than building them again.
pub fn built_rules(format: &str) -> Option<&'static [(String, Expr)]> {
    static BUILT: std::sync::LazyLock<Vec<Vec<(String, Expr)>>> =
        std::sync::LazyLock::new(|| FORMATS.iter().map(|f| build_rules(f)).collect());
    let index = FORMATS.iter().position(|f| *f == format)?;
    BUILT.get(index).map(Vec::as_slice)
}

/// Builds `format`'s rules (one of [`FORMATS`]; any other gives no rules).
fn build_rules(format: &str) -> Vec<(String, Expr)> {
    let mut b = Rules::new(&entry_rule(format));
    match format {
        "date" => date(&mut b),
        "time" => time(&mut b),
        "date-time" => date_time(&mut b),
        "duration" => duration(&mut b),
        "email" => email(&mut b),
        "hostname" => hostname(&mut b),
        "ipv4" => ipv4(&mut b),
        "ipv6" => ipv6(&mut b),
        "uuid" => uuid(&mut b),
        "uri" => uri(&mut b),
        "uri-reference" => uri_reference(&mut b),
        _ => return Vec::new(),
    }
    b.finish()
}

/// A complete grammar for a JSON string in `format`: `root ::= "\"" fmt-<format> "\""`
/// followed by [`format_rules`]`(format)`. `None` for an unknown format.
///
/// ```
/// use gbnfc_compiler::{recognize::Recognizer, schema::formats::format_grammar};
/// let r = Recognizer::new(&format_grammar("ipv4").unwrap()).unwrap();
/// assert!(r.recognize("\"192.168.0.1\"").accepted);
/// assert!(!r.recognize("\"192.168.0.256\"").accepted);
/// ```
pub fn format_grammar(format: &str) -> Option<Grammar> {
    let rules = format_rules(format)?;
    let mut grammar = Grammar::default();
    grammar.push(
        "root",
        Expr::seq([lit("\""), Expr::rule(entry_rule(format)), lit("\"")]),
    );
    for (name, body) in rules {
        grammar.push(name, body);
    }
    Some(grammar)
}

/// Collects rules under one name prefix; the first rule added is the entry.
struct Rules {
    prefix: String,
    rules: Vec<(String, Expr)>,
}

impl Rules {
    fn new(prefix: &str) -> Self {
        Rules {
            prefix: prefix.to_string(),
            rules: Vec::new(),
        }
    }

    /// `prefix` for an empty suffix, else `prefix-suffix`.
    fn name(&self, suffix: &str) -> String {
        if suffix.is_empty() {
            self.prefix.clone()
        } else {
            format!("{}-{suffix}", self.prefix)
        }
    }

    /// Defines `prefix-suffix ::= body`.
    fn define(&mut self, suffix: &str, body: Expr) {
        let name = self.name(suffix);
        self.rules.push((name, body));
    }

    /// A reference to `prefix-suffix`.
    fn r(&self, suffix: &str) -> Expr {
        Expr::rule(self.name(suffix))
    }

    /// A function making references to `prefix-suffix`, free of any borrow of `self`.
    fn namer(&self) -> impl Fn(&str) -> Expr {
        let prefix = self.prefix.clone();
        move |suffix| Expr::rule(format!("{prefix}-{suffix}"))
    }

    /// Rules built by `build` under the prefix `prefix-suffix`, added to these; returns a
    /// reference to their entry.
    fn nested(&mut self, suffix: &str, build: impl FnOnce(&mut Rules)) -> Expr {
        let mut inner = Rules::new(&self.name(suffix));
        build(&mut inner);
        self.rules.extend(inner.rules);
        self.r(suffix)
    }

    fn finish(self) -> Vec<(String, Expr)> {
        self.rules
    }
}

fn lit(text: &str) -> Expr {
    Expr::literal(text)
}

fn class(ranges: &[(char, char)]) -> Expr {
    Expr::class(false, ranges.iter().copied())
}

fn one_of(chars: &str) -> Expr {
    Expr::class(false, chars.chars().map(|c| (c, c)))
}

fn digit() -> Expr {
    class(&[('0', '9')])
}

fn hex() -> Expr {
    class(&[('0', '9'), ('A', 'F'), ('a', 'f')])
}

fn opt(e: Expr) -> Expr {
    Expr::repeat(e, 0, Some(1))
}

fn star(e: Expr) -> Expr {
    Expr::repeat(e, 0, None)
}

fn plus(e: Expr) -> Expr {
    Expr::repeat(e, 1, None)
}

/// `e{min,max}`, written without a repetition where it is nothing or `e` itself.
fn times(e: Expr, min: u32, max: u32) -> Expr {
    match (min, max) {
        (_, 0) => Expr::empty(),
        (1, 1) => match e {
            Expr::Group(inner) => *inner,
            e => e,
        },
        _ => Expr::repeat(e, min, Some(max)),
    }
}

fn group(e: Expr) -> Expr {
    Expr::Group(Box::new(e))
}

// ---------------------------------------------------------------------------------------
// date, time, date-time

/// `YYYY-MM-DD` on the proleptic Gregorian calendar.
fn date(b: &mut Rules) {
    // Two-digit endings divisible by four: 00 (for centuries), 04, 08, 12, …, 96.
    let by_four = |with_zero: bool| {
        Expr::alt([
            Expr::seq([lit("0"), one_of(if with_zero { "048" } else { "48" })]),
            Expr::seq([one_of("2468"), one_of("048")]),
            Expr::seq([one_of("13579"), one_of("26")]),
        ])
    };
    b.define(
        "",
        Expr::alt([
            Expr::seq([b.r("year"), lit("-"), b.r("month-day")]),
            Expr::seq([b.r("leap-year"), lit("-02-29")]),
        ]),
    );
    b.define("year", times(digit(), 4, 4));
    // Leap years: divisible by 4 but not by 100 (YY04 … YY96), or by 400 (CC00 with CC
    // divisible by 4, 0000 included).
    b.define(
        "leap-year",
        Expr::alt([
            Expr::seq([digit(), digit(), group(by_four(false))]),
            Expr::seq([group(by_four(true)), lit("00")]),
        ]),
    );
    let day28 = Expr::alt([
        Expr::seq([lit("0"), class(&[('1', '9')])]),
        Expr::seq([lit("1"), digit()]),
        Expr::seq([lit("2"), class(&[('0', '8')])]),
    ]);
    let day30 = Expr::alt([
        Expr::seq([lit("0"), class(&[('1', '9')])]),
        Expr::seq([one_of("12"), digit()]),
        lit("30"),
    ]);
    let day31 = Expr::alt([
        Expr::seq([lit("0"), class(&[('1', '9')])]),
        Expr::seq([one_of("12"), digit()]),
        Expr::seq([lit("3"), one_of("01")]),
    ]);
    b.define(
        "month-day",
        Expr::alt([
            Expr::seq([
                group(Expr::alt([
                    Expr::seq([lit("0"), one_of("13578")]),
                    Expr::seq([lit("1"), one_of("02")]),
                ])),
                lit("-"),
                b.r("day31"),
            ]),
            Expr::seq([
                group(Expr::alt([Expr::seq([lit("0"), one_of("469")]), lit("11")])),
                lit("-"),
                b.r("day30"),
            ]),
            Expr::seq([lit("02-"), b.r("day28")]),
        ]),
    );
    b.define("day28", day28);
    b.define("day30", day30);
    b.define("day31", day31);
}

/// RFC 3339 `full-time`.
fn time(b: &mut Rules) {
    let hour = || {
        Expr::alt([
            Expr::seq([one_of("01"), digit()]),
            Expr::seq([lit("2"), class(&[('0', '3')])]),
        ])
    };
    let sixty = || Expr::seq([class(&[('0', '5')]), digit()]);
    b.define(
        "",
        Expr::alt([
            Expr::seq([b.r("hms"), opt(b.r("frac")), b.r("offset")]),
            // The leap second exists only at the end of a UTC day; the crate checks that
            // against the offset, this grammar takes it in UTC only.
            Expr::seq([
                lit("23:59:60"),
                opt(b.r("frac")),
                group(Expr::alt([
                    one_of("Zz"),
                    Expr::seq([one_of("+-"), lit("00:00")]),
                ])),
            ]),
        ]),
    );
    b.define(
        "hms",
        Expr::seq([group(hour()), lit(":"), sixty(), lit(":"), sixty()]),
    );
    b.define("frac", Expr::seq([lit("."), plus(digit())]));
    b.define(
        "offset",
        Expr::alt([
            one_of("Zz"),
            Expr::seq([one_of("+-"), group(hour()), lit(":"), sixty()]),
        ]),
    );
}

/// RFC 3339 `date-time` (with `T` or `t`).
fn date_time(b: &mut Rules) {
    let date_ref = b.name("date");
    let time_ref = b.name("time");
    b.define(
        "",
        Expr::seq([Expr::rule(date_ref), one_of("Tt"), Expr::rule(time_ref)]),
    );
    b.nested("date", date);
    b.nested("time", time);
}

/// ISO 8601 durations as RFC 3339 appendix A spells them.
fn duration(b: &mut Rules) {
    let r = b.namer();
    let n = || r("n");
    let unit = |u: &str| Expr::seq([n(), lit(u)]);
    b.define(
        "",
        Expr::seq([
            lit("P"),
            group(Expr::alt([
                Expr::seq([b.r("date"), opt(b.r("time"))]),
                b.r("time"),
                unit("W"),
            ])),
        ]),
    );
    // Y [M [D]] | M [D] | D
    b.define(
        "date",
        Expr::alt([
            Expr::seq([
                unit("Y"),
                opt(group(Expr::seq([unit("M"), opt(group(unit("D")))]))),
            ]),
            Expr::seq([unit("M"), opt(group(unit("D")))]),
            unit("D"),
        ]),
    );
    // T (H [M [S]] | M [S] | S)
    b.define(
        "time",
        Expr::seq([
            lit("T"),
            group(Expr::alt([
                Expr::seq([
                    unit("H"),
                    opt(group(Expr::seq([unit("M"), opt(group(unit("S")))]))),
                ]),
                Expr::seq([unit("M"), opt(group(unit("S")))]),
                unit("S"),
            ])),
        ]),
    );
    b.define("n", plus(digit()));
}

// ---------------------------------------------------------------------------------------
// hostname, email

/// Length unit of the hostname budget, in characters (a label and its dot).
const HOST_UNIT: u32 = 8;
/// Units a hostname may spend: `HOST_UNIT * HOST_BUDGET - 1 <= 253`.
const HOST_BUDGET: u32 = 31;
/// Label classes: class `c` holds labels of `HOST_UNIT*(c-1)` to `HOST_UNIT*c - 1`
/// characters (from 1), costing `c` units; the last class reaches 63.
const HOST_CLASSES: u32 = 8;

/// Letters and digits.
fn alnum() -> Expr {
    class(&[('0', '9'), ('A', 'Z'), ('a', 'z')])
}

/// Letters, digits and `-`.
fn alnum_hyphen() -> Expr {
    class(&[('-', '-'), ('0', '9'), ('A', 'Z'), ('a', 'z')])
}

/// Hostname labels of `lo..=hi` characters (`1 <= lo <= hi <= 63`): letters, digits and
/// hyphens, a letter or digit first and last, and never hyphens in both the third and the
/// fourth place (which would make an A-label, whose Punycode the crate decodes).
fn label(lo: u32, hi: u32) -> Expr {
    let mut arms = Vec::new();
    if lo <= 1 {
        arms.push(alnum());
    }
    let (short_lo, short_hi) = (lo.max(2), hi.min(4));
    if short_lo <= short_hi {
        arms.push(Expr::seq([
            alnum(),
            times(alnum_hyphen(), short_lo - 2, short_hi - 2),
            alnum(),
        ]));
    }
    if hi >= 5 {
        arms.push(Expr::seq([
            alnum(),
            alnum_hyphen(),
            group(Expr::alt([
                Expr::seq([alnum(), alnum_hyphen()]),
                Expr::seq([lit("-"), alnum()]),
            ])),
            times(alnum_hyphen(), lo.max(5) - 5, hi - 5),
            alnum(),
        ]));
    }
    Expr::alt(arms)
}

/// An ASCII hostname (RFC 1123 labels, length budgeted as the module explains).
fn hostname(b: &mut Rules) {
    let budget_body = |b: &Rules, budget: u32| {
        Expr::alt((1..=HOST_CLASSES.min(budget)).map(|c| {
            let label = b.r(&format!("label{c}"));
            if c < budget {
                Expr::seq([
                    label,
                    opt(group(Expr::seq([
                        lit("."),
                        b.r(&format!("b{}", budget - c)),
                    ]))),
                ])
            } else {
                label
            }
        }))
    };
    let entry = budget_body(b, HOST_BUDGET);
    b.define("", entry);
    for budget in (1..HOST_BUDGET).rev() {
        let body = budget_body(b, budget);
        b.define(&format!("b{budget}"), body);
    }
    for c in 1..=HOST_CLASSES {
        let lo = (HOST_UNIT * (c - 1)).max(1);
        let hi = (HOST_UNIT * c - 1).min(63);
        b.define(&format!("label{c}"), label(lo, hi));
    }
}

/// Longest local part the crate accepts.
const LOCAL_MAX: u32 = 64;

/// `local@domain`: an unquoted (dot-atom) local part of at most 64 characters and a
/// hostname domain.
fn email(b: &mut Rules) {
    let local = b.name(&format!("local{LOCAL_MAX}"));
    let host = b.name("host");
    b.define(
        "",
        Expr::seq([Expr::rule(local), lit("@"), Expr::rule(host)]),
    );
    // RFC 5322 atext (ASCII only: the crate turns down non-ASCII local parts for `email`).
    let atext = || Expr::alt([alnum(), one_of("!#$%&'*+-/=?^_`{|}~")]);
    // localN: dot-atoms of at most N characters.
    for n in (1..=LOCAL_MAX).rev() {
        let body = match n {
            1 => atext(),
            2 => Expr::seq([group(atext()), opt(b.r("local1"))]),
            _ => Expr::seq([
                group(atext()),
                opt(group(Expr::alt([
                    b.r(&format!("local{}", n - 1)),
                    Expr::seq([lit("."), b.r(&format!("local{}", n - 2))]),
                ]))),
            ]),
        };
        b.define(&format!("local{n}"), body);
    }
    b.nested("host", hostname);
}

// ---------------------------------------------------------------------------------------
// ipv4, ipv6, uuid

/// A dotted quad; octets 0–255 without leading zeros.
fn ipv4(b: &mut Rules) {
    let r = b.namer();
    let octet = || r("octet");
    b.define(
        "",
        Expr::seq([
            octet(),
            lit("."),
            octet(),
            lit("."),
            octet(),
            lit("."),
            octet(),
        ]),
    );
    b.define(
        "octet",
        Expr::alt([
            Expr::seq([lit("25"), class(&[('0', '5')])]),
            Expr::seq([lit("2"), class(&[('0', '4')]), digit()]),
            Expr::seq([lit("1"), digit(), digit()]),
            Expr::seq([class(&[('1', '9')]), digit()]),
            digit(),
        ]),
    );
}

/// RFC 4291 section 2.2 (RFC 3986 `IPv6address`), as a chain on the groups read so far.
fn ipv6(b: &mut Rules) {
    let r = b.namer();
    let h16 = || r("h16");
    let v4 = || r("v4");
    // tailM: what may follow `::` when M groups are left: nothing, 1..=M hex groups, or
    // up to M-2 hex groups and a dotted quad (which fills two groups).
    let tail = |m: u32| {
        let mut arms = vec![
            Expr::empty(),
            Expr::seq([times(group(Expr::seq([h16(), lit(":")])), 0, m - 1), h16()]),
        ];
        if m >= 2 {
            arms.push(Expr::seq([
                times(group(Expr::seq([h16(), lit(":")])), 0, m - 2),
                v4(),
            ]));
        }
        Expr::alt(arms)
    };
    b.define(
        "",
        Expr::alt([
            Expr::seq([lit("::"), b.r("tail7")]),
            Expr::seq([h16(), b.r("g1")]),
        ]),
    );
    // gJ: J groups read, no `::` yet.
    for j in 1..=7u32 {
        let mut arms = Vec::new();
        if j < 7 {
            arms.push(Expr::seq([lit("::"), b.r(&format!("tail{}", 7 - j))]));
        } else {
            arms.push(lit("::"));
        }
        if j == 6 {
            arms.push(Expr::seq([lit(":"), v4()]));
        }
        if j < 7 {
            arms.push(Expr::seq([lit(":"), h16(), b.r(&format!("g{}", j + 1))]));
        } else {
            arms.push(Expr::seq([lit(":"), h16()]));
        }
        b.define(&format!("g{j}"), Expr::alt(arms));
    }
    for m in (1..=7u32).rev() {
        b.define(&format!("tail{m}"), tail(m));
    }
    b.define("h16", times(hex(), 1, 4));
    b.nested("v4", ipv4);
}

/// `8-4-4-4-12` hex digits.
fn uuid(b: &mut Rules) {
    let block = |n: u32| times(hex(), n, n);
    b.define(
        "",
        Expr::seq([
            block(8),
            lit("-"),
            block(4),
            lit("-"),
            block(4),
            lit("-"),
            block(4),
            lit("-"),
            block(12),
        ]),
    );
}

// ---------------------------------------------------------------------------------------
// uri, uri-reference

/// RFC 3986 `URI` without IP literals.
fn uri(b: &mut Rules) {
    b.define(
        "",
        Expr::seq([
            b.r("scheme"),
            lit(":"),
            b.r("hier"),
            opt(group(Expr::seq([lit("?"), b.r("query")]))),
            opt(group(Expr::seq([lit("#"), b.r("query")]))),
        ]),
    );
    uri_parts(b);
}

/// RFC 3986 `URI-reference` without IP literals.
fn uri_reference(b: &mut Rules) {
    b.define(
        "",
        Expr::seq([
            group(Expr::alt([
                Expr::seq([b.r("scheme"), lit(":"), b.r("hier")]),
                b.r("relative"),
            ])),
            opt(group(Expr::seq([lit("?"), b.r("query")]))),
            opt(group(Expr::seq([lit("#"), b.r("query")]))),
        ]),
    );
    // relative-part: `//` authority path-abempty | path-absolute | path-noscheme | empty.
    b.define(
        "relative",
        Expr::alt([
            Expr::seq([lit("//"), b.r("authority"), b.r("abempty")]),
            Expr::seq([
                lit("/"),
                opt(group(Expr::seq([b.r("segnz"), b.r("abempty")]))),
            ]),
            Expr::seq([b.r("segnc"), b.r("abempty")]),
            Expr::empty(),
        ]),
    );
    // segment-nz-nc: no colon, so the first segment cannot read as a scheme.
    b.define(
        "segnc",
        plus(group(Expr::alt([
            b.r("unreserved"),
            b.r("pct"),
            b.r("subdelim"),
            lit("@"),
        ]))),
    );
    uri_parts(b);
}

/// The rules `uri` and `uri-reference` share: scheme, hier-part (without IP literals),
/// segments, query (also the fragment's grammar) and character classes.
fn uri_parts(b: &mut Rules) {
    b.define(
        "scheme",
        Expr::seq([
            class(&[('A', 'Z'), ('a', 'z')]),
            star(class(&[
                ('+', '+'),
                ('-', '.'),
                ('0', '9'),
                ('A', 'Z'),
                ('a', 'z'),
            ])),
        ]),
    );
    // hier-part: `//` authority path-abempty | path-absolute | path-rootless | empty.
    b.define(
        "hier",
        Expr::alt([
            Expr::seq([lit("//"), b.r("authority"), b.r("abempty")]),
            Expr::seq([
                lit("/"),
                opt(group(Expr::seq([b.r("segnz"), b.r("abempty")]))),
            ]),
            Expr::seq([b.r("segnz"), b.r("abempty")]),
            Expr::empty(),
        ]),
    );
    // authority: [userinfo "@"] reg-name [":" port].
    b.define(
        "authority",
        Expr::seq([
            opt(group(Expr::seq([b.r("userinfo"), lit("@")]))),
            b.r("host"),
            opt(group(Expr::seq([lit(":"), star(digit())]))),
        ]),
    );
    b.define(
        "userinfo",
        star(group(Expr::alt([
            b.r("unreserved"),
            b.r("pct"),
            b.r("subdelim"),
            lit(":"),
        ]))),
    );
    b.define(
        "host",
        star(group(Expr::alt([
            b.r("unreserved"),
            b.r("pct"),
            b.r("subdelim"),
        ]))),
    );
    b.define(
        "abempty",
        star(group(Expr::seq([lit("/"), b.r("segment")]))),
    );
    b.define("segment", star(b.r("pchar")));
    b.define("segnz", plus(b.r("pchar")));
    b.define(
        "query",
        star(group(Expr::alt([b.r("pchar"), one_of("/?")]))),
    );
    b.define(
        "pchar",
        Expr::alt([b.r("unreserved"), b.r("pct"), b.r("subdelim"), one_of(":@")]),
    );
    b.define(
        "unreserved",
        class(&[
            ('-', '.'),
            ('0', '9'),
            ('A', 'Z'),
            ('_', '_'),
            ('a', 'z'),
            ('~', '~'),
        ]),
    );
    b.define("subdelim", one_of("!$&'()*+,;="));
    b.define("pct", Expr::seq([lit("%"), hex(), hex()]));
}
