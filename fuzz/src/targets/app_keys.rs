//! The whole terminal UI under random input: the real [`App`] (its keymap, views, input
//! line, status line and model thread) on a ratatui `TestBackend`, over a session of each
//! kind and size ([`super::app_sessions`]), fed keys, resizes, mouse clicks and wheel turns,
//! with searches and filters typed on every view, and drawn after each. Nothing may panic.
//!
//! The input reads as a script, so seeds are readable and a finding replays:
//!
//! - byte 0: the session — `s` sampling, `l` latency, `t` table, `c` console, `e` empty;
//!   byte 1: its size — `0` nothing, `1` one row, `2` many;
//! - then each printable byte is that key; `\n` Enter, `\x1b` Esc, `\t` Tab, `\x7f`
//!   Backspace; any other control byte one of the [`NAMED_KEYS`] (its value modulo 12);
//! - `\x80`–`\x9f`: a resize to the next two bytes (width 1–160, height 1–50);
//!   `\xa0`–`\xbf`: a mouse event at the next two bytes (click, double click, wheel);
//!   `\xc0`–`\xdf`: Ctrl with a letter (`\xcb` Ctrl-l clears a search, `\xc2` Ctrl-c
//!   quits); `\xe0`–`\xef`: a wide or accented character key (`字`, `é`);
//!   `\xf0`–`\xff`: a pause for the model thread (it answers a key that selected, reset
//!   or froze with a snapshot), [`MAX_PAUSES`] at most.

use std::path::PathBuf;
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use perfscope::app::{App, AppConfig, AppEvent};
use perfscope::config::Theme;
use perfscope::config::keymap::Keymap;
use perfscope::engine::LiveMode;
use perfscope::engine::export::ExportRequest;
use perfscope::model::Selection;
use perfscope::views::ViewKind;
use ratatui::Terminal;
use ratatui::backend::TestBackend;
use ratatui::crossterm::event::{KeyCode, KeyEvent, KeyModifiers, MouseButton, MouseEvent, MouseEventKind};

use super::app_sessions::{Kind, Size, UpdatesFeed, updates};

/// The keys the control bytes other than Tab, Enter and Esc press (by value modulo 12).
pub const NAMED_KEYS: [KeyCode; 12] = [
    KeyCode::Up,
    KeyCode::Down,
    KeyCode::Left,
    KeyCode::Right,
    KeyCode::PageUp,
    KeyCode::PageDown,
    KeyCode::Home,
    KeyCode::End,
    KeyCode::BackTab,
    KeyCode::Delete,
    KeyCode::F(1),
    KeyCode::Insert,
];

/// Searches and filters worth typing, as script bytes: one that matches nothing (first:
/// [`every_key_script`] applies it last), everything, a few rows, the empty match, an
/// invalid one, wide characters (`字é`).
pub const PATTERNS: [&[u8]; 6] = [
    b"zzz_matches_nothing",
    b".",
    b"read|main|1",
    b"^$",
    b"(",
    b"\xe0\xe1",
];

pub const DICTIONARY: &[&[u8]] = &[
    b"/zzz_matches_nothing\n",
    b"/.\n",
    b"/read|main|1\n",
    b"/^$\n",
    b"/(\n",
    b"\x1b",
    b"\n",
    b"12345678",
    b"\x80\x50\x18",
    b"\x80\x05\x03",
    b"\x80\x9f\x31",
    b"\xa0\x10\x05",
    b"\xcb",
    b"\xf0",
];

/// Pauses honoured per input: a run of pause bytes would otherwise wait for minutes.
const MAX_PAUSES: usize = 16;

/// One step of a script.
#[derive(Clone, Debug, PartialEq)]
enum Op {
    Key(KeyEvent),
    Resize(u16, u16),
    Mouse(MouseEvent),
    Pause,
}

