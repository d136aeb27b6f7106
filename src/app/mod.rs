//! The app loop: terminal input, model snapshots and signals come in as [`AppEvent`]s;
//! keys become [`Action`]s through the keymap; actions change the app or the focused
//! view, or become commands for the model thread; the screen is redrawn only when
//! something changed (the dirty flag). Generic over the ratatui `Backend`, so tests
//! drive the real app on a `TestBackend`.

pub mod event;
pub mod input_line;
pub mod launch;
pub mod terminal;

use std::sync::Arc;
use std::sync::mpsc::{Receiver, Sender};
use std::time::{Duration, Instant};

use ratatui::Terminal;
use ratatui::backend::Backend;
use ratatui::buffer::Buffer;
use ratatui::crossterm::event::{KeyEvent, MouseButton, MouseEvent, MouseEventKind};
use ratatui::layout::Rect;
use regex::Regex;

use crate::config::keymap::Keymap;
use crate::config::{Action, KeyContext, Theme};
use crate::engine::export::ExportRequest;
use crate::engine::thread::{Command, ModelEvent, ModelHandle, ModelOptions, spawn};
use crate::engine::{EngineOptions, LiveMode, SlicePolicy, Snapshot};
use crate::feeds::Feed;
use crate::model::aggregate::Wants;
use crate::model::{Focus, Selection, TimeWindow, Verdict};
use crate::store::Recorder;
use crate::views::calltree::CallTreeView;
use crate::views::console::ConsoleView;
use crate::views::flamegraph::FlameGraphView;
use crate::views::help::{HelpInput, HelpOverlay};
use crate::views::histogram::HistogramView;
use crate::views::hotspots::HotspotsView;
use crate::views::instances::InstancesView;
use crate::views::message::Message;
use crate::views::status::{StatusInfo, render_status};
use crate::views::text::truncate_end;
use crate::views::{Effect, View, ViewContext, ViewKind};

pub use event::AppEvent;
use input_line::{InputLine, InputOutcome};

/// Two clicks this close are a double click.
const DOUBLE_CLICK: Duration = Duration::from_millis(400);
/// Refresh intervals the +/- keys step through.
const REFRESH_STEPS_MS: [u64; 7] = [100, 250, 500, 1000, 2000, 5000, 10000];

/// How the app is set up (from the command line and config files).
pub struct AppConfig {
    pub keymap: Keymap,
    pub theme: Theme,
    pub mouse: bool,
    pub export: ExportRequest,
    pub refresh: Duration,
    /// Seconds the sliding mode keeps.
    pub sliding_seconds: f64,
    /// The decay mode's factor per refresh.
    pub decay_factor: f64,
    pub selection: Selection,
    pub mode: LiveMode,
    /// The view shown first.
    pub initial_view: ViewKind,
    /// Views always empty for this kind of session: no tab (their key still shows them).
    pub hidden_views: Vec<ViewKind>,
    /// Write the artifact set when the source finishes or the app quits (`perfscope qemu`).
    pub export_on_finish: Option<ExportRequest>,
    /// `--record`: every update also goes to this session file.
    pub recording: Option<Recorder>,
    /// When the stop marker arrives, select the workload window (start → stop marker) once,
    /// unless a window was picked already (`perfscope qemu`).
    pub select_workload_on_stop: bool,
}

impl AppConfig {
    /// How the engine keeps this session's slices: the sliding window's span stays fine.
    pub fn slice_policy(&self) -> SlicePolicy {
        SlicePolicy::live(crate::model::units::seconds_to_ns(self.sliding_seconds))
    }
}

/// What the input line is typing for.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum InputPurpose {
    Search,
    /// A line for the guest shell (console view, Enter).
    Guest,
}

/// Screen areas of the last draw (mouse hits are resolved against them).
#[derive(Copy, Clone, Debug, Default)]
struct Areas {
    tabs: Rect,
    main: Rect,
    status: Rect,
}

