//! A first look at a model file before llama.cpp reads it: is it GGUF at all, and is it
//! whole?
//!
//! llama.cpp reports a bad file only as a null model (its reasons go to a log gbnfc keeps
//! quiet), so the common mistakes — a path to some other file, a download cut short —
//! are recognised here, where they can be named. The check reads the header, the
//! metadata and the tensor table (seeking over values, so a 100 MB file costs a few
//! reads) and compares the size the tensor table implies with the file's.

use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;

use crate::BridgeError;

/// The four bytes every GGUF file starts with.
pub const MAGIC: &[u8; 4] = b"GGUF";

/// The GGUF versions llama.cpp reads.
const VERSIONS: std::ops::RangeInclusive<u32> = 2..=3;

/// Tensor data is aligned to this unless `general.alignment` says otherwise.
const DEFAULT_ALIGNMENT: u64 = 32;

/// Checks that `path` is a readable, whole GGUF file.
///
/// # Errors
/// [`BridgeError::NoModel`] when it cannot be opened, [`BridgeError::NotGguf`] when its
/// first bytes are not `GGUF`, and [`BridgeError::BadModelFile`] when it is cut short (the
/// header, the metadata or the tensor data ends early) or names a version llama.cpp does
/// not read.
pub fn check_file(path: &Path) -> Result<(), BridgeError> {
    let file = File::open(path)
        .map_err(|e| BridgeError::NoModel(format!("cannot open `{}`: {e}", path.display())))?;
    let len = file
        .metadata()
        .map_err(|e| BridgeError::NoModel(format!("cannot read `{}`: {e}", path.display())))?
        .len();
    let mut reader = Reader {
        inner: BufReader::new(file),
        pos: 0,
        len,
    };
    let bad = |reason: String| BridgeError::BadModelFile {
        path: path.to_path_buf(),
        reason,
    };
    let mut magic = [0u8; 4];
    let got = reader.read_up_to(&mut magic);
    if got < 4 || &magic != MAGIC {
        let shown: String = magic[..got]
            .iter()
            .map(|&b| {
                if b.is_ascii_graphic() {
                    char::from(b).to_string()
                } else {
                    format!("\\x{b:02x}")
                }
            })
            .collect();
        return Err(BridgeError::NotGguf {
            path: path.to_path_buf(),
            reason: if got == 0 {
                "the file is empty".to_string()
            } else {
                format!("it starts with `{shown}`, not `GGUF`")
            },
        });
    }
    let truncated = |what: &str| {
        bad(format!(
            "the file is truncated ({len} bytes): it ends inside {what}"
        ))
    };
    let version = reader.u32().ok_or_else(|| truncated("the header"))?;
    if !VERSIONS.contains(&version) {
        return Err(bad(format!(
            "GGUF version {version} is not one llama.cpp reads (2 or 3)"
        )));
    }
    let n_tensors = reader.u64().ok_or_else(|| truncated("the header"))?;
    let n_kv = reader.u64().ok_or_else(|| truncated("the header"))?;
    let mut alignment = DEFAULT_ALIGNMENT;
    for _ in 0..n_kv {
        let key = reader.string().ok_or_else(|| truncated("the metadata"))?;
        let kind = reader.u32().ok_or_else(|| truncated("the metadata"))?;
        if key == "general.alignment" && kind == 4 {
            alignment = u64::from(reader.u32().ok_or_else(|| truncated("the metadata"))?);
            continue;
        }
        match reader.skip_value(kind, 0) {
            Skip::Done => {}
            Skip::Eof => return Err(truncated("the metadata")),
            // A value type this check does not know: leave the verdict to llama.cpp.
            Skip::Unknown => return Ok(()),
        }
    }
    let mut data_needed: u64 = 0;
    for _ in 0..n_tensors {
        let table = || truncated("the tensor table");
        reader.skip_string().then_some(()).ok_or_else(table)?;
        let n_dims = reader.u32().ok_or_else(table)?;
        let mut elements: u64 = 1;
        for _ in 0..n_dims.min(8) {
            elements = elements.saturating_mul(reader.u64().ok_or_else(table)?);
        }
        let kind = reader.u32().ok_or_else(table)?;
        let offset = reader.u64().ok_or_else(table)?;
        let size = tensor_bytes(kind, elements).unwrap_or(1);
        data_needed = data_needed.max(offset.saturating_add(size));
    }
    let data_start = reader.pos.div_ceil(alignment.max(1)) * alignment.max(1);
    let needed = data_start.saturating_add(data_needed);
    if n_tensors > 0 && len < needed {
        return Err(bad(format!(
            "the file is truncated: {len} bytes, but its tensors need {needed}"
        )));
    }
    Ok(())
}

