//! Fault injection for the server's tests (feature `fault-injection`: the bridge's tests
//! turn it on, so `cargo test --workspace` builds have it; `scripts/setup`'s build and any
//! build of `gbnfc` alone do not): a request whose text contains a fault's marker fails at that place, so the
//! tests can show that one failing request is answered with a 500 and the server goes on
//! serving. Without the feature these functions do nothing.

/// Fails the handler reading a request whose `model` is `gbnfc-fault:handler`.
pub fn handler(model: Option<&str>) {
    #[cfg(feature = "fault-injection")]
    if model == Some("gbnfc-fault:handler") {
        #[allow(clippy::panic)]
        {
            panic!("fault injected in the handler");
        }
    }
    let _ = model;
}

/// Fails the engine thread starting a job whose prompt contains `gbnfc-fault:engine`.
pub fn engine(prompt: &str) {
    #[cfg(feature = "fault-injection")]
    if prompt.contains("gbnfc-fault:engine") {
        #[allow(clippy::panic)]
        {
            panic!("fault injected in the engine thread");
        }
    }
    let _ = prompt;
}
