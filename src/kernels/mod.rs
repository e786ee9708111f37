//! SIMD kernels of the BYTESHUFFLE, BITSHUFFLE and XOR filters, chosen once at run time from
//! the CPU's features.
//!
//! Six kernels — [`shuffle`], [`unshuffle`] (docs/FORMAT.md §5.15), [`bitshuffle_block`],
//! [`bitunshuffle_block`] (§5.14), [`xor_encode`] and [`xor_decode`] (§5.18) — exist at each
//! [`Level`]: portable [`scalar`] code, SSE2, AVX2 (x86 and x86-64) and AVX-512 (x86-64 only;
//! its byte shuffle and XOR kernels are the AVX2 ones, SSE2's XOR encoding the scalar loop,
//! which LLVM vectorises for the SSE2 baseline). Every
//! level produces exactly the bytes of the scalar code, for every element size and length;
//! the SIMD kernels fall back to narrower ones (and finally to scalar) for sizes and lengths
//! they do not handle.
//!
//! The best level the CPU supports is detected on first use (`is_x86_feature_detected!`) and
//! its [`Kernels`] table cached for the life of the process; the free functions here call
//! through that table. The environment variable `TDBFILTER_SIMD` (`scalar`, `sse2`, `avx2` or
//! `avx512`), read at that moment, caps the level — for benchmarking and for ruling out a SIMD
//! bug.
//!
//! The AVX-512 level needs Rust 1.89 (stable AVX-512 and GFNI intrinsics), this crate's MSRV.

#[cfg(target_arch = "x86_64")]
mod bitshuffle_avx512;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod bitshuffle_x86;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod byteshuffle_x86;
pub mod md5_lanes;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod prefetch_x86;
pub mod scalar;
pub mod sha256_lanes;
#[cfg(test)]
mod tests;
#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
mod xor_x86;

use crate::mem::OutBuf;
use std::mem::MaybeUninit;
use std::sync::OnceLock;

/// A kernel's destination: bytes that may not be initialised yet. Every kernel writes all of
/// them, and only initialised values; none reads a byte it has not written.
pub(crate) type Dst = [MaybeUninit<u8>];

/// A kernel as stored in a table: `(element size, source, destination)`, the slices of equal
/// length. `unsafe` because SIMD kernels require CPU features; a [`Kernels`] table exists only
/// for a level whose features were detected, which makes calling through it sound.
type RawKernel = unsafe fn(usize, &[u8], &mut Dst);

/// An instruction-set level of the kernels.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Level {
    /// Portable Rust, every target.
    Scalar,
    /// x86 SSE2 (always present on x86-64).
    Sse2,
    /// x86 AVX2 (with SSE2).
    Avx2,
    /// x86-64 AVX-512 F, BW, VL and VBMI with GFNI (and AVX2, SSE2).
    Avx512,
}

impl Level {
    /// Every level, narrowest first.
    pub const ALL: [Level; 4] = [Level::Scalar, Level::Sse2, Level::Avx2, Level::Avx512];

    /// The lower-case name (`"scalar"`, `"sse2"`, `"avx2"`, `"avx512"`), as accepted by
    /// `TDBFILTER_SIMD`.
    pub fn name(self) -> &'static str {
        match self {
            Level::Scalar => "scalar",
            Level::Sse2 => "sse2",
            Level::Avx2 => "avx2",
            Level::Avx512 => "avx512",
        }
    }

    /// The level named `name` (case-insensitive), if any.
    pub fn from_name(name: &str) -> Option<Level> {
        Level::ALL
            .into_iter()
            .find(|l| l.name().eq_ignore_ascii_case(name.trim()))
    }

    /// Whether this CPU (and target) supports the level.
    pub fn is_supported(self) -> bool {
        match self {
            Level::Scalar => true,
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Level::Sse2 => std::is_x86_feature_detected!("sse2"),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Level::Avx2 => {
                std::is_x86_feature_detected!("sse2") && std::is_x86_feature_detected!("avx2")
            }
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => {
                Level::Avx2.is_supported()
                    && std::is_x86_feature_detected!("avx512f")
                    && std::is_x86_feature_detected!("avx512bw")
                    && std::is_x86_feature_detected!("avx512vl")
                    && std::is_x86_feature_detected!("avx512vbmi")
                    && std::is_x86_feature_detected!("gfni")
            }
            #[cfg(not(target_arch = "x86_64"))]
            _ => false,
        }
    }
}

/// The kernels of one [`Level`]. Obtainable only for supported levels, through
/// [`Kernels::for_level`] and [`Kernels::best`].
#[derive(Debug)]
pub struct Kernels {
    level: Level,
    shuffle: RawKernel,
    unshuffle: RawKernel,
    bitshuffle: RawKernel,
    bitunshuffle: RawKernel,
    xor_encode: RawKernel,
    xor_decode: RawKernel,
}

