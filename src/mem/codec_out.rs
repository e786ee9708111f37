//! C decoders writing straight into the unwritten bytes of an [`OutBuf`], through the raw
//! pointer and capacity their C APIs take: zstd (through `zstd_safe`'s `WriteBuf`), LZ4
//! (`LZ4_decompress_safe`) and libdeflate (`libdeflate_zlib_decompress`). Their safe Rust
//! wrappers take `&mut [u8]`, which must not be formed over uninitialised memory; these
//! adapters skip the zero-fill such a slice would need, 2–6% of unfilter on the codec rows
//! (bench/results/ab_uninit-2026-11-26.txt, table 3).
//!
//! Each decoder writes only inside the capacity it is given, and reports how many bytes it
//! produced from the start; only those are counted as written.

use super::OutBuf;
use std::ptr::NonNull;

/// A `zstd_safe::WriteBuf` over the unwritten rest of an [`OutBuf`], advancing it by what
/// zstd reports written.
struct ZstdSpare<'o, 'a> {
    out: &'o mut OutBuf<'a>,
    /// `out.filled()` when the adapter was made: the start of the container.
    start: usize,
    /// The container's first byte (the first unwritten byte of `out` at `start`).
    ptr: *mut u8,
    capacity: usize,
}

impl<'o, 'a> ZstdSpare<'o, 'a> {
    fn new(out: &'o mut OutBuf<'a>) -> Self {
        let start = out.filled();
        // SAFETY: the pointer is handed to zstd, which writes only decompressed (initialised)
        // bytes through it.
        let spare = unsafe { out.spare_mut() };
        let (ptr, capacity) = (spare.as_mut_ptr().cast::<u8>(), spare.len());
        ZstdSpare {
            out,
            start,
            ptr,
            capacity,
        }
    }
}

// SAFETY: `as_slice` covers only bytes zstd reported written (counted into `out` by
// `filled_until`); `capacity` and `as_mut_ptr` describe the unwritten rest of `out` as it was
// when the adapter was made, which the exclusive borrow of `out` keeps valid and unaliased.
unsafe impl zstd_safe::WriteBuf for ZstdSpare<'_, '_> {
    fn as_slice(&self) -> &[u8] {
        &self.out.written()[self.start..]
    }

    fn capacity(&self) -> usize {
        self.capacity
    }

    fn as_mut_ptr(&mut self) -> *mut u8 {
        self.ptr
    }

    unsafe fn filled_until(&mut self, n: usize) {
        let already = self.out.filled() - self.start;
        if n > already {
            // SAFETY: zstd wrote the container's first `n` bytes (this method's contract),
            // `already` of which were counted before.
            unsafe { self.out.assume_written(n - already) };
        }
    }
}

/// Decompresses the zstd frame `src` into the unwritten rest of `out` (at most its
/// [`remaining`](OutBuf::remaining) bytes); returns the bytes written, which are counted as
/// written in `out`.
pub fn zstd_decompress(
    dctx: &mut zstd_safe::DCtx<'_>,
    src: &[u8],
    out: &mut OutBuf<'_>,
) -> Result<usize, zstd_safe::ErrorCode> {
    dctx.decompress(&mut ZstdSpare::new(out), src)
}

/// Decodes the LZ4 block `src` into the next `len` bytes of `out` (LZ4 writes at most that
/// many); returns the bytes written, counted as written in `out`, or `None` for a corrupt
/// block.
///
/// # Panics
///
/// If `len` exceeds `out.remaining()`, or `src.len()` or `len` exceeds `i32::MAX`.
pub fn lz4_decompress(src: &[u8], out: &mut OutBuf<'_>, len: usize) -> Option<usize> {
    let src_len = i32::try_from(src.len()).expect("LZ4 input of 2 GiB or more");
    let cap = i32::try_from(len).expect("LZ4 output of 2 GiB or more");
    // SAFETY: LZ4 writes only decompressed (initialised) bytes.
    let dst = &mut unsafe { out.spare_mut() }[..len];
    // SAFETY: `src` holds `src_len` readable bytes and `dst` `cap` writable ones, not
    // overlapping (`dst` is borrowed exclusively). LZ4_decompress_safe never reads past
    // `src_len` nor writes past `cap`, whatever the input, and returns the count of bytes it
    // produced from `dst`'s start, or a negative value on malformed input.
    let n = unsafe {
        lz4::liblz4::LZ4_decompress_safe(src.as_ptr().cast(), dst.as_mut_ptr().cast(), src_len, cap)
    };
    let n = usize::try_from(n).ok()?;
    // SAFETY: LZ4 wrote the first `n ≤ len` bytes of `dst`, the start of `out`'s unwritten rest.
    unsafe { out.assume_written(n) };
    Some(n)
}

/// Why [`Inflater::zlib_decompress`] failed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum InflateError {
    /// The stream is not a valid zlib stream (or its Adler-32 does not match).
    BadData,
    /// The stream holds more bytes than the output has room for.
    InsufficientSpace,
}

