//! A pool of remote engines serving one model, as one [`Generator`]: what `gbnfc serve
//! --backend URL --backend URL …` generates on.
//!
//! Each generation goes to the engine with the fewest generations in flight for its
//! slots. An engine that turns out to be down ([`BridgeError::BackendDown`]) and no
//! longer answers `/health` is taken out, and the generation goes to another with the
//! same settings and seed (one that still answers gets it once more first). An engine
//! that refuses a request ([`BridgeError::Remote`]) stays in, and the refusal is the
//! answer.
//! [`Pool::check_health`], run every [`HEALTH_INTERVAL`] by the server, takes out
//! engines that stop answering `/health` and brings back (reconnecting, so a restarted
//! engine's metadata is read again) those that answer again. A streamed generation moves
//! to another engine only while it has passed on no text.
//!
//! Every engine must serve the same model with the same chat template: prompts are
//! rendered once, for the pool.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use gbnfc_compiler::gbnf::CheckedGrammar;
use serde_json::{json, Value};

use super::BackendUrl;
use super::{Call, RemoteEngine};
use crate::chat_model::ChatModel;
use crate::engine::EngineOptions;
use crate::generate::{GenerateOptions, Generation, Generator};
use crate::reasoning::Reasoning;
use crate::BridgeError;

/// How often the server checks its engines' health.
pub const HEALTH_INTERVAL: Duration = Duration::from_secs(1);

/// How long one health check waits for an engine's answer.
const HEALTH_TIMEOUT: Duration = Duration::from_secs(2);

/// How many times one generation may run on an engine that still answers `/health` after
/// a broken connection: a connection can break under a live engine (it closed an idle
/// keep-alive connection just as a request went out on it), so a second run is tried
/// there before the next engine.
const ATTEMPTS_ON_A_LIVE_ENGINE: u8 = 2;

/// One engine of the pool.
#[derive(Debug)]
struct Member {
    url: BackendUrl,
    /// The engine as last connected (`None` until it first answers).
    server: Mutex<Option<Arc<RemoteEngine>>>,
    up: AtomicBool,
    in_flight: AtomicUsize,
    /// Why it is out, when it is.
    reason: Mutex<String>,
}

impl Member {
    fn server(&self) -> Option<Arc<RemoteEngine>> {
        self.server
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn take_out(&self, reason: String) {
        self.up.store(false, Ordering::SeqCst);
        *self.reason.lock().unwrap_or_else(PoisonError::into_inner) = reason;
    }

    /// Puts it in, reached as `server`.
    fn bring_in(&self, server: RemoteEngine) {
        *self.server.lock().unwrap_or_else(PoisonError::into_inner) = Some(Arc::new(server));
        self.up.store(true, Ordering::SeqCst);
    }

    /// Connects (again) and checks that it serves `model`; puts it in when it does.
    fn connect(&self, options: &EngineOptions, model: &Model) {
        match RemoteEngine::connect(&self.url, options) {
            Ok(server) => match model.differs(&server) {
                None => self.bring_in(server),
                Some(difference) => self.take_out(difference),
            },
            Err(BridgeError::BackendDown { reason, .. } | BridgeError::Remote { reason, .. }) => {
                self.take_out(reason);
            }
            Err(e) => self.take_out(e.to_string()),
        }
    }

    /// Its load: generations in flight per slot.
    fn load(&self, server: &RemoteEngine) -> f64 {
        self.in_flight.load(Ordering::SeqCst) as f64 / server.slots().max(1) as f64
    }
}

/// What every engine of the pool must serve alike.
#[derive(Debug, Clone)]
struct Model {
    name: String,
    template: Option<String>,
    ctx: u32,
}

impl Model {
    fn of(server: &RemoteEngine) -> Model {
        Model {
            name: server.name(),
            template: server.chat_template(),
            ctx: ChatModel::ctx(server),
        }
    }

    /// How `server`'s model differs from this one, if it does.
    fn differs(&self, server: &RemoteEngine) -> Option<String> {
        let other = Model::of(server);
        if other.name != self.name {
            Some(format!(
                "it serves {}, the pool {}: every backend must serve the same model",
                other.name, self.name
            ))
        } else if other.template != self.template {
            Some("its chat template differs from the pool's".into())
        } else if other.ctx != self.ctx {
            Some(format!(
                "its context per slot is {} tokens, the pool's {}: start every backend \
                 with the same --ctx-size and --parallel",
                other.ctx, self.ctx
            ))
        } else {
            None
        }
    }
}

/// Remote engines serving one model, balanced and failed over.
#[derive(Debug)]
pub struct Pool {
    members: Vec<Member>,
    model: Model,
    options: EngineOptions,
}

/// Counts a generation in flight on a member until dropped.
struct InFlight<'a>(&'a AtomicUsize);

