//! The one-line text input at the bottom (search patterns), with the few editing keys
//! people expect from a shell prompt.

use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers};

/// What a key did to the input.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputOutcome {
    /// The text changed (search incrementally).
    Edited,
    /// Enter: use the text.
    Submitted(String),
    /// Esc: forget it.
    Cancelled,
    Unchanged,
}

/// A prompt and the text being typed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct InputLine {
    pub prompt: String,
    pub text: String,
}

impl InputLine {
    pub fn new(prompt: &str, initial: &str) -> Self {
        Self {
            prompt: prompt.into(),
            text: initial.into(),
        }
    }

    pub fn key(&mut self, key: &KeyEvent) -> InputOutcome {
        let ctrl = key.modifiers.contains(KeyModifiers::CONTROL);
        match key.code {
            KeyCode::Enter => InputOutcome::Submitted(self.text.clone()),
            KeyCode::Esc => InputOutcome::Cancelled,
            KeyCode::Char('c') if ctrl => InputOutcome::Cancelled,
            KeyCode::Char('u') if ctrl => {
                self.text.clear();
                InputOutcome::Edited
            }
            KeyCode::Char('w') if ctrl => {
                let trimmed = self.text.trim_end().len();
                let cut = self.text[..trimmed]
                    .rfind(char::is_whitespace)
                    .map_or(0, |i| i + 1);
                self.text.truncate(cut);
                InputOutcome::Edited
            }
            KeyCode::Backspace => {
                if self.text.pop().is_some() {
                    InputOutcome::Edited
                } else {
                    InputOutcome::Unchanged
                }
            }
            KeyCode::Char(c) if !ctrl => {
                self.text.push(c);
                InputOutcome::Edited
            }
            _ => InputOutcome::Unchanged,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k(code: KeyCode) -> KeyEvent {
        KeyEvent::new(code, KeyModifiers::NONE)
    }

    #[test]
    fn edits_submits_and_cancels() {
        let mut line = InputLine::new("/", "");
        for c in "mix lea".chars() {
            assert_eq!(line.key(&k(KeyCode::Char(c))), InputOutcome::Edited);
        }
        assert_eq!(line.key(&k(KeyCode::Backspace)), InputOutcome::Edited);
        assert_eq!(
            line.key(&k(KeyCode::Enter)),
            InputOutcome::Submitted("mix le".into())
        );
        line.key(&KeyEvent::new(KeyCode::Char('w'), KeyModifiers::CONTROL));
        assert_eq!(line.text, "mix ");
        line.key(&KeyEvent::new(KeyCode::Char('u'), KeyModifiers::CONTROL));
        assert_eq!(line.text, "");
        assert_eq!(line.key(&k(KeyCode::Backspace)), InputOutcome::Unchanged);
        assert_eq!(line.key(&k(KeyCode::Esc)), InputOutcome::Cancelled);
    }
}
