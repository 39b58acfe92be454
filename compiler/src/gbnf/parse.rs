//! GBNF text → [`Grammar`], with pest.
//!
//! The pest grammar (`gbnf.pest`) follows llama.cpp's hand-written parser rule for rule.
//! Before pest runs, a short lexical scan bounds what could otherwise exhaust the stack
//! (parentheses nested deeper than [`MAX_NESTING`]) and turns the most common mistake, an
//! unterminated literal or class, into a message that points at its opening quote.

use pest::iterators::Pair;
use pest::Parser as _;
use thiserror::Error;

use super::ast::{ClassRange, Expr, Grammar, Pos, Rule as GRule, TokenRef};
use crate::diagnostic::Diagnostic;

/// The deepest nesting of parentheses accepted. Real grammars stay far below it; the
/// bound keeps every recursive pass over the tree (here and in llama.cpp) shallow.
pub const MAX_NESTING: usize = 100;

/// The most postfix operators accepted on one item (`x*?+…`).
pub const MAX_POSTFIX_CHAIN: usize = 8;

mod generated {
    //! The pest parser generated from `gbnf.pest`.
    #![allow(missing_docs)]
    #[derive(pest_derive::Parser)]
    #[grammar = "gbnf/gbnf.pest"]
    pub(super) struct GbnfParser;
}
use generated::{GbnfParser, Rule};

/// A GBNF text that could not be parsed.
#[derive(Debug, Clone, Error, PartialEq, Eq)]
#[error("{diagnostic}")]
pub struct ParseError {
    /// What went wrong and where.
    pub diagnostic: Diagnostic,
}

impl ParseError {
    fn at(pos: Pos, code: &'static str, message: impl Into<String>) -> Self {
        ParseError {
            diagnostic: Diagnostic::error(code, Some(pos), message),
        }
    }
}

/// Parses GBNF source text.
///
/// ```
/// use gbnfc_compiler::gbnf::{parse, Expr};
/// let g = parse("root ::= \"yes\" | \"no\"\n").unwrap();
/// assert_eq!(g.rules[0].body, Expr::alt([Expr::literal("yes"), Expr::literal("no")]));
/// ```
///
/// # Errors
/// A [`ParseError`] with the line:column of the first problem.
pub fn parse(source: &str) -> Result<Grammar, ParseError> {
    let lines = LineIndex::new(source);
    prescan(source, &lines)?;
    let mut pairs = GbnfParser::parse(Rule::grammar, source).map_err(|e| pest_error(&e, &lines))?;
    let builder = Builder { lines: &lines };
    let mut grammar = Grammar::default();
    if let Some(top) = pairs.next() {
        for rule in top.into_inner() {
            if rule.as_rule() == Rule::rule {
                grammar.rules.push(builder.rule(rule)?);
            }
        }
    }
    Ok(grammar)
}

/// Maps byte offsets to line:column positions. Lookups in increasing order (the parser's)
/// cost amortised O(1) beyond the line search: the last position is remembered, and
/// columns are counted on from it instead of from the start of the line.
struct LineIndex<'s> {
    source: &'s str,
    starts: Vec<usize>,
    /// The last lookup: byte offset, line, column.
    last: std::cell::Cell<(usize, usize, usize)>,
}

impl<'s> LineIndex<'s> {
    fn new(source: &'s str) -> Self {
        let mut starts = vec![0];
        starts.extend(source.match_indices('\n').map(|(i, _)| i + 1));
        LineIndex {
            source,
            starts,
            last: std::cell::Cell::new((0, 1, 1)),
        }
    }

    fn pos(&self, offset: usize) -> Pos {
        let line = self.starts.partition_point(|&s| s <= offset).max(1);
        let (last_offset, last_line, last_column) = self.last.get();
        let (from, base) = if last_line == line && last_offset <= offset {
            (last_offset, last_column)
        } else {
            (self.starts[line - 1], 1)
        };
        let column = base
            + self
                .source
                .get(from..offset)
                .map_or(0, |s| s.chars().count());
        self.last.set((offset, line, column));
        Pos {
            line: u32::try_from(line).unwrap_or(u32::MAX),
            column: u32::try_from(column).unwrap_or(u32::MAX),
        }
    }
}

