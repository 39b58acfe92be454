//! Rule names respelled for an engine whose names are narrower than llama.cpp's
//! `[a-zA-Z0-9-]+`.
//!
//! A name the engine already reads is kept. Any other is replaced by its legal spelling;
//! where that spelling is taken (by a kept name, a fixed one such as Lark's `start`, or an
//! earlier replacement), `-2`, `-3`, … is appended until it is free. The renaming is a
//! function of the grammar alone, so the output is deterministic, and it is one-to-one, so
//! no two rules merge.

use rustc_hash::{FxHashMap, FxHashSet};

use crate::gbnf::ast::{CompactString, Grammar};

/// `grammar` with every rule and reference renamed: `fixed` names first (`(old, new)`,
/// such as `("root", "start")`), then every name for which `legal` gives another spelling.
pub(super) fn respelled(
    grammar: &Grammar,
    legal: impl Fn(&str) -> CompactString,
    fixed: &[(&str, &str)],
) -> Grammar {
    let mut renames: FxHashMap<CompactString, CompactString> = FxHashMap::default();
    let mut taken: FxHashSet<CompactString> = FxHashSet::default();
    for (old, new) in fixed {
        renames.insert((*old).into(), (*new).into());
        taken.insert((*new).into());
    }
    let names: Vec<&CompactString> = grammar.rules.iter().map(|rule| &rule.name).collect();
    let mut kept: FxHashSet<&CompactString> = FxHashSet::default();
    for name in &names {
        if !renames.contains_key(*name) && !taken.contains(*name) && legal(name) == **name {
            taken.insert((*name).clone());
            kept.insert(name);
        }
    }
    for name in names {
        if renames.contains_key(name) || kept.contains(name) {
            continue;
        }
        let spelling = legal(name);
        let mut free = spelling.clone();
        let mut suffix = 2u32;
        while taken.contains(&free) {
            free = format!("{spelling}-{suffix}").into();
            suffix += 1;
        }
        taken.insert(free.clone());
        renames.insert(name.clone(), free);
    }
    let mut out = grammar.clone();
    for rule in &mut out.rules {
        if let Some(new) = renames.get(&rule.name) {
            rule.name = new.clone();
        }
        // A reference to a rule that is not defined keeps its legal spelling; `check`
        // reports it before a grammar gets here.
        rule.body
            .rename_refs(|name| Some(renames.get(name).cloned().unwrap_or_else(|| legal(name))));
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::gbnf::parse;

    fn lower(name: &str) -> CompactString {
        name.to_ascii_lowercase().into()
    }

    #[test]
    fn kept_names_win_and_collisions_are_numbered() {
        let grammar = parse("root ::= Foo foo FOO start\nFoo ::= \"a\"\nfoo ::= \"b\"\nFOO ::= \"c\"\nstart ::= \"d\"\n").unwrap();
        let out = respelled(&grammar, lower, &[("root", "start")]);
        assert_eq!(
            out.to_string(),
            "start ::= foo-2 foo foo-3 start-2\nfoo-2 ::= \"a\"\nfoo ::= \"b\"\nfoo-3 ::= \"c\"\nstart-2 ::= \"d\"\n"
        );
    }
}
