//! llama.cpp's chat-template formatter, `llama_chat_apply_template`, as a function of the
//! template's text and the messages alone.
//!
//! llama-cpp-2 offers the formatter only as a method of a loaded model, which it does not
//! read: the formatter recognises the template by its text and writes the prompt from
//! that. A remote engine has no model loaded here, and its prompts must be the same as the
//! local engine's for the same model ([`crate::chat::render_prompt`] renders both through
//! this function), so gbnfc calls the formatter itself. This module holds the crate's only
//! `unsafe` code: that one call, whose pointers all come from owned, NUL-terminated
//! strings that outlive it.
#![allow(unsafe_code)]

use std::ffi::{c_char, CString};

use llama_cpp_2::model::LlamaChatTemplate;
use llama_cpp_sys_2::{llama_chat_apply_template, llama_chat_message};

use crate::BridgeError;

/// The prompt of `messages` (role and content of each) under `template`, ending where
/// the assistant's answer begins when `add_assistant`.
///
/// # Errors
/// [`BridgeError::Messages`] for text with a NUL character, [`BridgeError::ChatTemplate`]
/// when llama.cpp does not know the template.
pub fn apply(
    template: &LlamaChatTemplate,
    messages: &[(&str, &str)],
    add_assistant: bool,
) -> Result<String, BridgeError> {
    let nul = |_| BridgeError::Messages("a message contains a NUL character".into());
    let owned = messages
        .iter()
        .map(|&(role, content)| {
            Ok((
                CString::new(role).map_err(nul)?,
                CString::new(content).map_err(nul)?,
            ))
        })
        .collect::<Result<Vec<_>, BridgeError>>()?;
    let chat: Vec<llama_chat_message> = owned
        .iter()
        .map(|(role, content)| llama_chat_message {
            role: role.as_ptr(),
            content: content.as_ptr(),
        })
        .collect();
    // llama.cpp's own advice: twice the messages' length; it says when that is short.
    let text: usize = messages.iter().map(|(r, c)| r.len() + c.len()).sum();
    let mut capacity = (2 * text).max(256);
    for _ in 0..2 {
        let length = i32::try_from(capacity)
            .map_err(|_| BridgeError::Messages("the conversation is over 2 GB".into()))?;
        let mut buffer = vec![0u8; capacity];
        // SAFETY: `template` and every role and content are NUL-terminated strings owned
        // by `template` and `owned`, which outlive the call; `chat` holds `chat.len()`
        // messages; llama.cpp writes at most `length` bytes into `buffer`, which holds
        // that many, and returns the length of the whole prompt (more than `length` when
        // it did not fit) or a negative number for a template it does not know.
        let written = unsafe {
            llama_chat_apply_template(
                template.as_c_str().as_ptr(),
                chat.as_ptr(),
                chat.len(),
                add_assistant,
                buffer.as_mut_ptr().cast::<c_char>(),
                length,
            )
        };
        let written = usize::try_from(written).map_err(|_| {
            BridgeError::ChatTemplate(
                "llama.cpp does not know this chat template (name one it knows with --chat-template, \
                 such as chatml or llama3)"
                    .into(),
            )
        })?;
        if written <= capacity {
            buffer.truncate(written);
            return String::from_utf8(buffer).map_err(|e| {
                BridgeError::ChatTemplate(format!("the rendered prompt is not UTF-8: {e}"))
            });
        }
        capacity = written;
    }
    Err(BridgeError::ChatTemplate(
        "llama.cpp asked for more room for the prompt twice".into(),
    ))
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn chatml_is_written_with_the_assistant_turn_opened() {
        let template = LlamaChatTemplate::new("chatml").unwrap();
        let prompt = apply(&template, &[("system", "Be brief."), ("user", "Hi")], true).unwrap();
        assert_eq!(
            prompt,
            "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n"
        );
    }

    #[test]
    fn a_prompt_longer_than_the_first_guess_is_written_whole() {
        let template = LlamaChatTemplate::new("chatml").unwrap();
        // Short messages: the framing outgrows twice their length.
        let messages: Vec<(&str, &str)> = (0..200).map(|_| ("user", "a")).collect();
        let prompt = apply(&template, &messages, false).unwrap();
        assert_eq!(
            prompt.matches("<|im_start|>user\na<|im_end|>\n").count(),
            200
        );
    }

    #[test]
    fn an_unknown_template_and_a_nul_are_errors() {
        let unknown = LlamaChatTemplate::new("no-such-template").unwrap();
        assert!(matches!(
            apply(&unknown, &[("user", "Hi")], true),
            Err(BridgeError::ChatTemplate(_))
        ));
        let chatml = LlamaChatTemplate::new("chatml").unwrap();
        assert!(matches!(
            apply(&chatml, &[("user", "a\0b")], true),
            Err(BridgeError::Messages(_))
        ));
    }
}
