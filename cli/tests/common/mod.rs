//! What the CLI tests share: where the repository and the seed examples are, and running
//! the `gbnfc` binary the way a user does.
#![allow(clippy::unwrap_used, dead_code)]

pub mod breaking_proxy;
pub mod llama_server;
pub mod serve;

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// The repository root (the binary runs there, so relative paths are the README's).
pub fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

/// The path of a seed example in `../shared/examples`, which must be there.
pub fn example(name: &str) -> String {
    let path = repo().join("../shared/examples").join(name);
    assert!(
        path.is_file(),
        "{} is missing: CI lays ../shared beside the clone",
        path.display()
    );
    path.display().to_string()
}

/// Runs `gbnfc args` in the repository with `stdin` on its standard input, written from
/// a thread so that a large input cannot block against the output it provokes.
pub fn gbnfc_fed(args: &[&str], stdin: &str) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_gbnfc"))
        .args(args)
        .current_dir(repo())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let input = stdin.to_string();
    let mut pipe = child.stdin.take().unwrap();
    let writer = std::thread::spawn(move || {
        let _ = pipe.write_all(input.as_bytes());
    });
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap();
    out
}

/// What the command wrote on standard output.
pub fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// What the command wrote on standard error.
pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The `--stats` line of a run's standard error, as JSON.
pub fn stats_of(out: &Output) -> serde_json::Value {
    let err = stderr(out);
    let line = err
        .lines()
        .find(|l| l.starts_with('{'))
        .unwrap_or_else(|| panic!("no stats in: {err}"));
    serde_json::from_str(line).unwrap()
}

/// A scratch file in the system's temporary directory, removed when dropped.
pub struct Scratch(PathBuf);

impl Scratch {
    /// Writes `bytes` to a file named after this process and `name`.
    pub fn new(name: &str, bytes: &[u8]) -> Scratch {
        let path = std::env::temp_dir().join(format!("gbnfc-cli-{}-{name}", std::process::id()));
        std::fs::write(&path, bytes).unwrap();
        Scratch(path)
    }

    /// Its path.
    pub fn path(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for Scratch {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Runs `gbnfc args` in the repository with `GBNFC_MODEL` unset and nothing on its
/// standard input.
pub fn gbnfc(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbnfc"))
        .args(args)
        .current_dir(repo())
        .env_remove("GBNFC_MODEL")
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// Runs `gbnfc args` on the default model, as users run it from the repository, on 2
/// threads and with `GBNFC_MODEL` unset.
pub fn gbnfc_on_model(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_gbnfc"))
        .args(args)
        .args(["--threads", "2"])
        .current_dir(repo())
        .env_remove("GBNFC_MODEL")
        .output()
        .unwrap()
}