/// The application state.
pub struct App {
    config: AppConfig,
    model: ModelHandle,
    pub snapshot: Arc<Snapshot>,
    views: Vec<Box<dyn View>>,
    pub active: ViewKind,
    instances: InstancesView,
    pub show_instances: bool,
    /// The view the instance split was opened from, when it had to switch away from it
    /// (a view without a split): closing the split goes back there.
    view_before_instances: Option<ViewKind>,
    help: Option<HelpOverlay>,
    input: Option<(InputPurpose, InputLine)>,
    /// The last search pattern, per view (so `n` works after Enter and switching back).
    search: Vec<Option<Regex>>,
    /// The pattern applied when the search line opened: Esc goes back to it.
    search_before_edit: Option<Regex>,
    pub message: Option<Message>,
    pub selection: Selection,
    pub mode: LiveMode,
    pub frozen: bool,
    pub refresh: Duration,
    last_click: Option<(Instant, u16, u16)>,
    frame_time: Duration,
    areas: Areas,
    wants: Wants,
    /// Paths of the last export (tests and the status message read it).
    pub last_export: Option<std::path::PathBuf>,
    /// The last export's outcome: its directory or the error.
    pub last_export_result: Option<Result<std::path::PathBuf, String>>,
    /// The final verdict, once the model thread has shut down.
    verdict: Option<Verdict>,
    pub dirty: bool,
    pub quit: bool,
    /// The workload window was selected for the stop marker (done once).
    workload_selected: bool,
    /// The symbols' mismatch was put on the status line (once).
    symbols_mismatch_told: bool,
    /// A session file is written (`--record`): what was read is kept there.
    recording: bool,
}

impl App {
    /// Start the model thread over `feed`; its events arrive on `events`.
    pub fn new(
        mut config: AppConfig,
        feed: Box<dyn Feed>,
        source_name: &str,
        events: Sender<AppEvent>,
    ) -> anyhow::Result<App> {
        let recording = config.recording.is_some();
        let model = spawn(
            feed,
            ModelOptions {
                engine: EngineOptions {
                    policy: config.slice_policy(),
                    selection: config.selection.clone(),
                    mode: config.mode,
                    refresh: config.refresh,
                    recording: config.recording.take(),
                },
                export_on_finish: config.export_on_finish.clone(),
            },
            move |e| {
                let _ = events.send(AppEvent::Model(e));
            },
        )
        .map_err(|e| anyhow::anyhow!("cannot start the model thread: {e}"))?;
        let views: Vec<Box<dyn View>> = vec![
            Box::new(HotspotsView::new()),
            Box::new(FlameGraphView::new()),
            Box::new(CallTreeView::new()),
            Box::new(HistogramView::new()),
            Box::new(crate::views::timeline::TimelineView::new()),
            Box::new(ConsoleView::new()),
            Box::new(crate::views::table::TableView::new()),
        ];
        debug_assert_eq!(
            views.len(),
            ViewKind::ALL.len(),
            "one view per ViewKind, in its order"
        );
        let mut app = App {
            selection: config.selection.clone(),
            mode: config.mode,
            refresh: config.refresh,
            active: config.initial_view,
            config,
            model,
            snapshot: Arc::new(Snapshot::empty(source_name)),
            views,
            instances: InstancesView::new(),
            show_instances: false,
            view_before_instances: None,
            help: None,
            input: None,
            search: vec![None; ViewKind::ALL.len()],
            search_before_edit: None,
            message: None,
            frozen: false,
            last_click: None,
            frame_time: Duration::ZERO,
            areas: Areas::default(),
            wants: Wants::default(),
            last_export: None,
            last_export_result: None,
            verdict: None,
            dirty: true,
            quit: false,
            workload_selected: false,
            symbols_mismatch_told: false,
            recording,
        };
        app.update_wants();
        Ok(app)
    }

