//! [`Grammar`] → GBNF text that llama.cpp parses, or the same in XGrammar's spelling.
//!
//! One rule per line, single spaces, escapes only where needed. For trees in normal form
//! (see [`super::ast`]) the output parses back to the same tree; other trees still print
//! as valid GBNF, with parentheses added where the structure needs them.
//!
//! XGrammar's EBNF grew out of GBNF and reads the same text but for a few spellings:
//! there `.` belongs to rule names, so any character is `[^]`; `\x` takes every hex digit
//! that follows, so a control character is `\u00XX`; and two repetition operators never
//! follow one atom, so a repeated repetition is parenthesized.

use std::fmt;

use super::ast::{ClassRange, Expr, Grammar, Rule, TokenRef};

/// Whose spelling the printer writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Spelling {
    /// llama.cpp's GBNF.
    Llama,
    /// XGrammar's EBNF (rule names are the caller's to make legal there).
    Xgrammar,
}

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&grammar_text(self, Spelling::Llama))
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        write_rule(&mut text, self, Spelling::Llama);
        f.write_str(&text)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        write_expr(&mut text, self, Spelling::Llama);
        f.write_str(&text)
    }
}

/// The whole grammar in `spelling`, one rule a line.
pub(crate) fn grammar_text(grammar: &Grammar, spelling: Spelling) -> String {
    let mut text = String::new();
    for rule in &grammar.rules {
        write_rule(&mut text, rule, spelling);
        text.push('\n');
    }
    text
}

fn write_rule(out: &mut String, rule: &Rule, spelling: Spelling) {
    out.push_str(&rule.name);
    out.push_str(" ::= ");
    write_expr(out, &rule.body, spelling);
}

fn write_expr(out: &mut String, expr: &Expr, spelling: Spelling) {
    match expr {
        Expr::Alt(arms) => {
            for (i, arm) in arms.iter().enumerate() {
                if i > 0 {
                    out.push_str(" | ");
                }
                write_expr(out, arm, spelling);
            }
        }
        Expr::Seq(items) if items.is_empty() => out.push_str("\"\""),
        Expr::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(' ');
                }
                match item {
                    Expr::Seq(inner) if !inner.is_empty() => parenthesized(out, item, spelling),
                    Expr::Alt(_) => parenthesized(out, item, spelling),
                    _ => write_expr(out, item, spelling),
                }
            }
        }
        Expr::Literal(text) => {
            out.push('"');
            // Printable ASCII but `"` and `\\` (the usual case) is written as it is.
            let plain_ascii = text
                .bytes()
                .all(|b| (0x20..0x7F).contains(&b) && b != b'"' && b != b'\\');
            if plain_ascii || text.chars().all(|c| !needs_escape(c, LITERAL_SPECIAL)) {
                out.push_str(text);
            } else {
                text.chars()
                    .for_each(|c| write_char_escaped(out, c, LITERAL_SPECIAL, spelling));
            }
            out.push('"');
        }
        Expr::Class { negated, ranges } => {
            out.push('[');
            if *negated {
                out.push('^');
            }
            for (i, ClassRange { lo, hi }) in ranges.iter().enumerate() {
                if i == 0 && !negated && *lo == '^' {
                    out.push_str(match spelling {
                        Spelling::Llama => "\\x5E",
                        Spelling::Xgrammar => "\\^",
                    });
                } else {
                    write_class_char(out, *lo, spelling);
                }
                if lo != hi {
                    out.push('-');
                    write_class_char(out, *hi, spelling);
                }
            }
            out.push(']');
        }
        Expr::Any => out.push_str(match spelling {
            Spelling::Llama => ".",
            Spelling::Xgrammar => "[^]",
        }),
        Expr::Ref { name, .. } => out.push_str(name),
        Expr::Group(inner) => parenthesized(out, inner, spelling),
        Expr::Repeat { expr, min, max, .. } => {
            match expr.as_ref() {
                Expr::Seq(_) | Expr::Alt(_) => parenthesized(out, expr, spelling),
                Expr::Repeat { .. } if spelling == Spelling::Xgrammar => {
                    parenthesized(out, expr, spelling)
                }
                _ => write_expr(out, expr, spelling),
            }
            write_repetition(out, *min, *max);
        }
        Expr::Token { negated, token } => {
            if *negated {
                out.push('!');
            }
            match token {
                TokenRef::Id(id) => {
                    out.push_str("<[");
                    push_number(out, *id);
                    out.push_str("]>");
                }
                TokenRef::Text(text) => {
                    out.push('<');
                    out.push_str(text);
                    out.push('>');
                }
            }
        }
    }
}

/// Characters a literal escapes with a backslash.
const LITERAL_SPECIAL: &[char] = &['"', '\\'];

/// Characters a class escapes with a backslash.
const CLASS_SPECIAL: &[char] = &[']', '[', '\\', '-'];

fn parenthesized(out: &mut String, expr: &Expr, spelling: Spelling) {
    out.push('(');
    write_expr(out, expr, spelling);
    out.push(')');
}

/// `*`, `+`, `?`, `{m}`, `{m,}` or `{m,n}`: GBNF's repetition operators, which XGrammar and
/// Lark spell the same.
pub(crate) fn write_repetition(out: &mut String, min: u32, max: Option<u32>) {
    match (min, max) {
        (0, None) => out.push('*'),
        (1, None) => out.push('+'),
        (0, Some(1)) => out.push('?'),
        (m, None) => {
            out.push('{');
            push_number(out, m);
            out.push_str(",}");
        }
        (m, Some(n)) => {
            out.push('{');
            push_number(out, m);
            if m != n {
                out.push(',');
                push_number(out, n);
            }
            out.push('}');
        }
    }
}

/// Appends `n` in decimal (without the formatting machinery `write!` goes through).
pub(crate) fn push_number(out: &mut String, n: impl Into<u64>) {
    let mut digits = [0u8; 20];
    let mut at = digits.len();
    let mut rest: u64 = n.into();
    loop {
        at -= 1;
        digits[at] = b'0' + (rest % 10) as u8;
        rest /= 10;
        if rest == 0 {
            break;
        }
    }
    digits[at..].iter().for_each(|&d| out.push(char::from(d)));
}

fn write_class_char(out: &mut String, c: char, spelling: Spelling) {
    if needs_escape(c, CLASS_SPECIAL) {
        write_char_escaped(out, c, CLASS_SPECIAL, spelling);
    } else {
        out.push(c);
    }
}

/// `true` when [`write_char_escaped`] writes something other than `c` itself.
fn needs_escape(c: char, special: &[char]) -> bool {
    c.is_control() || special.contains(&c)
}

/// Writes `c`, escaping the characters in `special` with a backslash and control
/// characters as hex escapes (`\xHH` for llama.cpp, `\u00HH` for XGrammar, whose `\x`
/// would read on into hex digits that follow); everything else (non-ASCII included) is
/// written as is.
fn write_char_escaped(out: &mut String, c: char, special: &[char], spelling: Spelling) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    match c {
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if special.contains(&c) => {
            out.push('\\');
            out.push(c);
        }
        c if c.is_control() => {
            // Controls are U+0000–U+001F and U+007F–U+009F: two hex digits each.
            let v = u32::from(c);
            out.push_str(match spelling {
                Spelling::Llama => "\\x",
                Spelling::Xgrammar => "\\u00",
            });
            out.push(char::from(HEX[(v >> 4) as usize & 0xF]));
            out.push(char::from(HEX[v as usize & 0xF]));
        }
        c => out.push(c),
    }
}
