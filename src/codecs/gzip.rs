//! GZIP (1): each part is one zlib stream (RFC 1950) (docs/FORMAT.md §5.3).
//!
//! Two writers: this crate's zlib-identical deflate (`codecs::deflate`), whose bytes equal
//! zlib 1.3.1's called as TileDB calls it — one `deflate(Z_FINISH)` — and so TileDB's (the
//! default; 1.5x zlib's speed at level 6), and libdeflate (`Pipeline::set_gzip_identical(false)`: 2-5x
//! faster, valid zlib streams TileDB's inflate reads, sometimes a few percent larger).
//! Reading uses libdeflate, which decodes any zlib stream and checks its Adler-32.

use crate::codecs::deflate::ZlibEncoder;
use crate::error::{Error, Result};
use crate::mem::OutBuf;
use crate::mem::codec_out::{InflateError, Inflater};
#[cfg(test)]
use flate2::{Compress, Compression, FlushCompress};
use flate2::{Decompress, FlushDecompress, Status};

/// Reusable deflate contexts of one thread.
#[derive(Default)]
pub struct GzipContexts {
    native: Option<Box<ZlibEncoder>>,
    #[cfg(test)]
    compress: Option<(u32, Compress)>,
    decompress: Option<Decompress>,
    fast: Option<(u32, libdeflater::Compressor)>,
    inflate: Option<Inflater>,
}

/// Maps a stored level to zlib's: below 0 → 6 (zlib's default), 0–9 as is, above 9 an error.
pub fn effective_level(level: i32) -> Result<u32> {
    match level {
        l if l < 0 => Ok(6),
        l @ 0..=9 => Ok(l as u32),
        l => Err(Error::invalid(format!("invalid compression level {l}"))),
    }
}

/// An output capacity zlib can never exceed for `n` input bytes (zlib's conservative
/// `deflateBound`, plus the zlib wrapper).
#[cfg(test)]
fn bound(n: usize) -> usize {
    let fixed = n + (n >> 3) + (n >> 8) + (n >> 9) + 4;
    let stored = n + (n >> 5) + (n >> 7) + (n >> 11) + 7;
    fixed.max(stored) + 6 + 64
}

/// Appends the zlib stream of `src` to `out`: zlib's exact bytes when `identical`, else
/// libdeflate's.
pub fn compress(
    ctxs: &mut GzipContexts,
    level: i32,
    identical: bool,
    src: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    if identical {
        compress_zlib(ctxs, level, src, out)
    } else {
        compress_fast(ctxs, level, src, out)
    }
}

fn compress_fast(ctxs: &mut GzipContexts, level: i32, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let level = effective_level(level)?;
    let c = match &mut ctxs.fast {
        Some((l, c)) if *l == level => c,
        slot => {
            let lvl = libdeflater::CompressionLvl::new(level as i32)
                .map_err(|_| Error::invalid(format!("invalid compression level {level}")))?;
            &mut slot.insert((level, libdeflater::Compressor::new(lvl))).1
        }
    };
    let start = out.len();
    out.resize(start + c.zlib_compress_bound(src.len()), 0);
    let n = c
        .zlib_compress(src, &mut out[start..])
        .map_err(|e| Error::Internal(format!("libdeflate failed: {e:?}")))?;
    out.truncate(start + n);
    Ok(())
}

fn compress_zlib(ctxs: &mut GzipContexts, level: i32, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let level = effective_level(level)?;
    ctxs.native
        .get_or_insert_with(|| Box::new(ZlibEncoder::new()))
        .compress(level, src, out);
    Ok(())
}

/// The C zlib 1.3.1 writer, the reference the tests hold the native writer to.
#[cfg(test)]
fn compress_zlib_c(
    ctxs: &mut GzipContexts,
    level: i32,
    src: &[u8],
    out: &mut Vec<u8>,
) -> Result<()> {
    let level = effective_level(level)?;
    let c = match &mut ctxs.compress {
        Some((l, c)) if *l == level => {
            c.reset();
            c
        }
        slot => {
            &mut slot
                .insert((level, Compress::new(Compression::new(level), true)))
                .1
        }
    };
    out.reserve(bound(src.len()));
    let before_in = c.total_in();
    let status = c
        .compress_vec(src, out, FlushCompress::Finish)
        .map_err(|e| Error::Internal(format!("deflate failed: {e}")))?;
    if status != Status::StreamEnd || (c.total_in() - before_in) as usize != src.len() {
        return Err(Error::Internal("deflate did not finish in one call".into()));
    }
    Ok(())
}

