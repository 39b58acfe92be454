//! Reading a reply while it is generated: prose and tool calls as events, for servers
//! that stream calls the way OpenAI does (a first delta per call with its index and name,
//! then `arguments` fragments as the tokens arrive).
//!
//! [`CallStream`] reads the text one character at a time, so a piece may end anywhere —
//! inside a marker, a key or a JSON string. Before the trigger
//! ([`Syntax::trigger`]) the text is prose: leading and trailing whitespace and any
//! suffix that could still start the trigger are held back, so the [`StreamEvent::Content`]
//! pieces add up to [`parse_reply`](super::parse_reply)'s `content`. From the trigger on
//! the text must be calls in the syntax's layout: `name` first, then the arguments object
//! (then, for Mistral, an optional `id`), with JSON whitespace anywhere inside the call
//! object and any whitespace around the markers, as [`parse_tool_calls`](super::parse_tool_calls)
//! allows. A call's name is announced once its string is complete; its arguments are
//! passed on as they arrive, byte for byte as written, and checked with serde_json when
//! their closing brace comes (their end is found by counting brackets outside strings).
//!
//! Invariant: for any text `parse_reply` accepts in that layout, cut into any pieces, the
//! events add up to what `parse_reply` returns. Where `parse_reply` is more lenient —
//! keys in another order or repeated — the stream refuses, since a call's name must be
//! known before its arguments can be passed on.

use serde_json::Value;

use crate::marker::Automaton;

use super::parse::offset_of;
use super::{CallParseError, Syntax};

/// What a piece of a reply adds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StreamEvent {
    /// More prose (before the first call).
    Content(String),
    /// A call begins: its 0-based index and the tool's name (decoded).
    CallStart {
        /// The call's index in the reply.
        index: usize,
        /// The tool's name.
        name: String,
    },
    /// More of a call's arguments, as written in the reply.
    Arguments {
        /// The call's index in the reply.
        index: usize,
        /// The next bytes of the arguments' JSON text.
        fragment: String,
    },
}

/// Where the reader is between the fixed parts of the call text.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Point {
    /// Mistral, after `[TOOL_CALLS]`: `[`.
    ArrayOpen,
    /// `{` of a call object (after `<tool_call>` or in the Mistral array).
    ObjectOpen,
    /// The `"name"` key.
    NameKey,
    /// `:` after `"name"`.
    NameColon,
    /// The name string.
    NameValue,
    /// `,` after the name.
    NameComma,
    /// The `"arguments"` (`"parameters"`) key.
    ArgsKey,
    /// `:` after the arguments key.
    ArgsColon,
    /// The arguments object.
    ArgsValue,
    /// `}` ending the call, or (Mistral) `,` before the id.
    AfterArgs,
    /// The `"id"` key.
    IdKey,
    /// `:` after `"id"`.
    IdColon,
    /// The id string.
    IdValue,
    /// `}` after the id.
    IdEnd,
    /// Hermes: `</tool_call>`.
    BlockClose,
    /// Between calls (json, llama3, hermes): the next call's start, or the end.
    Between,
    /// Mistral: `,` and another call, or `]`.
    ArrayNext,
    /// Mistral, after `]`: only whitespace.
    End,
}

/// What the reader is in the middle of.
#[derive(Debug, Clone)]
enum State {
    /// Before the trigger.
    Prose,
    /// Between fixed parts, whitespace skipped.
    At(Point),
    /// Inside a fixed text (`at` bytes of it read), then `then`.
    Literal {
        text: &'static str,
        at: usize,
        then: Point,
    },
    /// Inside a JSON string (the name or the id), kept with its quotes.
    Str { raw: String, escape: bool, id: bool },
    /// Inside the arguments.
    Args {
        depth: usize,
        string: bool,
        escape: bool,
    },
}

