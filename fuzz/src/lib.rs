//! Helpers shared by the fuzz targets.

/// `true` when every number in the JSON text (outside strings) is an integer of at most 15
/// digits: the `jsonschema` oracle compares other numbers through f64 (serde_json keeps
/// their text, but jsonschema's own exact mode is not available), and a rounded number can
/// cross a bound the exact one respects, so samples holding them are not validated.
pub fn numbers_are_exact(text: &str) -> bool {
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
            let digits = run.chars().filter(char::is_ascii_digit).count();
            if run.contains(['.', 'e', 'E']) || digits > 15 {
                return false;
            }
            run.clear();
        }
        in_string = c == '"';
    }
    true
}
