//! ECMA-262 patterns (Unicode mode) rewritten in regex-syntax's dialect, every
//! ECMA-specific meaning spelled out (step 1 of the [module](super) description).

use super::{PatternError, MAX_COUNT};
use std::fmt::Write as _;

pub(super) const DIGIT: &str = "[0-9]";
pub(super) const NOT_DIGIT: &str = "[^0-9]";
pub(super) const WORD: &str = "[0-9A-Za-z_]";
pub(super) const NOT_WORD: &str = "[^0-9A-Za-z_]";
pub(super) const SPACE: &str = r"[\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
pub(super) const NOT_SPACE: &str = r"[^\x{9}-\x{D}\x{20}\x{A0}\x{1680}\x{2000}-\x{200A}\x{2028}\x{2029}\x{202F}\x{205F}\x{3000}\x{FEFF}]";
pub(super) const DOT: &str = "[^\\n\\r\u{2028}\u{2029}]";
pub(super) const ANYTHING: &str = r"[\x{0}-\x{10FFFF}]";
pub(super) const NOTHING: &str = r"[^\x{0}-\x{10FFFF}]";

/// ECMA's syntax characters plus `/`: the identity escapes Unicode mode allows.
pub(super) const IDENTITY_ESCAPES: &str = "^$\\.*+?()[]{}|/";

/// Flags in force inside a group.
#[derive(Debug, Clone, Copy, Default)]
pub(super) struct Flags {
    ignore_case: bool,
    dot_all: bool,
    multiline: bool,
}

/// One class atom: a character, or a class escape already written in regex-syntax syntax.
pub(super) enum Atom {
    Char(char),
    Set(String),
}

/// Rewrites an ECMA-262 pattern (Unicode mode) into regex-syntax's dialect with the same
/// meaning; see the module documentation.
pub(super) fn to_regex_syntax(pattern: &str) -> Result<String, PatternError> {
    Lexer {
        chars: pattern.chars().collect(),
        pos: 0,
        out: String::with_capacity(pattern.len() * 2),
        flags: vec![Flags::default()],
    }
    .run()
}

pub(super) struct Lexer {
    chars: Vec<char>,
    pos: usize,
    out: String,
    /// One entry per open group, plus the pattern's own.
    flags: Vec<Flags>,
}

pub(super) fn invalid(msg: impl Into<String>) -> PatternError {
    PatternError::Invalid(msg.into())
}

pub(super) fn unsupported(msg: impl Into<String>) -> PatternError {
    PatternError::Unsupported(msg.into())
}

pub(super) fn push_char(out: &mut String, c: char) {
    if c.is_ascii_alphanumeric() {
        out.push(c);
    } else {
        let _ = write!(out, "\\x{{{:X}}}", u32::from(c));
    }
}