    /// Run `f` on the active view with a context (the borrow dance in one place).
    fn with_view<R>(&mut self, f: impl FnOnce(&mut dyn View, &ViewContext) -> R) -> R {
        let ctx = ViewContext {
            snapshot: &self.snapshot,
            theme: &self.config.theme,
            focused: true,
            keys: &self.config.keymap,
        };
        f(self.views[self.active.index()].as_mut(), &ctx)
    }

    /// The instance split is what the main area shows.
    fn instances_shown(&self) -> bool {
        self.show_instances && self.active.splits_per_instance()
    }

    fn key_context(&self) -> KeyContext {
        if self.show_instances && self.active.splits_per_instance() {
            KeyContext::Instances
        } else {
            self.views[self.active.index()].key_context()
        }
    }

    /// React to one event.
    pub fn handle(&mut self, event: AppEvent) {
        match event {
            AppEvent::Key(key) => self.key(&key),
            AppEvent::Mouse(m) => self.mouse(&m),
            AppEvent::Resize => self.dirty = true,
            AppEvent::Model(ModelEvent::Snapshot(s)) => self.new_snapshot(s),
            AppEvent::Model(ModelEvent::Exported(result)) => {
                self.last_export_result = Some(
                    result
                        .as_ref()
                        .map(|set| set.layout.work_dir.clone())
                        .map_err(Clone::clone),
                );
                self.message = Some(match result {
                    Ok(set) => {
                        let dir = set
                            .files
                            .iter()
                            .find(|(l, _)| l == "work_dir")
                            .map(|(_, p)| p.clone())
                            .unwrap_or_else(|| self.config.export.out_dir.clone());
                        // The directory is the part a short line cuts in its middle.
                        let text =
                            Message::text(format!("exported {} files to ", set.file_count())).then_path(&dir);
                        self.last_export = Some(dir);
                        text
                    }
                    Err(e) => Message::text(format!("export failed: {e}")),
                });
                self.dirty = true;
            }
            AppEvent::Model(ModelEvent::SourceFailed(e)) => {
                // Only a recording keeps data beyond this session; say so only then.
                let kept = if self.recording {
                    "the recording keeps what was read"
                } else {
                    "the views keep what was read; nothing is recorded"
                };
                self.message = Some(format!("source stopped: {e} ({kept})").into());
                self.dirty = true;
            }
            AppEvent::Model(ModelEvent::Finished(verdict)) => self.verdict = Some(verdict),
            AppEvent::Terminate(_) => self.quit = true,
        }
    }

    fn new_snapshot(&mut self, snapshot: Arc<Snapshot>) {
        self.snapshot = snapshot;
        let ctx = ViewContext {
            snapshot: &self.snapshot,
            theme: &self.config.theme,
            focused: true,
            keys: &self.config.keymap,
        };
        for v in &mut self.views {
            v.snapshot_changed(&ctx);
        }
        self.instances.snapshot_changed(&ctx);
        self.dirty = true;
        self.select_workload_once();
        if let Some(why) = &self.snapshot.stats.symbols_mismatch
            && !self.symbols_mismatch_told
        {
            // Hex frames everywhere: say why before the user wonders.
            self.symbols_mismatch_told = true;
            self.message = Some(format!("symbols: {why}").into());
        }
    }

    /// The stop marker has arrived: look at the workload (start → stop) from now on, as
    /// the artifacts do — unless the user picked a window of their own.
    fn select_workload_once(&mut self) {
        let markers = self.snapshot.markers;
        if !self.config.select_workload_on_stop || self.workload_selected || markers.stop_ns.is_none() {
            return;
        }
        self.workload_selected = true;
        if self.selection.window != TimeWindow::ALL {
            return;
        }
        self.selection.window = markers.main_window();
        self.model.send(Command::Select(self.selection.clone()));
        if self.message.is_some() {
            // The automatic export's message (where the files went) matters more; the
            // status line's window label shows the selection anyway.
            return;
        }
        let clear = self
            .config
            .keymap
            .keys_for(KeyContext::Timeline, Action::ClearWindow)
            .join("/");
        self.message = Some(
            format!("stop marker: the workload window is selected ({clear} on the timeline: the whole run)")
                .into(),
        );
    }

