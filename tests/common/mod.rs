//! Helpers shared by the integration tests.
#![allow(dead_code)] // each test binary uses a different part

pub mod arch_suite;
pub mod event_lines;
pub mod guest;
pub mod host;
pub mod plugin;
pub mod profile;
pub mod tmux;

use std::sync::{Mutex, OnceLock};

/// Values computed at most once per test process, per key (a test kernel build, a
/// recording), shared by the tests that need them.
pub type OnceCache<K, V> = Mutex<Vec<(K, &'static OnceLock<V>)>>;

/// The entry of `cache` for `key`, made once; the lock is held only to find it, so
/// different keys are computed in parallel and the same key once.
pub fn once_per<K: PartialEq, V>(cache: &OnceCache<K, V>, key: K) -> &'static OnceLock<V> {
    let mut entries = cache.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((_, cell)) = entries.iter().find(|(k, _)| *k == key) {
        return cell;
    }
    let cell: &'static OnceLock<V> = Box::leak(Box::new(OnceLock::new()));
    entries.push((key, cell));
    cell
}
