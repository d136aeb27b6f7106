//! The thin layer over QEMU's C plugin API (v4) that the rest of the plugin uses: guest
//! memory and register reads through real GLib arrays, per-vCPU scoreboard entries, the
//! register list, and the host monotonic clock.
//!
//! Everything `unsafe` lives here. The other modules see plain functions and values.
//!
//! Why not the `qemu-plugin` crate's wrappers: its `qemu_plugin_read_memory_vaddr` (10.1.0-v2)
//! hands QEMU a fake `GByteArray` built on the Rust stack; QEMU grows it with
//! `g_byte_array_set_size`, GLib treats it as its larger private struct and memsets a wild
//! address (SIGSEGV, notes/environment.md §2). Register handles are private in the crate, so
//! the register list is read here too.

use std::ffi::{CStr, c_uint};

use qemu_plugin::sys;

unsafe extern "C" {
    // GLib is linked into QEMU; the symbols resolve when QEMU dlopens the plugin.
    fn g_byte_array_new() -> *mut sys::GByteArray;
    fn g_byte_array_set_size(array: *mut sys::GByteArray, length: u32) -> *mut sys::GByteArray;
    fn g_byte_array_free(array: *mut sys::GByteArray, free_segment: bool) -> *mut u8;
    fn g_array_free(array: *mut sys::GArray, free_segment: bool) -> *mut libc::c_char;
}

/// A GLib byte array owned by us, freed on drop.
struct ByteArray(*mut sys::GByteArray);

impl ByteArray {
    fn new() -> Option<Self> {
        // SAFETY: g_byte_array_new has no preconditions; a null return is handled.
        let raw = unsafe { g_byte_array_new() };
        (!raw.is_null()).then_some(ByteArray(raw))
    }

    /// Empty it (QEMU appends a register's bytes; a memory read sets the size itself).
    fn clear(&self) {
        // SAFETY: self.0 is a live GByteArray; shrinking never reallocates.
        unsafe {
            g_byte_array_set_size(self.0, 0);
        }
    }

    fn bytes(&self) -> &[u8] {
        // SAFETY: self.0 is a live GByteArray; data/len describe its initialised contents.
        unsafe {
            let array = &*self.0;
            if array.data.is_null() || array.len == 0 {
                &[]
            } else {
                std::slice::from_raw_parts(array.data, array.len as usize)
            }
        }
    }
}

impl Drop for ByteArray {
    fn drop(&mut self) {
        // SAFETY: we own the array and free it exactly once.
        unsafe {
            g_byte_array_free(self.0, true);
        }
    }
}

thread_local! {
    /// The array every read of this vCPU thread goes through: a sample reads the registers
    /// and a few words per frame, and a GLib allocation and free for each was a third of a
    /// dwarf sample's cost (2.6 µs → 1.8 µs for a 6-frame unwind on the test kernel).
    static SCRATCH: Option<ByteArray> = ByteArray::new();
}

/// Read `out.len()` bytes of guest virtual memory of the current vCPU. Only valid inside a
/// vCPU callback. `false` when the address is not mapped.
pub fn read_guest(vaddr: u64, out: &mut [u8]) -> bool {
    if out.is_empty() {
        return true;
    }
    SCRATCH.with(|array| {
        let Some(array) = array else {
            return false;
        };
        // SAFETY: a real GByteArray that QEMU may grow; read only from a vCPU callback.
        let ok = unsafe { sys::qemu_plugin_read_memory_vaddr(vaddr, array.0, out.len()) };
        let bytes = array.bytes();
        if !ok || bytes.len() < out.len() {
            return false;
        }
        out.copy_from_slice(&bytes[..out.len()]);
        true
    })
}

/// An opaque register handle of the current vCPU, from [`registers`].
#[derive(Copy, Clone, Debug)]
pub struct RegisterHandle(usize);