/// A lexical pass: bounds parenthesis nesting and finds unterminated literals and classes.
fn prescan(source: &str, lines: &LineIndex<'_>) -> Result<(), ParseError> {
    let mut depth = 0usize;
    let mut chars = source.char_indices();
    while let Some((at, c)) = chars.next() {
        match c {
            '#' => {
                for (inner_at, c) in chars.by_ref() {
                    if c == '\0' {
                        return Err(nul_error(lines.pos(inner_at)));
                    }
                    if c == '\n' {
                        break;
                    }
                }
            }
            '"' | '[' => {
                let close = if c == '"' { '"' } else { ']' };
                let mut closed = false;
                while let Some((inner_at, c)) = chars.next() {
                    if c == '\0' {
                        return Err(nul_error(lines.pos(inner_at)));
                    }
                    if c == '\\' {
                        if let Some((escaped_at, '\0')) = chars.next() {
                            return Err(nul_error(lines.pos(escaped_at)));
                        }
                    } else if c == close {
                        closed = true;
                        break;
                    }
                }
                if !closed {
                    let what = if c == '"' {
                        "string literal"
                    } else {
                        "character class"
                    };
                    return Err(ParseError {
                        diagnostic: Diagnostic::error(
                            "unterminated",
                            Some(lines.pos(at)),
                            format!("unterminated {what}: no closing `{close}` before the end of the input"),
                        )
                        .with_help(format!("close it with `{close}`; write a literal `{close}` inside as `\\{close}`")),
                    });
                }
            }
            '<' => {
                // Token text (`<|im_end|>`) is opaque: quotes or brackets in it open nothing.
                for (_, c) in chars.by_ref() {
                    if c == '>' || c == '\n' {
                        break;
                    }
                }
            }
            '(' => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(ParseError {
                        diagnostic: Diagnostic::error(
                            "too-deep",
                            Some(lines.pos(at)),
                            format!("parentheses nested more than {MAX_NESTING} deep"),
                        )
                        .with_help("move inner groups into rules of their own"),
                    });
                }
            }
            ')' => depth = depth.saturating_sub(1),
            '\0' => return Err(nul_error(lines.pos(at))),
            _ => {}
        }
    }
    Ok(())
}

fn nul_error(pos: Pos) -> ParseError {
    ParseError {
        diagnostic: Diagnostic::error(
            "nul",
            Some(pos),
            "a raw NUL character: llama.cpp reads a grammar as a C string, which ends at NUL",
        )
        .with_help("write it as the escape \\x00"),
    }
}

/// Turns pest's "expected …" error into a diagnostic with friendly names.
fn pest_error(error: &pest::error::Error<Rule>, lines: &LineIndex<'_>) -> ParseError {
    let offset = match error.location {
        pest::error::InputLocation::Pos(p) => p,
        pest::error::InputLocation::Span((p, _)) => p,
    };
    let found = match lines.source.get(offset..).and_then(|s| s.chars().next()) {
        None => "end of input".to_string(),
        Some('\n' | '\r') => "end of line".to_string(),
        Some(c) => format!("`{}`", c.escape_debug()),
    };
    let mut expected: Vec<&str> = match &error.variant {
        pest::error::ErrorVariant::ParsingError { positives, .. } => {
            positives.iter().filter_map(|r| friendly(*r)).collect()
        }
        pest::error::ErrorVariant::CustomError { .. } => Vec::new(),
    };
    expected.sort_unstable();
    expected.dedup();
    let message = if expected.is_empty() {
        format!("unexpected {found}")
    } else {
        format!("unexpected {found}; expected {}", expected.join(", "))
    };
    let diagnostic = Diagnostic::error("syntax", Some(lines.pos(offset)), message).with_help(
        "a rule is `name ::= alternatives` on one line (newlines are allowed inside ( ) and after |)",
    );
    ParseError { diagnostic }
}

