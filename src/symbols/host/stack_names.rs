//! Raw callchains named as perf-prof prints them (`name+0xoff (module)` per address,
//! kernel frames from /proc/kallsyms, user frames from the process's mappings): what
//! kmemleak and kmemprof keep of a stack when they first meet it.

use std::sync::Arc;

use super::{HostFrame, HostSymbolizer, HostSymbolizerOptions, lookup_address};
use crate::model::memory_stacks::FrameText;

/// `PERF_CONTEXT_*` markers: kernel and user frames follow them.
const CONTEXT_KERNEL: u64 = (-128i64) as u64;
const CONTEXT_USER: u64 = (-512i64) as u64;
const CONTEXT_MARKERS: u64 = (-4095i64) as u64;

/// A symbolizer that names whole callchains.
pub struct StackNames {
    symbols: HostSymbolizer,
}

impl StackNames {
    /// Loads the kernel's symbols; when they are hidden the kernel frames stay unnamed
    /// (`[unknown]`) rather than failing the run. `None` when no symbolizer can be made.
    pub fn new() -> Option<Self> {
        HostSymbolizer::new(HostSymbolizerOptions::default())
            .or_else(|_| {
                HostSymbolizer::new(HostSymbolizerOptions {
                    kernel: false,
                    ..HostSymbolizerOptions::default()
                })
            })
            .ok()
            .map(|symbols| Self { symbols })
    }

    /// The frames of `chain` (leaf first) of process `pid`, one per address (an inlined
    /// call adds a line at its caller's address).
    pub fn name(&mut self, pid: u32, chain: &[u64]) -> Vec<FrameText> {
        let mut user = false;
        let mut out = Vec::new();
        let mut index = 0;
        for &ip in chain {
            if ip >= CONTEXT_MARKERS {
                user = match ip {
                    CONTEXT_USER => true,
                    CONTEXT_KERNEL => false,
                    _ => user,
                };
                continue;
            }
            let looked_up = lookup_address(ip, index);
            index += 1;
            let frames: Arc<[HostFrame]> = if user {
                self.symbols.resolve_user(pid, looked_up)
            } else {
                Arc::from([self.symbols.resolve_kernel(looked_up)])
            };
            for frame in frames.iter() {
                let mut text = frame.name.to_string();
                if let Some(offset) = frame.offset {
                    // The offset of the address as delivered, not of the byte before it.
                    text.push_str(&format!("+{:#x}", offset + (ip - looked_up)));
                }
                let module = frame.module.rsplit('/').next().unwrap_or(&frame.module);
                text.push_str(&format!(" ({module})"));
                out.push(FrameText { address: ip, text });
            }
        }
        out
    }
}
