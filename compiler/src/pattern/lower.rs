//! regex-syntax's HIR lowered to GBNF expressions over JSON string contents, split into
//! branches by anchors (step 3 of the [module](super) description).

use super::ecma::{unsupported, DOT, NOT_DIGIT, NOT_SPACE, NOT_WORD, SPACE};
use super::{parser, PatternError, LLAMA_MAX_REPEAT, MAX_BRANCHES, MAX_CHUNKS, MAX_NODES};
use crate::gbnf::{Expr, Grammar};
use crate::json_text::{any_canonical_char, chars_expr, encode_str};
use regex_syntax::hir::{self, Hir, HirKind, Look};
use std::sync::LazyLock;

/// One top-level branch: optionally anchored at either end, with anchor-free items.
#[derive(Default, Clone)]
pub(super) struct Branch<'h> {
    /// Anchored at the start (`^`).
    pub(super) start: bool,
    /// Anchored at the end (`$`).
    pub(super) end: bool,
    /// What it matches, in order, anchor-free.
    pub(super) items: Vec<&'h Hir>,
}

/// Any run of characters at an unanchored end: a reference to the shared rule
/// [`ANY_CHAR_RULE`] rather than its body, which every such end would repeat.
pub(super) fn any_star() -> Expr {
    Expr::repeat(Expr::rule(ANY_CHAR_RULE), 0, None)
}

/// The rule the expressions of [`pattern_expr`](super::pattern_expr) refer to for any one character in its
/// canonical spelling ([`any_canonical_char`]): the compiler's shared `cchar` block.
pub const ANY_CHAR_RULE: &str = "cchar";

/// Does `expr` (from [`pattern_expr`](super::pattern_expr)) refer to [`ANY_CHAR_RULE`]?
pub fn refers_to_any_char(expr: &Expr) -> bool {
    let mut found = false;
    expr.walk(|e| found |= matches!(e, Expr::Ref { name, .. } if name == ANY_CHAR_RULE));
    found
}

/// A grammar whose `root` is `expr` (from [`pattern_expr`](super::pattern_expr)), with [`ANY_CHAR_RULE`]
/// defined when `expr` refers to it.
pub fn pattern_grammar(expr: Expr) -> Grammar {
    let any = refers_to_any_char(&expr);
    let mut grammar = Grammar::default();
    grammar.push("root", expr);
    if any {
        grammar.push(ANY_CHAR_RULE, any_canonical_char());
    }
    grammar
}

/// Whether `h` matches the empty text.
pub(super) fn nullable(h: &Hir) -> bool {
    min_len(h) == Some(0)
}

/// The length in characters of the shortest text `h` matches; `None` when it matches
/// nothing. (regex-syntax's `minimum_len` is `None` for `[]*` and `(|[])`, which match
/// the empty text.)
pub(super) fn min_len(h: &Hir) -> Option<u64> {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => Some(0),
        HirKind::Literal(hir::Literal(bytes)) => {
            Some(std::str::from_utf8(bytes).map_or(bytes.len(), |s| s.chars().count()) as u64)
        }
        HirKind::Class(hir::Class::Unicode(c)) => (!c.ranges().is_empty()).then_some(1),
        HirKind::Class(hir::Class::Bytes(c)) => (!c.ranges().is_empty()).then_some(1),
        HirKind::Capture(c) => min_len(&c.sub),
        HirKind::Concat(items) => items
            .iter()
            .try_fold(0u64, |n, item| Some(n.saturating_add(min_len(item)?))),
        HirKind::Alternation(arms) => arms.iter().filter_map(min_len).min(),
        HirKind::Repetition(r) => {
            if r.max == Some(0) {
                return Some(0);
            }
            match min_len(&r.sub) {
                Some(n) => Some(n.saturating_mul(u64::from(r.min))),
                None if r.min == 0 => Some(0),
                None => None,
            }
        }
    }
}

