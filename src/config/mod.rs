//! Configuration as data: [`action`]s, the [`keymap`]s that bind keys to them, and
//! [`theme`]s. Files live in keymaps/ and themes/ at the top of the repository (compiled
//! in as defaults) and in the user's config directory.

pub mod action;
pub mod keymap;
pub mod theme;

pub use action::{Action, KeyContext};
pub use theme::Theme;
