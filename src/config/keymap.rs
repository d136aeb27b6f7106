//! Keymaps: keys bound to actions, loaded from keymaps/*.toml (to be written).