/// Whether every text `h` matches is empty (vacuously when it matches nothing).
pub(super) fn only_empty_texts(h: &Hir) -> bool {
    match h.kind() {
        HirKind::Empty | HirKind::Look(_) => true,
        HirKind::Literal(_) => false,
        HirKind::Class(_) => min_len(h).is_none(),
        HirKind::Capture(c) => only_empty_texts(&c.sub),
        HirKind::Concat(items) => {
            items.iter().all(only_empty_texts) || items.iter().any(|i| min_len(i).is_none())
        }
        HirKind::Alternation(arms) => arms.iter().all(only_empty_texts),
        HirKind::Repetition(r) => r.max == Some(0) || only_empty_texts(&r.sub),
    }
}

/// Search semantics: `Σ* R Σ*`, with the `Σ*` dropped where an anchor stands.
pub(super) fn search_expr(hir: &Hir) -> Result<Expr, PatternError> {
    let mut arms = Vec::new();
    for branch in expand(hir)? {
        let mut items = Vec::new();
        let mut empty = false;
        for item in &branch.items {
            match expr(item)? {
                Some(e) => items.push(e),
                None => empty = true,
            }
        }
        if empty {
            continue;
        }
        let matches_empty = branch.items.iter().all(|h| nullable(h));
        if matches_empty && !(branch.start && branch.end) {
            // `R Σ*`, `Σ* R` and `Σ* R Σ*` are all `Σ*` when R matches the empty text.
            return Ok(any_star());
        }
        let mut seq = Vec::new();
        if !branch.start {
            seq.push(any_star());
        }
        seq.extend(items);
        if !branch.end {
            seq.push(any_star());
        }
        arms.push(Expr::seq(seq));
    }
    if arms.is_empty() {
        return Err(PatternError::Empty);
    }
    Ok(Expr::alt(arms))
}

/// Whether the items can only match the empty text; `Some(false)` when they cannot match
/// it at all; `None` when they may match both.
pub(super) fn only_empty(items: &[&Hir]) -> Option<bool> {
    if items.iter().all(|h| only_empty_texts(h)) {
        Some(true)
    } else if items.iter().any(|h| !nullable(h)) {
        Some(false)
    } else {
        None
    }
}

/// Splits `h` into branches at its anchors (distributing alternations that contain them).
pub(super) fn expand(h: &Hir) -> Result<Vec<Branch<'_>>, PatternError> {
    if h.properties().look_set().is_empty() {
        return Ok(vec![Branch {
            items: vec![h],
            ..Branch::default()
        }]);
    }
    match h.kind() {
        HirKind::Look(Look::Start) => Ok(vec![Branch {
            start: true,
            ..Branch::default()
        }]),
        HirKind::Look(Look::End) => Ok(vec![Branch {
            end: true,
            ..Branch::default()
        }]),
        HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
        HirKind::Capture(c) => expand(&c.sub),
        HirKind::Alternation(arms) => {
            let mut out = Vec::new();
            for arm in arms {
                out.extend(expand(arm)?);
                if out.len() > MAX_BRANCHES {
                    return Err(unsupported("too many anchored alternatives"));
                }
            }
            Ok(out)
        }
        HirKind::Concat(items) => {
            let mut acc = vec![Branch::default()];
            for item in items {
                let parts = expand(item)?;
                let mut next = Vec::new();
                for before in &acc {
                    for part in &parts {
                        if part.start && !before.items.is_empty() {
                            match only_empty(&before.items) {
                                Some(true) => {}
                                Some(false) => continue, // `a^`: never matches.
                                None => return Err(unsupported("`^` after something optional")),
                            }
                        }
                        if before.end && !part.items.is_empty() {
                            match only_empty(&part.items) {
                                Some(true) => {}
                                Some(false) => continue, // `$a`: never matches.
                                None => return Err(unsupported("`$` before something optional")),
                            }
                        }
                        let mut items = before.items.clone();
                        items.extend(part.items.iter().copied());
                        next.push(Branch {
                            start: before.start || part.start,
                            end: before.end || part.end,
                            items,
                        });
                    }
                }
                if next.len() > MAX_BRANCHES {
                    return Err(unsupported("too many anchored alternatives"));
                }
                acc = next;
            }
            Ok(acc)
        }
        HirKind::Repetition(_) => Err(unsupported("an anchor inside a repetition")),
        HirKind::Empty | HirKind::Literal(_) | HirKind::Class(_) => Ok(vec![Branch {
            items: vec![h],
            ..Branch::default()
        }]),
    }
}

