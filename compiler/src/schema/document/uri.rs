//! JSON pointers (RFC 6901) and URI references (RFC 3986) as the document needs them:
//! descending by pointer, escaping tokens, joining references to their base.

use std::borrow::Cow;

use serde_json::Value;

/// The value `pointer` (RFC 6901, `""` or `/`-separated tokens) names inside `value`.
/// The same answers as [`Value::pointer`], without a `String` per token
/// ([`unescape_token`] borrows a token without `~`).
pub(super) fn descend<'v>(value: &'v Value, pointer: &str) -> Option<&'v Value> {
    if pointer.is_empty() {
        return Some(value);
    }
    let tokens = pointer.strip_prefix('/')?;
    tokens.split('/').try_fold(value, |node, token| {
        let token = unescape_token(token);
        match node {
            Value::Object(map) => map.get(token.as_ref()),
            Value::Array(items) => array_index(&token).and_then(|i| items.get(i)),
            _ => None,
        }
    })
}

/// An array index token as RFC 6901 spells it: no sign, no leading zero.
fn array_index(token: &str) -> Option<usize> {
    if token.starts_with('+') || (token.starts_with('0') && token.len() != 1) {
        return None;
    }
    token.parse().ok()
}

/// Escapes a key as a JSON pointer token.
pub fn escape_token(key: &str) -> Cow<'_, str> {
    // Both are ASCII, so no byte of another character can be taken for them.
    if key.bytes().any(|b| b == b'~' || b == b'/') {
        Cow::Owned(key.replace('~', "~0").replace('/', "~1"))
    } else {
        Cow::Borrowed(key)
    }
}

/// The key a JSON pointer token names (`~1` → `/`, `~0` → `~`); the inverse of
/// [`escape_token`].
pub fn unescape_token(token: &str) -> Cow<'_, str> {
    if token.contains('~') {
        Cow::Owned(token.replace("~1", "/").replace("~0", "~"))
    } else {
        Cow::Borrowed(token)
    }
}

pub(super) fn percent_decode(text: &str) -> Cow<'_, str> {
    if !text.contains('%') {
        return Cow::Borrowed(text);
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        if bytes[i] == b'%' && i + 2 < bytes.len() {
            if let (Some(h), Some(l)) = (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(bytes[i]);
        i += 1;
    }
    Cow::Owned(String::from_utf8_lossy(&out).into_owned())
}

pub(super) fn split_fragment(uri: &str) -> (&str, Option<&str>) {
    match uri.split_once('#') {
        Some((resource, fragment)) => (resource, Some(fragment)),
        None => (uri, None),
    }
}

pub(super) fn strip_fragment(uri: &str) -> String {
    split_fragment(uri).0.to_string()
}

/// Resolves `reference` against `base` (RFC 3986, enough for schema identifiers).
pub fn join(base: &str, reference: &str) -> String {
    if reference.is_empty() {
        return strip_fragment(base);
    }
    if reference.starts_with('#') {
        return format!("{}{reference}", strip_fragment(base));
    }
    let has_scheme = reference.split_once(':').is_some_and(|(scheme, _)| {
        !scheme.is_empty() && !scheme.contains('/') && !scheme.contains('#')
    });
    if has_scheme {
        return normalize_path(reference);
    }
    let base = strip_fragment(base);
    let (scheme, rest) = base.split_once(':').unwrap_or(("", base.as_str()));
    if let Some(stripped) = reference.strip_prefix("//") {
        return format!("{scheme}://{stripped}");
    }
    let (authority, path) = match rest.strip_prefix("//") {
        Some(after) => match after.find('/') {
            Some(cut) => (format!("//{}", &after[..cut]), after[cut..].to_string()),
            None => (format!("//{after}"), String::new()),
        },
        None => (String::new(), rest.to_string()),
    };
    let joined_path = if reference.starts_with('/') {
        reference.to_string()
    } else {
        let dir = match path.rfind('/') {
            Some(cut) => &path[..=cut],
            None => "/",
        };
        format!("{dir}{reference}")
    };
    normalize_path(&format!("{scheme}:{authority}{joined_path}"))
}

/// Removes `.` and `..` path segments.
fn normalize_path(uri: &str) -> String {
    let (main, fragment) = split_fragment(uri);
    let (head, path) = match main.find("://") {
        Some(at) => {
            let after = &main[at + 3..];
            match after.find('/') {
                Some(cut) => (main[..at + 3 + cut].to_string(), after[cut..].to_string()),
                None => return uri.to_string(),
            }
        }
        None => match main.split_once(':') {
            Some((scheme, path)) => (format!("{scheme}:"), path.to_string()),
            None => (String::new(), main.to_string()),
        },
    };
    if !path.contains("./") {
        return uri.to_string();
    }
    let mut segments: Vec<&str> = Vec::new();
    for segment in path.split('/') {
        match segment {
            "." => {}
            ".." => {
                if segments.len() > 1 {
                    segments.pop();
                }
            }
            s => segments.push(s),
        }
    }
    let mut out = format!("{head}{}", segments.join("/"));
    if let Some(fragment) = fragment {
        out.push('#');
        out.push_str(fragment);
    }
    out
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use serde_json::json;

    #[test]
    fn pointers_find_what_serde_json_finds() {
        let doc = json!({
            "a/b": {"m~n": [10, 11, {"": "empty key"}]},
            "~1": "tilde one",
            "x": {"0": "zero key", "01": "leading zero key"},
            "": {"": "nested empty"}
        });
        for pointer in [
            "",
            "/",
            "//",
            "/a~1b",
            "/a~1b/m~0n",
            "/a~1b/m~0n/1",
            "/a~1b/m~0n/2/",
            "/a~1b/m~0n/01",
            "/a~1b/m~0n/+1",
            "/a~1b/m~0n/3",
            "/a~1b/m~0n/-1",
            "/~01",
            "/~1",
            "/x/0",
            "/x/01",
            "/x/1",
            "a",
            "/a~1b/m~0n/0/deeper",
            "/nothing",
        ] {
            assert_eq!(descend(&doc, pointer), doc.pointer(pointer), "{pointer:?}");
        }
    }

    #[test]
    fn joins_like_rfc_3986() {
        assert_eq!(
            join("http://x.org/a/b.json", "c.json"),
            "http://x.org/a/c.json"
        );
        assert_eq!(
            join("http://x.org/a/b.json", "/c.json"),
            "http://x.org/c.json"
        );
        assert_eq!(
            join("http://x.org/a/b.json", "#/defs"),
            "http://x.org/a/b.json#/defs"
        );
        assert_eq!(
            join("http://x.org/a/b.json", "../c.json"),
            "http://x.org/c.json"
        );
        assert_eq!(join("http://x.org/a/b.json", "urn:uuid:1"), "urn:uuid:1");
        assert_eq!(join("gbnfc:/schema.json", "#foo"), "gbnfc:/schema.json#foo");
    }
}
