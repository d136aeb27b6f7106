//! The console log: lines a guest printed, with the time each line was completed, kept
//! whole for scrollback and search.

/// One console line without its line terminator.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ConsoleLine {
    /// When the line ended, on the sample clock, if the source knows.
    pub time_ns: Option<u64>,
    pub text: String,
}

/// Lines in arrival order plus the unfinished last line.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ConsoleLog {
    lines: Vec<ConsoleLine>,
    partial: String,
    escape: Escape,
}

/// Where we are in an ANSI escape sequence (colours, cursor moves) that must not show.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
enum Escape {
    #[default]
    None,
    /// After ESC.
    Start,
    /// Inside `ESC [ … final`.
    Csi,
}

impl ConsoleLog {
    pub fn new() -> Self {
        Self::default()
    }

    /// Append raw console output. Bytes are split on `\n`; `\r` and other control bytes
    /// except tab are dropped (a serial console sends `\r\n` and echo noise); invalid
    /// UTF-8 is replaced, not rejected; ANSI escape sequences are removed (also when split
    /// across chunks). Returns how many lines were completed.
    pub fn push_bytes(&mut self, time_ns: Option<u64>, bytes: &[u8]) -> usize {
        let text = String::from_utf8_lossy(bytes);
        let mut completed = 0;
        for ch in text.chars() {
            match self.escape {
                Escape::Start => {
                    self.escape = if ch == '[' { Escape::Csi } else { Escape::None };
                    continue;
                }
                Escape::Csi => {
                    if ('@'..='~').contains(&ch) {
                        self.escape = Escape::None;
                    }
                    continue;
                }
                Escape::None => {}
            }
            match ch {
                '\x1b' => self.escape = Escape::Start,
                '\n' => {
                    self.lines.push(ConsoleLine {
                        time_ns,
                        text: std::mem::take(&mut self.partial),
                    });
                    completed += 1;
                }
                '\t' => self.partial.push(ch),
                c if c.is_control() => {}
                c => self.partial.push(c),
            }
        }
        completed
    }

    /// Append one whole line (file replay).
    pub fn push_line(&mut self, time_ns: Option<u64>, text: &str) {
        self.lines.push(ConsoleLine {
            time_ns,
            text: text.trim_end_matches(['\r', '\n']).to_string(),
        });
    }

    pub fn lines(&self) -> &[ConsoleLine] {
        &self.lines
    }

    /// The line being typed or printed, not yet ended (a shell prompt sits here).
    pub fn partial(&self) -> &str {
        &self.partial
    }

    pub fn len(&self) -> usize {
        self.lines.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lines.is_empty() && self.partial.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_lines_across_chunks_and_keeps_the_prompt_partial() {
        let mut log = ConsoleLog::new();
        assert_eq!(log.push_bytes(Some(1), b"boot ok\r\nhel"), 1);
        assert_eq!(log.push_bytes(Some(2), b"lo\r\nstarry:~# "), 1);
        assert_eq!(log.lines()[0].text, "boot ok");
        assert_eq!(
            log.lines()[1],
            ConsoleLine {
                time_ns: Some(2),
                text: "hello".into()
            }
        );
        assert_eq!(log.partial(), "starry:~# ");
        log.push_bytes(None, b"ls\x1b[1;3");
        log.push_bytes(None, b"2mred\x1b[0m \xff\n");
        assert_eq!(log.lines()[2].text, "starry:~# lsred \u{fffd}");
    }
}