/// The steps of `script`; a step cut short by the end of the input is dropped.
fn ops(script: &[u8]) -> Vec<Op> {
    let key = |code, modifiers| Op::Key(KeyEvent::new(code, modifiers));
    let mut out = Vec::new();
    let mut bytes = script.iter().copied();
    while let Some(b) = bytes.next() {
        let op = match b {
            b'\n' | b'\r' => key(KeyCode::Enter, KeyModifiers::NONE),
            0x1b => key(KeyCode::Esc, KeyModifiers::NONE),
            b'\t' => key(KeyCode::Tab, KeyModifiers::NONE),
            0x7f => key(KeyCode::Backspace, KeyModifiers::NONE),
            0x00..=0x1f => key(NAMED_KEYS[usize::from(b) % NAMED_KEYS.len()], KeyModifiers::NONE),
            0x20..=0x7e => key(KeyCode::Char(char::from(b)), KeyModifiers::NONE),
            0x80..=0x9f => {
                let (Some(w), Some(h)) = (bytes.next(), bytes.next()) else {
                    break;
                };
                Op::Resize(1 + u16::from(w) % 160, 1 + u16::from(h) % 50)
            }
            0xa0..=0xbf => {
                let (Some(column), Some(row)) = (bytes.next(), bytes.next()) else {
                    break;
                };
                let kind = match b % 4 {
                    0 | 1 => MouseEventKind::Down(MouseButton::Left),
                    2 => MouseEventKind::ScrollDown,
                    _ => MouseEventKind::ScrollUp,
                };
                Op::Mouse(MouseEvent {
                    kind,
                    column: u16::from(column),
                    row: u16::from(row),
                    modifiers: KeyModifiers::NONE,
                })
            }
            0xc0..=0xdf => key(
                KeyCode::Char(char::from(b'a' + (b - 0xc0) % 26)),
                KeyModifiers::CONTROL,
            ),
            0xe0..=0xef => key(
                KeyCode::Char(['字', 'é', '😀', '\u{301}'][usize::from(b % 4)]),
                KeyModifiers::NONE,
            ),
            0xf0..=0xff => Op::Pause,
        };
        out.push(op);
    }
    out
}

/// The default keymap without the export key: an export writes the artifact set on the
/// model thread, which the `export_pipeline` target fuzzes; here it would only slow each
/// execution down.
fn keymap() -> Keymap {
    let default = Keymap::builtin("default").expect("the default keymap parses");
    Keymap::from_toml("[global]\nexport = []\n", Some(&default)).expect("unbinding a key parses")
}

fn config() -> AppConfig {
    AppConfig {
        keymap: keymap(),
        theme: Theme::default(),
        mouse: true,
        export: ExportRequest::new(PathBuf::from("fuzz-app-keys-export-is-unbound")),
        refresh: Duration::from_millis(50),
        sliding_seconds: 1.0,
        decay_factor: 0.875,
        selection: Selection::all(),
        mode: LiveMode::Accumulate,
        initial_view: ViewKind::Flamegraph,
        hidden_views: Vec::new(),
        export_on_finish: None,
        select_workload_on_stop: true,
        recording: None,
    }
}

/// Hand the app what the model thread sent, waiting up to `wait` for the first of it.
fn pump(app: &mut App, rx: &Receiver<AppEvent>, wait: Duration) {
    if let Ok(event) = rx.recv_timeout(wait) {
        app.handle(event);
    }
    while let Ok(event) = rx.try_recv() {
        app.handle(event);
    }
    app.update_wants();
}

fn draw(app: &mut App, terminal: &mut Terminal<TestBackend>) {
    app.dirty = true;
    let Ok(()) = app.draw(terminal);
}