/// Bytes of a tensor of `elements` elements of ggml type `kind`, for the types whose
/// block layout is fixed and known here.
fn tensor_bytes(kind: u32, elements: u64) -> Option<u64> {
    let (block_bytes, block_elements) = match kind {
        0 => (4, 1),     // F32
        1 => (2, 1),     // F16
        2 => (18, 32),   // Q4_0
        3 => (20, 32),   // Q4_1
        6 => (22, 32),   // Q5_0
        7 => (24, 32),   // Q5_1
        8 => (34, 32),   // Q8_0
        9 => (36, 32),   // Q8_1
        10 => (84, 256), // Q2_K
        11 => (110, 256),
        12 => (144, 256),
        13 => (176, 256),
        14 => (210, 256),
        15 => (292, 256),
        24 => (1, 1), // I8
        25 => (2, 1), // I16
        26 => (4, 1), // I32
        27 => (8, 1), // I64
        28 => (8, 1), // F64
        30 => (2, 1), // BF16
        _ => return None,
    };
    Some(
        elements
            .div_ceil(block_elements)
            .saturating_mul(block_bytes),
    )
}

/// A reader that knows where it is and where the file ends.
struct Reader {
    inner: BufReader<File>,
    pos: u64,
    len: u64,
}

impl Reader {
    fn read_up_to(&mut self, buf: &mut [u8]) -> usize {
        let mut got = 0;
        while got < buf.len() {
            match self.inner.read(&mut buf[got..]) {
                Ok(0) | Err(_) => break,
                Ok(n) => got += n,
            }
        }
        self.pos += got as u64;
        got
    }

    fn exact<const N: usize>(&mut self) -> Option<[u8; N]> {
        let mut buf = [0u8; N];
        (self.read_up_to(&mut buf) == N).then_some(buf)
    }

    fn u32(&mut self) -> Option<u32> {
        self.exact::<4>().map(u32::from_le_bytes)
    }

    fn u64(&mut self) -> Option<u64> {
        self.exact::<8>().map(u64::from_le_bytes)
    }

    /// Moves `n` bytes on; `false` past the end of the file.
    fn skip(&mut self, n: u64) -> bool {
        if self.len.saturating_sub(self.pos) < n {
            return false;
        }
        match i64::try_from(n) {
            Ok(step) if self.inner.seek_relative(step).is_ok() => {
                self.pos += n;
                true
            }
            _ => false,
        }
    }

    fn string(&mut self) -> Option<String> {
        let n = self.u64()?;
        if n > 1 << 16 {
            return self.skip(n).then(String::new);
        }
        let mut buf = vec![0u8; n as usize];
        (self.read_up_to(&mut buf) == buf.len()).then(|| String::from_utf8_lossy(&buf).into_owned())
    }

    fn skip_string(&mut self) -> bool {
        self.u64().is_some_and(|n| self.skip(n))
    }

    /// Skips one metadata value of type `kind`.
    fn skip_value(&mut self, kind: u32, depth: u32) -> Skip {
        let done = |ok: bool| if ok { Skip::Done } else { Skip::Eof };
        match kind {
            0 | 1 | 7 => done(self.skip(1)),
            2 | 3 => done(self.skip(2)),
            4..=6 => done(self.skip(4)),
            10..=12 => done(self.skip(8)),
            8 => done(self.skip_string()),
            9 if depth < 4 => {
                let (Some(item), Some(count)) = (self.u32(), self.u64()) else {
                    return Skip::Eof;
                };
                let fixed = match item {
                    0 | 1 | 7 => Some(1),
                    2 | 3 => Some(2),
                    4..=6 => Some(4),
                    10..=12 => Some(8),
                    _ => None,
                };
                if let Some(size) = fixed {
                    return done(self.skip(count.saturating_mul(size)));
                }
                for _ in 0..count {
                    match self.skip_value(item, depth + 1) {
                        Skip::Done => {}
                        other => return other,
                    }
                }
                Skip::Done
            }
            _ => Skip::Unknown,
        }
    }
}

/// How skipping a metadata value went.
enum Skip {
    Done,
    /// The file ended first.
    Eof,
    /// A value type this reader does not know.
    Unknown,
}
