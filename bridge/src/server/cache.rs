//! The grammar cache: compiled outputs (a schema's or grammar's [`Prepared`], a tool list's
//! [`PreparedCalls`]), each with its grammar made ready for generation
//! ([`ReadyGrammar`]), kept in a bounded LRU, keyed by the request parts that determine
//! them ([`Output::cache_key`](super::request::Output::cache_key)), so a repeated schema
//! or tool list is never compiled again.

use std::num::NonZeroUsize;
use std::sync::{Arc, Mutex, PoisonError};

use gbnfc_compiler::gbnf::CheckedGrammar;
use lru::LruCache;

use crate::engine::Engine;
use crate::generate::{GrammarEngine, ReadyGrammar};
use crate::structured::Prepared;
use crate::tool_calls::PreparedCalls;
use crate::BridgeError;

/// What a request's output compiles to.
#[derive(Debug)]
pub enum Compiled {
    /// A schema, `response_format` or grammar.
    Structured(Prepared),
    /// A tool list (with its choice, parallel setting and `response_format`).
    Tools(PreparedCalls),
}

/// A cache entry: the compiled output, and its grammar made ready for generation.
#[derive(Debug)]
pub struct Entry {
    /// The compiled output.
    pub compiled: Compiled,
    /// Its grammar's sampler, stacks and close-out parser, copied for each generation
    /// (`None`: nothing constrains the output).
    pub grammar: Option<Arc<ReadyGrammar>>,
}

impl Entry {
    /// `compiled` with its grammar made ready.
    ///
    /// # Errors
    /// What [`ReadyGrammar::new`] finds wrong with the grammar.
    pub fn new(
        engine: &Engine,
        compiled: Compiled,
        kind: GrammarEngine,
    ) -> Result<Entry, BridgeError> {
        let mut entry = Entry {
            compiled,
            grammar: None,
        };
        entry.grammar = entry
            .checked_grammar()
            .map(|g| ReadyGrammar::new(engine, g, kind).map(Arc::new))
            .transpose()?;
        Ok(entry)
    }
}

impl Entry {
    /// The grammar its generations run under (`None`: nothing constrains the output).
    pub fn checked_grammar(&self) -> Option<&CheckedGrammar> {
        match &self.compiled {
            Compiled::Structured(prepared) => Some(&prepared.grammar),
            Compiled::Tools(prepared) => prepared.compiled.grammar.as_ref(),
        }
    }
}

/// A bounded map from cache keys to compiled outputs, least recently used out first.
pub struct GrammarCache {
    entries: Mutex<LruCache<String, Arc<Entry>>>,
}

impl GrammarCache {
    /// A cache of at most `capacity` entries (at least one).
    pub fn new(capacity: usize) -> GrammarCache {
        let capacity = NonZeroUsize::new(capacity).unwrap_or(NonZeroUsize::MIN);
        GrammarCache {
            entries: Mutex::new(LruCache::new(capacity)),
        }
    }

    /// The entry for `key`, compiled with `compile` when absent; and whether it was
    /// cached. Errors are not cached.
    ///
    /// # Errors
    /// What `compile` returns.
    pub fn get_or_compile<E>(
        &self,
        key: &str,
        compile: impl FnOnce() -> Result<Entry, E>,
    ) -> Result<(Arc<Entry>, bool), E> {
        if let Some(found) = self.lock().get(key) {
            return Ok((Arc::clone(found), true));
        }
        let compiled = Arc::new(compile()?);
        self.lock().put(key.to_string(), Arc::clone(&compiled));
        Ok((compiled, false))
    }

    /// Entries held.
    pub fn len(&self) -> usize {
        self.lock().len()
    }

    /// Whether nothing is cached.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, LruCache<String, Arc<Entry>>> {
        self.entries.lock().unwrap_or_else(PoisonError::into_inner)
    }
}
