//! Reading the CLI's inputs: a file path, or `-` for standard input.

use std::io::Read;

use gbnfc_compiler::diagnostic::Diagnostic;
use gbnfc_compiler::gbnf::llama_stacks::{Limits, LlamaStacks, ADVICE};
use gbnfc_compiler::gbnf::{self, CheckedGrammar, Grammar};

use crate::Failure;

/// Text read from a file or standard input, with the name to show in messages.
pub struct Source {
    /// `<stdin>` or the path as given.
    pub origin: String,
    /// The whole text.
    pub text: String,
}

/// Reads `path` (`-` is standard input) as UTF-8 text.
pub fn read(path: &str) -> Result<Source, Failure> {
    let mut bytes = Vec::new();
    let origin = if path == "-" {
        std::io::stdin()
            .read_to_end(&mut bytes)
            .map_err(|e| Failure::new(format!("cannot read standard input: {e}")))?;
        "<stdin>".to_string()
    } else {
        bytes = std::fs::read(path).map_err(|e| {
            Failure::new(format!("cannot read `{path}`: {e}"))
                .help("check the path; use `-` to read standard input")
        })?;
        path.to_string()
    };
    let text = String::from_utf8(bytes).map_err(|e| {
        Failure::new(format!(
            "`{origin}` is not UTF-8 text (invalid byte at offset {})",
            e.utf8_error().valid_up_to()
        ))
    })?;
    Ok(Source { origin, text })
}

/// A parsed grammar whose `check` findings have been shown on standard error.
pub struct Checked {
    /// Where the grammar came from.
    pub source: Source,
    /// The grammar, when the check found no error.
    pub grammar: Option<CheckedGrammar>,
    /// How many findings are errors.
    pub errors: usize,
    /// How many are warnings.
    pub warnings: usize,
}

/// Reads, parses and checks a grammar, rendering every finding on standard error.
pub fn parse_and_check(path: &str) -> Result<Checked, Failure> {
    let source = read(path)?;
    let grammar = parse(&source)?;
    let (grammar, diagnostics) = match CheckedGrammar::with_warnings(grammar) {
        Ok((grammar, mut warnings)) => {
            warnings.extend(ambiguity_warning(&grammar));
            (Some(grammar), warnings)
        }
        Err(rejected) => (None, rejected.diagnostics),
    };
    for d in &diagnostics {
        eprint!("{}", d.render(&source.text, &source.origin));
    }
    let errors = diagnostics.iter().filter(|d| d.is_error()).count();
    Ok(Checked {
        warnings: diagnostics.len() - errors,
        errors,
        source,
        grammar,
    })
}

/// A warning when llama.cpp's grammar sampler would refuse `grammar` for the parse stacks
/// it starts with.
fn ambiguity_warning(grammar: &CheckedGrammar) -> Option<Diagnostic> {
    // Token texts resolve to nothing here: no model is loaded. gbnfc's own grammar
    // engine keeps no stacks and runs such a grammar; llama.cpp's refuses it.
    let e = LlamaStacks::new(grammar, |_| None, Limits::default()).err()?;
    let root = grammar.rules.iter().find(|r| r.name == "root");
    Some(
        Diagnostic::warning(
            "too-ambiguous",
            root.map(|r| r.pos),
            format!(
                "before the first character, {}: llama.cpp's grammar sampler \
                 (and `--grammar-engine llama`) refuses this grammar; gbnfc's \
                 engine runs it",
                e.what
            ),
        )
        .with_help(ADVICE),
    )
}

/// Reads, parses and checks a grammar; any error stops here, so nothing downstream sees
/// a grammar llama.cpp would refuse.
pub fn checked_grammar(path: &str) -> Result<CheckedGrammar, Failure> {
    let checked = parse_and_check(path)?;
    checked.grammar.ok_or_else(|| {
        Failure::reported(format!(
            "`{}` has errors; fix them (see above) and try again",
            checked.source.origin
        ))
    })
}

/// Parses a grammar source, rendering a parse error with its line and caret.
pub fn parse(source: &Source) -> Result<Grammar, Failure> {
    gbnf::parse(&source.text).map_err(|e| {
        Failure::reported(
            e.diagnostic
                .render(&source.text, &source.origin)
                .trim_end()
                .to_string(),
        )
    })
}