static SCALAR: Kernels = Kernels {
    level: Level::Scalar,
    shuffle: scalar::shuffle_uninit,
    unshuffle: scalar::unshuffle_uninit,
    bitshuffle: scalar::bitshuffle_block_uninit,
    bitunshuffle: scalar::bitunshuffle_block_uninit,
    xor_encode: scalar::xor_encode_uninit,
    xor_decode: scalar::xor_decode_uninit,
};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
static SSE2: Kernels = Kernels {
    level: Level::Sse2,
    shuffle: byteshuffle_x86::shuffle_sse2,
    unshuffle: byteshuffle_x86::unshuffle_sse2,
    bitshuffle: bitshuffle_x86::bitshuffle_sse2,
    bitunshuffle: bitshuffle_x86::bitunshuffle_sse2,
    xor_encode: scalar::xor_encode_uninit,
    xor_decode: xor_x86::xor_decode_sse2,
};

#[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
static AVX2: Kernels = Kernels {
    level: Level::Avx2,
    shuffle: byteshuffle_x86::shuffle_avx2,
    unshuffle: byteshuffle_x86::unshuffle_avx2,
    bitshuffle: bitshuffle_x86::bitshuffle_avx2,
    bitunshuffle: bitshuffle_x86::bitunshuffle_avx2,
    xor_encode: xor_x86::xor_encode_avx2,
    xor_decode: xor_x86::xor_decode_avx2,
};

#[cfg(target_arch = "x86_64")]
static AVX512: Kernels = Kernels {
    level: Level::Avx512,
    shuffle: byteshuffle_x86::shuffle_avx2,
    unshuffle: byteshuffle_x86::unshuffle_avx2,
    bitshuffle: bitshuffle_avx512::bitshuffle_avx512,
    bitunshuffle: bitshuffle_avx512::bitunshuffle_avx512,
    xor_encode: xor_x86::xor_encode_avx2,
    xor_decode: xor_x86::xor_decode_avx2,
};

static BEST: OnceLock<&'static Kernels> = OnceLock::new();

impl Kernels {
    /// The kernels of `level`, or `None` when this CPU or target does not support it.
    pub fn for_level(level: Level) -> Option<&'static Kernels> {
        if !level.is_supported() {
            return None;
        }
        match level {
            Level::Scalar => Some(&SCALAR),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Level::Sse2 => Some(&SSE2),
            #[cfg(any(target_arch = "x86", target_arch = "x86_64"))]
            Level::Avx2 => Some(&AVX2),
            #[cfg(target_arch = "x86_64")]
            Level::Avx512 => Some(&AVX512),
            #[cfg(not(target_arch = "x86_64"))]
            _ => None,
        }
    }

    /// The widest supported level's kernels (capped by `TDBFILTER_SIMD`), detected once.
    pub fn best() -> &'static Kernels {
        BEST.get_or_init(|| {
            let cap = std::env::var("TDBFILTER_SIMD")
                .ok()
                .and_then(|v| Level::from_name(&v))
                .unwrap_or(Level::Avx512);
            Level::ALL
                .into_iter()
                .rev()
                .filter(|&l| l <= cap)
                .find_map(Kernels::for_level)
                .unwrap_or(&SCALAR)
        })
    }

    /// The level of these kernels.
    pub fn level(&self) -> Level {
        self.level
    }

    /// [`scalar::shuffle`] at this level.
    #[inline]
    pub fn shuffle(&self, t: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "kernel slices differ in length");
        self.shuffle_into(t, src, &mut OutBuf::from_init(dst));
    }

    /// [`scalar::unshuffle`] at this level.
    #[inline]
    pub fn unshuffle(&self, t: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "kernel slices differ in length");
        self.unshuffle_into(t, src, &mut OutBuf::from_init(dst));
    }

    /// [`scalar::bitshuffle_block`] at this level.
    #[inline]
    pub fn bitshuffle_block(&self, t: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "kernel slices differ in length");
        self.bitshuffle_block_into(t, src, &mut OutBuf::from_init(dst));
    }

    /// [`scalar::bitunshuffle_block`] at this level.
    #[inline]
    pub fn bitunshuffle_block(&self, t: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "kernel slices differ in length");
        self.bitunshuffle_block_into(t, src, &mut OutBuf::from_init(dst));
    }

    /// [`scalar::xor_encode`] at this level.
    #[inline]
    pub fn xor_encode(&self, s: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "kernel slices differ in length");
        self.xor_encode_into(s, src, &mut OutBuf::from_init(dst));
    }

    /// [`scalar::xor_decode`] at this level.
    #[inline]
    pub fn xor_decode(&self, s: usize, src: &[u8], dst: &mut [u8]) {
        assert_eq!(src.len(), dst.len(), "kernel slices differ in length");
        self.xor_decode_into(s, src, &mut OutBuf::from_init(dst));
    }

    /// [`Kernels::shuffle`] appending `src.len()` bytes to `dst`.
    #[inline]
    pub fn shuffle_into(&self, t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
        run(self.shuffle, t, src, dst)
    }

    /// [`Kernels::unshuffle`] appending `src.len()` bytes to `dst`.
    #[inline]
    pub fn unshuffle_into(&self, t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
        run(self.unshuffle, t, src, dst)
    }

    /// [`Kernels::bitshuffle_block`] appending `src.len()` bytes to `dst`.
    #[inline]
    pub fn bitshuffle_block_into(&self, t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
        run(self.bitshuffle, t, src, dst)
    }

    /// [`Kernels::bitunshuffle_block`] appending `src.len()` bytes to `dst`.
    #[inline]
    pub fn bitunshuffle_block_into(&self, t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
        run(self.bitunshuffle, t, src, dst)
    }

    /// [`Kernels::xor_encode`] appending `src.len()` bytes to `dst`.
    #[inline]
    pub fn xor_encode_into(&self, s: usize, src: &[u8], dst: &mut OutBuf<'_>) {
        run(self.xor_encode, s, src, dst)
    }

    /// [`Kernels::xor_decode`] appending `src.len()` bytes to `dst`.
    #[inline]
    pub fn xor_decode_into(&self, s: usize, src: &[u8], dst: &mut OutBuf<'_>) {
        run(self.xor_decode, s, src, dst)
    }
}