fn friendly(expected: Rule) -> Option<&'static str> {
    Some(match expected {
        Rule::rule | Rule::rule_name => "a rule `name ::= …`",
        Rule::literal => "a \"literal\"",
        Rule::class | Rule::class_item => "a [character class]",
        Rule::token => "a <token>",
        Rule::reference => "a rule name",
        Rule::group => "a (group)",
        Rule::any => "`.`",
        Rule::postfix | Rule::star | Rule::plus | Rule::question | Rule::braces => {
            "a repetition (* + ? {m,n})"
        }
        Rule::braces_exact | Rule::braces_range => "`}` or `,`",
        Rule::integer => "a number",
        Rule::hex_escape | Rule::simple_escape => {
            "an escape (\\xHH \\uHHHH \\UHHHHHHHH \\t \\r \\n \\\\ \\\" \\[ \\] \\-)"
        }
        Rule::raw_literal | Rule::raw_class => "a character",
        Rule::EOI => "end of input",
        Rule::token_id | Rule::token_text => "a token id [123] or token text",
        _ => return None,
    })
}

struct Builder<'a, 's> {
    lines: &'a LineIndex<'s>,
}

impl Builder<'_, '_> {
    fn pos(&self, pair: &Pair<'_, Rule>) -> Pos {
        self.lines.pos(pair.as_span().start())
    }

    fn rule(&self, pair: Pair<'_, Rule>) -> Result<GRule, ParseError> {
        let mut inner = pair.into_inner();
        let (name, body) = match (inner.next(), inner.next()) {
            (Some(name), Some(body)) => (name, body),
            _ => unreachable_shape(),
        };
        Ok(GRule {
            name: name.as_str().into(),
            pos: self.pos(&name),
            body: self.alternates(body)?,
        })
    }