impl Lexer {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.pos).copied()
    }

    fn peek_at(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.pos + ahead).copied()
    }

    fn next_char(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += 1;
        Some(c)
    }

    fn eat(&mut self, c: char) -> bool {
        if self.peek() == Some(c) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn flags(&self) -> Flags {
        self.flags.last().copied().unwrap_or_default()
    }

    fn run(mut self) -> Result<String, PatternError> {
        // Whether the previous item can take a quantifier.
        let mut quantifiable = false;
        while let Some(c) = self.next_char() {
            match c {
                '\\' => {
                    match self.escape(false)? {
                        Atom::Char(c) => push_char(&mut self.out, c),
                        Atom::Set(set) => self.out.push_str(&set),
                    }
                    quantifiable = true;
                }
                '.' => {
                    let dot = if self.flags().dot_all { ANYTHING } else { DOT };
                    self.out.push_str(dot);
                    quantifiable = true;
                }
                '^' | '$' => {
                    if self.flags().multiline {
                        return Err(unsupported(format!("`{c}` under the multiline flag")));
                    }
                    self.out.push(c);
                    quantifiable = false;
                }
                '(' => {
                    self.group()?;
                    quantifiable = false;
                }
                ')' => {
                    if self.flags.len() <= 1 {
                        return Err(invalid("unmatched `)`"));
                    }
                    self.flags.pop();
                    self.out.push(')');
                    quantifiable = true;
                }
                '[' => {
                    self.class()?;
                    quantifiable = true;
                }
                '|' => {
                    self.out.push('|');
                    quantifiable = false;
                }
                '*' | '+' | '?' => {
                    if !quantifiable {
                        return Err(invalid(format!("nothing to repeat before `{c}`")));
                    }
                    self.out.push(c);
                    self.eat('?');
                    quantifiable = false;
                }
                '{' => {
                    let (min, max) = self.counts()?;
                    if !quantifiable {
                        return Err(invalid("nothing to repeat before `{`"));
                    }
                    match max {
                        Some(max) if max == min => {
                            let _ = write!(self.out, "{{{min}}}");
                        }
                        Some(max) => {
                            let _ = write!(self.out, "{{{min},{max}}}");
                        }
                        None => {
                            let _ = write!(self.out, "{{{min},}}");
                        }
                    }
                    self.eat('?');
                    quantifiable = false;
                }
                '}' | ']' => return Err(invalid(format!("lone `{c}` (escape it as `\\{c}`)"))),
                c => {
                    push_char(&mut self.out, c);
                    quantifiable = true;
                }
            }
        }
        if self.flags.len() > 1 {
            return Err(invalid("unclosed group"));
        }
        Ok(self.out)
    }

    /// `{n}`, `{n,}` or `{n,m}` after the `{`.
    fn counts(&mut self) -> Result<(u64, Option<u64>), PatternError> {
        let bad = || invalid("`{` that does not start a quantifier `{n}`, `{n,}` or `{n,m}`");
        let min = self.decimal().ok_or_else(bad)?;
        let max = if self.eat(',') {
            if self.peek() == Some('}') {
                None
            } else {
                Some(self.decimal().ok_or_else(bad)?)
            }
        } else {
            Some(min)
        };
        if !self.eat('}') {
            return Err(bad());
        }
        if max.is_some_and(|max| max < min) {
            return Err(invalid(format!(
                "repetition minimum {min} above its maximum {}",
                max.unwrap_or(0)
            )));
        }
        if min.max(max.unwrap_or(0)) > MAX_COUNT {
            return Err(unsupported(format!("repetition counts above {MAX_COUNT}")));
        }
        Ok((min, max))
    }

    fn decimal(&mut self) -> Option<u64> {
        let mut value: Option<u64> = None;
        while let Some(d) = self.peek().and_then(|c| c.to_digit(10)) {
            self.pos += 1;
            value = Some(
                value
                    .unwrap_or(0)
                    .saturating_mul(10)
                    .saturating_add(u64::from(d)),
            );
        }
        value
    }

    /// A group, after its `(`.
    fn group(&mut self) -> Result<(), PatternError> {
        let mut flags = self.flags();
        if self.eat('?') {
            match self.next_char() {
                Some(':') => self.out.push_str("(?:"),
                Some('=' | '!') => return Err(unsupported("lookahead")),
                Some('<') if matches!(self.peek(), Some('=' | '!')) => {
                    return Err(unsupported("lookbehind"))
                }
                Some('<') => {
                    let mut name_len = 0usize;
                    loop {
                        match self.next_char() {
                            Some('>') => break,
                            Some(c)
                                if c == '$'
                                    || c == '_'
                                    || c.is_alphabetic()
                                    || (name_len > 0 && c.is_alphanumeric()) =>
                            {
                                name_len += 1;
                            }
                            _ => return Err(invalid("malformed group name")),
                        }
                    }
                    if name_len == 0 {
                        return Err(invalid("empty group name"));
                    }
                    self.out.push_str("(?:");
                }
                Some('i' | 'm' | 's' | '-') => {
                    self.pos -= 1;
                    flags = self.modifiers(flags)?;
                }
                _ => {
                    return Err(invalid(
                        "`(?` must be followed by `:`, `=`, `!`, `<` or modifiers",
                    ))
                }
            }
        } else {
            self.out.push_str("(?:");
        }
        self.flags.push(flags);
        Ok(())
    }

    /// ES2025 modifiers `(?ims-ims:`, after the `(?`.
    fn modifiers(&mut self, mut flags: Flags) -> Result<Flags, PatternError> {
        let mut seen = String::new();
        let mut adding = true;
        let mut case: Option<bool> = None;
        loop {
            match self.next_char() {
                Some(':') => break,
                Some('-') if adding => adding = false,
                Some(c @ ('i' | 'm' | 's')) => {
                    if seen.contains(c) {
                        return Err(invalid(format!("modifier `{c}` given twice")));
                    }
                    seen.push(c);
                    match c {
                        'i' => {
                            flags.ignore_case = adding;
                            case = Some(adding);
                        }
                        'm' => flags.multiline = adding,
                        _ => flags.dot_all = adding,
                    }
                }
                Some(')') => {
                    return Err(invalid(
                        "flag groups like `(?i)` are not ECMA-262; use a modifier group `(?i:…)`",
                    ))
                }
                _ => return Err(invalid("malformed modifier group")),
            }
        }
        if seen.is_empty() {
            return Err(invalid("empty modifier group"));
        }
        self.out.push_str(match case {
            Some(true) => "(?i:",
            Some(false) => "(?-i:",
            None => "(?:",
        });
        Ok(flags)
    }

    /// A character class, after its `[`.
    fn class(&mut self) -> Result<(), PatternError> {
        let negated = self.eat('^');
        let mut body = String::new();
        loop {
            match self.peek() {
                None => return Err(invalid("unterminated character class")),
                Some(']') => {
                    self.pos += 1;
                    break;
                }
                Some(_) => {}
            }
            let first = self.class_atom()?;
            if self.peek() == Some('-') && self.peek_at(1).is_some_and(|c| c != ']') {
                self.pos += 1;
                let last = self.class_atom()?;
                match (first, last) {
                    (Atom::Char(lo), Atom::Char(hi)) => {
                        if lo > hi {
                            return Err(invalid(format!(
                                "class range out of order: U+{:04X}-U+{:04X}",
                                u32::from(lo),
                                u32::from(hi)
                            )));
                        }
                        push_char(&mut body, lo);
                        body.push('-');
                        push_char(&mut body, hi);
                    }
                    _ => return Err(invalid("a class escape cannot bound a range")),
                }
            } else {
                match first {
                    Atom::Char(c) => push_char(&mut body, c),
                    Atom::Set(set) => body.push_str(&set),
                }
            }
        }
        if body.is_empty() {
            self.out.push_str(if negated { ANYTHING } else { NOTHING });
        } else {
            self.out.push('[');
            if negated {
                self.out.push('^');
            }
            self.out.push_str(&body);
            self.out.push(']');
        }
        Ok(())
    }

    fn class_atom(&mut self) -> Result<Atom, PatternError> {
        match self.next_char() {
            Some('\\') => self.escape(true),
            Some(c) => Ok(Atom::Char(c)),
            None => Err(invalid("unterminated character class")),
        }
    }

    /// An escape, after its `\`.
    fn escape(&mut self, in_class: bool) -> Result<Atom, PatternError> {
        let Some(c) = self.next_char() else {
            return Err(invalid("`\\` at the end of the pattern"));
        };
        let set = |s: &str| Ok(Atom::Set(s.to_string()));
        match c {
            'd' => set(DIGIT),
            'D' => set(NOT_DIGIT),
            'w' => set(WORD),
            'W' => set(NOT_WORD),
            's' => set(SPACE),
            'S' => set(NOT_SPACE),
            'p' | 'P' => self.property(c),
            'b' if in_class => Ok(Atom::Char('\u{8}')),
            'b' | 'B' if !in_class => Err(unsupported(format!("word boundary `\\{c}`"))),
            '-' if in_class => Ok(Atom::Char('-')),
            'f' => Ok(Atom::Char('\u{c}')),
            'n' => Ok(Atom::Char('\n')),
            'r' => Ok(Atom::Char('\r')),
            't' => Ok(Atom::Char('\t')),
            'v' => Ok(Atom::Char('\u{b}')),
            'c' => match self.next_char() {
                Some(l) if l.is_ascii_alphabetic() => Ok(Atom::Char(char::from((l as u8) % 32))),
                _ => Err(invalid("`\\c` must be followed by an ASCII letter")),
            },
            '0' if !self.peek().is_some_and(|d| d.is_ascii_digit()) => Ok(Atom::Char('\0')),
            '0' => Err(invalid("octal escapes are not allowed in Unicode mode")),
            '1'..='9' if !in_class => Err(unsupported("backreferences")),
            'k' if !in_class => Err(unsupported("named backreferences")),
            'x' => {
                let hi = self.next_char().and_then(|c| c.to_digit(16));
                let lo = self.next_char().and_then(|c| c.to_digit(16));
                match (hi, lo) {
                    (Some(hi), Some(lo)) => char::from_u32(hi * 16 + lo)
                        .map(Atom::Char)
                        .ok_or_else(|| invalid("bad `\\x` escape")),
                    _ => Err(invalid("`\\x` must be followed by two hex digits")),
                }
            }
            'u' => self.unicode_escape().map(Atom::Char),
            c if IDENTITY_ESCAPES.contains(c) => Ok(Atom::Char(c)),
            c => Err(invalid(format!(
                "`\\{c}` is not an escape in ECMA-262 Unicode mode"
            ))),
        }
    }

    fn hex4(&mut self) -> Option<u32> {
        let mut value = 0;
        for _ in 0..4 {
            value = value * 16 + self.peek()?.to_digit(16)?;
            self.pos += 1;
        }
        Some(value)
    }

    /// `\uHHHH` (a surrogate pair as two escapes) or `\u{H…}`, after the `u`.
    fn unicode_escape(&mut self) -> Result<char, PatternError> {
        let value = if self.eat('{') {
            let mut value: u32 = 0;
            let mut digits = 0;
            while let Some(d) = self.peek().and_then(|c| c.to_digit(16)) {
                self.pos += 1;
                digits += 1;
                value = value.saturating_mul(16).saturating_add(d);
            }
            if digits == 0 || !self.eat('}') || value > 0x10FFFF {
                return Err(invalid("malformed `\\u{…}` escape"));
            }
            value
        } else {
            let Some(first) = self.hex4() else {
                return Err(invalid(
                    "`\\u` must be followed by four hex digits or `{…}`",
                ));
            };
            if (0xD800..0xDC00).contains(&first)
                && self.peek() == Some('\\')
                && self.peek_at(1) == Some('u')
            {
                let save = self.pos;
                self.pos += 2;
                match self.hex4() {
                    Some(second) if (0xDC00..0xE000).contains(&second) => {
                        0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
                    }
                    _ => {
                        self.pos = save;
                        first
                    }
                }
            } else {
                first
            }
        };
        char::from_u32(value).ok_or_else(|| unsupported("lone surrogates"))
    }

    /// `\p{…}` or `\P{…}`, after the letter.
    fn property(&mut self, letter: char) -> Result<Atom, PatternError> {
        if !self.eat('{') {
            return Err(invalid(format!("`\\{letter}` must be followed by `{{…}}`")));
        }
        let mut name = String::new();
        loop {
            match self.next_char() {
                Some('}') => break,
                Some(c) if c.is_ascii_alphanumeric() || c == '_' || c == '=' => name.push(c),
                _ => return Err(invalid("malformed Unicode property escape")),
            }
        }
        if name.is_empty() {
            return Err(invalid("empty Unicode property escape"));
        }
        Ok(Atom::Set(format!("\\{letter}{{{name}}}")))
    }
}