/// Read a register of the current vCPU as a little-endian u64. Only valid in a callback
/// registered with `QEMU_PLUGIN_CB_R_REGS`. `None` when QEMU refuses or the register is
/// not 8 bytes wide.
pub fn read_register_u64(handle: RegisterHandle) -> Option<u64> {
    SCRATCH.with(|array| {
        let array = array.as_ref()?;
        array.clear();
        // SAFETY: the handle came from qemu_plugin_get_registers; the array is ours.
        let size =
            unsafe { sys::qemu_plugin_read_register(handle.0 as *mut sys::qemu_plugin_register, array.0) };
        let bytes = array.bytes();
        if size != 8 || bytes.len() < 8 {
            return None;
        }
        let mut value = [0u8; 8];
        value.copy_from_slice(&bytes[..8]);
        Some(u64::from_le_bytes(value))
    })
}

/// The current vCPU's registers by name (QEMU's gdb names: `sp`, `fp`, `ra`, `rbp`, `r22`…).
/// Only valid from the vCPU-init callback onwards.
pub fn registers() -> Vec<(String, RegisterHandle)> {
    // SAFETY: QEMU returns a GArray of qemu_plugin_reg_descriptor that we must free; the
    // name strings belong to QEMU and are copied before the free.
    unsafe {
        let array = sys::qemu_plugin_get_registers();
        if array.is_null() {
            return Vec::new();
        }
        let len = (*array).len as usize;
        let data = (*array).data as *const sys::qemu_plugin_reg_descriptor;
        let mut out = Vec::with_capacity(len);
        if !data.is_null() {
            for descriptor in std::slice::from_raw_parts(data, len) {
                if descriptor.name.is_null() {
                    continue;
                }
                let name = CStr::from_ptr(descriptor.name).to_string_lossy().into_owned();
                out.push((name, RegisterHandle(descriptor.handle as usize)));
            }
        }
        g_array_free(array, true);
        out
    }
}

/// One u64 per vCPU inside a QEMU scoreboard: the entry QEMU's inline ops and conditional
/// callbacks read and write from the generated code.
#[derive(Copy, Clone)]
pub struct VcpuU64(pub sys::qemu_plugin_u64);

// SAFETY: the entry is a scoreboard pointer plus an offset. QEMU keeps the scoreboard alive
// for the plugin's lifetime (we never free it) and its storage only moves when more vCPUs
// are created than it was allocated for (16 at creation, QEMU plugins/core.c), which
// happens at boot before the timer thread touches vCPUs it has not seen initialised.
unsafe impl Send for VcpuU64 {}
unsafe impl Sync for VcpuU64 {}

impl VcpuU64 {
    pub fn get(self, vcpu: u32) -> u64 {
        // SAFETY: see the Send/Sync note; the index is a vCPU QEMU has initialised.
        unsafe { sys::qemu_plugin_u64_get(self.0, vcpu as c_uint) }
    }

    pub fn set(self, vcpu: u32, value: u64) {
        // SAFETY: as for get.
        unsafe { sys::qemu_plugin_u64_set(self.0, vcpu as c_uint, value) }
    }

    pub fn sum(self) -> u64 {
        // SAFETY: as for get.
        unsafe { sys::qemu_plugin_u64_sum(self.0) }
    }
}

/// A scoreboard of `fields` u64s per vCPU; field `i` is [`VcpuU64`] at offset `8 * i`.
/// Never freed: generated code may reference it until QEMU exits.
pub fn new_scoreboard(fields: usize) -> Option<Vec<VcpuU64>> {
    // SAFETY: plain allocation; a null return is handled.
    let score = unsafe { sys::qemu_plugin_scoreboard_new(8 * fields) };
    if score.is_null() {
        return None;
    }
    Some(
        (0..fields)
            .map(|i| VcpuU64(sys::qemu_plugin_u64 { score, offset: 8 * i }))
            .collect(),
    )
}

/// `clock_gettime(CLOCK_MONOTONIC)` in ns: the clock `epoch_ns` is given in, shared with
/// the runner that starts QEMU (Rust's `Instant` hides its raw value).
pub fn monotonic_ns() -> u64 {
    let mut now = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: a valid out pointer; CLOCK_MONOTONIC always exists on Linux.
    let rc = unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut now) };
    if rc != 0 {
        return 0;
    }
    (now.tv_sec as u64)
        .saturating_mul(1_000_000_000)
        .saturating_add(now.tv_nsec as u64)
}
