//! String formats (`date`, `email`, `uuid`, …) as GBNF expressions over JSON string contents.
