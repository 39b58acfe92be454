//! [`Grammar`] → the Lark dialect llguidance reads (vLLM's and SGLang's `llguidance`
//! backend; `start` is the start rule).
//!
//! Rules are written `name: body`. A character class and `.` are one-character regular
//! expressions (`/[a-z]/`, `/(?s:.)/`: Lark's `.` stops at a newline, GBNF's does not) in
//! the syntax of Rust's `regex` crate, which llguidance uses. The empty string is `()`,
//! since Lark refuses a repetition of zero (`x{0}`). Rule names are the caller's to make
//! legal (lowercase, starting with a letter).
//!
//! Two things keep the language GBNF's:
//! - **A literal is written one character a string** (`"ab"` → `"a" "b"`). Every string
//!   and regex is a lexeme for llguidance, and its lexer is greedy: where one lexeme could
//!   end and a longer one go on, it goes on and never comes back. With `"aaa" "a" | . [^b]
//!   [^a] "a"`, `aaua` would fail after `aa`, inside `"aaa"`. When every lexeme is one
//!   character long, none can be the start of another (UTF-8 is prefix-free).
//! - **Parentheses nest at most [`MAX_PARENS`] deep.** llguidance's Lark reader refuses
//!   deeper nesting (30); a deeper group becomes a rule of its own, `NAME-nest`, `-nest-2`,
//!   … after the rule it came from.

use rustc_hash::FxHashSet;

use super::super::ast::{ClassRange, CompactString, Expr, Grammar, TokenRef};
use super::super::print::{push_number, write_repetition};

/// The deepest parentheses written in one rule (llguidance's reader takes 28).
const MAX_PARENS: usize = 16;

/// The grammar in Lark, one rule a line. Token references print as llguidance's
/// `<[id]>`, `<[^id]>` and `<text>`; a negated token by text has no spelling there, and
/// [`super::Target::render`] refuses it before this is called.
pub(super) fn grammar_text(grammar: &Grammar) -> String {
    let mut writer = Writer {
        out: String::new(),
        names: grammar.rules.iter().map(|r| r.name.clone()).collect(),
        lifted: Vec::new(),
        rule: CompactString::default(),
    };
    for rule in &grammar.rules {
        writer.rule(&rule.name, &rule.body);
        // Groups lifted out of this rule, and out of those, each on its own line.
        while let Some((name, body)) = writer.lifted.pop() {
            writer.rule(&name, body);
        }
    }
    writer.out
}

/// Writes rules, lifting groups nested too deep into rules of their own.
struct Writer<'a> {
    out: String,
    /// Every rule name written or reserved, for fresh names.
    names: FxHashSet<CompactString>,
    /// Groups lifted out, to be written as rules.
    lifted: Vec<(CompactString, &'a Expr)>,
    /// The rule being written (lifted rules are named after it).
    rule: CompactString,
}

impl<'a> Writer<'a> {
    fn rule(&mut self, name: &CompactString, body: &'a Expr) {
        self.rule = name.clone();
        self.out.push_str(name);
        self.out.push_str(": ");
        self.expr(body, 0);
        self.out.push('\n');
    }

