//! `tdbf bench --bare-codec`: the pipeline's compressor alone (libzstd `ZSTD_compressCCtx` /
//! `ZSTD_decompressDCtx`, liblz4 `LZ4_compress_default` / `LZ4_decompress_safe`, zlib deflate /
//! inflate, libbzip2), on exactly the parts it compresses in the pipeline: the filters before
//! it run once, untimed, and every non-empty metadata and data part of every chunk they leave
//! is then compressed and decompressed on its own, as the compression filter does. The speeds
//! are the original tile bytes per second, so they compare directly with the pipeline's
//! (`bench/compare_tiledb.py` prints pipeline ÷ bare codec).

use crate::common::{CliResult, Failure};
use rayon::prelude::*;
use std::time::{Duration, Instant};
use tdbfilter::codecs::{bzip2::libbzip2 as tbz, gzip as tgz, zstd as tzs};
use tdbfilter::{Compressor, Filter, Pipeline, Tile, format::tile_format};

/// A compressor with its level mapped as the filter maps it.
#[derive(Debug, Clone, Copy)]
pub enum BareCodec {
    /// libzstd at this level.
    Zstd(i32),
    /// liblz4's default (fast) block compressor.
    Lz4,
    /// zlib (zlib format, as TileDB's GZIP writes) at this level.
    Gzip(u32),
    /// libbzip2 with this block size (100 KiB units).
    Bzip2(u32),
}

impl BareCodec {
    /// The codec of the pipeline's last filter, which must be ZSTD, LZ4, GZIP or BZIP2.
    pub fn of_pipeline(p: &Pipeline) -> CliResult<BareCodec> {
        let err =
            || Failure::new("--bare-codec needs a pipeline ending in zstd, lz4, gzip or bzip2");
        let Some(Filter::Compression(c)) = p.filters().last() else {
            return Err(err());
        };
        Ok(match c.compressor {
            Compressor::Zstd => BareCodec::Zstd(tzs::effective_level(c.level)),
            Compressor::Lz4 => BareCodec::Lz4,
            Compressor::Gzip => BareCodec::Gzip(tgz::effective_level(c.level)?),
            Compressor::Bzip2 => BareCodec::Bzip2(tbz::effective_level(c.level)?),
            _ => return Err(err()),
        })
    }

    /// Compresses `src` into `out` (cleared first).
    fn compress(self, ctx: &mut Contexts, src: &[u8], out: &mut Vec<u8>) -> CliResult<()> {
        out.clear();
        let fail = |what: String| Failure::new(format!("bare {self:?} compression: {what}"));
        match self {
            BareCodec::Zstd(level) => {
                out.reserve(zstd_safe::compress_bound(src.len()));
                ctx.cctx
                    .compress(out, src, level)
                    .map_err(|c| fail(zstd_safe::get_error_name(c).into()))?;
            }
            BareCodec::Lz4 => {
                out.resize(
                    lz4::block::compress_bound(src.len()).map_err(|e| fail(e.to_string()))?,
                    0,
                );
                let n = lz4::block::compress_to_buffer(src, None, false, out)
                    .map_err(|e| fail(e.to_string()))?;
                out.truncate(n);
            }
            BareCodec::Gzip(level) => {
                let c = ctx.deflate.get_or_insert_with(|| {
                    flate2::Compress::new(flate2::Compression::new(level), true)
                });
                c.reset();
                out.reserve(src.len() + src.len() / 1000 + 64);
                loop {
                    let st = c
                        .compress_vec(src, out, flate2::FlushCompress::Finish)
                        .map_err(|e| fail(e.to_string()))?;
                    if st == flate2::Status::StreamEnd {
                        break;
                    }
                    out.reserve(out.capacity().max(64));
                }
            }
            BareCodec::Bzip2(level) => {
                tbz::compress_libbzip2(level, src, out).map_err(|e| fail(e.to_string()))?;
            }
        }
        Ok(())
    }

    /// Decompresses `src` into exactly `dst.len()` bytes.
    fn decompress(
        self,
        ctx: &mut Contexts,
        src: &[u8],
        dst: &mut Vec<u8>,
        len: usize,
    ) -> CliResult<()> {
        let fail = |what: String| Failure::new(format!("bare {self:?} decompression: {what}"));
        dst.clear();
        let n = match self {
            BareCodec::Zstd(_) => {
                dst.reserve(len);
                ctx.dctx
                    .decompress(dst, src)
                    .map_err(|c| fail(zstd_safe::get_error_name(c).into()))?
            }
            BareCodec::Lz4 => {
                dst.resize(len, 0);
                lz4::block::decompress_to_buffer(src, Some(len as i32), dst)
                    .map_err(|e| fail(e.to_string()))?
            }
            BareCodec::Gzip(_) => {
                dst.reserve(len);
                let d = ctx
                    .inflate
                    .get_or_insert_with(|| flate2::Decompress::new(true));
                d.reset(true);
                d.decompress_vec(src, dst, flate2::FlushDecompress::Finish)
                    .map_err(|e| fail(e.to_string()))?;
                d.total_out() as usize
            }
            BareCodec::Bzip2(_) => {
                dst.reserve(len);
                let mut d = bzip2::Decompress::new(false);
                d.decompress_vec(src, dst)
                    .map_err(|e| fail(e.to_string()))?;
                d.total_out() as usize
            }
        };
        if n != len {
            return Err(fail(format!("{n} bytes, expected {len}")));
        }
        Ok(())
    }
}