/// Runs `kernel` (of a [`Kernels`] table) on `src`, appending `src.len()` bytes to `dst`.
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()` (or as the kernel panics).
#[inline]
fn run(kernel: RawKernel, width: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    // SAFETY: kernels write only initialised bytes (the contract of `Dst`).
    let d = &mut unsafe { dst.spare_mut() }[..src.len()];
    // SAFETY: a `Kernels` value, the only source of `kernel`, exists only for a level whose
    // CPU features were detected (`for_level`), which is the whole contract of the kernel.
    unsafe { kernel(width, src, d) };
    // SAFETY: the kernel returned, so it wrote every byte of `d` (the contract of `Dst`).
    unsafe { dst.assume_written(src.len()) };
}

/// Byte shuffle with element size `t` at the best level ([`scalar::shuffle`] semantics).
///
/// # Panics
///
/// If `src` and `dst` differ in length.
#[inline]
pub fn shuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    Kernels::best().shuffle(t, src, dst)
}

/// [`shuffle`] appending `src.len()` bytes to `dst` (which may not be initialised).
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()`.
#[inline]
pub fn shuffle_into(t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    Kernels::best().shuffle_into(t, src, dst)
}

/// Reverses [`shuffle`], at the best level.
///
/// # Panics
///
/// If `src` and `dst` differ in length.
#[inline]
pub fn unshuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    Kernels::best().unshuffle(t, src, dst)
}

/// [`unshuffle`] appending `src.len()` bytes to `dst` (which may not be initialised).
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()`.
#[inline]
pub fn unshuffle_into(t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    Kernels::best().unshuffle_into(t, src, dst)
}

/// Bit transposition of one block at the best level ([`scalar::bitshuffle_block`] semantics).
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `t == 0`.
#[inline]
pub fn bitshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    Kernels::best().bitshuffle_block(t, src, dst)
}

/// [`bitshuffle_block`] appending `src.len()` bytes to `dst` (which may not be initialised).
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()`, or if `t == 0`.
#[inline]
pub fn bitshuffle_block_into(t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    Kernels::best().bitshuffle_block_into(t, src, dst)
}

/// Reverses [`bitshuffle_block`], at the best level.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `t == 0`.
#[inline]
pub fn bitunshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    Kernels::best().bitunshuffle_block(t, src, dst)
}

/// [`bitunshuffle_block`] appending `src.len()` bytes to `dst` (which may not be initialised).
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()`, or if `t == 0`.
#[inline]
pub fn bitunshuffle_block_into(t: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    Kernels::best().bitunshuffle_block_into(t, src, dst)
}

/// XOR encoding with element width `s` at the best level ([`scalar::xor_encode`] semantics).
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `s == 0`.
#[inline]
pub fn xor_encode(s: usize, src: &[u8], dst: &mut [u8]) {
    Kernels::best().xor_encode(s, src, dst)
}

/// [`xor_encode`] appending `src.len()` bytes to `dst` (which may not be initialised).
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()`, or if `s == 0`.
#[inline]
pub fn xor_encode_into(s: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    Kernels::best().xor_encode_into(s, src, dst)
}

/// Reverses [`xor_encode`] (a running XOR over elements), at the best level.
///
/// # Panics
///
/// If `src` and `dst` differ in length, or if `s == 0`.
#[inline]
pub fn xor_decode(s: usize, src: &[u8], dst: &mut [u8]) {
    Kernels::best().xor_decode(s, src, dst)
}

/// [`xor_decode`] appending `src.len()` bytes to `dst` (which may not be initialised).
///
/// # Panics
///
/// If `src` is longer than `dst.remaining()`, or if `s == 0`.
#[inline]
pub fn xor_decode_into(s: usize, src: &[u8], dst: &mut OutBuf<'_>) {
    Kernels::best().xor_decode_into(s, src, dst)
}
