//! proptest strategies for grammars (feature `arbitrary`), shared by this crate's tests
//! and the bridge's, which feeds the same grammars to llama.cpp.
//!
//! - [`well_formed_grammar`]: grammars that must pass `check` — no left recursion (every
//!   leftmost reference points to a later rule), every rule with a finite derivation (each
//!   rule's first alternative references only later rules), unbounded repetitions only
//!   over non-empty expressions, small bounds.
//! - [`any_grammar`]: any tree in normal form, valid or not (undefined names, `_` in names,
//!   huge bounds, token references, awkward characters) — for the printer round trip.

use proptest::prelude::*;

use super::ast::{ClassRange, Expr, Grammar, Rule, TokenRef};

/// Names the strategies draw rule names from (`root` first).
const NAMES: [&str; 8] = [
    "root",
    "value",
    "item-2",
    "x",
    "Alpha",
    "r5",
    "list-of-things",
    "0b",
];

/// Characters for literals and classes, weighted towards the ones printers get wrong.
fn awkward_char() -> impl Strategy<Value = char> {
    prop_oneof![
        6 => prop::char::range('a', 'z'),
        2 => prop::sample::select(vec![
            '"', '\\', '\n', '\r', '\t', '[', ']', '-', '^', ' ', '#', '|', '(', ')', '<', '>',
            '{', '}', '*', '?', '+', '.', ':', '=', '\u{0}', '\u{1f}', '\u{7f}', '\u{85}',
            'é', '€', '😀', '\u{2028}', '\u{feff}',
        ]),
        1 => any::<char>(),
    ]
}

fn literal() -> impl Strategy<Value = Expr> {
    prop::collection::vec(awkward_char(), 1..5)
        .prop_map(|cs| Expr::Literal(cs.into_iter().collect()))
}

fn class() -> impl Strategy<Value = Expr> {
    (
        any::<bool>(),
        prop::collection::vec((awkward_char(), 0u32..40), 1..4),
    )
        .prop_map(|(negated, items)| Expr::Class {
            negated,
            ranges: items
                .into_iter()
                .map(|(lo, width)| ClassRange {
                    lo,
                    hi: char::from_u32(u32::from(lo) + width).unwrap_or(lo),
                })
                .collect(),
        })
}

/// A leaf that always matches at least one character.
fn solid_leaf() -> BoxedStrategy<Expr> {
    prop_oneof![3 => literal(), 2 => class(), 1 => Just(Expr::Any)].boxed()
}

fn leaf(refs: Vec<String>) -> BoxedStrategy<Expr> {
    if refs.is_empty() {
        solid_leaf()
    } else {
        prop_oneof![
            3 => solid_leaf(),
            2 => prop::sample::select(refs).prop_map(Expr::rule),
        ]
        .boxed()
    }
}

/// Expressions over `refs`, as `check` accepts them.
fn expr(refs: Vec<String>) -> BoxedStrategy<Expr> {
    leaf(refs)
        .prop_recursive(3, 24, 4, |inner| {
            let solid = (literal(), inner.clone()).prop_map(|(lead, e)| Expr::seq([lead, e]));
            prop_oneof![
                3 => prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::seq),
                2 => prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::alt),
                1 => inner.clone().prop_map(|e| Expr::Group(Box::new(e))),
                2 => (inner, 0u32..3, 0u32..3)
                    .prop_map(|(e, min, extra)| Expr::repeat(e, min, Some(min + extra))),
                2 => (solid, 0u32..3).prop_map(|(e, min)| Expr::repeat(e, min, None)),
            ]
        })
        .boxed()
}

/// Grammars that pass `check`: see the module documentation for how.
pub fn well_formed_grammar() -> impl Strategy<Value = Grammar> {
    (1usize..=NAMES.len()).prop_flat_map(|count| {
        let names: Vec<String> = NAMES[..count].iter().map(|s| s.to_string()).collect();
        let bodies: Vec<BoxedStrategy<Expr>> = (0..count)
            .map(|i| {
                let later = names[i + 1..].to_vec();
                let base = expr(later);
                let guarded = (solid_leaf(), expr(names.clone()))
                    .prop_map(|(guard, e)| Expr::seq([guard, e]));
                (base, prop::collection::vec(guarded, 0..3))
                    .prop_map(|(base, extra)| Expr::alt(std::iter::once(base).chain(extra)))
                    .boxed()
            })
            .collect();
        bodies.prop_map(move |bodies| grammar_of(&names, bodies))
    })
}

/// Any grammar in normal form, whether or not it passes `check`.
pub fn any_grammar() -> impl Strategy<Value = Grammar> {
    let name = prop_oneof![
        4 => prop::sample::select(NAMES.to_vec()).prop_map(str::to_string),
        1 => "[a-zA-Z0-9_-]{1,6}",
    ];
    let token = (
        any::<bool>(),
        prop_oneof![
            any::<u32>().prop_map(TokenRef::Id),
            "[a-z|_]{1,8}".prop_map(TokenRef::Text),
        ],
    )
        .prop_map(|(negated, token)| Expr::Token { negated, token });
    let leaf = prop_oneof![
        4 => solid_leaf(),
        2 => name.clone().prop_map(Expr::rule),
        1 => token,
        1 => Just(Expr::empty()),
    ];
    let body = leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            3 => prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::seq),
            2 => prop::collection::vec(inner.clone(), 2..4).prop_map(Expr::alt),
            1 => inner.clone().prop_map(|e| Expr::Group(Box::new(e))),
            2 => (inner, 0u32..3000, prop::option::of(0u32..3000))
                .prop_map(|(e, min, max)| Expr::repeat(e, min, max)),
        ]
    });
    prop::collection::vec((name, body), 1..6).prop_map(|rules| Grammar {
        rules: rules
            .into_iter()
            .map(|(name, body)| Rule {
                name: name.into(),
                body,
                pos: Default::default(),
            })
            .collect(),
    })
}

fn grammar_of(names: &[String], bodies: Vec<Expr>) -> Grammar {
    let mut grammar = Grammar::default();
    for (name, body) in names.iter().zip(bodies) {
        grammar.push(name.clone(), body);
    }
    grammar
}