/// An incremental reader of a reply: feed it the generated text piece by piece, get
/// prose and calls back as [`StreamEvent`]s.
///
/// ```
/// use gbnfc_compiler::tools::{CallStream, StreamEvent, Syntax};
/// let mut stream = CallStream::new(Syntax::Hermes, true);
/// let mut events = stream.push("Let me look. <tool_c").unwrap();
/// events.extend(stream.push("all>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Che").unwrap());
/// events.extend(stream.push("ngdu\"}}\n</tool_call>").unwrap());
/// events.extend(stream.finish().unwrap());
/// assert_eq!(events, [
///     StreamEvent::Content("Let me look.".into()),
///     StreamEvent::CallStart { index: 0, name: "get_weather".into() },
///     StreamEvent::Arguments { index: 0, fragment: "{\"city\": \"Che".into() },
///     StreamEvent::Arguments { index: 0, fragment: "ngdu\"}".into() },
/// ]);
/// ```
#[derive(Debug, Clone)]
pub struct CallStream {
    syntax: Syntax,
    calls: bool,
    /// The trigger's Knuth–Morris–Pratt automaton.
    trigger: Automaton,
    state: State,
    /// Prose: characters of the trigger matched at the end of the text so far.
    matched: usize,
    /// Prose: whitespace after the last character emitted.
    blank: String,
    /// Prose: some content was emitted.
    started: bool,
    /// The 1-based number of the call being read (0 before the first).
    call: usize,
    /// The arguments read so far of the current call, for the check at their end.
    arguments: String,
    /// Byte offset of the arguments' start in the reply.
    arguments_at: usize,
    /// Byte offset of the character being read.
    offset: usize,
    /// Events of the current piece.
    events: Vec<StreamEvent>,
    /// Content or arguments of the current piece not yet in `events`.
    pending: String,
    /// The error that stopped the reader; every later call returns it.
    failed: Option<CallParseError>,
}

impl CallStream {
    /// A reader of a reply in `syntax`. `calls`: whether the reply may contain calls at
    /// all; without (`tool_choice: none`) everything is content.
    pub fn new(syntax: Syntax, calls: bool) -> CallStream {
        let trigger = Automaton::new(syntax.trigger());
        CallStream {
            syntax,
            calls: calls && trigger.len() > 0,
            trigger,
            state: State::Prose,
            matched: 0,
            blank: String::new(),
            started: false,
            call: 0,
            arguments: String::new(),
            arguments_at: 0,
            offset: 0,
            events: Vec::new(),
            pending: String::new(),
            failed: None,
        }
    }