pub fn run(data: &[u8]) {
    let (kind, size, script) = match data {
        [k, s, rest @ ..] => (Kind::of_byte(*k), Size::of_byte(*s), rest),
        [k] => (Kind::of_byte(*k), Size::Many, &[][..]),
        [] => (Kind::Empty, Size::Nothing, &[][..]),
    };
    let (tx, rx) = channel();
    let feed = Box::new(UpdatesFeed::new(updates(kind, size)));
    let mut app = App::new(config(), feed, "fuzz", tx).expect("the model thread starts");
    // The whole session first, so the keys meet its data rather than a loading screen.
    let started = Instant::now();
    while !app.snapshot.stats.finished && started.elapsed() < Duration::from_secs(10) {
        pump(&mut app, &rx, Duration::from_millis(50));
    }
    let mut terminal = Terminal::new(TestBackend::new(80, 24)).expect("a test terminal");
    let mut pauses = 0;
    draw(&mut app, &mut terminal);
    for op in ops(script) {
        match op {
            Op::Key(key) => app.handle(AppEvent::Key(key)),
            Op::Mouse(mouse) => app.handle(AppEvent::Mouse(mouse)),
            Op::Resize(width, height) => {
                terminal.backend_mut().resize(width, height);
                app.handle(AppEvent::Resize);
            }
            Op::Pause if pauses < MAX_PAUSES => {
                pauses += 1;
                pump(&mut app, &rx, Duration::from_millis(40));
            }
            Op::Pause => {}
        }
        // The real loop stops at a quit; the keys after it explore the same state.
        app.quit = false;
        pump(&mut app, &rx, Duration::ZERO);
        draw(&mut app, &mut terminal);
    }
    app.finish(&rx);
}

/// Every key of the keymap's contexts: the printable ones but `/` (it would type the keys
/// after it into a search), the digits and Tab (they leave the view), and a byte for each
/// named key, Enter, Esc, Backspace and two wide characters.
fn every_key() -> Vec<u8> {
    let mut keys: Vec<u8> = (0x20u8..=0x7e)
        .filter(|b| *b != b'/' && !b.is_ascii_digit())
        .collect();
    keys.extend(named_key_bytes());
    keys.extend([b'\n', 0x1b, 0x7f, 0xe0, 0xe1]);
    keys
}

/// A control byte for each of [`NAMED_KEYS`] (Tab, Enter and Esc are bytes of their own).
fn named_key_bytes() -> Vec<u8> {
    (0..NAMED_KEYS.len())
        .filter_map(|i| {
            (0x00u8..=0x1f).find(|&b| {
                ![b'\t', b'\n', b'\r', 0x1b].contains(&b) && usize::from(b) % NAMED_KEYS.len() == i
            })
        })
        .collect()
}

/// The keys that move, sort and toggle: what changes a view's ranges.
fn moving_keys() -> Vec<u8> {
    let mut keys = named_key_bytes();
    keys.extend(b"\nsSomIbpc.,<>\x1b");
    keys
}

/// At each terminal size, every view, after a search typed with each of `patterns` (the
/// last applied is the first, [`PATTERNS`]' match-nothing one), pressed with `keys`, its
/// search cleared (Ctrl-l) at the end.
fn script(sizes: &[(u8, u8)], patterns: &[&[u8]], keys: &[u8]) -> Vec<u8> {
    let mut script = Vec::new();
    for &(width, height) in sizes {
        script.extend([0x80, width - 1, height - 1]);
        for view in b"12345678" {
            script.push(*view);
            for pattern in patterns.iter().rev() {
                script.push(b'/');
                script.extend(*pattern);
                script.push(b'\n');
            }
            script.extend(keys);
            script.push(0xcb);
        }
    }
    script
}

/// Every view at 80×24 with every pattern and every key, then the moving keys at
/// terminals too small for their content (30×6, 12×3, 80×1). Each step draws a screen —
/// about a second of a debug build per session —, so this runs as the crate's test over
/// every session, not as a seed the smoke runner would spend its budget on.
pub fn every_key_script() -> Vec<u8> {
    let mut out = script(&[(80, 24)], &PATTERNS, &every_key());
    out.extend(script(
        &[(30, 6), (12, 3), (80, 1)],
        &PATTERNS[..1],
        &moving_keys(),
    ));
    out
}