    fn key(&mut self, key: &KeyEvent) {
        self.dirty = true;
        if let Some((purpose, input)) = &mut self.input {
            let purpose = *purpose;
            match input.key(key) {
                InputOutcome::Edited if purpose == InputPurpose::Search => {
                    let text = input.text.clone();
                    self.apply_search(&text, false);
                }
                InputOutcome::Edited | InputOutcome::Unchanged => {}
                InputOutcome::Submitted(text) => {
                    self.input = None;
                    match purpose {
                        InputPurpose::Search => self.apply_search(&text, true),
                        InputPurpose::Guest => {
                            self.model.send(Command::Input(format!("{text}\n").into_bytes()));
                            self.message = Some(format!("sent to the guest: {text}").into());
                        }
                    }
                }
                InputOutcome::Cancelled => {
                    self.input = None;
                    self.message = None;
                    if purpose == InputPurpose::Search {
                        // The edit searched as it went: undo it.
                        let before = self.search_before_edit.take();
                        let text = before
                            .as_ref()
                            .map(|r| r.as_str().to_string())
                            .unwrap_or_default();
                        self.apply_search(&text, true);
                    }
                }
            }
            return;
        }
        let context = self.key_context();
        let Some(action) = self.config.keymap.lookup(context, key) else {
            return;
        };
        if let Some(help) = &mut self.help {
            match help.handle(action) {
                HelpInput::Close => self.help = None,
                HelpInput::Scrolled => {}
                HelpInput::Ignored => {
                    if action == Action::Quit {
                        self.quit = true;
                    }
                }
            }
            return;
        }
        self.action(action);
    }

    /// Carry out an action: the app's own, or the focused view's.
    pub fn action(&mut self, action: Action) {
        self.dirty = true;
        self.message = None;
        if let Some(kind) = ViewKind::shown_by(action) {
            self.switch_to(kind);
            return;
        }
        match action {
            Action::Quit => self.quit = true,
            Action::Help => self.help = Some(HelpOverlay::new()),
            Action::NextView => self.switch_to(self.next_tab(1)),
            Action::PrevView => self.switch_to(self.next_tab(-1)),
            Action::ToggleInstances => {
                self.show_instances = !self.show_instances;
                if self.show_instances && !self.active.splits_per_instance() {
                    let from = self.active;
                    self.switch_to(ViewKind::Hotspots);
                    self.view_before_instances = Some(from);
                } else if !self.show_instances
                    && let Some(back) = self.view_before_instances.take()
                {
                    self.switch_to(back);
                }
                self.update_wants();
            }
            Action::NextInstance => self.cycle_instance(1),
            Action::PrevInstance => self.cycle_instance(-1),
            Action::Export => {
                self.model.send(Command::Export(self.config.export.clone()));
                self.message = Some(
                    Message::text("exporting to ")
                        .then_path(&self.config.export.out_dir)
                        .then_text(" …"),
                );
            }
            Action::ModeAccumulate => self.set_mode(LiveMode::Accumulate),
            Action::ModeSliding => self.set_mode(LiveMode::Sliding {
                seconds: self.config.sliding_seconds,
            }),
            Action::ModeDecay => self.set_mode(LiveMode::Decay {
                factor: self.config.decay_factor,
            }),
            Action::ToggleFreeze => {
                self.frozen = !self.frozen;
                self.model.send(Command::Freeze(self.frozen));
            }
            Action::Reset => {
                self.model.send(Command::Reset);
                self.message = Some("reset: every view counts from now".into());
            }
            Action::RefreshFaster => self.step_refresh(-1),
            Action::RefreshSlower => self.step_refresh(1),
            Action::Search => {
                // A new pattern each time (as in less and vim): typing must not append to
                // the last one. Esc while typing goes back to it.
                self.search_before_edit = self.search[self.active.index()].clone();
                self.input = Some((InputPurpose::Search, InputLine::new("/", "")));
            }
            Action::ClearSearch => self.apply_search("", true),
            // Esc clears an applied filter/search before it means anything else to the view.
            Action::Back if self.search[self.active.index()].is_some() && !self.instances_shown() => {
                self.apply_search("", true);
                self.message = Some("filter cleared".into());
            }
            // In the console, Enter opens a line to type into the guest shell.
            Action::Activate if self.active == ViewKind::Console => {
                self.input = Some((InputPurpose::Guest, InputLine::new("guest> ", "")));
            }
            _ if self.show_instances && self.active.splits_per_instance() => {
                let ctx = ViewContext {
                    snapshot: &self.snapshot,
                    theme: &self.config.theme,
                    focused: true,
                    keys: &self.config.keymap,
                };
                let effect = self.instances.handle(action, &ctx);
                self.effect(effect);
            }
            _ => {
                let effect = self.with_view(|v, ctx| v.handle(action, ctx));
                self.effect(effect);
            }
        }
    }