/// The expression for an anchor-free `h`; `None` when it matches nothing.
pub(super) fn expr(h: &Hir) -> Result<Option<Expr>, PatternError> {
    match h.kind() {
        HirKind::Empty => Ok(Some(Expr::empty())),
        HirKind::Literal(hir::Literal(bytes)) => match std::str::from_utf8(bytes) {
            Ok(text) => Ok(Some(Expr::literal(encode_str(text)))),
            Err(_) => Err(unsupported("a literal that is not UTF-8")),
        },
        HirKind::Class(class) => class_expr(class),
        HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
        HirKind::Capture(c) => expr(&c.sub),
        HirKind::Concat(items) => {
            let mut out = Vec::with_capacity(items.len());
            for item in items {
                match expr(item)? {
                    Some(e) => out.push(e),
                    None => return Ok(None),
                }
            }
            Ok(Some(Expr::seq(out)))
        }
        HirKind::Alternation(arms) => {
            let mut out = Vec::with_capacity(arms.len());
            for arm in arms {
                out.extend(expr(arm)?);
            }
            Ok(alternatives(out))
        }
        HirKind::Repetition(r) => repetition(r),
    }
}

/// An alternation; an empty arm becomes `?` on the others.
pub(super) fn alternatives(arms: Vec<Expr>) -> Option<Expr> {
    let has_empty = arms.iter().any(|a| *a == Expr::empty());
    let rest: Vec<Expr> = arms.into_iter().filter(|a| *a != Expr::empty()).collect();
    match (rest.is_empty(), has_empty) {
        (true, true) => Some(Expr::empty()),
        (true, false) => None,
        (false, false) => Some(Expr::alt(rest)),
        (false, true) => Some(Expr::repeat(atom(Expr::alt(rest)), 0, Some(1))),
    }
}

pub(super) fn class_expr(class: &hir::Class) -> Result<Option<Expr>, PatternError> {
    let ranges = class_ranges(class)?;
    if let Some(known) = known_class_expr(&ranges) {
        return Ok(Some(known));
    }
    Ok(chars_expr(&ranges))
}

/// The expression of a class the translation writes for ECMA's `.`, `\D`, `\W`, `\s`
/// or `\S` when `ranges` is exactly its set: these are large sets, slow to spell out, so
/// each is spelled once per process and copied.
pub(super) fn known_class_expr(ranges: &[(u32, u32)]) -> Option<Expr> {
    /// A set of characters (ranges of scalar values) and its expression.
    type Spelled = (Vec<(u32, u32)>, Expr);
    static KNOWN: LazyLock<Vec<Spelled>> = LazyLock::new(|| {
        [DOT, NOT_DIGIT, NOT_WORD, SPACE, NOT_SPACE]
            .iter()
            .filter_map(|class| {
                let hir = parser().parse(class).ok()?;
                let HirKind::Class(class) = hir.kind() else {
                    return None;
                };
                let ranges = class_ranges(class).ok()?;
                let expr = chars_expr(&ranges)?;
                Some((ranges, expr))
            })
            .collect()
    });
    KNOWN
        .iter()
        .find(|(known, _)| known.as_slice() == ranges)
        .map(|(_, expr)| expr.clone())
}

/// A class's ranges of scalar values.
pub(super) fn class_ranges(class: &hir::Class) -> Result<Vec<(u32, u32)>, PatternError> {
    Ok(match class {
        hir::Class::Unicode(c) => c
            .ranges()
            .iter()
            .map(|r| (u32::from(r.start()), u32::from(r.end())))
            .collect(),
        hir::Class::Bytes(c) => {
            if c.ranges().iter().any(|r| r.end() > 0x7F) {
                return Err(unsupported("a byte class beyond ASCII"));
            }
            c.ranges()
                .iter()
                .map(|r| (u32::from(r.start()), u32::from(r.end())))
                .collect()
        }
    })
}

