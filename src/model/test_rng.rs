//! The tests' pseudo-random numbers: xorshift64 from a fixed seed, so a failure found on
//! random input reproduces on every run and machine.

/// A deterministic sequence of pseudo-random words.
pub struct TestRng(u64);

impl TestRng {
    /// `seed` must not be 0 (xorshift stays at 0).
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "xorshift needs a non-zero seed");
        Self(seed)
    }

    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
