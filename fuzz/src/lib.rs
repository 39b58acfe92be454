//! Helpers shared by the fuzz targets.

/// How much of a text the targets hand the recognizer. On an ambiguous grammar Earley's
/// time grows with the cube of the text's length — `root ::= item{0,20}` with
/// `item ::= . .+` takes 0.7 s on 250 characters and 7 s on 500 in a release build, and
/// `root ::= item{1020}` with `item ::= "- " [^ \t\r\n] [^\r\n]* "fn"` (whose shortest
/// text has 5,100 characters) 2.3 s per sample, ten times that under the fuzzer's
/// instrumentation — which is expected, not a fault to find; cut here, the worst such
/// grammars found stay well inside the 30 s timeout.
pub const MAX_TEXT: usize = 128;

/// `text` cut to at most [`MAX_TEXT`] bytes, at a character boundary.
pub fn cut(text: &str) -> &str {
    let end = (MAX_TEXT..text.len())
        .find(|&at| text.is_char_boundary(at))
        .unwrap_or(text.len());
    &text[..end]
}

/// `true` when every number in the JSON text (outside strings) is an integer of at most 15
/// digits: the `jsonschema` oracle compares other numbers through f64 (serde_json keeps
/// their text, but jsonschema's own exact mode is not available), and a rounded number can
/// cross a bound the exact one respects, so samples holding them are not validated.
pub fn numbers_are_exact(text: &str) -> bool {
    every_number(text, |number| {
        let digits = number.chars().filter(char::is_ascii_digit).count();
        !number.contains(['.', 'e', 'E']) && digits <= 15
    })
}

/// `true` when every number in the JSON text (outside strings) has at most 15 significant
/// digits and a decimal exponent within ±300. Two such numbers read as f64 keep their
/// order and equality, and jsonschema takes a fractional `multipleOf` of their shortest
/// decimal spelling, which is the number itself: when a sample's numbers and its schema's
/// are all short, the oracle judges the sample exactly.
pub fn numbers_are_short(text: &str) -> bool {
    every_number(text, |number| {
        let unsigned = number.trim_start_matches(['-', '+']);
        let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
            Some((m, e)) => match e.parse::<i64>() {
                Ok(e) => (m, e),
                Err(_) => return false,
            },
            None => (unsigned, 0),
        };
        let whole = mantissa.split('.').next().unwrap_or("").len() as i64;
        let digits: Vec<char> = mantissa.chars().filter(char::is_ascii_digit).collect();
        let leading = digits.iter().take_while(|&&d| d == '0').count();
        if leading == digits.len() {
            return true; // zero
        }
        let trailing = digits.iter().rev().take_while(|&&d| d == '0').count();
        let significant = digits.len() - leading - trailing;
        let magnitude = whole - leading as i64 + exponent;
        significant <= 15 && (-300..=300).contains(&magnitude)
    })
}

/// Whether `test` holds for the text of every number in the JSON text (outside strings).
fn every_number(text: &str, test: impl Fn(&str) -> bool) -> bool {
    let mut in_string = false;
    let mut escaped = false;
    let mut run = String::new();
    for c in text.chars().chain(std::iter::once(' ')) {
        if in_string {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_string = false,
                _ => {}
            }
            continue;
        }
        if c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E') {
            run.push(c);
            continue;
        }
        if !run.is_empty() {
            if !test(&run) {
                return false;
            }
            run.clear();
        }
        in_string = c == '"';
    }
    true
}
