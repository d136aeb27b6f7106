//! Views: each draws one kind of picture of a [`Snapshot`] into a ratatui buffer and turns
//! [`Action`]s into changes of its own state, or into [`Effect`]s the app carries out
//! (a new focus or window for the model thread, a jump to another view).
//!
//! A view never reads a source or the profile: only the snapshot. Its state refers to
//! trie nodes by path hash, so a selection or a zoom survives the next snapshot.
//!
//! [`ViewKind`] names the full-screen views in tab order; the app switches between them.

pub mod calltree;
pub mod console;
pub mod flamegraph;
pub mod help;
pub mod histogram;
pub mod hotspots;
pub mod instances;
pub mod kind;
pub mod message;
pub mod offenders;
pub mod status;
pub mod table;
#[cfg(test)]
pub(crate) mod test_support;
pub mod text;
pub mod timeline;
pub mod widgets;

use ratatui::buffer::Buffer;
use ratatui::layout::Rect;
use regex::Regex;

use crate::config::keymap::Keymap;
use crate::config::{Action, KeyContext, Theme};
use crate::engine::Snapshot;
use crate::model::{FrameId, TimeWindow};

pub use kind::ViewKind;

/// What a view draws with.
pub struct ViewContext<'a> {
    pub snapshot: &'a Snapshot,
    pub theme: &'a Theme,
    /// The view has the keyboard (its border is highlighted).
    pub focused: bool,
    /// The keys in use: a hint names the key the user's keymap binds, never a literal.
    pub keys: &'a Keymap,
}

/// What a view asks the app to do.
#[derive(Clone, Debug, PartialEq)]
pub enum Effect {
    None,
    /// Show this function in the flamegraph (hotspots Enter).
    ShowFunction(FrameId),
    /// Keep only stacks through a function matching this regex (`None` drops the focus).
    SetFocus(Option<String>),
    /// Look only at this time window (`TimeWindow::ALL` for the whole run).
    SetWindow(TimeWindow),
    /// Show this instance full-screen (the per-instance grid's Enter).
    ShowInstance(crate::model::InstanceId),
    /// Show a one-line message in the status line.
    Message(String),
}

/// A view of a snapshot.
pub trait View {
    /// The keymap section consulted first for this view.
    fn key_context(&self) -> KeyContext;

    /// Draw into `area` of `buf`.
    fn render(&mut self, area: Rect, buf: &mut Buffer, ctx: &ViewContext);

    /// React to an action; actions a view does not use return `Effect::None`.
    fn handle(&mut self, action: Action, ctx: &ViewContext) -> Effect;

    /// A new search pattern (`None` clears it); typed in the app's input line.
    fn search(&mut self, _pattern: Option<&Regex>, _ctx: &ViewContext) -> Effect {
        Effect::None
    }

    /// A mouse click at absolute terminal coordinates (inside the last rendered area).
    fn click(&mut self, _column: u16, _row: u16, _double: bool, _ctx: &ViewContext) -> Effect {
        Effect::None
    }

    /// Mouse wheel: positive scrolls down.
    fn scroll(&mut self, _lines: i32, _ctx: &ViewContext) {}

    /// A newer snapshot replaced the previous one: re-anchor state by path hash.
    fn snapshot_changed(&mut self, _ctx: &ViewContext) {}

    /// Select this function (hotspots Enter jumps here); views without functions ignore it.
    fn show_function(&mut self, _frame: FrameId, _ctx: &ViewContext) {}

    /// The view draws the inverted trie right now (the model thread builds it only then).
    fn wants_inverted(&self) -> bool {
        false
    }

    /// Extra text for the status line ("match 12.3% · 4/17"); a key it names is the one
    /// `keys` binds.
    fn hint(&self, _keys: &Keymap) -> Option<String> {
        None
    }
}
