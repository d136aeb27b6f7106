//! `perfscope open x.qperf.bin --elf /bin/ls` in a real terminal (issue 11 point 17): the
//! status line says the ELF does not match the samples instead of leaving the user with
//! hex frames and no word.

mod common;

use std::path::Path;
use std::time::Duration;

use common::tmux::TmuxSession;

#[test]
fn the_tui_says_the_elf_does_not_match_the_samples() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let command = format!(
        "{} open assets/tinyk-riscv64.qperf.bin --elf /bin/ls; sleep 30",
        env!("CARGO_BIN_EXE_perfscope")
    );
    let tmux = TmuxSession::start("perfscope-elf-mismatch", 200, 30, root, &command);
    let screen = tmux.wait_for("the mismatch on the status line", Duration::from_secs(30), |s| {
        s.contains("symbols: /bin/ls is an x86_64 ELF but the samples were recorded on riscv64")
    });
    assert!(screen.contains(" done "), "{screen}");
    tmux.keys(&["q"]);
}
