//! The context size when none is asked for: the model's trained context, as far as the
//! machine's memory allows its KV cache.
//!
//! A fixed 4,096 tokens cut small models short of what they were trained for (SmolLM2:
//! 8,192; Gemma 3: 32,768) and made long tool lists fail ("the prompt is 5268 tokens but
//! the context holds 4096"); the trained context of a large model, on the other hand, can
//! want more memory than the machine has (Llama 3.1 8B: 131,072 tokens, 16 GiB of KV
//! cache in f16). So the trained context is taken, halved while its KV cache would take
//! more than [`MEMORY_SHARE`] of the memory available, and never below
//! [`FLOOR`] tokens (or the trained context, when that is smaller).
//!
//! The KV cache is estimated as llama.cpp lays it out by default: f16 keys and values for
//! every layer, `n_embd / n_head` wide per key-value head. On a GPU the cache lives in
//! the device's memory, which this does not read; llama.cpp's allocation failure is then
//! an error that says to lower `--ctx`.

/// The share of available memory the KV cache of one sequence may take: a quarter, so
/// that the weights, several server slots and the rest of the machine still fit.
pub const MEMORY_SHARE: u64 = 4;

/// The least context chosen for memory's sake (a model trained for less gets its own).
pub const FLOOR: u32 = 4096;

/// The shape of a model that sizes its KV cache.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct KvShape {
    /// Layers.
    pub layers: u64,
    /// Embedding width.
    pub embedding: u64,
    /// Attention heads.
    pub heads: u64,
    /// Key-value heads (fewer than `heads` under grouped-query attention).
    pub kv_heads: u64,
}

impl KvShape {
    /// Bytes of KV cache per token: keys and values, f16, every layer.
    pub fn bytes_per_token(&self) -> u64 {
        let head_width = self.embedding / self.heads.max(1);
        2 * 2 * self.layers * self.kv_heads * head_width
    }
}

/// The context for a model trained on `trained` tokens whose cache has `shape`, when
/// `available` bytes of memory are free (`None`: unknown, the trained context).
pub fn fitting_context(trained: u32, shape: KvShape, available: Option<u64>) -> u32 {
    let Some(available) = available else {
        return trained;
    };
    let budget = available / MEMORY_SHARE;
    let floor = FLOOR.min(trained);
    let mut ctx = trained;
    while ctx > floor && u64::from(ctx) * shape.bytes_per_token() > budget {
        ctx = (ctx / 2).max(floor);
    }
    ctx
}

/// The memory available to new allocations (Linux `MemAvailable`), in bytes; `None`
/// elsewhere or when it cannot be read.
pub fn available_memory() -> Option<u64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemAvailable:"))?;
    let kib: u64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024)
}

#[cfg(test)]
mod tests {
    use super::*;

    const GIB: u64 = 1 << 30;

    /// SmolLM2-135M: 30 layers, 576 wide, 9 heads, 3 key-value heads.
    const SMOLLM2: KvShape = KvShape {
        layers: 30,
        embedding: 576,
        heads: 9,
        kv_heads: 3,
    };

    /// Llama 3.1 8B: 32 layers, 4096 wide, 32 heads, 8 key-value heads.
    const LLAMA_8B: KvShape = KvShape {
        layers: 32,
        embedding: 4096,
        heads: 32,
        kv_heads: 8,
    };

    #[test]
    fn the_cache_is_sized_as_llama_cpp_lays_it_out() {
        assert_eq!(SMOLLM2.bytes_per_token(), 23_040);
        assert_eq!(LLAMA_8B.bytes_per_token(), 131_072);
    }

    #[test]
    fn the_trained_context_when_memory_allows() {
        assert_eq!(fitting_context(8192, SMOLLM2, Some(20 * GIB)), 8192);
        assert_eq!(fitting_context(8192, SMOLLM2, None), 8192);
        assert_eq!(fitting_context(131_072, LLAMA_8B, Some(128 * GIB)), 131_072);
    }

    #[test]
    fn halved_to_fit_a_quarter_of_memory_but_not_below_the_floor() {
        // 20 GiB free: 5 GiB for the cache, 40,960 tokens at 128 KiB each.
        assert_eq!(fitting_context(131_072, LLAMA_8B, Some(20 * GIB)), 32_768);
        assert_eq!(fitting_context(131_072, LLAMA_8B, Some(GIB)), FLOOR);
        assert_eq!(fitting_context(2048, LLAMA_8B, Some(GIB)), 2048);
    }

    #[cfg(target_os = "linux")]
    #[test]
    fn this_machine_reports_its_memory() {
        assert!(available_memory().is_some_and(|bytes| bytes > 0));
    }
}
