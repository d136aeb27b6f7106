//! The real terminal: raw mode, alternate screen, mouse capture — and their undoing on
//! every way out (normal quit, error, panic; signals end the loop and come back here).

use std::io::{self, Stdout};

use ratatui::Terminal;
use ratatui::backend::CrosstermBackend;
use ratatui::crossterm::cursor::MoveTo;
use ratatui::crossterm::event::{DisableMouseCapture, EnableMouseCapture};
use ratatui::crossterm::execute;
use ratatui::crossterm::terminal::{
    Clear, ClearType, EnterAlternateScreen, LeaveAlternateScreen, disable_raw_mode, enable_raw_mode,
};

/// Owns the terminal state; dropping it restores the terminal.
pub struct TerminalGuard {
    pub terminal: Terminal<CrosstermBackend<Stdout>>,
    mouse: bool,
}

/// Put the terminal back as we found it (idempotent: safe from the panic hook and Drop).
pub fn restore_terminal(mouse: bool) {
    let _ = disable_raw_mode();
    if mouse {
        let _ = execute!(io::stdout(), DisableMouseCapture);
    }
    // Clear first: a terminal that does not keep the normal screen apart (or one resized
    // meanwhile) would otherwise show the last frame after we leave.
    let _ = execute!(
        io::stdout(),
        Clear(ClearType::All),
        MoveTo(0, 0),
        LeaveAlternateScreen,
        ratatui::crossterm::cursor::Show
    );
}

impl TerminalGuard {
    /// Enter the TUI. A panic anywhere later restores the terminal before the message is
    /// printed, so the user sees the message on a sane screen.
    pub fn enter(mouse: bool) -> io::Result<Self> {
        use std::io::IsTerminal;
        if !io::stdout().is_terminal() {
            return Err(io::Error::other(
                "stdout is not a terminal: run in a terminal, or use the batch commands (`perfscope report`, `--no-tui`)",
            ));
        }
        let previous = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            restore_terminal(mouse);
            previous(info);
        }));
        enable_raw_mode()?;
        let mut stdout = io::stdout();
        execute!(stdout, EnterAlternateScreen)?;
        if mouse {
            execute!(stdout, EnableMouseCapture)?;
        }
        let terminal = Terminal::new(CrosstermBackend::new(stdout))?;
        Ok(Self { terminal, mouse })
    }
}

impl Drop for TerminalGuard {
    fn drop(&mut self) {
        restore_terminal(self.mouse);
    }
}
