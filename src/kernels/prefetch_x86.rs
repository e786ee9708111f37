//! Software prefetch for kernels that stream a source from memory.
//!
//! The shuffle kernels read their source in an order the hardware prefetchers follow poorly:
//! the byte shuffle consumes it faster than they ramp up, and the bit transposes read 8 rows
//! at a time, a few hundred bytes apart. Each step of those kernels asks for the lines it
//! reads, a fixed distance ahead, to be brought into L2 (not L1: a shuffle's source,
//! destination and scratch already fill most of L1, and fetching into it slowed the
//! 8-byte bit transpose down). A burst of prefetches stalls the loads behind it, so the
//! steps spread them over their work.
//!
//! Measured by `bench/compare_tiledb.py` (64 MiB per data set, 1 MiB tiles, one thread) on the
//! 2-core EPYC with AVX-512 this project benchmarks on, before → after, MiB/s: BYTESHUFFLE
//! filtering of int32 9014 → 18106, of int64 9891 → 12392; BITSHUFFLE unfiltering of int32
//! 6972 → 12943, filtering of float64 8036 → 11423.

#[cfg(target_arch = "x86")]
use std::arch::x86::{_MM_HINT_T1, _mm_prefetch};
#[cfg(target_arch = "x86_64")]
use std::arch::x86_64::{_MM_HINT_T1, _mm_prefetch};

/// Asks for the cache line holding `p + ahead` to be fetched into L2.
///
/// `p + ahead` may point anywhere, past the end of the source included (it is computed with
/// wrapping arithmetic and never dereferenced by the program).
#[inline(always)]
pub(super) fn prefetch_l2(p: *const u8, ahead: usize) {
    // SAFETY: a prefetch is a hint with no architectural effect: it never faults and reads
    // nothing into the program, whatever the address. Its instruction is SSE's, and only
    // AVX2 and AVX-512 kernels call this, which run only where those (and so SSE) exist.
    unsafe { _mm_prefetch::<_MM_HINT_T1>(p.wrapping_add(ahead).cast()) };
}