/// The seeds: each session kind and size, every view filtered to nothing and moved about
/// at 80×24 and 12×3 — a tenth of [`every_key_script`], for mutations to start from.
pub fn generated_seeds() -> Vec<Vec<u8>> {
    let tour = script(&[(80, 24), (12, 3)], &PATTERNS[..1], &moving_keys());
    sessions()
        .map(|(kind, size)| {
            let mut seed = vec![kind.letter(), size.digit()];
            seed.extend(&tour);
            seed
        })
        .collect()
}

fn sessions() -> impl Iterator<Item = (Kind, Size)> {
    Kind::ALL
        .into_iter()
        .flat_map(|kind| Size::ALL.into_iter().map(move |size| (kind, size)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_script_reads_as_keys_resizes_mice_and_pauses() {
        let ops = ops(b"8/a\n\x01\x80\x4f\x17\xa2\x05\x06\xe0\xf0\xc1\x80\x01");
        assert_eq!(ops.len(), 10, "{ops:?}");
        assert_eq!(
            ops[0],
            Op::Key(KeyEvent::new(KeyCode::Char('8'), KeyModifiers::NONE))
        );
        assert_eq!(ops[3], Op::Key(KeyEvent::new(KeyCode::Enter, KeyModifiers::NONE)));
        // A control byte is a named key by its value modulo 12: \x01 is Down.
        assert_eq!(ops[4], Op::Key(KeyEvent::new(KeyCode::Down, KeyModifiers::NONE)));
        assert_eq!(ops[5], Op::Resize(80, 24));
        assert_eq!(
            ops[6],
            Op::Mouse(MouseEvent {
                kind: MouseEventKind::ScrollDown,
                column: 5,
                row: 6,
                modifiers: KeyModifiers::NONE,
            })
        );
        assert_eq!(
            ops[7],
            Op::Key(KeyEvent::new(KeyCode::Char('字'), KeyModifiers::NONE))
        );
        assert_eq!(ops[8], Op::Pause);
        assert_eq!(
            ops[9],
            Op::Key(KeyEvent::new(KeyCode::Char('b'), KeyModifiers::CONTROL))
        );
    }

    #[test]
    fn the_scripts_filter_to_nothing_on_every_view() {
        let text = String::from_utf8_lossy(&every_key_script()).into_owned();
        assert_eq!(text.matches("/zzz_matches_nothing\n").count(), 32);
        let ctrl_l = ops(&every_key_script())
            .iter()
            .filter(|op| **op == Op::Key(KeyEvent::new(KeyCode::Char('l'), KeyModifiers::CONTROL)))
            .count();
        assert_eq!(ctrl_l, 32, "each view's turn ends clearing its search");
        let seeds = generated_seeds();
        assert_eq!(seeds.len(), 15);
        assert!(seeds.iter().all(|s| {
            String::from_utf8_lossy(s)
                .matches("/zzz_matches_nothing\n")
                .count()
                == 16
        }));
    }

    /// Issue 25: every view with an empty, a one-row and a filtered-to-nothing table (and
    /// every other kind of session) survives every key. One test per session kind, so the
    /// test harness runs them side by side.
    fn every_key_over(kind: Kind) {
        for size in Size::ALL {
            let mut input = vec![kind.letter(), size.digit()];
            input.extend(every_key_script());
            run(&input);
        }
    }

    #[test]
    fn every_key_over_a_sampling_session() {
        every_key_over(Kind::Sampling);
    }

    #[test]
    fn every_key_over_a_latency_session() {
        every_key_over(Kind::Latency);
    }

    #[test]
    fn every_key_over_a_table_session() {
        every_key_over(Kind::Table);
    }

    #[test]
    fn every_key_over_a_console_session() {
        every_key_over(Kind::Console);
    }

    #[test]
    fn every_key_over_an_empty_session() {
        every_key_over(Kind::Empty);
    }
}
