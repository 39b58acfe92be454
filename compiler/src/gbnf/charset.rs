//! Sets of Unicode scalar values, as GBNF terminals match them.

use super::ast::ClassRange;

/// The highest Unicode scalar value.
pub const MAX_CHAR: u32 = 0x10FFFF;

/// A set of characters: sorted, merged, disjoint closed ranges, possibly complemented.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct CharSet {
    negated: bool,
    ranges: Vec<(u32, u32)>,
}

impl CharSet {
    /// The set of exactly one character.
    pub fn single(c: char) -> Self {
        let v = u32::from(c);
        CharSet {
            negated: false,
            ranges: vec![(v, v)],
        }
    }

    /// Every character (`.`).
    pub fn any() -> Self {
        CharSet {
            negated: true,
            ranges: Vec::new(),
        }
    }

    /// The characters of a class `[…]` or `[^…]`. Empty ranges (`lo > hi`) add nothing.
    pub fn from_class(negated: bool, ranges: &[ClassRange]) -> Self {
        let mut spans: Vec<(u32, u32)> = ranges
            .iter()
            .filter(|r| r.lo <= r.hi)
            .map(|r| (u32::from(r.lo), u32::from(r.hi)))
            .collect();
        spans.sort_unstable();
        let mut merged: Vec<(u32, u32)> = Vec::with_capacity(spans.len());
        for (lo, hi) in spans {
            match merged.last_mut() {
                Some(last) if lo <= last.1.saturating_add(1) => last.1 = last.1.max(hi),
                _ => merged.push((lo, hi)),
            }
        }
        CharSet {
            negated,
            ranges: merged,
        }
    }

    /// Does the set contain `c`?
    pub fn contains(&self, c: char) -> bool {
        let v = u32::from(c);
        let idx = self.ranges.partition_point(|&(_, hi)| hi < v);
        let inside = self.ranges.get(idx).is_some_and(|&(lo, _)| lo <= v);
        inside != self.negated
    }

    /// Does the set contain no character at all?
    pub fn is_empty(&self) -> bool {
        if !self.negated {
            return self.ranges.is_empty();
        }
        // A complement is empty only when its ranges cover every scalar value (the
        // surrogate gap need not be covered: it holds no characters).
        let mut next = 0u32;
        for &(lo, hi) in &self.ranges {
            let gap_is_surrogates = next >= 0xD800 && lo <= 0xE000 && next <= lo;
            if lo > next && !gap_is_surrogates {
                return false;
            }
            next = next.max(hi.saturating_add(1));
        }
        next > MAX_CHAR
    }

    /// `true` for a complemented set (`[^…]` or `.`).
    pub fn is_negated(&self) -> bool {
        self.negated
    }

    /// The ranges (of members, or of non-members when negated).
    pub fn ranges(&self) -> &[(u32, u32)] {
        &self.ranges
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn membership_follows_ranges_and_negation() {
        let set = CharSet::from_class(
            false,
            &[
                ClassRange { lo: 'a', hi: 'c' },
                ClassRange { lo: 'x', hi: 'x' },
            ],
        );
        assert!(set.contains('b') && set.contains('x'));
        assert!(!set.contains('d') && !set.contains('A'));
        let not = CharSet::from_class(true, &[ClassRange { lo: '"', hi: '"' }]);
        assert!(!not.contains('"') && not.contains('a') && not.contains('\u{10FFFF}'));
    }

    #[test]
    fn overlapping_ranges_merge() {
        let set = CharSet::from_class(
            false,
            &[
                ClassRange { lo: 'a', hi: 'm' },
                ClassRange { lo: 'k', hi: 'z' },
                ClassRange { lo: '{', hi: '{' },
            ],
        );
        assert_eq!(set.ranges(), &[(u32::from('a'), u32::from('{'))]);
    }

    #[test]
    fn emptiness() {
        assert!(!CharSet::any().is_empty());
        assert!(CharSet::from_class(false, &[ClassRange { lo: 'z', hi: 'a' }]).is_empty());
        let everything = CharSet::from_class(
            true,
            &[ClassRange {
                lo: '\0',
                hi: '\u{10FFFF}',
            }],
        );
        assert!(everything.is_empty());
        let all_but_surrogates = CharSet::from_class(
            true,
            &[
                ClassRange {
                    lo: '\0',
                    hi: '\u{D7FF}',
                },
                ClassRange {
                    lo: '\u{E000}',
                    hi: '\u{10FFFF}',
                },
            ],
        );
        assert!(all_but_surrogates.is_empty());
    }
}