/// Inflates the zlib stream `src` into exactly `dst.len()` bytes.
pub fn decompress(ctxs: &mut GzipContexts, src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(ctxs, src, o))
}

/// Inflates the zlib stream `src` into exactly the unwritten rest of `dst` (which may not be
/// initialised: libdeflate writes it directly).
pub fn decompress_into(ctxs: &mut GzipContexts, src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let len = dst.remaining();
    let d = ctxs.inflate.get_or_insert_with(Inflater::new);
    let n = d.zlib_decompress(src, dst, len).map_err(|e| {
        Error::corrupt(match e {
            InflateError::InsufficientSpace => {
                format!("zlib stream holds more than the expected {len} bytes")
            }
            InflateError::BadData => "zlib stream is corrupt".to_string(),
        })
    })?;
    if n != len {
        return Err(Error::corrupt(format!(
            "zlib stream holds {n} bytes, expected {len}"
        )));
    }
    Ok(())
}

/// Inflates with zlib itself (the reference reader, used in tests).
pub fn decompress_zlib(ctxs: &mut GzipContexts, src: &[u8], dst: &mut [u8]) -> Result<()> {
    let d = ctxs.decompress.get_or_insert_with(|| Decompress::new(true));
    d.reset(true);
    let status = d
        .decompress(src, dst, FlushDecompress::Finish)
        .map_err(|e| Error::corrupt(format!("zlib stream is corrupt: {e}")))?;
    if status != Status::StreamEnd {
        return Err(Error::corrupt(format!(
            "zlib stream does not end within the expected {} bytes",
            dst.len()
        )));
    }
    if d.total_out() as usize != dst.len() {
        return Err(Error::corrupt(format!(
            "zlib stream holds {} bytes, expected {}",
            d.total_out(),
            dst.len()
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Round trip through both writers and both readers; returns zlib's (TileDB's) bytes.
    fn roundtrip(level: i32, data: &[u8]) -> Vec<u8> {
        let mut ctxs = GzipContexts::default();
        let mut exact = Vec::new();
        compress(&mut ctxs, level, true, data, &mut exact).unwrap();
        let mut c_zlib = Vec::new();
        compress_zlib_c(&mut ctxs, level, data, &mut c_zlib).unwrap();
        assert_eq!(exact, c_zlib, "the default writer's bytes are C zlib's");
        let mut fast = Vec::new();
        compress(&mut ctxs, level, false, data, &mut fast).unwrap();
        for z in [&exact, &fast] {
            let mut back = vec![0u8; data.len()];
            decompress(&mut ctxs, z, &mut back).unwrap();
            assert_eq!(back, data);
            let mut back = vec![0u8; data.len()];
            decompress_zlib(&mut ctxs, z, &mut back).unwrap();
            assert_eq!(
                back, data,
                "zlib (TileDB's reader) reads libdeflate's stream"
            );
        }
        exact
    }

    #[test]
    fn empty_input_is_the_8_byte_zlib_stream() {
        assert_eq!(
            roundtrip(-1, &[]),
            [0x78, 0x9c, 0x03, 0x00, 0x00, 0x00, 0x00, 0x01]
        );
        assert_eq!(roundtrip(1, &[]).len(), 8);
    }

    #[test]
    fn all_levels_round_trip_including_incompressible_input() {
        let noise: Vec<u8> = (0..70_000u32)
            .map(|i| (i.wrapping_mul(2654435761) >> 13) as u8)
            .collect();
        for level in -1..=9 {
            roundtrip(level, &noise);
            roundtrip(level, &[42u8; 100_000]);
            roundtrip(level, &[1]);
        }
        assert!(effective_level(10).is_err());
    }

    #[test]
    fn corrupt_and_short_streams_fail() {
        let mut ctxs = GzipContexts::default();
        let mut z = Vec::new();
        compress(&mut ctxs, 6, false, &[5u8; 1000], &mut z).unwrap();
        let mut out = vec![0u8; 999];
        assert!(decompress(&mut ctxs, &z, &mut out).is_err());
        let mut out = vec![0u8; 1001];
        assert!(decompress(&mut ctxs, &z, &mut out).is_err());
        let mut out = vec![0u8; 1000];
        assert!(decompress(&mut ctxs, &z[..z.len() - 3], &mut out).is_err());
        assert!(decompress(&mut ctxs, b"garbage!", &mut out).is_err());
    }
}
