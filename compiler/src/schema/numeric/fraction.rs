//! Fraction digit strings (after the decimal point), compared with zero padding: the
//! part of a decimal range that lies right of the point.

use super::digits::{digit_class, digits_plus, digits_star, lit, nonzero_digit, optional, zeros};
use crate::gbnf::Expr;

/// A set of fraction digit strings `F` (compared as the value `0.F`): `eps` is the empty
/// string (no fraction part at all), each arm matches only non-empty strings.
#[derive(Debug, Default)]
pub(super) struct Frac {
    pub(super) eps: bool,
    pub(super) arms: Vec<Expr>,
    /// All of `D*` (kept apart to print `("." [0-9]+)?`).
    pub(super) any: bool,
}

impl Frac {
    pub(super) fn any() -> Frac {
        Frac {
            eps: true,
            arms: vec![digits_plus()],
            any: true,
        }
    }

    pub(super) fn extend(&mut self, other: Frac) {
        self.eps |= other.eps;
        self.arms.extend(other.arms);
        self.any = false;
    }

    /// `p` followed by this set (`p` non-empty).
    pub(super) fn after(self, p: &[u8]) -> Frac {
        let mut arms = Vec::new();
        if self.eps {
            arms.push(lit(p));
        }
        arms.extend(self.arms.into_iter().map(|a| Expr::seq([lit(p), a])));
        Frac {
            eps: false,
            arms,
            any: false,
        }
    }

    /// `int` followed by `.F` for each `F` in this set (just `int` for the empty string).
    pub(super) fn attach(self, int: Expr) -> Option<Expr> {
        if self.any {
            return Some(Expr::seq([
                int,
                optional(Expr::seq([Expr::literal("."), digits_plus()])),
            ]));
        }
        let mut arms = Vec::new();
        if self.eps {
            arms.push(int.clone());
        }
        if !self.arms.is_empty() {
            arms.push(Expr::seq([int, Expr::literal("."), Expr::alt(self.arms)]));
        }
        (!arms.is_empty()).then(|| Expr::alt(arms))
    }
}

/// Fractions `F > c` that first differ from `c` (zero-padded) inside `c`, with a larger digit.
pub(super) fn frac_gt_arms(c: &[u8]) -> Vec<Expr> {
    let mut arms = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == b'0' {
            let z = c[i..].iter().take_while(|&&d| d == b'0').count();
            arms.push(Expr::seq([
                lit(&c[..i]),
                zeros(0, Some(z - 1)),
                nonzero_digit(),
                digits_star(),
            ]));
            i += z;
        } else {
            if let Some(class) = digit_class(c[i] + 1, b'9') {
                arms.push(Expr::seq([lit(&c[..i]), class, digits_star()]));
            }
            i += 1;
        }
    }
    arms
}

/// Fractions `>= 0.c` (`> 0.c` unless `inclusive`); `c` has no trailing zeros.
pub(super) fn frac_ge(c: &[u8], inclusive: bool) -> Frac {
    if c.is_empty() {
        return if inclusive {
            Frac::any()
        } else {
            Frac {
                eps: false,
                arms: vec![Expr::seq([zeros(0, None), nonzero_digit(), digits_star()])],
                any: false,
            }
        };
    }
    // Extensions of `c` are at least `c` (equal when only zeros follow).
    let arms = if inclusive {
        // Fold them into the arm for a larger last digit.
        let (init, last) = c.split_at(c.len() - 1);
        let mut arms = frac_gt_arms(init);
        arms.extend(
            digit_class(last[0], b'9').map(|class| Expr::seq([lit(init), class, digits_star()])),
        );
        arms
    } else {
        let mut arms = frac_gt_arms(c);
        arms.push(Expr::seq([
            lit(c),
            zeros(0, None),
            nonzero_digit(),
            digits_star(),
        ]));
        arms
    };
    Frac {
        eps: false,
        arms,
        any: false,
    }
}

/// Fractions `<= 0.c` (`< 0.c` unless `inclusive`); `c` has no trailing zeros.
pub(super) fn frac_le(c: &[u8], inclusive: bool) -> Frac {
    if c.is_empty() {
        return Frac {
            eps: inclusive,
            arms: if inclusive {
                vec![zeros(1, None)]
            } else {
                Vec::new()
            },
            any: false,
        };
    }
    let mut arms = Vec::new();
    let mut i = 0;
    while i < c.len() {
        if c[i] == b'0' {
            // The prefixes of `c` ending inside this run of zeros.
            let z = c[i..].iter().take_while(|&&d| d == b'0').count();
            let least = usize::from(i == 0);
            if z > least {
                arms.push(Expr::seq([lit(&c[..i]), zeros(least, Some(z - 1))]));
            }
            i += z;
        } else {
            if i > 0 {
                arms.push(lit(&c[..i]));
            }
            if let Some(class) = digit_class(b'0', c[i] - 1) {
                arms.push(Expr::seq([lit(&c[..i]), class, digits_star()]));
            }
            i += 1;
        }
    }
    if inclusive {
        arms.push(Expr::seq([lit(c), zeros(0, None)]));
    }
    Frac {
        eps: true,
        arms,
        any: false,
    }
}

/// Fractions between `0.c` and `0.d` (`c < d`, neither with trailing zeros).
pub(super) fn frac_range(c: &[u8], d: &[u8], c_inclusive: bool, d_inclusive: bool) -> Frac {
    let pad = |i: usize| c.get(i).copied().unwrap_or(b'0');
    let k = (0..d.len()).take_while(|&i| pad(i) == d[i]).count();
    if k >= d.len() {
        return Frac::default(); // c >= d: cannot happen for c < d
    }
    let (a, b) = (pad(k), d[k]);
    let p = &d[..k];
    let mut frac = Frac::default();
    // Strings no longer than the common prefix equal `c` at best.
    if c_inclusive && c.len() <= k {
        if c.is_empty() {
            frac.eps = true;
            if k >= 1 {
                frac.arms.push(zeros(1, Some(k)));
            }
        } else {
            frac.arms
                .push(Expr::seq([lit(c), zeros(0, Some(k - c.len()))]));
        }
    }
    let c_rest: &[u8] = if c.len() > k + 1 { &c[k + 1..] } else { &[] };
    let mut pa = p.to_vec();
    pa.push(a);
    frac.extend(frac_ge(c_rest, c_inclusive).after(&pa));
    if let Some(class) = digit_class(a + 1, b - 1) {
        frac.arms.push(Expr::seq([lit(p), class, digits_star()]));
    }
    let mut pb = p.to_vec();
    pb.push(b);
    frac.extend(frac_le(&d[k + 1..], d_inclusive).after(&pb));
    frac
}
