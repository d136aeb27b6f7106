//! Do the symbols match the samples? `open x.qperf.bin --elf /bin/ls` used to end with
//! `result ok` and a flamegraph of hex addresses. When a session finishes (headless or in
//! the TUI) the engine looks at what the resolver saw — the share of addresses no symbol covers, and the ELF's
//! architecture against the one the plugin's summary recorded — and gives a verdict the
//! reports carry (`result: incomplete`, a warning) and the exit code follows (3).

use super::ModelState;

/// At least this share of unresolved frames means the ELF is not the one the samples were
/// taken from (a matching kernel ELF leaves a few percent: firmware, user space).
pub const UNRESOLVED_SHARE_LIMIT: f64 = 0.9;

/// Why the symbols do not match the samples, or `None` when they do (or there is nothing
/// to judge: no address-based samples).
pub fn symbols_mismatch(state: &ModelState) -> Option<String> {
    let facts = &state.provenance.facts;
    facts.format_version?;
    let binary = state.tables.info.binary.as_deref().unwrap_or("the symbols");
    let recorded = state
        .provenance
        .plugin_summary
        .iter()
        .find(|(k, _)| k == "arch")
        .map(|(_, v)| v.as_str());
    let frames = facts.total_frames;
    // Not in the binary: what no symbol covered, and what lay outside its image (named by
    // region, with the return addresses of such samples) unless a --user-elf program named it.
    let o = &facts.outside_kernel;
    let missing = facts.unknown_frames
        + o.firmware_frames
        + (o.user_frames - o.user_frames_named)
        + o.unknown_frames
        + o.return_addresses_dropped;
    let share = (frames > 0).then(|| missing as f64 / frames as f64);
    let unresolved = share.map(|share| {
        format!(
            "{missing} of {frames} addresses ({:.0}%) are not in {binary}",
            share * 100.0
        )
    });
    if let (Some(elf), Some(recorded)) = (state.tables.info.arch.as_deref(), recorded)
        && elf != recorded
    {
        return Some(format!(
            "{binary} is an {elf} ELF but the samples were recorded on {recorded}{}: give the \
             kernel ELF the samples come from (--elf)",
            unresolved.map(|u| format!("; {u}")).unwrap_or_default()
        ));
    }
    let unresolved = unresolved?;
    (share? >= UNRESOLVED_SHARE_LIMIT).then(|| {
        format!(
            "{unresolved}: it does not match the samples — give the kernel ELF they were recorded \
             from (--elf), or --user-elf / --kernel-filter when most samples are user space"
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::SlicePolicy;
    use crate::model::SourceFacts;

    fn state(unknown: u64, total: u64, elf: Option<&str>, recorded: Option<&str>) -> ModelState {
        let mut s = ModelState::new(SlicePolicy::BATCH);
        s.provenance.facts = SourceFacts {
            format_version: Some(3),
            total_frames: total,
            unknown_frames: unknown,
            ..SourceFacts::default()
        };
        s.tables.info.binary = Some("/bin/ls".into());
        s.tables.info.arch = elf.map(str::to_string);
        if let Some(r) = recorded {
            s.provenance.plugin_summary.push(("arch".into(), r.into()));
        }
        s
    }

    #[test]
    fn unresolved_addresses_or_another_arch_mean_the_elf_does_not_match() {
        let v = symbols_mismatch(&state(1000, 1000, Some("x86_64"), None)).unwrap();
        assert!(
            v.starts_with("1000 of 1000 addresses (100%) are not in /bin/ls"),
            "{v}"
        );
        let v = symbols_mismatch(&state(0, 1000, Some("x86_64"), Some("riscv64"))).unwrap();
        assert!(
            v.contains("x86_64 ELF but the samples were recorded on riscv64"),
            "{v}"
        );
        // A matching ELF: a few unresolved frames (firmware) are fine.
        assert_eq!(
            symbols_mismatch(&state(30, 1000, Some("riscv64"), Some("riscv64"))),
            None
        );
        // Folded input (no addresses): nothing to judge.
        let mut folded = state(1000, 1000, None, None);
        folded.provenance.facts.format_version = None;
        assert_eq!(symbols_mismatch(&folded), None);
    }

    #[test]
    fn user_space_named_by_a_user_elf_counts_as_resolved() {
        let mut s = state(0, 1000, Some("riscv64"), Some("riscv64"));
        s.provenance.facts.outside_kernel.firmware_frames = 80;
        s.provenance.facts.outside_kernel.user_frames = 900;
        let v = symbols_mismatch(&s).unwrap();
        assert!(v.contains("--user-elf"), "{v}");
        s.provenance.facts.outside_kernel.user_frames_named = 880;
        assert_eq!(
            symbols_mismatch(&s),
            None,
            "only 100 of 1000 frames are not named"
        );
    }
}