    fn effect(&mut self, effect: Effect) {
        match effect {
            Effect::None => {}
            Effect::ShowFunction(frame) => {
                self.switch_to(ViewKind::Flamegraph);
                self.with_view(|v, ctx| v.show_function(frame, ctx));
            }
            Effect::SetFocus(pattern) => {
                let focus = match pattern.as_deref().map(Focus::new).transpose() {
                    Ok(f) => f,
                    Err(e) => {
                        self.message = Some(format!("bad focus pattern: {e}").into());
                        return;
                    }
                };
                self.message = Some(
                    match &focus {
                        Some(f) => format!("focus {} (F drops it)", f.pattern()),
                        None => "focus dropped".into(),
                    }
                    .into(),
                );
                self.selection.focus = focus;
                self.model.send(Command::Select(self.selection.clone()));
            }
            Effect::SetWindow(window) => {
                self.selection.window = window;
                self.model.send(Command::Select(self.selection.clone()));
            }
            Effect::ShowInstance(id) => {
                self.selection.instance = Some(id);
                self.show_instances = false;
                self.update_wants();
                let label = self.snapshot.instance_labels.iter().find(|(i, _)| *i == id);
                self.message =
                    label.map(|(_, l)| Message::text(format!("instance {l} (] / [ cycle, again to all)")));
                self.model.send(Command::Select(self.selection.clone()));
            }
            Effect::Message(m) => self.message = Some(m.into()),
        }
    }

    fn apply_search(&mut self, text: &str, submitted: bool) {
        let pattern = if text.is_empty() {
            None
        } else {
            match Regex::new(text) {
                Ok(r) => Some(r),
                Err(_) => {
                    // While typing, a half-written pattern is normal: keep the last good one.
                    if submitted {
                        self.message = Some(format!("not a valid regex: {text}").into());
                    }
                    return;
                }
            }
        };
        let index = self.active.index();
        self.search[index] = pattern.clone();
        let effect = self.with_view(|v, ctx| v.search(pattern.as_ref(), ctx));
        self.effect(effect);
    }

    fn switch_to(&mut self, kind: ViewKind) {
        if kind != self.active {
            // Going elsewhere by hand: the split no longer returns anywhere.
            self.view_before_instances = None;
        }
        self.active = kind;
        if !kind.splits_per_instance() {
            self.show_instances = false;
        }
        self.update_wants();
    }

    fn set_mode(&mut self, mode: LiveMode) {
        self.mode = mode;
        self.model.send(Command::Mode(mode));
        self.message = Some(format!("mode: {}", mode.label()).into());
    }

