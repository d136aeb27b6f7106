//! The terminal UI's flags, shared by every subcommand that opens it.

use std::path::Path;
use std::time::Duration;

use clap::{Args, ValueEnum};

use crate::app::AppConfig;
use crate::config::keymap::{config_dir, resolve_keymap};
use crate::config::theme::{detect_color_depth, resolve_theme};
use crate::engine::LiveMode;
use crate::engine::export::ExportRequest;
use crate::model::Selection;
use crate::views::ViewKind;

use super::units::parse_positive_seconds;

#[derive(Args)]
pub struct TuiArgs {
    /// Keymap: "default", "vim" or a TOML file (default: <config dir>/keymap.toml, else built-in).
    #[arg(long, value_name = "NAME|FILE")]
    pub keymap: Option<String>,
    /// Theme: "dark", "light", "mono" or a TOML file (default: <config dir>/theme.toml, else dark).
    #[arg(long, value_name = "NAME|FILE")]
    pub theme: Option<String>,
    /// Do not capture the mouse (keeps the terminal's own text selection).
    #[arg(long)]
    pub no_mouse: bool,
    /// Milliseconds between live refreshes.
    #[arg(long, value_name = "MS", default_value_t = 1000)]
    pub refresh_ms: u64,
    /// Live mode at start (`--mode` is QEMU's sampling mode in `perfscope qemu`).
    #[arg(long, value_enum, default_value_t = ModeArg::Accumulate, ignore_case = true)]
    pub live_mode: ModeArg,
    /// Seconds the sliding mode keeps.
    #[arg(long, value_name = "S", default_value = "10", value_parser = parse_positive_seconds, allow_negative_numbers = true)]
    pub sliding_seconds: Duration,
    /// Factor the decay mode multiplies older weights by at each refresh (perf top: 0.875).
    #[arg(long, value_name = "F", default_value_t = 0.875)]
    pub decay: f64,
    /// The view shown first (default: each command's own — hotspots for `top`, the
    /// console for `qemu`, the tables or histograms for an analyzer, else the flamegraph).
    #[arg(long, value_enum, ignore_case = true)]
    pub view: Option<ViewKind>,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum ModeArg {
    Accumulate,
    Sliding,
    Decay,
}

impl TuiArgs {
    /// The values of these flags, checked whether or not the terminal UI runs (a bad value
    /// is refused, never ignored because `--no-tui` was given too).
    pub fn check(&self) -> anyhow::Result<()> {
        if !(0.0..=1.0).contains(&self.decay) {
            crate::usage!("--decay must be between 0 and 1 (got {})", self.decay);
        }
        // --sliding-seconds is checked by its parser (cli/units.rs).
        Ok(())
    }

    /// The app configuration these flags (and the config directory) describe.
    pub fn config(&self, export: ExportRequest, selection: Selection) -> anyhow::Result<AppConfig> {
        self.check()?;
        let dir = config_dir();
        let keymap = resolve_keymap(self.keymap.as_deref().map(Path::new), dir.as_deref())?;
        let depth = detect_color_depth(|k| std::env::var(k).ok());
        let theme = resolve_theme(self.theme.as_deref(), dir.as_deref(), depth)?;
        Ok(AppConfig {
            keymap,
            theme,
            mouse: !self.no_mouse,
            export,
            refresh: Duration::from_millis(self.refresh_ms.max(50)),
            sliding_seconds: self.sliding_seconds.as_secs_f64(),
            decay_factor: self.decay,
            selection,
            mode: match self.live_mode {
                ModeArg::Accumulate => LiveMode::Accumulate,
                ModeArg::Sliding => LiveMode::Sliding {
                    seconds: self.sliding_seconds.as_secs_f64(),
                },
                ModeArg::Decay => LiveMode::Decay { factor: self.decay },
            },
            initial_view: self.view.unwrap_or(ViewKind::Flamegraph),
            hidden_views: Vec::new(),
            export_on_finish: None,
            select_workload_on_stop: false,
            recording: None,
        })
    }
}