/// A thread's codec contexts and buffers, reused across parts.
struct Contexts {
    cctx: zstd_safe::CCtx<'static>,
    dctx: zstd_safe::DCtx<'static>,
    deflate: Option<flate2::Compress>,
    inflate: Option<flate2::Decompress>,
    out: Vec<u8>,
}

impl Contexts {
    fn new() -> Contexts {
        Contexts {
            cctx: zstd_safe::CCtx::create(),
            dctx: zstd_safe::DCtx::create(),
            deflate: None,
            inflate: None,
            out: Vec::new(),
        }
    }
}

/// What [`measure`] timed.
pub struct BareTimes {
    /// Total compressed bytes of all parts.
    pub compressed_bytes: u64,
    /// Timed compression runs.
    pub compress: Vec<Duration>,
    /// Timed decompression runs.
    pub decompress: Vec<Duration>,
}

/// The parts the pipeline's compressor receives for every chunk of every tile: the filters
/// before it (`prefix`) run untimed.
fn codec_inputs(prefix: &Pipeline, tiles: &[Tile]) -> CliResult<Vec<Vec<u8>>> {
    let mut parts = Vec::new();
    for t in tiles {
        let filtered = prefix.filter_tile(t)?;
        let table = tile_format::parse(&filtered)?;
        for c in &table.chunks {
            for p in [c.metadata, c.data] {
                if !p.is_empty() {
                    parts.push(p.to_vec());
                }
            }
        }
    }
    Ok(parts)
}

/// Times `codec` alone on the compressor's inputs of `pipeline` (one untimed, verified
/// warm-up, then `repeat` runs), on `threads` threads (parts spread over them).
pub fn measure(
    pipeline: &Pipeline,
    codec: BareCodec,
    tiles: &[Tile],
    threads: usize,
    repeat: u32,
) -> CliResult<BareTimes> {
    let mut prefix = Pipeline::new();
    let filters = pipeline.filters();
    for f in &filters[..filters.len() - 1] {
        prefix.push(*f)?;
    }
    let inputs = codec_inputs(&prefix, tiles)?;
    let pool = rayon::ThreadPoolBuilder::new()
        .num_threads(threads.max(1))
        .build()
        .map_err(|e| Failure::new(format!("cannot start {threads} threads: {e}")))?;
    // Warm-up: keep the compressed parts, check that each decompresses to its input.
    let compressed: Vec<Vec<u8>> = pool.install(|| {
        inputs
            .par_iter()
            .map_init(Contexts::new, |ctx, src| {
                let mut out = Vec::new();
                codec.compress(ctx, src, &mut out)?;
                let mut back = std::mem::take(&mut ctx.out);
                codec.decompress(ctx, &out, &mut back, src.len())?;
                if back != *src {
                    return Err(Failure::new(format!("bare {codec:?}: round trip differs")));
                }
                ctx.out = back;
                Ok(out)
            })
            .collect::<CliResult<_>>()
    })?;
    let compressed_bytes = compressed.iter().map(|c| c.len() as u64).sum();
    let run = |f: &(dyn Fn(&mut Contexts, usize) -> CliResult<()> + Sync)| -> CliResult<Duration> {
        let t0 = Instant::now();
        pool.install(|| {
            (0..inputs.len())
                .into_par_iter()
                .try_for_each_init(Contexts::new, |ctx, i| f(ctx, i))
        })?;
        Ok(t0.elapsed())
    };
    let mut times = BareTimes {
        compressed_bytes,
        compress: Vec::new(),
        decompress: Vec::new(),
    };
    for _ in 0..repeat {
        times.compress.push(run(&|ctx, i| {
            let mut out = std::mem::take(&mut ctx.out);
            codec.compress(ctx, &inputs[i], &mut out)?;
            ctx.out = out;
            Ok(())
        })?);
        times.decompress.push(run(&|ctx, i| {
            let mut out = std::mem::take(&mut ctx.out);
            codec.decompress(ctx, &compressed[i], &mut out, inputs[i].len())?;
            ctx.out = out;
            Ok(())
        })?);
    }
    Ok(times)
}