impl Drop for InFlight<'_> {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

impl Pool {
    /// Connects to every engine of `urls`. Engines that do not answer yet start out (the
    /// health check brings them in when they do).
    ///
    /// # Errors
    /// [`BridgeError::NoBackend`] when none answers (with each one's reason); what
    /// [`RemoteEngine::connect`] refuses; [`BridgeError::Remote`] when an engine serves
    /// another model than the first.
    pub fn connect(urls: &[BackendUrl], options: &EngineOptions) -> Result<Pool, BridgeError> {
        let mut model = None;
        let members: Vec<Member> = urls
            .iter()
            .map(|url| Member {
                url: url.clone(),
                server: Mutex::new(None),
                up: AtomicBool::new(false),
                in_flight: AtomicUsize::new(0),
                reason: Mutex::new("not connected yet".into()),
            })
            .collect();
        for member in &members {
            match RemoteEngine::connect(&member.url, options) {
                Ok(server) => {
                    let reference = model.get_or_insert_with(|| Model::of(&server));
                    if let Some(difference) = reference.differs(&server) {
                        return Err(BridgeError::Remote {
                            url: member.url.to_string(),
                            reason: difference,
                        });
                    }
                    member.bring_in(server);
                }
                Err(BridgeError::BackendDown { reason, .. }) => member.take_out(reason),
                Err(e) => return Err(e),
            }
        }
        match model {
            Some(model) => Ok(Pool {
                members,
                model,
                options: options.clone(),
            }),
            None => Err(none_up(&members)),
        }
    }

    /// How many engines it has, in or out.
    pub fn engines(&self) -> usize {
        self.members.len()
    }

    /// How many engines are in.
    pub fn up(&self) -> usize {
        self.members
            .iter()
            .filter(|m| m.up.load(Ordering::SeqCst))
            .count()
    }

    /// The slots of every engine connected so far (how many generations the pool
    /// decodes at once when all are in).
    pub fn slots(&self) -> usize {
        self.members
            .iter()
            .filter_map(Member::server)
            .map(|s| s.slots())
            .sum()
    }

    /// Each engine: its URL, whether it is in, its generations in flight, its slots and
    /// llama.cpp build, and why it is out (for `/health`).
    pub fn status(&self) -> Value {
        let members: Vec<Value> = self
            .members
            .iter()
            .map(|m| {
                let up = m.up.load(Ordering::SeqCst);
                let server = m.server();
                let mut status = json!({
                    "url": m.url.to_string(),
                    "up": up,
                    "in_flight": m.in_flight.load(Ordering::SeqCst),
                    "slots": server.as_ref().map(|s| s.slots()),
                    "build": server.as_ref().map(|s| s.build().to_string()),
                });
                if !up {
                    status["reason"] =
                        json!(*m.reason.lock().unwrap_or_else(PoisonError::into_inner));
                }
                status
            })
            .collect();
        json!(members)
    }

    /// Checks every engine once: one in that does not answer `/health` goes out; one out
    /// that answers is connected again and comes in if it serves the pool's model.
    pub fn check_health(&self) {
        for member in &self.members {
            let server = member.server();
            let healthy = server.as_ref().is_some_and(|s| s.healthy(HEALTH_TIMEOUT));
            let up = member.up.load(Ordering::SeqCst);
            if up && !healthy {
                member.take_out("it stopped answering GET /health".into());
            } else if !up {
                member.connect(&self.options, &self.model);
            }
        }
    }

