//! Test helpers shared by the unit tests and, through `#[path]`, the integration tests in
//! `tests/`: a seeded pseudo-random generator. Builds nothing into the library.

/// Marsaglia's xorshift64 (shifts 13, 7, 17): deterministic inputs from a seed, so a failing
/// mutation round is the same on every run. Not for anything but tests.
#[derive(Debug, Clone)]
pub struct Xorshift(u64);

impl Xorshift {
    /// A generator started at `seed`; zero is refused, since it would stay zero forever.
    pub fn new(seed: u64) -> Self {
        assert_ne!(seed, 0, "xorshift needs a non-zero seed");
        Xorshift(seed)
    }

    /// The next number of the sequence.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}