    fn step_refresh(&mut self, direction: i32) {
        let ms = self.refresh.as_millis() as u64;
        let i = REFRESH_STEPS_MS
            .iter()
            .position(|&s| s >= ms)
            .unwrap_or(REFRESH_STEPS_MS.len() - 1);
        let j = (i as i32 + direction).clamp(0, REFRESH_STEPS_MS.len() as i32 - 1) as usize;
        self.refresh = Duration::from_millis(REFRESH_STEPS_MS[j]);
        self.model.send(Command::RefreshInterval(self.refresh));
        self.message = Some(format!("refresh every {} ms", REFRESH_STEPS_MS[j]).into());
    }

    /// All instances → the first → … → the last → all again.
    fn cycle_instance(&mut self, direction: i32) {
        let labels = self.snapshot.instance_labels.clone();
        if labels.len() < 2 {
            self.message = Some("only one instance in this profile".into());
            return;
        }
        let n = labels.len() as i32;
        // Position -1 stands for "all".
        let current = self
            .selection
            .instance
            .and_then(|id| labels.iter().position(|(i, _)| *i == id))
            .map_or(-1, |p| p as i32);
        let next = (current + 1 + direction).rem_euclid(n + 1) - 1;
        self.selection.instance = (next >= 0).then(|| labels[next as usize].0);
        self.show_instances = false;
        self.message = Some(
            match self.selection.instance {
                Some(_) => format!("instance {}", labels[next as usize].1),
                None => "all instances".into(),
            }
            .into(),
        );
        self.model.send(Command::Select(self.selection.clone()));
    }

    /// Tell the model thread what the views draw now (the inverted trie, the instance
    /// split): it builds those only while a view wants them.
    pub fn update_wants(&mut self) {
        let wants = Wants {
            inverted: self.views[self.active.index()].wants_inverted(),
            instances: self.show_instances,
        };
        if wants != self.wants {
            self.wants = wants;
            self.model.send(Command::Wants(wants));
        }
    }

    fn mouse(&mut self, m: &MouseEvent) {
        if !self.config.mouse {
            return;
        }
        let (col, row) = (m.column, m.row);
        match m.kind {
            MouseEventKind::Down(MouseButton::Left) => {
                self.dirty = true;
                if contains(self.areas.tabs, col, row) {
                    if let Some(kind) = self.tab_at(col) {
                        self.switch_to(kind);
                    }
                    return;
                }
                let double = self
                    .last_click
                    .is_some_and(|(t, c, r)| t.elapsed() < DOUBLE_CLICK && c == col && r == row);
                self.last_click = Some((Instant::now(), col, row));
                let effect = if self.show_instances && self.active.splits_per_instance() {
                    let ctx = ViewContext {
                        snapshot: &self.snapshot,
                        theme: &self.config.theme,
                        focused: true,
                        keys: &self.config.keymap,
                    };
                    self.instances.click(col, row, double, &ctx)
                } else {
                    self.with_view(|v, ctx| v.click(col, row, double, ctx))
                };
                self.effect(effect);
            }
            MouseEventKind::ScrollDown | MouseEventKind::ScrollUp => {
                self.dirty = true;
                let lines = if m.kind == MouseEventKind::ScrollDown {
                    3
                } else {
                    -3
                };
                self.with_view(|v, ctx| v.scroll(lines, ctx));
            }
            _ => {}
        }
        self.update_wants();
    }

    /// A tab's text: the key that shows the view (from the keymap, not the tab's
    /// position: the default map shows Tables with 8, Timeline with 5), then its title.
    fn tab_label(&self, kind: ViewKind) -> String {
        match self
            .config
            .keymap
            .keys_for(KeyContext::Global, kind.show_action())
            .first()
        {
            Some(key) => format!(" {key} {} ", kind.title()),
            None => format!(" {} ", kind.title()),
        }
    }

    /// The views with a tab, in tab order: all but the hidden ones (the active view
    /// keeps its tab even when hidden, so the screen says where one is).
    fn tabbed_views(&self) -> Vec<ViewKind> {
        ViewKind::ALL
            .into_iter()
            .filter(|k| *k == self.active || !self.config.hidden_views.contains(k))
            .collect()
    }