    /// Runs `work` on the least loaded engine in. When the engine is down for it (it
    /// cannot be reached, the connection broke, or it answered 503), `retry` says whether
    /// `work` may run again; it then runs once more on the same engine if that one still
    /// answers `/health` (one broken connection does not condemn a live engine), else the
    /// engine is taken out and `work` goes to the next, until one answers or none is left.
    fn on_engine<T>(
        &self,
        mut work: impl FnMut(&RemoteEngine) -> Result<T, BridgeError>,
        mut retry: impl FnMut() -> bool,
    ) -> Result<T, BridgeError> {
        let mut attempts = vec![0u8; self.members.len()];
        let mut last_error = None;
        loop {
            let Some((index, server)) = self.pick(&attempts) else {
                return Err(match last_error {
                    Some(error) if self.up() > 0 => error,
                    _ => self.none_up(),
                });
            };
            attempts[index] += 1;
            let member = &self.members[index];
            member.in_flight.fetch_add(1, Ordering::SeqCst);
            let counted = InFlight(&member.in_flight);
            let result = work(&server);
            drop(counted);
            match result {
                Err(BridgeError::BackendDown { reason, url }) => {
                    if server.healthy(HEALTH_TIMEOUT) {
                        attempts[index] = attempts[index].max(ATTEMPTS_ON_A_LIVE_ENGINE - 1);
                    } else {
                        member.take_out(reason.clone());
                        attempts[index] = ATTEMPTS_ON_A_LIVE_ENGINE;
                    }
                    let error = BridgeError::BackendDown { url, reason };
                    if !retry() {
                        return Err(error);
                    }
                    last_error = Some(error);
                }
                other => return other,
            }
        }
    }

    /// The least loaded engine in that has runs left (fewer than
    /// [`ATTEMPTS_ON_A_LIVE_ENGINE`] `attempts`).
    fn pick(&self, attempts: &[u8]) -> Option<(usize, Arc<RemoteEngine>)> {
        self.members
            .iter()
            .enumerate()
            .filter(|(i, m)| {
                attempts[*i] < ATTEMPTS_ON_A_LIVE_ENGINE && m.up.load(Ordering::SeqCst)
            })
            .filter_map(|(i, m)| m.server().map(|s| (i, m.load(&s), s)))
            .min_by(|a, b| a.1.total_cmp(&b.1).then(a.0.cmp(&b.0)))
            .map(|(i, _, s)| (i, s))
    }

    /// The error when no engine is in: each one and why it is out.
    pub fn none_up(&self) -> BridgeError {
        none_up(&self.members)
    }

    /// Generates as [`RemoteEngine::complete`] on the least loaded engine, moving to
    /// another when it is down — a streamed generation only while it has passed on no
    /// text.
    ///
    /// # Errors
    /// As [`RemoteEngine::complete`]; [`BridgeError::NoBackend`] when no engine is left.
    pub fn complete(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
        call: Call<'_>,
    ) -> Result<Generation, BridgeError> {
        let Call {
            stop,
            deadline,
            mut on_text,
            cancelled,
        } = call;
        let sent = AtomicBool::new(false);
        self.on_engine(
            |server| {
                let streamed = on_text.is_some();
                let mut forward = |piece: &str| {
                    sent.store(true, Ordering::SeqCst);
                    on_text.as_mut().is_none_or(|f| f(piece))
                };
                let call = Call {
                    stop,
                    deadline,
                    on_text: if streamed { Some(&mut forward) } else { None },
                    cancelled,
                };
                server.complete(prompt, grammar, options, call)
            },
            || !sent.load(Ordering::SeqCst),
        )
    }
}

impl ChatModel for Pool {
    fn name(&self) -> String {
        self.model.name.clone()
    }

    fn chat_template(&self) -> Option<String> {
        self.model.template.clone()
    }

    fn ctx(&self) -> u32 {
        self.model.ctx
    }

    fn count_tokens(&self, text: &str) -> Result<usize, BridgeError> {
        self.on_engine(|server| server.count_tokens(text), || true)
    }

    fn reasoning(&self) -> Option<&Reasoning> {
        None
    }
}

impl Generator for Pool {
    fn generate(
        &self,
        prompt: &str,
        grammar: Option<&CheckedGrammar>,
        options: &GenerateOptions,
    ) -> Result<Generation, BridgeError> {
        self.complete(prompt, grammar, options, Call::default())
    }
}

/// The error when no engine is in: each one and why it is out.
fn none_up(members: &[Member]) -> BridgeError {
    let reasons: Vec<String> = members
        .iter()
        .map(|m| {
            let reason = m.reason.lock().unwrap_or_else(PoisonError::into_inner);
            format!("{}: {reason}", m.url)
        })
        .collect();
    BridgeError::NoBackend(match members.len() {
        1 => format!("the backend is not up ({})", reasons.join("")),
        n => format!("none of the {n} backends is up ({})", reasons.join("; ")),
    })
}