    /// Writes `expr` inside `depth` parentheses.
    fn expr(&mut self, expr: &'a Expr, depth: usize) {
        match expr {
            Expr::Alt(arms) => {
                for (i, arm) in arms.iter().enumerate() {
                    if i > 0 {
                        self.out.push_str(" | ");
                    }
                    self.expr(arm, depth);
                }
            }
            Expr::Seq(items) if items.is_empty() => self.out.push_str("()"),
            Expr::Seq(items) => {
                for (i, item) in items.iter().enumerate() {
                    if i > 0 {
                        self.out.push(' ');
                    }
                    match item {
                        Expr::Seq(inner) if !inner.is_empty() => self.parenthesized(item, depth),
                        Expr::Alt(_) => self.parenthesized(item, depth),
                        _ => self.expr(item, depth),
                    }
                }
            }
            Expr::Literal(text) if text.is_empty() => self.out.push_str("()"),
            Expr::Literal(text) => {
                for (i, c) in text.chars().enumerate() {
                    if i > 0 {
                        self.out.push(' ');
                    }
                    self.out.push('"');
                    write_string_char(&mut self.out, c);
                    self.out.push('"');
                }
            }
            Expr::Class { negated, ranges } => {
                self.out.push_str(if *negated { "/[^" } else { "/[" });
                for ClassRange { lo, hi } in ranges {
                    write_regex_char(&mut self.out, *lo);
                    if lo != hi {
                        self.out.push('-');
                        write_regex_char(&mut self.out, *hi);
                    }
                }
                self.out.push_str("]/");
            }
            Expr::Any => self.out.push_str("/(?s:.)/"),
            Expr::Ref { name, .. } => self.out.push_str(name),
            Expr::Group(inner) => self.parenthesized(inner, depth),
            Expr::Repeat { max: Some(0), .. } => self.out.push_str("()"),
            Expr::Repeat { expr, min, max, .. } => {
                match expr.as_ref() {
                    Expr::Seq(_) | Expr::Alt(_) | Expr::Repeat { .. } => {
                        self.parenthesized(expr, depth)
                    }
                    Expr::Literal(text) if text.chars().nth(1).is_some() => {
                        self.parenthesized(expr, depth)
                    }
                    _ => self.expr(expr, depth),
                }
                // Never `{0}`: that is `()`, above.
                write_repetition(&mut self.out, *min, *max);
            }
            Expr::Token { negated, token } => match token {
                TokenRef::Id(id) => {
                    self.out.push_str(if *negated { "<[^" } else { "<[" });
                    push_number(&mut self.out, *id);
                    self.out.push_str("]>");
                }
                TokenRef::Text(text) => {
                    self.out.push('<');
                    self.out.push_str(text);
                    self.out.push('>');
                }
            },
        }
    }

    /// `(expr)`, or a reference to a new rule holding `expr` where the parentheses would
    /// nest deeper than [`MAX_PARENS`].
    fn parenthesized(&mut self, expr: &'a Expr, depth: usize) {
        if depth < MAX_PARENS {
            self.out.push('(');
            self.expr(expr, depth + 1);
            self.out.push(')');
            return;
        }
        let base = format!("{}-nest", self.rule);
        let mut name: CompactString = base.as_str().into();
        let mut suffix = 2u32;
        while self.names.contains(&name) {
            name = format!("{base}-{suffix}").into();
            suffix += 1;
        }
        self.names.insert(name.clone());
        self.out.push_str(&name);
        self.lifted.push((name, expr));
    }
}

/// One character of a JSON string: `"` and `\` escaped, control characters as `\n`, `\r`,
/// `\t` or `\u00XX`, everything else as it is.
fn write_string_char(out: &mut String, c: char) {
    match c {
        '"' => out.push_str("\\\""),
        '\\' => out.push_str("\\\\"),
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c.is_control() => {
            out.push_str("\\u00");
            push_hex_byte(out, u32::from(c));
        }
        c => out.push(c),
    }
}

/// One character inside a regex class (`regex` crate syntax, between Lark's slashes):
/// the class operators (`\ [ ] ^ - & ~`) escaped with a backslash, `/` (which would end
/// the regex) and control characters as `\x{HH}`, everything else as it is.
fn write_regex_char(out: &mut String, c: char) {
    match c {
        '\\' | '[' | ']' | '^' | '-' | '&' | '~' => {
            out.push('\\');
            out.push(c);
        }
        '\n' => out.push_str("\\n"),
        '\r' => out.push_str("\\r"),
        '\t' => out.push_str("\\t"),
        c if c == '/' || c.is_control() => {
            out.push_str("\\x{");
            push_hex_byte(out, u32::from(c));
            out.push('}');
        }
        c => out.push(c),
    }
}

/// Two uppercase hex digits of `v` (below 0x100: every control character is).
fn push_hex_byte(out: &mut String, v: u32) {
    const HEX: &[u8; 16] = b"0123456789ABCDEF";
    out.push(char::from(HEX[(v >> 4) as usize & 0xF]));
    out.push(char::from(HEX[v as usize & 0xF]));
}
