//! The building blocks compiled schemas share: `value`, `object`, `array`, `string`,
//! `number`, … and the first-character rules of extra keys (`kx-a`: a key that does not
//! start with `a`). The shared blocks' bodies never depend on the schema, so each is built
//! once per process and copied into every grammar that uses it.

use std::sync::LazyLock;

use super::Whitespace;
use crate::gbnf::Expr;
use crate::json_text;

/// The shared building blocks' names; no other rule may take them.
pub const SHARED: &[&str] = &[
    "value", "object", "array", "string", "char", "cchar", "cesc", "number", "integer", "boolean",
    "null", "ws",
];

/// One shared building block, built once per process.
pub struct Block {
    /// The rule's body.
    pub body: Expr,
    /// The blocks the body refers to, in the order it meets them (a grammar defines them
    /// before the block, in that order).
    pub refers_to: Vec<&'static str>,
}

/// The shared block `name` under `whitespace`; `None` for a name not in [`SHARED`].
pub fn shared(name: &str, whitespace: Whitespace) -> Option<&'static Block> {
    let index = SHARED.iter().position(|n| *n == name)?;
    let blocks = match whitespace {
        Whitespace::Compact => &*COMPACT,
        Whitespace::Flexible => &*FLEXIBLE,
    };
    blocks.get(index)
}

static COMPACT: LazyLock<Vec<Block>> = LazyLock::new(|| blocks(Whitespace::Compact));
static FLEXIBLE: LazyLock<Vec<Block>> = LazyLock::new(|| blocks(Whitespace::Flexible));

fn blocks(whitespace: Whitespace) -> Vec<Block> {
    SHARED
        .iter()
        .map(|name| {
            let body = body(name, whitespace);
            let mut refers_to = Vec::new();
            body.walk(|expr| {
                if let Expr::Ref { name, .. } = expr {
                    // Blocks refer only to blocks.
                    if let Some(block) = SHARED.iter().find(|n| **n == name.as_str()) {
                        refers_to.push(*block);
                    }
                }
            });
            Block { body, refers_to }
        })
        .collect()
}

/// `text` with the whitespace `whitespace` allows around it.
fn token(text: &str, whitespace: Whitespace) -> Expr {
    let ws = match whitespace {
        Whitespace::Compact => Expr::empty(),
        Whitespace::Flexible => Expr::rule("ws"),
    };
    Expr::seq([ws.clone(), Expr::literal(text), ws])
}

/// `open (item (comma item)*)? close`.
fn delimited(open: Expr, item: Expr, comma: Expr, close: Expr) -> Expr {
    Expr::seq([
        open,
        Expr::repeat(
            Expr::seq([
                item.clone(),
                Expr::repeat(Expr::seq([comma, item]), 0, None),
            ]),
            0,
            Some(1),
        ),
        close,
    ])
}

fn body(name: &str, whitespace: Whitespace) -> Expr {
    let token = |text| token(text, whitespace);
    match name {
        "value" => Expr::alt(
            ["object", "array", "string", "number"]
                .map(Expr::rule)
                .into_iter()
                .chain(["true", "false", "null"].map(Expr::literal)),
        ),
        "object" => {
            let member = Expr::seq([Expr::rule("string"), token(":"), Expr::rule("value")]);
            delimited(token("{"), member, token(","), token("}"))
        }
        "array" => delimited(token("["), Expr::rule("value"), token(","), token("]")),
        "string" => Expr::seq([
            Expr::literal("\""),
            Expr::repeat(Expr::rule("char"), 0, None),
            Expr::literal("\""),
        ]),
        "char" => json_text::any_string_char(),
        "cchar" => json_text::any_canonical_char(),
        "cesc" => canonical_escape(),
        // No `-0`: serde_json reads it as the float -0.0, which a draft-04 validator
        // (the `jsonschema` crate, following a declared `$schema`) calls no integer.
        "integer" => Expr::alt([
            Expr::literal("0"),
            Expr::seq([
                Expr::repeat(Expr::literal("-"), 0, Some(1)),
                nonzero_natural(),
            ]),
        ]),
        "number" => {
            let digits = Expr::repeat(Expr::class(false, [('0', '9')]), 1, None);
            Expr::seq([
                Expr::repeat(Expr::literal("-"), 0, Some(1)),
                Expr::Group(Box::new(Expr::alt([Expr::literal("0"), nonzero_natural()]))),
                Expr::repeat(Expr::seq([Expr::literal("."), digits.clone()]), 0, Some(1)),
                Expr::repeat(
                    Expr::seq([
                        Expr::class(false, [('e', 'e'), ('E', 'E')]),
                        Expr::repeat(Expr::class(false, [('-', '-'), ('+', '+')]), 0, Some(1)),
                        digits,
                    ]),
                    0,
                    Some(1),
                ),
            ])
        }
        "boolean" => Expr::alt([Expr::literal("true"), Expr::literal("false")]),
        "null" => Expr::literal("null"),
        "ws" => Expr::seq([
            Expr::repeat(Expr::literal("\n"), 0, Some(1)),
            Expr::repeat(Expr::class(false, [(' ', ' '), ('\t', '\t')]), 0, Some(20)),
        ]),
        _ => Expr::empty(),
    }
}

/// The canonical escapes: the characters `"`, `\` and U+0000–U+001F as serde_json
/// writes them.
fn canonical_escape() -> Expr {
    json_text::chars_expr(&[(0, 0x1F), (0x22, 0x22), (0x5C, 0x5C)]).unwrap_or_else(Expr::empty)
}

/// `[1-9] [0-9]*`: a natural number above zero, without leading zeros.
fn nonzero_natural() -> Expr {
    Expr::seq([
        Expr::class(false, [('1', '9')]),
        Expr::repeat(Expr::class(false, [('0', '9')]), 0, None),
    ])
}

/// The body of an extra key's contents that do not start with a plain character among
/// `excluded` (escapes always may): `([^"\\\x00-\x1F…] | cesc) cchar*`, or with
/// `or_nothing` also the empty text: `"" | ([^…] | cesc) cchar*`. Refers to the shared
/// `cesc` and `cchar`.
pub fn other_start(excluded: &[char], or_nothing: bool) -> Expr {
    let mut class: Vec<(char, char)> = vec![('"', '"'), ('\\', '\\'), ('\u{0}', '\u{1f}')];
    class.extend(excluded.iter().map(|&c| (c, c)));
    let something = Expr::seq([
        Expr::Group(Box::new(Expr::alt([
            Expr::class(true, class),
            Expr::rule("cesc"),
        ]))),
        Expr::repeat(Expr::rule("cchar"), 0, None),
    ]);
    if or_nothing {
        Expr::alt([Expr::empty(), something])
    } else {
        something
    }
}