    /// Reads the next piece of the reply and returns what it adds.
    ///
    /// # Errors
    /// The text from the trigger on is not calls of the syntax (the error is kept: every
    /// later `push` or `finish` returns it again, and the events of the failing piece are
    /// lost).
    pub fn push(&mut self, text: &str) -> Result<Vec<StreamEvent>, CallParseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let base = self.offset;
        for (i, c) in text.char_indices() {
            self.offset = base + i;
            if let Err(error) = self.read(c, &text[i..]) {
                self.failed = Some(error.clone());
                self.events.clear();
                self.pending.clear();
                return Err(error);
            }
        }
        self.offset = base + text.len();
        self.flush();
        Ok(std::mem::take(&mut self.events))
    }

    /// Ends the reply: returns the prose held back (less trailing whitespace).
    ///
    /// # Errors
    /// The reply ends inside a call (or an earlier piece failed).
    pub fn finish(&mut self) -> Result<Vec<StreamEvent>, CallParseError> {
        if let Some(error) = &self.failed {
            return Err(error.clone());
        }
        let complete = match &self.state {
            State::Prose => {
                for i in 0..self.matched {
                    self.prose(self.trigger.char_at(i));
                }
                self.matched = 0;
                self.blank.clear();
                true
            }
            State::At(Point::Between) => self.syntax != Syntax::Mistral,
            State::At(Point::End) => true,
            _ => false,
        };
        if !complete {
            let error = CallParseError::Shape {
                call: self.call.max(1),
                message: format!(
                    "the reply ends inside the call ({} calls end with `{}`)",
                    self.syntax,
                    match self.syntax {
                        Syntax::Hermes => "</tool_call>",
                        Syntax::Mistral => "]",
                        Syntax::Json | Syntax::Llama3 => "}",
                    }
                ),
            };
            self.failed = Some(error.clone());
            return Err(error);
        }
        self.flush();
        Ok(std::mem::take(&mut self.events))
    }

    /// Moves the pending text into `events`.
    fn flush(&mut self) {
        if self.pending.is_empty() {
            return;
        }
        let text = std::mem::take(&mut self.pending);
        self.events.push(match self.state {
            State::Prose => StreamEvent::Content(text),
            _ => StreamEvent::Arguments {
                index: self.call.saturating_sub(1),
                fragment: text,
            },
        });
    }

    /// Reads one character; `rest` is the piece from it on, for messages.
    fn read(&mut self, c: char, rest: &str) -> Result<(), CallParseError> {
        match &mut self.state {
            State::Prose => {
                if !self.calls {
                    self.prose(c);
                    return Ok(());
                }
                let before = self.matched;
                let after = self.trigger.step(before, c);
                if after == self.trigger.len() {
                    // The trigger: what is held back is not content, the calls begin.
                    self.blank.clear();
                    self.matched = 0;
                    self.flush();
                    self.state = match self.syntax {
                        Syntax::Mistral => literal("[TOOL_CALLS]", Point::ArrayOpen),
                        _ => State::At(Point::Between),
                    };
                    let trigger = self.syntax.trigger();
                    let start = self.offset + c.len_utf8() - trigger.len();
                    let here = self.offset;
                    for (i, t) in trigger.char_indices() {
                        self.offset = start + i;
                        self.read(t, &trigger[i..])?;
                    }
                    self.offset = here;
                    return Ok(());
                }
                // Characters no longer part of a possible trigger are prose.
                for i in 0..before + 1 - after {
                    let released = if i < before {
                        self.trigger.char_at(i)
                    } else {
                        c
                    };
                    self.prose(released);
                }
                self.matched = after;
                Ok(())
            }
            State::Literal { text, at, then } => {
                let (text, then) = (*text, *then);
                if text[*at..].starts_with(c) {
                    *at += c.len_utf8();
                    if *at == text.len() {
                        self.state = State::At(then);
                    }
                    Ok(())
                } else {
                    Err(self.unexpected(&format!("`{text}`"), rest))
                }
            }
            State::Str { raw, escape, id } => {
                raw.push(c);
                if *escape {
                    *escape = false;
                } else if c == '\\' {
                    *escape = true;
                } else if c == '"' {
                    let (raw, id) = (std::mem::take(raw), *id);
                    return self.string_end(&raw, id);
                }
                Ok(())
            }
            State::Args {
                depth,
                string,
                escape,
            } => {
                self.pending.push(c);
                self.arguments.push(c);
                if *string {
                    if *escape {
                        *escape = false;
                    } else if c == '\\' {
                        *escape = true;
                    } else if c == '"' {
                        *string = false;
                    }
                } else {
                    match c {
                        '"' => *string = true,
                        '{' | '[' => *depth += 1,
                        '}' | ']' => *depth -= 1,
                        _ => {}
                    }
                    if *depth == 0 {
                        return self.arguments_end();
                    }
                }
                Ok(())
            }
            State::At(point) => {
                let point = *point;
                self.at(point, c, rest)
            }
        }
    }

    /// A prose character: whitespace is held until more content follows.
    fn prose(&mut self, c: char) {
        if c.is_whitespace() {
            if self.started {
                self.blank.push(c);
            }
        } else {
            self.pending.push_str(&self.blank);
            self.blank.clear();
            self.pending.push(c);
            self.started = true;
        }
    }

    /// One character between fixed parts of the call text.
    fn at(&mut self, point: Point, c: char, rest: &str) -> Result<(), CallParseError> {
        let json_blank = matches!(c, ' ' | '\t' | '\n' | '\r');
        let blank = match point {
            Point::ArrayOpen | Point::BlockClose | Point::Between | Point::End => c.is_whitespace(),
            Point::ObjectOpen if self.syntax == Syntax::Hermes => c.is_whitespace(),
            _ => json_blank,
        };
        if blank {
            return Ok(());
        }
        let key = self.syntax.arguments_key();
        let next = match (point, c) {
            (Point::ArrayOpen, '[') => State::At(Point::ObjectOpen),
            (Point::ArrayOpen, _) => return Err(self.unexpected("`[`", rest)),
            (Point::ObjectOpen, '{') => {
                self.call += 1;
                State::At(Point::NameKey)
            }
            (Point::ObjectOpen, _) => return Err(self.unexpected("`{`", rest)),
            (Point::NameKey, _) => literal("\"name\"", Point::NameColon),
            (Point::NameColon | Point::ArgsColon | Point::IdColon, ':') => {
                let then = match point {
                    Point::NameColon => Point::NameValue,
                    Point::ArgsColon => Point::ArgsValue,
                    _ => Point::IdValue,
                };
                State::At(then)
            }
            (Point::NameColon | Point::ArgsColon | Point::IdColon, _) => {
                return Err(self.unexpected("`:`", rest))
            }
            (Point::NameValue | Point::IdValue, '"') => State::Str {
                raw: String::from('"'),
                escape: false,
                id: point == Point::IdValue,
            },
            (Point::NameValue, _) => {
                return Err(self.shape(format!(
                    "`name` must be a non-empty string, found {}",
                    clip(rest)
                )))
            }
            (Point::IdValue, _) => {
                return Err(self.shape(format!("`id` must be a string, found {}", clip(rest))))
            }
            (Point::NameComma, ',') => State::At(Point::ArgsKey),
            (Point::NameComma, _) => return Err(self.unexpected("`,`", rest)),
            (Point::ArgsKey, _) => {
                let text = match self.syntax {
                    Syntax::Llama3 => "\"parameters\"",
                    _ => "\"arguments\"",
                };
                literal(text, Point::ArgsColon)
            }
            (Point::ArgsValue, '{') => {
                self.arguments.clear();
                self.arguments.push('{');
                self.arguments_at = self.offset;
                self.pending.push('{');
                State::Args {
                    depth: 1,
                    string: false,
                    escape: false,
                }
            }
            (Point::ArgsValue, _) => {
                return Err(self.shape(format!(
                    "`{key}` must be a JSON object, found {}",
                    clip(rest)
                )))
            }
            (Point::AfterArgs | Point::IdEnd, '}') => State::At(self.after_call()),
            (Point::AfterArgs, ',') if self.syntax.has_id() => State::At(Point::IdKey),
            (Point::AfterArgs, _) => {
                return Err(self.unexpected(
                    &format!(
                        "`}}` after `{key}` (a {} call has `name` and `{key}`{})",
                        self.syntax,
                        if self.syntax.has_id() {
                            " and `id`"
                        } else {
                            ""
                        }
                    ),
                    rest,
                ))
            }
            (Point::IdKey, _) => literal("\"id\"", Point::IdColon),
            (Point::IdEnd, _) => return Err(self.unexpected("`}`", rest)),
            (Point::BlockClose, _) => literal("</tool_call>", Point::Between),
            (Point::Between, '{') if self.syntax != Syntax::Hermes => {
                self.call += 1;
                State::At(Point::NameKey)
            }
            (Point::Between, '<') if self.syntax == Syntax::Hermes => {
                literal("<tool_call>", Point::ObjectOpen)
            }
            (Point::ArrayNext, ',') => State::At(Point::ObjectOpen),
            (Point::ArrayNext, ']') => State::At(Point::End),
            (Point::ArrayNext, _) => return Err(self.unexpected("`,` or `]`", rest)),
            (Point::Between | Point::End, _) => {
                return Err(CallParseError::Trailing {
                    offset: self.offset,
                    found: clip(rest),
                })
            }
        };
        // A fixed text starts with this character: read it there.
        let again = matches!(next, State::Literal { .. });
        self.state = next;
        if again {
            self.read(c, rest)
        } else {
            Ok(())
        }
    }

    /// Where a finished call object leaves the reader.
    fn after_call(&self) -> Point {
        match self.syntax {
            Syntax::Json | Syntax::Llama3 => Point::Between,
            Syntax::Hermes => Point::BlockClose,
            Syntax::Mistral => Point::ArrayNext,
        }
    }

    /// The name's or id's closing quote.
    fn string_end(&mut self, raw: &str, id: bool) -> Result<(), CallParseError> {
        let value: String = serde_json::from_str(raw).map_err(|e| CallParseError::Json {
            call: self.call,
            offset: self.offset + 1 - raw.len(),
            message: e.to_string(),
        })?;
        if id {
            self.state = State::At(Point::IdEnd);
            return Ok(());
        }
        if value.is_empty() {
            return Err(self.shape("`name` must be a non-empty string, found \"\"".to_string()));
        }
        self.events.push(StreamEvent::CallStart {
            index: self.call - 1,
            name: value,
        });
        self.state = State::At(Point::NameComma);
        Ok(())
    }

    /// The arguments' closing brace: they must be JSON.
    fn arguments_end(&mut self) -> Result<(), CallParseError> {
        if let Err(e) = serde_json::from_str::<Value>(&self.arguments) {
            return Err(CallParseError::Json {
                call: self.call,
                offset: self.arguments_at + offset_of(&self.arguments, e.line(), e.column()),
                message: e.to_string(),
            });
        }
        self.arguments.clear();
        self.flush();
        self.state = State::At(Point::AfterArgs);
        Ok(())
    }

    /// Something other than `expected` at `rest`.
    fn unexpected(&self, expected: &str, rest: &str) -> CallParseError {
        self.shape(format!(
            "expected {expected} at byte {}, found `{}`",
            self.offset,
            clip(rest)
        ))
    }

    /// A [`CallParseError::Shape`] of the current call.
    fn shape(&self, message: String) -> CallParseError {
        CallParseError::Shape {
            call: self.call.max(1),
            message,
        }
    }
}

/// The fixed `text`, then `then`.
fn literal(text: &'static str, then: Point) -> State {
    State::Literal { text, at: 0, then }
}

/// At most 40 characters of `text`, for messages.
fn clip(text: &str) -> String {
    if text.chars().count() <= 40 {
        text.to_string()
    } else {
        format!("{}…", text.chars().take(40).collect::<String>())
    }
}