/// A libdeflate decompressor (reusable, one thread at a time).
pub struct Inflater(NonNull<libdeflate_sys::libdeflate_decompressor>);

// SAFETY: a libdeflate decompressor is plain heap state with no thread affinity; `&mut self`
// on every use keeps it to one thread at a time.
unsafe impl Send for Inflater {}

impl Inflater {
    /// A new decompressor.
    ///
    /// # Panics
    ///
    /// If libdeflate cannot allocate it.
    pub fn new() -> Inflater {
        // SAFETY: no preconditions; a null result (out of memory) is checked.
        let p = unsafe { libdeflate_sys::libdeflate_alloc_decompressor() };
        Inflater(NonNull::new(p).expect("libdeflate could not allocate a decompressor"))
    }

    /// Inflates the zlib stream `src` into the next `len` bytes of `out`; returns the bytes
    /// written, counted as written in `out`.
    ///
    /// # Panics
    ///
    /// If `len` exceeds `out.remaining()`.
    pub fn zlib_decompress(
        &mut self,
        src: &[u8],
        out: &mut OutBuf<'_>,
        len: usize,
    ) -> Result<usize, InflateError> {
        // SAFETY: libdeflate writes only decompressed (initialised) bytes.
        let dst = &mut unsafe { out.spare_mut() }[..len];
        let mut n = 0usize;
        // SAFETY: the decompressor is live and used by this thread only (`&mut self`); `src`
        // holds `src.len()` readable bytes and `dst` `len` writable ones, not overlapping.
        // libdeflate never writes past `len` bytes of `dst`, whatever the input; on success
        // it stores in `n` how many bytes it produced from `dst`'s start.
        let r = unsafe {
            libdeflate_sys::libdeflate_zlib_decompress(
                self.0.as_ptr(),
                src.as_ptr().cast(),
                src.len(),
                dst.as_mut_ptr().cast(),
                len,
                &mut n,
            )
        };
        match r {
            libdeflate_sys::libdeflate_result_LIBDEFLATE_SUCCESS => {
                // SAFETY: libdeflate wrote the first `n ≤ len` bytes of `dst`, the start of
                // `out`'s unwritten rest.
                unsafe { out.assume_written(n) };
                Ok(n)
            }
            libdeflate_sys::libdeflate_result_LIBDEFLATE_INSUFFICIENT_SPACE => {
                Err(InflateError::InsufficientSpace)
            }
            _ => Err(InflateError::BadData),
        }
    }
}

impl Default for Inflater {
    fn default() -> Self {
        Inflater::new()
    }
}

impl Drop for Inflater {
    fn drop(&mut self) {
        // SAFETY: the decompressor was allocated by libdeflate and is freed once, here.
        unsafe { libdeflate_sys::libdeflate_free_decompressor(self.0.as_ptr()) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mem::{Unfilled, fill_range};

    #[test]
    fn zstd_lz4_and_zlib_write_the_unwritten_rest() {
        let data: Vec<u8> = (0..70_000u32).map(|i| (i / 7 % 251) as u8).collect();
        let mut zbuf = Vec::with_capacity(zstd_safe::compress_bound(data.len()));
        zstd_safe::compress(&mut zbuf, &data, 3).unwrap();
        let l = lz4::block::compress(&data, None, false).unwrap();
        let mut c = libdeflater::Compressor::new(libdeflater::CompressionLvl::default());
        let mut g = vec![0u8; c.zlib_compress_bound(data.len())];
        let gn = c.zlib_compress(&data, &mut g).unwrap();
        g.truncate(gn);

        let mut dctx = zstd_safe::DCtx::create();
        let mut inflater = Inflater::new();
        let mut v = b"head".to_vec();
        let total = 3 * data.len();
        fill_range::<_, Unfilled>(&mut v, 4, total, |o| {
            assert_eq!(zstd_decompress(&mut dctx, &zbuf, o), Ok(data.len()));
            assert_eq!(lz4_decompress(&l, o, data.len()), Some(data.len()));
            assert_eq!(inflater.zlib_decompress(&g, o, data.len()), Ok(data.len()));
            Ok(())
        })
        .unwrap();
        assert_eq!(&v[..4], b"head");
        for k in 0..3 {
            assert!(v[4 + k * data.len()..][..data.len()] == data[..]);
        }

        // Too little room, and corrupt input: errors, nothing counted.
        let mut small = vec![0u8; data.len() - 1];
        let mut o = OutBuf::from_init(&mut small);
        assert!(zstd_decompress(&mut dctx, &zbuf, &mut o).is_err());
        assert_eq!(lz4_decompress(&l, &mut o, data.len() - 1), None);
        assert_eq!(
            inflater.zlib_decompress(&g, &mut o, data.len() - 1),
            Err(InflateError::InsufficientSpace)
        );
        assert_eq!(
            inflater.zlib_decompress(&g[..g.len() / 2], &mut o, data.len() - 1),
            Err(InflateError::BadData)
        );
        assert_eq!(o.filled(), 0);
    }
}
