//! Real llama-server instances for the tests of remote engines: built by
//! `scripts/llama-server build` (which `scripts/test` runs), serving the default model on
//! free loopback ports.

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use super::repo;

/// A llama-server on 127.0.0.1, stopped when dropped.
pub struct Instance {
    child: Child,
    port: u16,
}

impl Instance {
    /// Starts one with the default model on `threads` threads and `slots` slots of
    /// 4,096 tokens each, and waits until it answers `/health`.
    pub fn start(threads: u32, slots: u32) -> Instance {
        let binary = repo().join("target/llama-server/bin/llama-server");
        assert!(
            binary.is_file(),
            "{} is missing: run scripts/llama-server build (scripts/test does)",
            binary.display()
        );
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let model = repo().join("models/SmolLM2-135M-Instruct.Q4_1.gguf");
        let child = Command::new(binary)
            .args(["--model", model.to_str().unwrap(), "--host", "127.0.0.1"])
            .args(["--port", &port.to_string(), "--no-webui"])
            .args(["--threads", &threads.to_string()])
            .args(["--ctx-size", &(4096 * slots).to_string()])
            .args(["--parallel", &slots.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut instance = Instance { child, port };
        let started = Instant::now();
        while !instance.healthy() {
            assert!(
                instance.child.try_wait().unwrap().is_none(),
                "llama-server on port {port} stopped while starting"
            );
            assert!(
                started.elapsed() < Duration::from_secs(120),
                "llama-server on port {port} not up after 120 s"
            );
            std::thread::sleep(Duration::from_millis(100));
        }
        instance
    }

    /// Whether `GET /health` answers 200.
    pub fn healthy(&self) -> bool {
        let Ok(mut stream) = TcpStream::connect(("127.0.0.1", self.port)) else {
            return false;
        };
        let request = format!(
            "GET /health HTTP/1.1\r\nHost: 127.0.0.1:{}\r\nConnection: close\r\n\r\n",
            self.port
        );
        let mut answer = String::new();
        stream.write_all(request.as_bytes()).is_ok()
            && stream.read_to_string(&mut answer).is_ok()
            && answer.starts_with("HTTP/1.1 200")
    }

    /// Its loopback port.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// Its `--backend` URL.
    pub fn url(&self) -> String {
        format!("llama-server+http://127.0.0.1:{}", self.port)
    }

    /// Kills it at once, as a crash would, and waits until it is gone.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.kill();
    }
}
