//! Number and integer ranges as GBNF expressions over JSON number text.
