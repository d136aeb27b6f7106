//! Events the app loop reacts to, and the threads that produce them: terminal input,
//! signals, and (through `emit`) the model thread.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::Sender;
use std::time::Duration;

use ratatui::crossterm::event::{self, Event, KeyEvent, KeyEventKind, MouseEvent};

use crate::engine::thread::ModelEvent;

/// One thing that happened.
#[derive(Debug)]
pub enum AppEvent {
    Key(KeyEvent),
    Mouse(MouseEvent),
    Resize,
    Model(ModelEvent),
    /// A signal asked us to stop (SIGTERM, SIGHUP, SIGINT): quit cleanly.
    Terminate(&'static str),
}

/// Read terminal input on a thread until `stop` is set.
pub fn spawn_input_thread(events: Sender<AppEvent>, stop: Arc<AtomicBool>) {
    std::thread::Builder::new()
        .name("perfscope-input".into())
        .spawn(move || {
            while !stop.load(Ordering::Relaxed) {
                // Poll with a timeout so the thread notices `stop`.
                match event::poll(Duration::from_millis(100)) {
                    Ok(true) => {}
                    Ok(false) => continue,
                    Err(_) => break,
                }
                let ev = match event::read() {
                    Ok(Event::Key(k)) if k.kind != KeyEventKind::Release => AppEvent::Key(k),
                    Ok(Event::Mouse(m)) => AppEvent::Mouse(m),
                    Ok(Event::Resize(..)) => AppEvent::Resize,
                    Ok(_) => continue,
                    Err(_) => break,
                };
                if events.send(ev).is_err() {
                    break;
                }
            }
        })
        .expect("spawn the input thread");
}

/// Turn SIGTERM, SIGHUP and SIGINT into a clean quit. SIGUSR2 (perf-prof's "dump your
/// state", which its scripts send before SIGINT) is caught so it does not kill the TUI: the
/// screen already shows the state.
pub fn spawn_signal_thread(events: Sender<AppEvent>) -> std::io::Result<()> {
    use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM, SIGUSR2};
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGHUP, SIGINT, SIGUSR2])?;
    std::thread::Builder::new()
        .name("perfscope-signals".into())
        .spawn(move || {
            for signal in signals.forever() {
                let name = match signal {
                    SIGUSR2 => continue,
                    SIGTERM => "SIGTERM",
                    SIGHUP => "SIGHUP",
                    _ => "SIGINT",
                };
                // A feed waiting on a FIFO or a pipe gives up its wait.
                crate::stop::request();
                if events.send(AppEvent::Terminate(name)).is_err() {
                    break;
                }
            }
        })?;
    Ok(())
}
