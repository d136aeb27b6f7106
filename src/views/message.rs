//! A status-line message with the paths in it marked, so a message too long for the line
//! gives up the middles of its paths (each keeps its last components), then its end —
//! never its place: "exported 14 files to /tmp/…/perf/x86_64/latest" at 80 columns.

use std::fmt;
use std::path::Path;

use crate::model::text::escape_controls;
use crate::views::text::{display_width, truncate_end, truncate_path};

/// The least a path is cut to before the message is cut at its end instead.
const MIN_PATH_COLUMNS: usize = 8;

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Text(String),
    Path(String),
}

/// Text and paths, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Message {
    pieces: Vec<Piece>,
}

impl Message {
    pub fn text(text: impl Into<String>) -> Self {
        Self {
            pieces: vec![Piece::Text(text.into())],
        }
    }

    /// This message, then `text`.
    pub fn then_text(mut self, text: impl Into<String>) -> Self {
        self.pieces.push(Piece::Text(text.into()));
        self
    }

    /// This message, then `path` (cut in its middle when the line is short).
    pub fn then_path(mut self, path: &Path) -> Self {
        self.pieces.push(Piece::Path(path.display().to_string()));
        self
    }

    /// At most `width` columns: whole when it fits; else its paths cut in the middle, the
    /// room its text leaves shared in proportion to their lengths; else, when its text
    /// leaves too little, cut at the end. Control characters are shown as escapes.
    pub fn fit(&self, width: usize) -> String {
        let whole = self.to_string();
        if display_width(&escape_controls(&whole)) <= width {
            return escape_controls(&whole).into_owned();
        }
        let text_width: usize = self
            .pieces
            .iter()
            .map(|p| match p {
                Piece::Text(t) => display_width(&escape_controls(t)),
                Piece::Path(_) => 0,
            })
            .sum();
        let paths: Vec<usize> = self
            .pieces
            .iter()
            .filter_map(|p| match p {
                Piece::Path(path) => Some(display_width(&escape_controls(path))),
                Piece::Text(_) => None,
            })
            .collect();
        let room = width.saturating_sub(text_width);
        let paths_width: usize = paths.iter().sum();
        if paths.is_empty() || room < paths.len() * MIN_PATH_COLUMNS {
            return truncate_end(&whole, width).into_owned();
        }
        let mut shares = paths.iter().map(|&w| room * w / paths_width);
        let mut out = String::new();
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) => out.push_str(&escape_controls(t)),
                Piece::Path(p) => out.push_str(&truncate_path(p, shares.next().unwrap_or(0))),
            }
        }
        out
    }
}

impl fmt::Display for Message {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for piece in &self.pieces {
            match piece {
                Piece::Text(t) | Piece::Path(t) => f.write_str(t)?,
            }
        }
        Ok(())
    }
}

impl From<String> for Message {
    fn from(text: String) -> Self {
        Self::text(text)
    }
}

impl From<&str> for Message {
    fn from(text: &str) -> Self {
        Self::text(text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const DIR: &str = "/work/wt-names/target/tmp/export-in-a-long-place/perf/x86_64/latest";

    fn exported() -> Message {
        Message::text("exported 14 files to ").then_path(Path::new(DIR))
    }

    #[test]
    fn a_long_message_gives_up_the_middle_of_its_path() {
        assert_eq!(exported().to_string(), format!("exported 14 files to {DIR}"));
        assert_eq!(exported().fit(200), format!("exported 14 files to {DIR}"));
        assert_eq!(
            exported().fit(50),
            "exported 14 files to /work/wt-names…/x86_64/latest"
        );
        assert_eq!(exported().fit(32), "exported 14 files to /wo…/latest");
        for width in 0..100 {
            assert!(display_width(&exported().fit(width)) <= width, "{width}");
        }
    }

    #[test]
    fn too_little_room_for_the_path_cuts_the_end_and_text_alone_is_cut_at_its_end() {
        assert_eq!(exported().fit(26), "exported 14 files to /wor…");
        let plain = Message::from("stop marker: the workload window is selected");
        assert_eq!(plain.fit(20), "stop marker: the wo…");
        assert_eq!(plain.fit(100), "stop marker: the workload window is selected");
    }

    #[test]
    fn two_paths_share_the_room_and_controls_are_spelt_out() {
        let m = Message::text("copied ")
            .then_path(Path::new("/a/long/source/dir/file.txt"))
            .then_text(" to ")
            .then_path(Path::new("/another/long/target/dir/file.txt"));
        assert_eq!(m.fit(44), "copied /a/l…/file.txt to /another…/file.txt");
        assert_eq!(Message::from("sent: \u{1b}[2J").fit(40), "sent: \\e[2J");
    }
}
