//! Extra keys that can never collide with declared ones: a key is any canonical JSON
//! string that is none of the declared names, written as a trie of "not this character
//! here" alternatives, so no escape spelling lets a declared name in.

use crate::gbnf::ast::CompactString;
use crate::gbnf::Expr;
use crate::json_text;
use crate::schema::blocks;
use crate::schema::document::Location;
use crate::schema::emit::Emitter;

/// The longest declared property name the extra-key exclusion handles.
pub(super) const MAX_EXCLUDED_NAME: usize = 256;

/// The longest remaining name [`not_suffix`] writes flat.
pub(super) const MAX_FLAT_SUFFIX: usize = 32;

/// `name` as a JSON string literal, canonically spelled.
pub(super) fn quoted_key(name: &str) -> CompactString {
    let mut text = CompactString::with_capacity(name.len() + 2);
    text.push('"');
    json_text::push_encoded_str(&mut text, name);
    text.push('"');
    text
}

/// A JSON string key that is none of `declared` (canonically spelled, so a declared name
/// cannot sneak in through an escape).
pub(super) fn extra_key(
    declared: &[String],
    e: &mut Emitter<'_, '_, '_>,
    at: &Location,
) -> Option<Expr> {
    let any_run = Expr::repeat(e.shared_rule("cchar"), 0, None);
    if declared.is_empty() {
        return Some(Expr::seq([
            Expr::literal("\""),
            any_run,
            Expr::literal("\""),
        ]));
    }
    if declared
        .iter()
        .any(|d| d.chars().count() > MAX_EXCLUDED_NAME)
    {
        e.restricted(
            &at.child("additionalProperties"),
            "additionalProperties",
            "a declared name is too long to exclude; extra keys are not generated",
        );
        return None;
    }
    // Every name's characters in one buffer, each name a slice of it.
    let chars: Vec<char> = declared.iter().flat_map(|d| d.chars()).collect();
    let mut names: Vec<&[char]> = Vec::with_capacity(declared.len());
    let mut from = 0;
    for d in declared {
        let to = from + d.chars().count();
        names.push(&chars[from..to]);
        from = to;
    }
    names.sort_unstable();
    names.dedup();
    let body = not_in(e, &names, 0, &any_run);
    let hint = e.hint(at);
    let contents = e.add_rule(&format!("{hint}-key"), body);
    Some(Expr::seq([
        Expr::literal("\""),
        contents,
        Expr::literal("\""),
    ]))
}

/// Canonical strings that are none of `names` (sorted, without repeats, all sharing their
/// first `depth` chars).
pub(super) fn not_in(
    e: &mut Emitter<'_, '_, '_>,
    names: &[&[char]],
    depth: usize,
    any_run: &Expr,
) -> Expr {
    let plain = |c: &char| !matches!(c, '"' | '\\' | '\u{0}'..='\u{1f}');
    if let [name] = names {
        let suffix = &name[depth..];
        // The flat form repeats each prefix: for long names the nested one is smaller.
        if (1..=MAX_FLAT_SUFFIX).contains(&suffix.len()) && suffix.iter().all(plain) {
            return not_suffix(e, suffix);
        }
    }
    let mut arms = Vec::new();
    // Sorted, so a name that ends here comes first and the rest group by next char.
    let ends_here = names.first().is_some_and(|n| n.len() == depth);
    let rest = if ends_here { &names[1..] } else { names };
    let mut groups: Vec<(char, &[&[char]])> = Vec::new();
    let mut from = 0;
    while from < rest.len() {
        let c = rest[from][depth];
        let to = from + rest[from..].iter().take_while(|n| n[depth] == c).count();
        groups.push((c, &rest[from..to]));
        from = to;
    }
    let next: Vec<char> = groups.iter().map(|(c, _)| *c).collect();
    // A character no name continues with, then anything. Names made of plain characters
    // (the usual case) leave every escape free: one rule per set of excluded characters,
    // shared by every key in the grammar.
    if next.iter().all(plain) {
        // Stopping here too, unless a name ends here.
        let stop = if ends_here { Stop::No } else { Stop::Yes };
        arms.push(other_start(e, &next, stop));
    } else {
        if !ends_here {
            arms.push(Expr::empty());
        }
        let mut others: Vec<(u32, u32)> = Vec::new();
        let mut from = 0u32;
        for c in &next {
            let v = u32::from(*c);
            if v > from {
                others.push((from, v - 1));
            }
            from = v + 1;
        }
        others.push((from, 0x10FFFF));
        if let Some(other) = json_text::chars_expr(&others) {
            arms.push(Expr::seq([Expr::Group(Box::new(other)), any_run.clone()]));
        }
    }
    for (c, group) in groups {
        let rest = not_in(e, group, depth + 1, any_run);
        arms.push(Expr::seq([Expr::literal(json_text::encode_char(c)), rest]));
    }
    Expr::alt(arms)
}

