//! Most-significant-bit-first bit writer, as bzip2 packs its stream.

/// Appends bits to a byte vector, first bit in the top of each byte.
pub struct BitWriter<'a> {
    out: &'a mut Vec<u8>,
    acc: u64,
    live: u32,
}

impl<'a> BitWriter<'a> {
    /// A writer appending to `out`.
    pub fn new(out: &'a mut Vec<u8>) -> Self {
        BitWriter {
            out,
            acc: 0,
            live: 0,
        }
    }

    /// Writes the low `n` bits of `v` (n ≤ 32), most significant first.
    #[inline]
    pub fn put(&mut self, n: u32, v: u32) {
        debug_assert!(n <= 32 && (n == 32 || v >> n == 0));
        self.acc = (self.acc << n) | v as u64;
        self.live += n;
        if self.live >= 32 {
            self.live -= 32;
            self.out
                .extend_from_slice(&((self.acc >> self.live) as u32).to_be_bytes());
        }
    }

    /// Writes 48 bits.
    pub fn put48(&mut self, v: u64) {
        self.put(24, (v >> 24) as u32 & 0xFF_FFFF);
        self.put(24, v as u32 & 0xFF_FFFF);
    }

    /// Pads the last byte with zero bits and flushes.
    pub fn finish(mut self) {
        while self.live >= 8 {
            self.live -= 8;
            self.out.push((self.acc >> self.live) as u8);
        }
        if self.live > 0 {
            self.out.push((self.acc << (8 - self.live)) as u8);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn packs_msb_first() {
        let mut v = Vec::new();
        let mut w = BitWriter::new(&mut v);
        w.put(1, 1);
        w.put(3, 0b010);
        w.put(12, 0xABC);
        w.put(32, 0xDEAD_BEEF);
        w.put(2, 0b11);
        w.finish();
        assert_eq!(v, [0xA_A, 0xBC, 0xDE, 0xAD, 0xBE, 0xEF, 0xC0]);
    }
}