/// `L(h)` without the empty string; `None` when that is empty.
pub(super) fn nonempty(h: &Hir) -> Result<Option<Expr>, PatternError> {
    if !nullable(h) {
        return expr(h);
    }
    match h.kind() {
        HirKind::Empty => Ok(None),
        HirKind::Literal(_) | HirKind::Class(_) => expr(h),
        HirKind::Look(look) => Err(unsupported(format!("assertion {look:?}"))),
        HirKind::Capture(c) => nonempty(&c.sub),
        HirKind::Alternation(arms) => {
            let mut out = Vec::with_capacity(arms.len());
            for arm in arms {
                out.extend(nonempty(arm)?);
            }
            // No arm is empty any more.
            Ok(alternatives(out))
        }
        HirKind::Concat(items) => {
            // Every item is nullable (the concatenation is). A non-empty text starts with a
            // non-empty match of some item i, the items before it matching the empty text.
            let mut whole = Vec::with_capacity(items.len());
            for item in items {
                match expr(item)? {
                    Some(e) => whole.push(e),
                    None => return Ok(None),
                }
            }
            let mut arms = Vec::new();
            let mut nodes = 0usize;
            for (i, item) in items.iter().enumerate() {
                if let Some(head) = nonempty(item)? {
                    let arm =
                        Expr::seq(std::iter::once(head).chain(whole[i + 1..].iter().cloned()));
                    nodes = nodes.saturating_add(count_nodes(&arm));
                    if nodes > MAX_NODES {
                        return Err(too_large());
                    }
                    arms.push(arm);
                }
            }
            Ok(alternatives(arms))
        }
        HirKind::Repetition(r) => {
            if r.max == Some(0) {
                return Ok(None);
            }
            if nullable(&r.sub) {
                // x{m,n} = x'{0,n} when x matches the empty text; without it, x'{1,n}.
                match nonempty(&r.sub)? {
                    Some(body) => counted(body, 1, r.max.map(u64::from)).map(Some),
                    None => Ok(None),
                }
            } else {
                // Nullable only through a zero minimum.
                match expr(&r.sub)? {
                    Some(body) => counted(body, 1, r.max.map(u64::from)).map(Some),
                    None => Ok(None),
                }
            }
        }
    }
}

pub(super) fn repetition(r: &hir::Repetition) -> Result<Option<Expr>, PatternError> {
    if r.max == Some(0) {
        return Ok(Some(Expr::empty()));
    }
    let max = r.max.map(u64::from);
    if nullable(&r.sub) {
        // x{m,n} = x'{0,n} where x' is x without the empty text.
        return match nonempty(&r.sub)? {
            Some(body) => counted(body, 0, max).map(Some),
            None => Ok(Some(Expr::empty())),
        };
    }
    match expr(&r.sub)? {
        Some(body) => counted(body, u64::from(r.min), max).map(Some),
        None if r.min == 0 => Ok(Some(Expr::empty())),
        None => Ok(None),
    }
}

pub(super) fn too_large() -> PatternError {
    unsupported(format!(
        "the pattern's grammar would exceed {MAX_NODES} expression nodes"
    ))
}

/// `e` as an operand of a repetition operator: sequences, alternations and repetitions
/// grouped.
pub(super) fn atom(e: Expr) -> Expr {
    match e {
        e @ (Expr::Seq(_) | Expr::Alt(_) | Expr::Repeat { .. }) => Expr::Group(Box::new(e)),
        e => e,
    }
}

/// Rules llama.cpp creates while parsing `e` (its `handle_repetitions` bookkeeping, as
/// replayed by `gbnf::check`).
pub(super) fn symbols(e: &Expr) -> u64 {
    match e {
        Expr::Alt(items) | Expr::Seq(items) => {
            items.iter().fold(0u64, |n, i| n.saturating_add(symbols(i)))
        }
        Expr::Group(inner) => symbols(inner).saturating_add(1),
        Expr::Repeat { expr, min, max, .. } => {
            symbols(expr).saturating_add(max.map_or(1, |max| u64::from(max.saturating_sub(*min))))
        }
        _ => 0,
    }
}

