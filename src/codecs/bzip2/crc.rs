//! bzip2's CRC-32: polynomial 0x04C11DB7, most significant bit first, initial and final
//! value all ones (CRC-32/BZIP2). The combined stream CRC rotates left by one and XORs each
//! block CRC in.

const POLY: u32 = 0x04C1_1DB7;

/// Slicing-by-8 tables: `TABLES[k][b]` is the CRC contribution of byte `b` followed by `k`
/// zero bytes.
static TABLES: [[u32; 256]; 8] = make_tables();

const fn make_tables() -> [[u32; 256]; 8] {
    let mut t = [[0u32; 256]; 8];
    let mut b = 0;
    while b < 256 {
        let mut c = (b as u32) << 24;
        let mut i = 0;
        while i < 8 {
            c = if c & 0x8000_0000 != 0 {
                (c << 1) ^ POLY
            } else {
                c << 1
            };
            i += 1;
        }
        t[0][b] = c;
        b += 1;
    }
    let mut k = 1;
    while k < 8 {
        let mut b = 0;
        while b < 256 {
            let prev = t[k - 1][b];
            t[k][b] = (prev << 8) ^ t[0][(prev >> 24) as usize];
            b += 1;
        }
        k += 1;
    }
    t
}

/// A running block CRC.
#[derive(Clone, Copy, Debug)]
pub struct Crc(u32);

impl Default for Crc {
    fn default() -> Self {
        Self::new()
    }
}

impl Crc {
    /// A CRC over no bytes yet.
    pub const fn new() -> Self {
        Crc(0xFFFF_FFFF)
    }

    /// Adds one byte.
    #[inline]
    pub fn byte(&mut self, b: u8) {
        self.0 = (self.0 << 8) ^ TABLES[0][((self.0 >> 24) as u8 ^ b) as usize];
    }

    /// Adds `n` copies of byte `b`.
    #[inline]
    pub fn run(&mut self, b: u8, n: usize) {
        for _ in 0..n {
            self.byte(b);
        }
    }

    /// Adds a slice.
    pub fn update(&mut self, data: &[u8]) {
        let mut c = self.0;
        let mut chunks = data.chunks_exact(8);
        for w in &mut chunks {
            let hi = c ^ u32::from_be_bytes([w[0], w[1], w[2], w[3]]);
            c = TABLES[7][(hi >> 24) as usize]
                ^ TABLES[6][(hi >> 16) as u8 as usize]
                ^ TABLES[5][(hi >> 8) as u8 as usize]
                ^ TABLES[4][hi as u8 as usize]
                ^ TABLES[3][w[4] as usize]
                ^ TABLES[2][w[5] as usize]
                ^ TABLES[1][w[6] as usize]
                ^ TABLES[0][w[7] as usize];
        }
        self.0 = c;
        for &b in chunks.remainder() {
            self.byte(b);
        }
    }

    /// The finished CRC.
    pub fn finish(self) -> u32 {
        !self.0
    }
}

/// Folds a finished block CRC into the stream's combined CRC.
pub fn combine(combined: u32, block: u32) -> u32 {
    combined.rotate_left(1) ^ block
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn check_value_and_slicing_agree() {
        let mut c = Crc::new();
        c.update(b"123456789");
        assert_eq!(c.finish(), 0xFC89_1918);
        let data: Vec<u8> = (0..1000u32).map(|i| (i * 7 + i / 13) as u8).collect();
        for n in [0, 1, 7, 8, 9, 63, 1000] {
            let mut a = Crc::new();
            a.update(&data[..n]);
            let mut b = Crc::new();
            data[..n].iter().for_each(|&x| b.byte(x));
            assert_eq!(a.finish(), b.finish(), "n={n}");
        }
        let mut r = Crc::new();
        r.run(9, 5);
        let mut s = Crc::new();
        s.update(&[9; 5]);
        assert_eq!(r.finish(), s.finish());
    }
}
