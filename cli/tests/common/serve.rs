//! `gbnfc serve` as the tests run it: the real binary on a free loopback port, and the
//! OpenAI SDK check script (`scripts/openai_sdk_check.py`) against it.

use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use super::repo;

/// How long the server may take to load the model and listen.
const STARTUP: Duration = Duration::from_secs(120);

/// The running server; killed and reaped when dropped, so a failing test leaves none.
pub struct Server {
    child: Child,
    /// The server's standard error, line by line, read by a thread that drains the pipe
    /// until the server exits so that it never blocks on a full pipe.
    lines: Receiver<String>,
    /// What it has written so far.
    seen: Vec<String>,
}

impl Server {
    /// Starts `gbnfc serve` on a free port of 127.0.0.1 with `api_key` and `extra` flags.
    pub fn start(api_key: &str, extra: &[&str]) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_gbnfc"))
            .args(["serve", "--host", "127.0.0.1", "--port", "0", "--api-key"])
            .arg(api_key)
            .args(["--parallel", "2", "--seed", "1"])
            .args(extra)
            .current_dir(repo())
            .env_remove("GBNFC_MODEL")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn gbnfc serve");
        let stderr = child.stderr.take().unwrap();
        let (send, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines() {
                let Ok(line) = line else { break };
                // The test may be done listening; the pipe is drained all the same.
                let _ = send.send(line);
            }
        });
        Server {
            child,
            lines,
            seen: Vec::new(),
        }
    }

    /// Waits for `gbnfc serve: listening on http://127.0.0.1:PORT` and returns the URL.
    pub fn url(&mut self) -> String {
        let deadline = Instant::now() + STARTUP;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(line) => {
                    let url = line
                        .find("http://127.0.0.1:")
                        .map(|at| line[at..].split_whitespace().next().unwrap().to_string());
                    self.seen.push(line);
                    if let Some(url) = url {
                        return url.trim_end_matches('/').to_string();
                    }
                }
                Err(RecvTimeoutError::Timeout) => panic!(
                    "gbnfc serve did not say it was listening within {STARTUP:?}; its stderr:\n{}",
                    self.seen.join("\n")
                ),
                Err(RecvTimeoutError::Disconnected) => {
                    let status = match self.child.wait() {
                        Ok(status) => status.to_string(),
                        Err(e) => format!("unknown: {e}"),
                    };
                    panic!(
                        "gbnfc serve ended before listening ({status}); its stderr:\n{}",
                        self.seen.join("\n")
                    )
                }
            }
        }
    }

    /// Everything the server has written on standard error so far (waiting until it has
    /// been quiet for a moment, so that the lines about the last requests are in).
    pub fn log(&mut self) -> String {
        while let Ok(line) = self.lines.recv_timeout(Duration::from_millis(500)) {
            self.seen.push(line);
        }
        self.seen.join("\n")
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The venv's python, which scripts/setup makes; its absence is a failure, not a skip.
pub fn venv_python() -> PathBuf {
    let python = repo().join("target/openai-venv/bin/python");
    assert!(
        python.is_file(),
        "{} is missing: run scripts/setup (it makes the venv with the OpenAI SDK)",
        python.display()
    );
    python
}

/// A key no other run shares.
pub fn api_key() -> String {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_nanos();
    let pid = std::process::id();
    format!("sk-gbnfc-test-{pid}-{nanos:x}")
}

/// Runs scripts/openai_sdk_check.py against the server at `url`, which takes `key`.
pub fn run_sdk_script(server: &mut Server, url: &str, key: &str, reasoning: bool) {
    let python = venv_python();
    let examples = repo().join("../shared/examples");
    let out = Command::new(&python)
        .arg(repo().join("scripts/openai_sdk_check.py"))
        .current_dir(repo())
        .env("GBNFC_BASE_URL", format!("{url}/v1"))
        .env("GBNFC_API_KEY", key)
        .env("GBNFC_EXAMPLES", &examples)
        .env("GBNFC_REPO", repo())
        .env("GBNFC_REASONING", if reasoning { "1" } else { "0" })
        .env("PYTHONUNBUFFERED", "1")
        .stdin(Stdio::null())
        .output()
        .expect("run scripts/openai_sdk_check.py");
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        out.status.success(),
        "scripts/openai_sdk_check.py against {url} failed ({}):\n{stdout}\n--- its stderr:\n{stderr}\n--- the server's stderr:\n{}",
        out.status,
        server.log()
    );
    // Shown with --nocapture: which cases ran and how long each took.
    println!("{stdout}");
}
