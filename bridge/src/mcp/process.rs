//! A server's process: started in a process group of its own, its stderr's last lines
//! kept for error messages, and ended — group and all — when the server goes, so that
//! `npx`'s grandchildren die with it.

use std::collections::VecDeque;
use std::io::Write;
use std::process::{ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use tokio::io::AsyncReadExt;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

/// Bytes of stderr kept.
const STDERR_KEPT: usize = 8 * 1024;
/// Lines of stderr shown in messages.
const STDERR_LINES: usize = 20;
/// How long a process gets after `SIGTERM` before `SIGKILL`.
const TERM_GRACE: Duration = Duration::from_millis(500);
/// How long the stderr reader may take to catch up once the process has exited (its
/// children may hold the pipe open, so end of file may never come).
const STDERR_SETTLE: Duration = Duration::from_millis(500);
/// How long reaping may take after `SIGKILL`.
const KILL_WAIT: Duration = Duration::from_secs(2);

/// A running server process.
pub(crate) struct ServerProcess {
    child: Child,
    pid: Option<u32>,
    stderr: Arc<Mutex<VecDeque<u8>>>,
    stderr_reader: Option<tokio::task::JoinHandle<()>>,
    status: Option<ExitStatus>,
}

/// Starts `argv` with piped stdio in a new process group (Unix). Must run inside a tokio
/// runtime context: the pipes are registered with its reactor and a task reads stderr.
pub(crate) fn spawn(
    argv: &[String],
    echo_stderr: bool,
) -> std::io::Result<(ServerProcess, ChildStdout, ChildStdin)> {
    let (program, args) = argv
        .split_first()
        .ok_or_else(|| std::io::Error::other("empty command"))?;
    let mut command = Command::new(program);
    command
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        // The last line of defence if everything below is bypassed.
        .kill_on_drop(true);
    #[cfg(unix)]
    command.process_group(0);
    let mut child = command.spawn()?;
    let missing = |what: &str| std::io::Error::other(format!("the child's {what} is not piped"));
    let stdout = child.stdout.take().ok_or_else(|| missing("stdout"))?;
    let stdin = child.stdin.take().ok_or_else(|| missing("stdin"))?;
    let stderr_pipe = child.stderr.take().ok_or_else(|| missing("stderr"))?;
    let stderr = Arc::new(Mutex::new(VecDeque::with_capacity(STDERR_KEPT)));
    let stderr_reader = tokio::spawn(read_stderr(stderr_pipe, Arc::clone(&stderr), echo_stderr));
    let pid = child.id();
    Ok((
        ServerProcess {
            child,
            pid,
            stderr,
            stderr_reader: Some(stderr_reader),
            status: None,
        },
        stdout,
        stdin,
    ))
}

async fn read_stderr(
    mut pipe: tokio::process::ChildStderr,
    kept: Arc<Mutex<VecDeque<u8>>>,
    echo: bool,
) {
    let mut buffer = [0u8; 4096];
    loop {
        let n = match pipe.read(&mut buffer).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let chunk = &buffer[..n];
        if echo {
            let _ = std::io::stderr().write_all(chunk);
        }
        let mut kept = kept.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        kept.extend(chunk);
        let excess = kept.len().saturating_sub(STDERR_KEPT);
        kept.drain(..excess);
    }
}

impl ServerProcess {
    /// The process id (also its process group id on Unix), while it runs.
    pub(crate) fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// The last lines the server wrote to stderr.
    pub(crate) fn stderr_tail(&self) -> String {
        let kept = self
            .stderr
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        let bytes: Vec<u8> = kept.iter().copied().collect();
        drop(kept);
        let text = String::from_utf8_lossy(&bytes);
        let lines: Vec<&str> = text.lines().collect();
        lines[lines.len().saturating_sub(STDERR_LINES)..].join("\n")
    }

    /// How the process ended, if it ends within `within` (it is reaped then, and its
    /// last stderr read, so that [`ServerProcess::stderr_tail`] has its last words).
    pub(crate) async fn exit_status_within(&mut self, within: Duration) -> Option<ExitStatus> {
        if self.status.is_none() {
            if let Ok(Ok(status)) = tokio::time::timeout(within, self.child.wait()).await {
                self.status = Some(status);
                if let Some(reader) = self.stderr_reader.as_mut() {
                    if tokio::time::timeout(STDERR_SETTLE, reader).await.is_ok() {
                        self.stderr_reader = None;
                    }
                }
            }
        }
        self.status
    }

    /// Ends the process: it gets `grace` to exit by itself (its stdin should be closed
    /// already), then its group gets `SIGTERM`, then `SIGKILL` — the group always gets
    /// `SIGKILL` at the end, for children that outlived their parent.
    pub(crate) async fn terminate(&mut self, grace: Duration) {
        if self.exit_status_within(grace).await.is_none() {
            self.signal_group(Signal::Term);
            self.exit_status_within(TERM_GRACE).await;
        }
        self.signal_group(Signal::Kill);
        if self.status.is_none() {
            let _ = self.child.start_kill();
            self.exit_status_within(KILL_WAIT).await;
        }
    }

    /// Ends the process without waiting (for use where no runtime can be blocked on).
    pub(crate) fn kill_now(&mut self) {
        self.signal_group(Signal::Kill);
        let _ = self.child.start_kill();
        if let Ok(Some(status)) = self.child.try_wait() {
            self.status = Some(status);
        }
    }

    #[cfg(unix)]
    fn signal_group(&mut self, signal: Signal) {
        use rustix::process::{kill_process_group, Pid, Signal as Sig};
        let pid = self
            .pid
            .and_then(|pid| i32::try_from(pid).ok())
            .and_then(Pid::from_raw);
        if let Some(pid) = pid {
            let signal = match signal {
                Signal::Term => Sig::TERM,
                Signal::Kill => Sig::KILL,
            };
            // ESRCH (the group is gone) is the expected answer once all is well.
            let _ = kill_process_group(pid, signal);
        }
    }

    #[cfg(not(unix))]
    fn signal_group(&mut self, signal: Signal) {
        if signal == Signal::Kill {
            let _ = self.child.start_kill();
        }
    }
}

/// The signals used to end a process group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Signal {
    Term,
    Kill,
}

/// An exit status for messages: `exit status: 3`, `signal: 9 (SIGKILL)`; `unknown
/// status` when the process has not been reaped.
pub(crate) fn describe(status: Option<ExitStatus>) -> String {
    match status {
        Some(status) => status.to_string(),
        None => "status unknown".to_owned(),
    }
}