    /// The tab `step` places after (or before) the active one, wrapping around.
    fn next_tab(&self, step: isize) -> ViewKind {
        let tabs = self.tabbed_views();
        let at = tabs.iter().position(|k| *k == self.active).unwrap_or(0) as isize;
        tabs[(at + step).rem_euclid(tabs.len() as isize) as usize]
    }

    /// Tab titles with their x ranges, as drawn, and how many tabs did not fit (the
    /// line then ends with `…+N`).
    fn tab_spans(&self) -> (Vec<(ViewKind, u16, u16)>, usize) {
        let tabs = self.tabbed_views();
        let start = self.areas.tabs.x;
        let end = start + self.areas.tabs.width;
        let widths: Vec<u16> = tabs
            .iter()
            .map(|k| self.tab_label(*k).chars().count() as u16)
            .collect();
        let mut spans = Vec::new();
        let mut x = start;
        for (i, (kind, w)) in tabs.iter().zip(&widths).enumerate() {
            let rest = tabs.len() - i - 1;
            // Room for this tab and, unless it is the last, for the `…+N` mark after it.
            let mark = if rest > 0 {
                cut_mark(rest).chars().count() as u16
            } else {
                0
            };
            let fits_alone = x + w <= end;
            let fits_with_rest = x + w + widths[i + 1..].iter().sum::<u16>() <= end;
            if !fits_alone || (!fits_with_rest && x + w + mark > end) {
                return (spans, tabs.len() - i);
            }
            spans.push((*kind, x, x + w));
            x += w;
        }
        (spans, 0)
    }

    fn tab_at(&self, col: u16) -> Option<ViewKind> {
        self.tab_spans()
            .0
            .into_iter()
            .find(|(_, a, b)| (*a..*b).contains(&col))
            .map(|(k, _, _)| k)
    }

    /// Draw everything into `buf` (the terminal's frame buffer, or a test's).
    pub fn render(&mut self, area: Rect, buf: &mut Buffer) {
        let started = Instant::now();
        let theme = self.config.theme.clone();
        buf.set_style(area, theme.text);
        if area.height < 3 || area.width < 10 {
            buf.set_stringn(
                area.x,
                area.y,
                "perfscope: terminal too small",
                area.width as usize,
                theme.warning,
            );
            return;
        }
        self.areas = Areas {
            tabs: Rect::new(area.x, area.y, area.width, 1),
            main: Rect::new(area.x, area.y + 1, area.width, area.height - 2),
            status: Rect::new(area.x, area.y + area.height - 1, area.width, 1),
        };
        // Tabs, and how many did not fit.
        let (spans, cut) = self.tab_spans();
        let mut tabs_end = area.x;
        for (kind, a, b) in spans {
            let style = if kind == self.active {
                theme.selected
            } else {
                theme.dim
            };
            let text = self.tab_label(kind);
            buf.set_stringn(a, area.y, &text, (b - a) as usize, style);
            tabs_end = b;
        }
        if cut > 0 {
            let room = (area.x + area.width).saturating_sub(tabs_end) as usize;
            buf.set_stringn(tabs_end, area.y, cut_mark(cut), room, theme.dim);
        }
        // The main view.
        let ctx = ViewContext {
            snapshot: &self.snapshot,
            theme: &theme,
            focused: true,
            keys: &self.config.keymap,
        };
        let main = self.areas.main;
        if self.show_instances && self.active.splits_per_instance() {
            self.instances.set_base(self.active);
            self.instances.render(main, buf, &ctx);
        } else {
            self.views[self.active.index()].render(main, buf, &ctx);
        }
        let help_context = self.key_context();
        if let Some(help) = &mut self.help {
            help.render(main, buf, &self.config.keymap, &theme, help_context);
        }
        // Status or input line.
        let status = self.areas.status;
        if let Some((_, input)) = &self.input {
            buf.set_style(status, theme.status);
            let text = format!("{}{}", input.prompt, input.text);
            let shown = truncate_end(&text, status.width.saturating_sub(1) as usize);
            let (x, _) = buf.set_stringn(status.x, status.y, &shown, status.width as usize, theme.status);
            if x < status.x + status.width {
                buf[(x, status.y)].set_style(theme.selected);
            }
        } else {
            let hint = if self.show_instances && self.active.splits_per_instance() {
                self.instances.hint(&self.config.keymap)
            } else {
                self.views[self.active.index()].hint(&self.config.keymap)
            };
            let info = StatusInfo {
                frozen: self.frozen,
                refresh: self.refresh,
                frame_time: self.frame_time,
                instance: self.selection.instance.and_then(|id| {
                    self.snapshot
                        .instance_labels
                        .iter()
                        .find(|(i, _)| *i == id)
                        .map(|(_, l)| l.clone())
                }),
                hint,
                message: self.message.clone(),
            };
            render_status(status, buf, &self.snapshot, &info, &theme);
        }
        self.frame_time = started.elapsed();
    }