/// Key contents other than `suffix` (one name's remaining plain characters), flat rather
/// than one nested level per character: a proper prefix of it, or such a prefix then
/// another character and anything, or all of it and more.
pub(super) fn not_suffix(e: &mut Emitter<'_, '_, '_>, suffix: &[char]) -> Expr {
    let text: CompactString = suffix.iter().collect();
    let mut arms = Vec::with_capacity(suffix.len() + 1);
    let mut end = 0;
    for &c in suffix {
        arms.push(after(&text[..end], other_start(e, &[c], Stop::Yes)));
        end += c.len_utf8();
    }
    arms.push(after(&text, other_start(e, &[], Stop::No)));
    Expr::alt(arms)
}

/// `prefix` then the rule `rule` (an [`other_start`] reference): [`Expr::seq`]'s normal
/// form, built directly, as each of a flat exclusion's many arms is.
pub(super) fn after(prefix: &str, rule: Expr) -> Expr {
    if prefix.is_empty() {
        rule
    } else {
        Expr::Seq(vec![Expr::Literal(prefix.into()), rule])
    }
}

/// May the key contents end where an [`other_start`] rule begins?
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Stop {
    /// Yes: the rule also matches the empty text (`ko-…`).
    Yes,
    /// No: at least one character follows (`kx-…`).
    No,
}

/// Key contents that start with a character other than the plain characters `excluded`
/// (or with an escape), or with `Stop::Yes` nothing at all: a rule named after the set,
/// made once per grammar.
pub(super) fn other_start(e: &mut Emitter<'_, '_, '_>, excluded: &[char], stop: Stop) -> Expr {
    let stop_too = stop == Stop::Yes;
    let body = |e: &mut Emitter<'_, '_, '_>| {
        e.emit_shared("cchar");
        e.emit_shared("cesc");
        blocks::other_start(excluded, stop_too)
    };
    if excluded.len() > 16 {
        return body(e);
    }
    // The prefix, then each character: itself when a letter or digit, else `-{hex}-`.
    let mut name = [0u8; OR_STOP_PREFIX.len() + 16 * "-10ffff-".len()];
    let prefix = if stop_too {
        OR_STOP_PREFIX
    } else {
        OTHER_START_PREFIX
    };
    name[..prefix.len()].copy_from_slice(prefix.as_bytes());
    let mut len = prefix.len();
    for &c in excluded {
        if c.is_ascii_alphanumeric() {
            name[len] = c as u8;
            len += 1;
        } else {
            let code = u32::from(c);
            let digits = (32 - code.leading_zeros()).div_ceil(4).max(1);
            name[len] = b'-';
            for i in 0..digits {
                let nibble = (code >> (4 * (digits - 1 - i))) & 0xf;
                name[len + 1 + i as usize] = json_text::HEX_DIGITS[nibble as usize];
            }
            len += digits as usize + 1;
            name[len] = b'-';
            len += 1;
        }
    }
    // Only ASCII was written.
    let name = std::str::from_utf8(&name[..len]).unwrap_or_default();
    e.named_rule(name, body)
}

/// The prefix of the "any other first character" rule names (`other_start`), which no
/// other rule name may take.
pub const OTHER_START_PREFIX: &str = "kx-";

/// The prefix of the "any other first character" rule names (`other_start`) that also
/// match the empty text, which no other rule name may take.
pub const OR_STOP_PREFIX: &str = "ko-";
