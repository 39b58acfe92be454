//! ECMA-262 `pattern`s as GBNF expressions over JSON string contents, parsed with regex-syntax.
