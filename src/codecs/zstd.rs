//! ZSTD (2): each part is one zstd frame made by `ZSTD_compressCCtx` of libzstd 1.5.7,
//! the library TileDB 2.30 ships, so the bytes match (docs/FORMAT.md §5.4).

use crate::error::{Error, Result};
use crate::mem::{OutBuf, codec_out};
use zstd_safe::{CCtx, DCtx};

/// Reusable zstd contexts of one thread.
#[derive(Default)]
pub struct ZstdContexts {
    cctx: Option<CCtx<'static>>,
    dctx: Option<DCtx<'static>>,
}

/// Maps a stored level as TileDB does: below −7 → 3, otherwise unchanged (−1 stays zstd's −1).
pub fn effective_level(level: i32) -> i32 {
    if level < -7 { 3 } else { level }
}

/// Appends the zstd frame of `src` to `out`.
pub fn compress(ctxs: &mut ZstdContexts, level: i32, src: &[u8], out: &mut Vec<u8>) -> Result<()> {
    let cctx = ctxs.cctx.get_or_insert_with(CCtx::create);
    let start = out.len();
    out.reserve(zstd_safe::compress_bound(src.len()));
    // zstd writes into the spare capacity after `start` (no zero-filling first).
    let mut cursor = std::io::Cursor::new(&mut *out);
    cursor.set_position(start as u64);
    let result = cctx.compress(&mut cursor, src, effective_level(level));
    let n = result.map_err(|code| {
        out.truncate(start);
        Error::Internal(format!(
            "zstd compression failed: {}",
            zstd_safe::get_error_name(code)
        ))
    })?;
    debug_assert_eq!(out.len(), start + n);
    Ok(())
}

/// The content size a zstd frame's header records, if it records one (TileDB's writer does).
pub fn frame_content_size(frame: &[u8]) -> Option<u64> {
    zstd_safe::get_frame_content_size(frame).ok().flatten()
}

/// Decompresses the zstd frame `src` into exactly `dst.len()` bytes.
pub fn decompress(ctxs: &mut ZstdContexts, src: &[u8], dst: &mut [u8]) -> Result<()> {
    OutBuf::over(dst, |o| decompress_into(ctxs, src, o))
}

/// Decompresses one zstd frame into exactly the unwritten rest of `dst` (which may not be
/// initialised: zstd writes it directly).
pub fn decompress_into(ctxs: &mut ZstdContexts, src: &[u8], dst: &mut OutBuf<'_>) -> Result<()> {
    let len = dst.remaining();
    let dctx = ctxs.dctx.get_or_insert_with(DCtx::create);
    let n = codec_out::zstd_decompress(dctx, src, dst).map_err(|code| {
        Error::corrupt(format!(
            "compressed data is corrupt: {}",
            zstd_safe::get_error_name(code)
        ))
    })?;
    if n != len {
        return Err(Error::corrupt(format!(
            "zstd frame holds {n} bytes, expected {len}"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_map_like_tiledb() {
        assert_eq!(effective_level(-1), -1);
        assert_eq!(effective_level(-7), -7);
        assert_eq!(effective_level(-8), 3);
        assert_eq!(effective_level(19), 19);
    }

    #[test]
    fn round_trips_and_rejects_corruption() {
        let mut ctxs = ZstdContexts::default();
        let data: Vec<u8> = (0..100_000u32).map(|i| (i / 100) as u8).collect();
        for level in [-8, -7, -1, 0, 1, 3, 19, 22, 100] {
            for input in [&data[..], &[], &[9]] {
                let mut z = vec![0xAA];
                compress(&mut ctxs, level, input, &mut z).unwrap();
                assert_eq!(z[0], 0xAA, "compress must append");
                let mut back = vec![0u8; input.len()];
                decompress(&mut ctxs, &z[1..], &mut back).unwrap();
                assert_eq!(back, input);
            }
        }
        let mut z = Vec::new();
        compress(&mut ctxs, 3, &data, &mut z).unwrap();
        let mut back = vec![0u8; data.len() - 1];
        assert!(decompress(&mut ctxs, &z, &mut back).is_err());
        let mut back = vec![0u8; data.len() + 1];
        assert!(decompress(&mut ctxs, &z, &mut back).is_err());
        let mut back = vec![0u8; data.len()];
        assert!(decompress(&mut ctxs, &z[..z.len() / 2], &mut back).is_err());
    }
}
