//! [`Grammar`] → GBNF text that llama.cpp parses.
//!
//! One rule per line, single spaces, escapes only where needed. For trees in normal form
//! (see [`super::ast`]) the output parses back to the same tree; other trees still print
//! as valid GBNF, with parentheses added where the structure needs them.

use std::fmt;

use super::ast::{ClassRange, Expr, Grammar, Rule, TokenRef};

impl fmt::Display for Grammar {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Printed into a String first: monomorphic writes are several times faster than
        // the formatter's dynamic ones.
        let mut text = String::with_capacity(self.rules.len() * 64);
        for rule in &self.rules {
            write_rule(&mut text, rule)?;
            text.push('\n');
        }
        f.write_str(&text)
    }
}

impl fmt::Display for Rule {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        write_rule(&mut text, self)?;
        f.write_str(&text)
    }
}

impl fmt::Display for Expr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut text = String::new();
        write_expr(&mut text, self)?;
        f.write_str(&text)
    }
}

fn write_rule<W: fmt::Write>(f: &mut W, rule: &Rule) -> fmt::Result {
    f.write_str(&rule.name)?;
    f.write_str(" ::= ")?;
    write_expr(f, &rule.body)
}

fn write_expr<W: fmt::Write>(f: &mut W, expr: &Expr) -> fmt::Result {
    match expr {
        Expr::Alt(arms) => {
            for (i, arm) in arms.iter().enumerate() {
                if i > 0 {
                    f.write_str(" | ")?;
                }
                write_expr(f, arm)?;
            }
            Ok(())
        }
        Expr::Seq(items) if items.is_empty() => f.write_str("\"\""),
        Expr::Seq(items) => {
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    f.write_char(' ')?;
                }
                match item {
                    Expr::Seq(inner) if !inner.is_empty() => parenthesized(f, item)?,
                    Expr::Alt(_) => parenthesized(f, item)?,
                    _ => write_expr(f, item)?,
                }
            }
            Ok(())
        }
        Expr::Literal(text) => {
            f.write_char('"')?;
            if text.chars().all(|c| !needs_escape(c, LITERAL_SPECIAL)) {
                f.write_str(text)?;
            } else {
                for c in text.chars() {
                    write_char_escaped(f, c, LITERAL_SPECIAL)?;
                }
            }
            f.write_char('"')
        }
        Expr::Class { negated, ranges } => {
            f.write_char('[')?;
            if *negated {
                f.write_char('^')?;
            }
            for (i, ClassRange { lo, hi }) in ranges.iter().enumerate() {
                if i == 0 && !negated && *lo == '^' {
                    f.write_str("\\x5E")?;
                } else {
                    write_class_char(f, *lo)?;
                }
                if lo != hi {
                    f.write_char('-')?;
                    write_class_char(f, *hi)?;
                }
            }
            f.write_char(']')
        }
        Expr::Any => f.write_char('.'),
        Expr::Ref { name, .. } => f.write_str(name),
        Expr::Group(inner) => parenthesized(f, inner),
        Expr::Repeat { expr, min, max, .. } => {
            match expr.as_ref() {
                Expr::Seq(_) | Expr::Alt(_) => parenthesized(f, expr)?,
                _ => write_expr(f, expr)?,
            }
            match (min, max) {
                (0, None) => f.write_char('*'),
                (1, None) => f.write_char('+'),
                (0, Some(1)) => f.write_char('?'),
                (m, None) => write!(f, "{{{m},}}"),
                (m, Some(n)) if m == n => write!(f, "{{{m}}}"),
                (m, Some(n)) => write!(f, "{{{m},{n}}}"),
            }
        }
        Expr::Token { negated, token } => {
            if *negated {
                f.write_char('!')?;
            }
            match token {
                TokenRef::Id(id) => write!(f, "<[{id}]>"),
                TokenRef::Text(text) => write!(f, "<{text}>"),
            }
        }
    }
}

/// Characters a literal escapes with a backslash.
const LITERAL_SPECIAL: &[char] = &['"', '\\'];

/// Characters a class escapes with a backslash.
const CLASS_SPECIAL: &[char] = &[']', '[', '\\', '-'];

fn parenthesized<W: fmt::Write>(f: &mut W, expr: &Expr) -> fmt::Result {
    f.write_char('(')?;
    write_expr(f, expr)?;
    f.write_char(')')
}

fn write_class_char<W: fmt::Write>(f: &mut W, c: char) -> fmt::Result {
    if needs_escape(c, CLASS_SPECIAL) {
        write_char_escaped(f, c, CLASS_SPECIAL)
    } else {
        f.write_char(c)
    }
}

/// `true` when [`write_char_escaped`] writes something other than `c` itself.
fn needs_escape(c: char, special: &[char]) -> bool {
    c.is_control() || special.contains(&c)
}

/// Writes `c`, escaping the characters in `special` with a backslash and control
/// characters as hex escapes; everything else (non-ASCII included) is written as is.
fn write_char_escaped<W: fmt::Write>(f: &mut W, c: char, special: &[char]) -> fmt::Result {
    match c {
        '\n' => f.write_str("\\n"),
        '\r' => f.write_str("\\r"),
        '\t' => f.write_str("\\t"),
        c if special.contains(&c) => write!(f, "\\{c}"),
        c if c.is_control() => match u32::from(c) {
            v if v <= 0xFF => write!(f, "\\x{v:02X}"),
            v => write!(f, "\\u{v:04X}"),
        },
        c => f.write_char(c),
    }
}
