//! Deterministic test data shared by the codec tests.

/// xorshift64: deterministic test data without dependencies.
pub(crate) struct Rng(pub u64);

impl Rng {
    /// The next 64 random bits.
    pub fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    /// A random value below `n`.
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// `n` random bytes.
pub(crate) fn random_bytes(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    (0..n).map(|_| r.next() as u8).collect()
}

/// `n` bytes of sorted int64 timestamps (random steps below 1000).
pub(crate) fn timestamps(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut v = 1_600_000_000_000_000i64;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        v += r.below(1000) as i64;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.truncate(n);
    out
}

/// `n` bytes of a float64 random walk.
pub(crate) fn random_walk(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut v = 100.0f64;
    let mut out = Vec::with_capacity(n + 8);
    while out.len() < n {
        v += (r.below(2001) as f64 - 1000.0) / 1000.0;
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.truncate(n);
    out
}

/// `n` bytes of int32 values 0..16.
pub(crate) fn small_ints(n: usize, seed: u64) -> Vec<u8> {
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(n + 4);
    while out.len() < n {
        out.extend_from_slice(&(r.below(16) as i32).to_le_bytes());
    }
    out.truncate(n);
    out
}

/// `n` bytes of word-like text.
pub(crate) fn text(n: usize, seed: u64) -> Vec<u8> {
    const WORDS: &[&str] = &[
        "the",
        "of",
        "and",
        "tile",
        "filter",
        "pipeline",
        "compression",
        "zlib",
        "deflate",
        "window",
        "hash",
        "chain",
        "match",
        "literal",
        "a",
        "is",
        "in",
        "to",
        "array",
        "cell",
        "dimension",
        "attribute",
        "fragment",
        "TileDB",
        "byte",
        "identical",
        "\n",
        ", ",
        ". ",
    ];
    let mut r = Rng(seed);
    let mut out = Vec::with_capacity(n + 16);
    while out.len() < n {
        out.extend_from_slice(WORDS[r.below(WORDS.len() as u64) as usize].as_bytes());
        out.push(b' ');
    }
    out.truncate(n);
    out
}
