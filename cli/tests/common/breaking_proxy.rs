//! A loopback TCP proxy in front of an engine that breaks connections on purpose: the
//! first `breaks` requests that begin with a given line are read and then met by a closed
//! connection, with no answer, as when an engine closes a keep-alive connection just as a
//! request goes out on it. Everything else passes through unchanged.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The proxy, listening on 127.0.0.1 until dropped.
pub struct BreakingProxy {
    port: u16,
    broken: Arc<AtomicUsize>,
    stopped: Arc<AtomicBool>,
}

impl BreakingProxy {
    /// A proxy to the engine on `target` (a loopback port) that breaks the first `breaks`
    /// requests whose bytes begin with `request_line` (say `POST /completion `).
    pub fn start(target: u16, request_line: &str, breaks: usize) -> BreakingProxy {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let port = listener.local_addr().unwrap().port();
        let broken = Arc::new(AtomicUsize::new(0));
        let stopped = Arc::new(AtomicBool::new(false));
        let (line, counted, stop) = (
            request_line.as_bytes().to_vec(),
            Arc::clone(&broken),
            Arc::clone(&stopped),
        );
        std::thread::spawn(move || {
            while !stop.load(Ordering::SeqCst) {
                match listener.accept() {
                    Ok((client, _)) => {
                        client.set_nonblocking(false).unwrap();
                        let upstream = TcpStream::connect(("127.0.0.1", target)).unwrap();
                        let (line, counted) = (line.clone(), Arc::clone(&counted));
                        let (client_back, upstream_back) =
                            (client.try_clone().unwrap(), upstream.try_clone().unwrap());
                        std::thread::spawn(move || {
                            pump_requests(client, upstream, &line, breaks, &counted)
                        });
                        std::thread::spawn(move || pump(upstream_back, client_back));
                    }
                    Err(_) => std::thread::sleep(Duration::from_millis(5)),
                }
            }
        });
        BreakingProxy {
            port,
            broken,
            stopped,
        }
    }

    /// Its `--backend` URL, as a llama-server.
    pub fn url(&self) -> String {
        format!("llama-server+http://127.0.0.1:{}", self.port)
    }

    /// How many requests it has broken.
    pub fn broken(&self) -> usize {
        self.broken.load(Ordering::SeqCst)
    }
}

impl Drop for BreakingProxy {
    fn drop(&mut self) {
        self.stopped.store(true, Ordering::SeqCst);
    }
}

/// Client to engine: passes bytes on, except that a read beginning with `line` while
/// fewer than `breaks` have been broken closes both connections instead.
fn pump_requests(
    mut client: TcpStream,
    mut upstream: TcpStream,
    line: &[u8],
    breaks: usize,
    broken: &AtomicUsize,
) {
    let mut buffer = [0u8; 65536];
    loop {
        let n = match client.read(&mut buffer) {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        if buffer[..n].starts_with(line)
            && broken
                .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |b| {
                    (b < breaks).then_some(b + 1)
                })
                .is_ok()
        {
            break;
        }
        if upstream.write_all(&buffer[..n]).is_err() {
            break;
        }
    }
    let _ = client.shutdown(Shutdown::Both);
    let _ = upstream.shutdown(Shutdown::Both);
}

/// Engine to client: passes bytes on until either side closes.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    let _ = std::io::copy(&mut from, &mut to);
    let _ = from.shutdown(Shutdown::Both);
    let _ = to.shutdown(Shutdown::Both);
}