    /// Draw if something changed.
    pub fn draw<B: Backend>(&mut self, terminal: &mut Terminal<B>) -> Result<(), B::Error> {
        if !self.dirty {
            return Ok(());
        }
        terminal.draw(|frame| {
            let area = frame.area();
            self.render(area, frame.buffer_mut());
        })?;
        self.dirty = false;
        Ok(())
    }

    /// The loop: wait for an event, handle it and everything queued behind it, draw.
    pub fn run<B: Backend>(
        &mut self,
        terminal: &mut Terminal<B>,
        events: &Receiver<AppEvent>,
    ) -> anyhow::Result<()>
    where
        B::Error: Send + Sync + 'static,
    {
        self.draw(terminal)?;
        while !self.quit {
            let Ok(first) = events.recv() else { break };
            self.handle(first);
            // Drain the queue: many snapshots or keys behind each other cost one draw.
            while let Ok(next) = events.try_recv() {
                self.handle(next);
                if self.quit {
                    break;
                }
            }
            self.update_wants();
            self.draw(terminal)?;
        }
        self.model.send(Command::Shutdown);
        Ok(())
    }
}

/// How a terminal-UI session ended: the last export, and the session's verdict.
#[derive(Debug)]
pub struct TuiEnd {
    /// Where the last export went (the export key, or a QEMU run's automatic one).
    pub export: Option<Result<std::path::PathBuf, String>>,
    /// The session's final verdict, as the model thread gave it when it shut down (the
    /// last snapshot's if it said nothing): the process's exit code.
    pub verdict: Verdict,
}

impl App {
    /// End the session: stop the model thread (which stops the source and, for a run,
    /// writes the artifacts) and return the last export's outcome and the final verdict.
    pub fn finish(mut self, events: &Receiver<AppEvent>) -> TuiEnd {
        drop(self.model);
        for event in events.try_iter() {
            match event {
                AppEvent::Model(ModelEvent::Exported(result)) => {
                    self.last_export_result = Some(result.map(|set| set.layout.work_dir));
                }
                AppEvent::Model(ModelEvent::Finished(verdict)) => self.verdict = Some(verdict),
                _ => {}
            }
        }
        TuiEnd {
            export: self.last_export_result,
            verdict: self.verdict.unwrap_or_else(|| self.snapshot.verdict.clone()),
        }
    }
}

/// The end of a tab line that does not fit: how many tabs are left out.
fn cut_mark(left_out: usize) -> String {
    format!(" …+{left_out}")
}

fn contains(r: Rect, col: u16, row: u16) -> bool {
    col >= r.x && col < r.x + r.width && row >= r.y && row < r.y + r.height
}

#[cfg(test)]
mod tests;
