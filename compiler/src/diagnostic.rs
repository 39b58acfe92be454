//! Diagnostics: what went wrong, where (line:column in GBNF source), and what to do.
//!
//! Every check and parse error in the crate is a [`Diagnostic`]. [`Diagnostic::render`]
//! prints it the way compilers do, with the offending source line and a caret under the
//! column.

use std::fmt;

use crate::gbnf::Pos;

/// How bad a diagnostic is.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Severity {
    /// Worth knowing; the grammar still works.
    Warning,
    /// The grammar must not be used as it is.
    Error,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Warning => "warning",
            Severity::Error => "error",
        })
    }
}

/// One finding about a grammar.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Diagnostic {
    /// Error or warning.
    pub severity: Severity,
    /// A short, stable identifier of the kind of finding, e.g. `undefined-rule`.
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// Where, when the grammar came from source text.
    pub pos: Option<Pos>,
    /// What to do about it.
    pub help: Option<String>,
}

impl Diagnostic {
    /// An error of kind `code` at `pos`.
    pub fn error(code: &'static str, pos: Option<Pos>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Error,
            code,
            message: message.into(),
            pos,
            help: None,
        }
    }

    /// A warning of kind `code` at `pos`.
    pub fn warning(code: &'static str, pos: Option<Pos>, message: impl Into<String>) -> Self {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(code, pos, message)
        }
    }

    /// Adds advice on what to do.
    pub fn with_help(mut self, help: impl Into<String>) -> Self {
        self.help = Some(help.into());
        self
    }

    /// `true` for errors.
    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders the diagnostic with the source line it points at and a caret under the
    /// column; `origin` names the input (a path, or `<stdin>`).
    pub fn render(&self, source: &str, origin: &str) -> String {
        let mut out = format!("{}[{}]: {}\n", self.severity, self.code, self.message);
        match self.pos {
            Some(pos) if pos.line > 0 => {
                out.push_str(&format!("  --> {origin}:{pos}\n"));
                if let Some(line) = source.lines().nth(pos.line as usize - 1) {
                    let gutter = pos.line.to_string();
                    let pad = " ".repeat(gutter.len());
                    let shown: String = line.chars().take(160).collect();
                    let caret_col = (pos.column as usize).saturating_sub(1).min(160);
                    let lead: String = shown
                        .chars()
                        .take(caret_col)
                        .map(|c| if c == '\t' { '\t' } else { ' ' })
                        .collect();
                    out.push_str(&format!("{pad} |\n{gutter} | {shown}\n{pad} | {lead}^\n"));
                }
            }
            _ => out.push_str(&format!("  --> {origin}\n")),
        }
        if let Some(help) = &self.help {
            out.push_str(&format!("  = help: {help}\n"));
        }
        out
    }
}

impl fmt::Display for Diagnostic {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.pos {
            Some(pos) => write!(f, "{pos}: {}: {}", self.severity, self.message)?,
            None => write!(f, "{}: {}", self.severity, self.message)?,
        }
        if let Some(help) = &self.help {
            write!(f, " ({help})")?;
        }
        Ok(())
    }
}