    fn alternates(&self, pair: Pair<'_, Rule>) -> Result<Expr, ParseError> {
        let arms = pair
            .into_inner()
            .map(|seq| self.sequence(seq))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Expr::alt(arms))
    }

    fn sequence(&self, pair: Pair<'_, Rule>) -> Result<Expr, ParseError> {
        let mut items = Vec::new();
        for item in pair.into_inner() {
            let mut parts = item.into_inner();
            let Some(primary) = parts.next() else {
                continue;
            };
            let primary_pos = self.pos(&primary);
            let mut expr = self.primary(primary)?;
            for (count, postfix) in parts.enumerate() {
                if count >= MAX_POSTFIX_CHAIN {
                    return Err(ParseError::at(
                        self.pos(&postfix),
                        "too-deep",
                        format!("more than {MAX_POSTFIX_CHAIN} repetition operators on one item"),
                    ));
                }
                if expr == Expr::empty() {
                    return Err(ParseError::at(
                        primary_pos,
                        "empty-repeat",
                        "nothing to repeat: the literal before this operator is empty (llama.cpp refuses it)",
                    ));
                }
                expr = self.postfix(postfix, expr)?;
            }
            items.push(expr);
        }
        Ok(Expr::seq(items))
    }

    fn primary(&self, pair: Pair<'_, Rule>) -> Result<Expr, ParseError> {
        let pos = self.pos(&pair);
        Ok(match pair.as_rule() {
            Rule::literal => {
                let mut text = String::new();
                for part in pair.into_inner() {
                    match part.as_rule() {
                        Rule::raw_literal => text.push_str(part.as_str()),
                        _ => text.push(self.escape(&part)?),
                    }
                }
                Expr::literal(text)
            }
            Rule::class => {
                let mut negated = false;
                let mut ranges = Vec::new();
                for part in pair.into_inner() {
                    if part.as_rule() == Rule::class_not {
                        negated = true;
                        continue;
                    }
                    let mut ends = part.into_inner();
                    let lo = match ends.next() {
                        Some(c) => self.class_char(&c)?,
                        None => unreachable_shape(),
                    };
                    let hi = match ends.next() {
                        Some(c) => self.class_char(&c)?,
                        None => lo,
                    };
                    ranges.push(ClassRange { lo, hi });
                }
                if ranges.is_empty() {
                    return Err(ParseError::at(
                        pos,
                        "empty-class",
                        "empty character class: it can match nothing (llama.cpp would read it as the empty string)",
                    ));
                }
                Expr::Class { negated, ranges }
            }
            Rule::token => {
                let mut negated = false;
                let mut token = None;
                for part in pair.into_inner() {
                    match part.as_rule() {
                        Rule::token_not => negated = true,
                        Rule::token_id => {
                            let digits = part.as_str().trim_matches(|c| c == '[' || c == ']');
                            let id = digits.parse::<u32>().map_err(|_| {
                                ParseError::at(pos, "token-id", "token id does not fit in 32 bits")
                            })?;
                            token = Some(TokenRef::Id(id));
                        }
                        _ => token = Some(TokenRef::Text(part.as_str().to_string())),
                    }
                }
                let Some(token) = token else {
                    unreachable_shape()
                };
                Expr::Token { negated, token }
            }
            Rule::reference => Expr::Ref {
                name: pair.as_str().into(),
                pos,
            },
            Rule::group => {
                let body = match pair.into_inner().next() {
                    Some(alts) => self.alternates(alts)?,
                    None => Expr::empty(),
                };
                Expr::Group(Box::new(body))
            }
            Rule::any => Expr::Any,
            _ => unreachable_shape(),
        })
    }

    fn postfix(&self, pair: Pair<'_, Rule>, expr: Expr) -> Result<Expr, ParseError> {
        let pos = self.pos(&pair);
        let Some(op) = pair.into_inner().next() else {
            unreachable_shape()
        };
        let (min, max) = match op.as_rule() {
            Rule::star => (0, None),
            Rule::plus => (1, None),
            Rule::question => (0, Some(1)),
            _ => {
                let mut parts = op.into_inner();
                let min = match parts.next() {
                    Some(n) => self.count(&n)?,
                    None => unreachable_shape(),
                };
                match parts.next() {
                    Some(tail) if tail.as_rule() == Rule::braces_range => {
                        match tail.into_inner().next() {
                            Some(n) => (min, Some(self.count(&n)?)),
                            None => (min, None),
                        }
                    }
                    _ => (min, Some(min)),
                }
            }
        };
        Ok(Expr::Repeat {
            expr: Box::new(expr),
            min,
            max,
            pos,
        })
    }

    fn count(&self, pair: &Pair<'_, Rule>) -> Result<u32, ParseError> {
        pair.as_str().parse::<u32>().map_err(|_| {
            ParseError::at(
                self.pos(pair),
                "repeat-bound",
                format!("repetition count {} is far too large", pair.as_str()),
            )
        })
    }

    fn class_char(&self, pair: &Pair<'_, Rule>) -> Result<char, ParseError> {
        match pair.as_rule() {
            Rule::raw_class => pair
                .as_str()
                .chars()
                .next()
                .ok_or_else(|| ParseError::at(self.pos(pair), "syntax", "expected a character")),
            _ => self.escape(pair),
        }
    }

    fn escape(&self, pair: &Pair<'_, Rule>) -> Result<char, ParseError> {
        let text = pair.as_str();
        if pair.as_rule() == Rule::simple_escape {
            return Ok(match text {
                "t" => '\t',
                "r" => '\r',
                "n" => '\n',
                other => other.chars().next().unwrap_or('\\'),
            });
        }
        let value = u32::from_str_radix(&text[1..], 16).unwrap_or(u32::MAX);
        char::from_u32(value).ok_or_else(|| {
            ParseError::at(
                self.pos(pair),
                "bad-escape",
                format!("\\{text} is not a Unicode scalar value (surrogates and values above 10FFFF are not characters)"),
            )
        })
    }
}

/// The pest grammar guarantees the shape of every pair the builder takes apart; reaching
/// this means the grammar file and the builder disagree, a bug in this crate.
#[allow(clippy::panic)]
fn unreachable_shape() -> ! {
    panic!("gbnf.pest and the AST builder disagree about a pair's shape (a bug in gbnfc)")
}