/// llama.cpp's `n_prev_rules` for an atom about to be repeated.
pub(super) fn prev_rules(atom: &Expr) -> u64 {
    match atom {
        Expr::Group(_) => symbols(atom).max(1),
        _ => 1,
    }
}

/// `body{min,max}` (`max` `None`: unbounded) for a `body` that does not match the empty
/// text, split so that every repetition passes llama.cpp's limits.
pub(super) fn counted(body: Expr, min: u64, max: Option<u64>) -> Result<Expr, PatternError> {
    if min == 1 && max == Some(1) {
        return Ok(body);
    }
    if max == Some(0) {
        return Ok(Expr::empty());
    }
    let body = atom(body);
    let per = LLAMA_MAX_REPEAT / prev_rules(&body);
    if per == 0 {
        return Err(unsupported(
            "a repetition of a group too complex for llama.cpp's repetition limits",
        ));
    }
    let fits = |n: u64| u32::try_from(n).ok().filter(|&n| u64::from(n) <= per);
    // One operator when the counts allow it.
    let total = max.unwrap_or(min.max(1));
    if let (Some(lo), Some(hi)) = (fits(min), fits(total)) {
        // `total` is `max` when there is one.
        return Ok(Expr::repeat(body, lo, max.map(|_| hi)));
    }
    let optional = max.map(|max| max - min);
    let chunks = min.div_ceil(per) + optional.map_or(1, |k| k.div_ceil(per));
    if chunks > MAX_CHUNKS
        || count_nodes(&body)
            .saturating_mul(usize::try_from(chunks).unwrap_or(usize::MAX))
            .saturating_mul(2)
            > MAX_NODES
    {
        return Err(too_large());
    }
    let mut parts = Vec::new();
    let mut left = min;
    while left > 0 {
        let n = left.min(per);
        parts.push(exactly(&body, n)?);
        left -= n;
    }
    match optional {
        None => parts.push(Expr::repeat(body, 0, None)),
        Some(k) => parts.push(at_most(&body, k, per)?),
    }
    Ok(Expr::seq(parts))
}

/// `body{n}` for `1 <= n <= per`.
pub(super) fn exactly(body: &Expr, n: u64) -> Result<Expr, PatternError> {
    if n == 1 {
        return Ok(body.clone());
    }
    let n = u32::try_from(n).map_err(|_| too_large())?;
    Ok(Expr::repeat(body.clone(), n, Some(n)))
}

/// `body{0,k}` with no repetition count above `per`, unambiguously: splitting it into
/// `body{0,per} body{0,per} …` would let a text split among the chunks in many ways, which
/// makes Earley recognition (and llama.cpp's stacks) blow up. Instead, with
/// `k = levels × per + rem`: `O₀ = body{0,rem}` and `Oⱼ₊₁ = body{0,per-1} | body{per} Oⱼ`,
/// whose alternatives cover disjoint counts.
pub(super) fn at_most(body: &Expr, k: u64, per: u64) -> Result<Expr, PatternError> {
    let (levels, rem) = (k / per, k % per);
    let upto = |n: u64| -> Result<Expr, PatternError> {
        Ok(match n {
            0 => Expr::empty(),
            n => Expr::repeat(
                body.clone(),
                0,
                Some(u32::try_from(n).map_err(|_| too_large())?),
            ),
        })
    };
    let mut e = upto(rem)?;
    for _ in 0..levels {
        let more = Expr::seq([exactly(body, per)?, e]);
        e = alternatives(vec![more, upto(per - 1)?]).unwrap_or_else(Expr::empty);
    }
    Ok(e)
}

/// The number of nodes in `e`, stopping early past [`MAX_NODES`].
pub(super) fn count_nodes(e: &Expr) -> usize {
    let mut n = 0usize;
    let mut stack = vec![e];
    while let Some(e) = stack.pop() {
        n += 1;
        if n > MAX_NODES {
            break;
        }
        stack.extend(e.children());
    }
    n
}

pub(super) fn guard_size(e: &Expr) -> Result<(), PatternError> {
    if count_nodes(e) > MAX_NODES {
        Err(too_large())
    } else {
        Ok(())
    }
}
