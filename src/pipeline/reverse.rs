//! Reverse (read) execution: parse and validate the chunk table, then run every chunk's
//! stages from last to first, the first stage writing straight into the chunk's window of
//! the output tile (§4.7). Chunks are independent and run in parallel. (§: docs/FORMAT.md.)

use super::ChunkSettings;
use super::forward::OUTER_DIGEST_GROUP;
use super::outer_digest;
use crate::engine::stage::{DataFlow, DataSink, MdFlow, RevIn, RevOut, StageCtx};
use crate::engine::thread_scratch::{ThreadScratch, with_scratch};
use crate::engine::threads;
use crate::error::{Error, Result};
use crate::filters;
use crate::filters::config::Filter;
use crate::format::tile_format::{self, ChunkRef};
use crate::mem::{self, OutBuf};

/// Unfilters one chunk into `window` (exactly its original length, not written yet, possibly
/// not initialised), writing all of it. With `offsets`, the first filter rebuilds the var-size
/// offsets from the data (§5.8). `outer_verified`: the last filter is a checksum whose digests
/// were already verified.
pub(crate) fn unfilter_chunk(
    s: &ChunkSettings<'_>,
    chunk: &ChunkRef<'_>,
    window: &mut OutBuf<'_>,
    mut offsets: Option<&mut Vec<u64>>,
    outer_verified: bool,
    scratch: &mut ThreadScratch,
) -> Result<()> {
    let n = s.filters.len();
    if n == 0 {
        if offsets.is_some() {
            return Err(Error::Internal("offsets rebuilt without a filter".into()));
        }
        check_no_metadata_left(chunk.metadata.len())?;
        return copy_into_window(chunk.data, window);
    }
    // limits[k]: the most bytes reverse stage k may produce (the forward input of stage k).
    let mut limits = [0usize; 32];
    let mut limits_vec;
    let limits: &mut [usize] = if n <= 32 {
        &mut limits[..n]
    } else {
        limits_vec = vec![0usize; n];
        &mut limits_vec
    };
    limits[0] = window.remaining();
    for k in 1..n {
        limits[k] = filters::forward_bound(&s.filters[k - 1], limits[k - 1]);
    }
    let ThreadScratch {
        codecs,
        rev_md,
        rev_data,
        ..
    } = scratch;
    let mut md_at: Option<usize> = None;
    let mut md_off = 0usize;
    let mut data_at: Option<usize> = None;
    for k in (0..n).rev() {
        let filter = &s.filters[k];
        let w_md = usize::from(md_at == Some(0));
        let w_data = usize::from(data_at == Some(0));
        let [m0, m1] = &mut *rev_md;
        let (md_read, md_write) = if w_md == 0 { (&*m1, m0) } else { (&*m0, m1) };
        let [d0, d1] = &mut *rev_data;
        let (data_read, data_write) = if w_data == 0 { (&*d1, d0) } else { (&*d0, d1) };
        let md = match md_at {
            None => &chunk.metadata[md_off..],
            Some(_) => &md_read[md_off..],
        };
        let data = match data_at {
            None => chunk.data,
            Some(_) => data_read.as_slice(),
        };
        let sink = if k == 0 {
            DataSink::Window(window.rest())
        } else {
            DataSink::Scratch {
                buf: data_write,
                limit: limits[k],
            }
        };
        let mut ctx = StageCtx {
            datatype: s.types[k],
            cell_size: s.cell_size,
            version: s.version,
            skip_checksum_validation: s.skip_checksum_validation || (outer_verified && k + 1 == n),
            codecs,
            offsets: None,
            cipher: s.cipher,
            gzip_identical: s.gzip_identical,
            defer_digests: false,
        };
        let (md_flow, data_flow) = filters::reverse(
            filter,
            &mut ctx,
            RevIn { md, data },
            RevOut {
                md: md_write,
                data: sink,
                offsets: if k == 0 { offsets.take() } else { None },
            },
        )
        .map_err(|e| e.context(filter.name()))?;
        if k == 0 {
            // The first stage's input had no metadata, so nothing may be left over (a tile
            // encrypted by a filter this pipeline lacks, for example).
            let left = match md_flow {
                MdFlow::Rest(used) => md.len() - used,
                MdFlow::Written => md_write.len(),
            };
            check_no_metadata_left(left)?;
            if data_flow == DataFlow::Forwarded {
                copy_into_window(data, window).map_err(|e| e.context(filter.name()))?;
            } else if !window.is_full() {
                return Err(Error::Internal(format!(
                    "{} wrote {} of the chunk's {} bytes",
                    filter.name(),
                    window.filled(),
                    window.len()
                )));
            }
            break;
        }
        match md_flow {
            MdFlow::Rest(used) => md_off += used,
            MdFlow::Written => {
                md_at = Some(w_md);
                md_off = 0;
            }
        }
        if data_flow == DataFlow::Written {
            data_at = Some(w_data);
        }
    }
    Ok(())
}

fn check_no_metadata_left(left: usize) -> Result<()> {
    if left != 0 {
        return Err(Error::corrupt(format!(
            "{left} bytes of chunk metadata belong to no filter of this pipeline \
             (was the tile written with other filters, or encrypted?)"
        )));
    }
    Ok(())
}

fn copy_into_window(data: &[u8], window: &mut OutBuf<'_>) -> Result<()> {
    if window.filled() != 0 {
        return Err(Error::Internal(format!(
            "a filter forwarded its data after writing {} bytes of the chunk",
            window.filled()
        )));
    }
    if data.len() != window.len() {
        return Err(Error::corrupt(format!(
            "chunk data is {} bytes but its original length is {}",
            data.len(),
            window.len()
        )));
    }
    window.put(data);
    Ok(())
}

/// Parses and validates a whole filtered tile (which must span all of `filtered`); returns
/// the chunk table and the unfiltered size.
pub(crate) fn parse_tile<'a>(
    s: &ChunkSettings<'_>,
    filtered: &'a [u8],
) -> Result<(Vec<ChunkRef<'a>>, usize)> {
    let table = tile_format::parse(filtered)?;
    if table.tile_size != filtered.len() {
        return Err(Error::corrupt(format!(
            "{} bytes follow the {}-byte filtered tile",
            filtered.len() - table.tile_size,
            table.tile_size
        )));
    }
    let ratio = filters::reverse_max_ratio_of(s.filters);
    for (i, c) in table.chunks.iter().enumerate() {
        let stored = (c.metadata.len() + c.data.len()) as u64;
        if c.original_length as u64 > stored.saturating_mul(ratio).saturating_add(64) {
            return Err(Error::corrupt(format!(
                "chunk {i}: original length {} is impossible for {stored} filtered bytes",
                c.original_length
            )));
        }
        check_outer_parts(s, c).map_err(|e| e.context(format!("chunk {i}")))?;
    }
    let total = usize::try_from(table.unfiltered_size)
        .map_err(|_| Error::corrupt("unfiltered tile size overflows"))?;
    Ok((table.chunks, total))
}

/// Checks a chunk's original length against the part table of its outermost stage when that
/// is a general-purpose compressor, before the tile's output is allocated: the parts must be
/// possible for their compressed sizes, and the stages inside must be able to turn the parts'
/// bytes into the original length (exactly that length when the compressor is the only
/// filter). Catches damaged chunk headers that would otherwise reserve gigabytes.
fn check_outer_parts(s: &ChunkSettings<'_>, c: &ChunkRef<'_>) -> Result<()> {
    let Some((Filter::Compression(opts), inner)) = s.filters.split_last() else {
        return Ok(());
    };
    use crate::format::filter_type::Compressor::*;
    if s.rebuild_offsets
        || !matches!(
            opts.compressor,
            Gzip | Zstd | Lz4 | Bzip2 | Delta | DoubleDelta
        )
    {
        return Ok(());
    }
    let name = s.filters.last().map_or("", |f| f.name());
    let parts = filters::compression::PartTable::read(opts, c.metadata, c.data)
        .map_err(|e| e.context(name))?;
    let restored = parts.data_total() as u64;
    let original = u64::from(c.original_length);
    let possible = inner
        .iter()
        .map(filters::reverse_max_ratio)
        .fold(restored, |a, r| a.saturating_mul(r))
        .saturating_add(if inner.is_empty() { 0 } else { 64 });
    if original > possible || (inner.is_empty() && original != restored) {
        return Err(Error::corrupt(format!(
            "original length {original} cannot come from the {restored} bytes {name}'s parts hold"
        )));
    }
    Ok(())
}

/// Unfilters parsed chunks into `out` (exactly the unfiltered size, not written yet, possibly
/// not initialised), writing all of it. On the var-string path also returns the offsets the
/// first filter rebuilt.
pub(crate) fn unfilter_chunks_into(
    s: &ChunkSettings<'_>,
    chunks: &[ChunkRef<'_>],
    threads: usize,
    out: &mut OutBuf<'_>,
) -> Result<Option<Vec<u64>>> {
    if s.rebuild_offsets {
        // TileDB writes these tiles as one chunk (chunking is disabled on this path).
        if chunks.len() != 1 {
            return Err(Error::corrupt(format!(
                "a string tile with offsets folded into the data has {} chunks, not 1",
                chunks.len()
            )));
        }
        let mut offsets = Vec::new();
        with_scratch(|scratch| {
            unfilter_chunk(s, &chunks[0], out, Some(&mut offsets), false, scratch)
        })
        .map_err(|e| e.context("chunk 0"))?;
        return Ok(Some(offsets));
    }
    // The chunks' windows tile `out` (`total` is the sum of their original lengths,
    // tile_format::parse); each is written completely by `unfilter_chunk` or an error returned.
    let lens = chunks.iter().map(|c| c.original_length as usize);
    out.split(lens, |windows| {
        unfilter_windows(s, chunks, 0, threads, windows)
    })?;
    Ok(None)
}

/// Unfilters the chunks `wanted` flags (one flag per chunk) into their windows of `out`
/// (exactly the unfiltered size, not written yet, possibly not initialised) and zero-fills
/// the windows of the others, so all of `out` is written; returns the bytes unfiltered.
/// Every filter reverses a chunk from that chunk's own metadata and data alone (§4.7:
/// compressors, shuffles, deltas, dictionaries, encryption and checksums keep their
/// metadata per chunk), so any subset of chunks unfilters to the bytes the whole tile has
/// there; a checksum filter verifies only the chunks unfiltered. Not for tiles whose
/// offsets are folded into the data.
pub(crate) fn unfilter_some_chunks_into(
    s: &ChunkSettings<'_>,
    chunks: &[ChunkRef<'_>],
    wanted: &[bool],
    threads: usize,
    out: &mut OutBuf<'_>,
) -> Result<usize> {
    if s.rebuild_offsets || wanted.len() != chunks.len() {
        return Err(Error::Internal(format!(
            "a chunk subset of {} flags for {} chunks{}",
            wanted.len(),
            chunks.len(),
            if s.rebuild_offsets {
                " of a tile with folded offsets"
            } else {
                ""
            }
        )));
    }
    let lens = chunks.iter().map(|c| c.original_length as usize);
    out.split(lens, |windows| {
        let mut unfiltered = 0;
        let mut k = 0;
        while k < chunks.len() {
            if !wanted[k] {
                let n = windows[k].remaining();
                windows[k].fill(0, n);
                k += 1;
                continue;
            }
            // A run of wanted chunks, unfiltered as a tile of its own would be.
            let a = k;
            while k < chunks.len() && wanted[k] {
                unfiltered += chunks[k].original_length as usize;
                k += 1;
            }
            unfilter_windows(s, &chunks[a..k], a, threads, &mut windows[a..k])?;
        }
        Ok(unfiltered)
    })
}

/// Unfilters each chunk into its window, in groups over `threads` threads; `base` is the
/// index of the first chunk in its tile (for messages).
fn unfilter_windows(
    s: &ChunkSettings<'_>,
    chunks: &[ChunkRef<'_>],
    base: usize,
    threads: usize,
    windows: &mut [OutBuf<'_>],
) -> Result<()> {
    // With a checksum as the last filter, groups of chunks verify their digests together
    // (multi-message kernels) before being unfiltered.
    let outer = match s.skip_checksum_validation {
        true => None,
        false => outer_digest::outer_kind(s),
    };
    let outer_name = s.filters.last().map_or("", |f| f.name());
    let per_group = match outer {
        None if threads > 1 => 1,
        _ if threads <= 1 => chunks.len().max(1),
        _ => OUTER_DIGEST_GROUP
            .min(chunks.len().div_ceil(threads))
            .max(1),
    };
    let run = |(g, (group, windows)): (usize, (&[ChunkRef<'_>], &mut [OutBuf<'_>]))| {
        let first = base + g * per_group;
        let verified = match outer {
            Some(kind) => outer_digest::verify(kind, outer_name, group, first)?,
            None => Vec::new(),
        };
        with_scratch(|scratch| {
            for (i, (chunk, window)) in group.iter().zip(windows.iter_mut()).enumerate() {
                let checked = verified.get(i).copied().unwrap_or(false);
                unfilter_chunk(s, chunk, window, None, checked, scratch)
                    .map_err(|e| e.context(format!("chunk {}", first + i)))?;
            }
            Ok(())
        })
    };
    if threads <= 1 || chunks.len() <= 1 {
        chunks
            .chunks(per_group)
            .zip(windows.chunks_mut(per_group))
            .enumerate()
            .try_for_each(run)?;
    } else {
        let mut groups: Vec<&mut [OutBuf<'_>]> = windows.chunks_mut(per_group).collect();
        threads::run_each(s.executor, threads, &mut groups, |g, windows| {
            let first = g * per_group;
            let group = &chunks[first..(first + per_group).min(chunks.len())];
            run((g, (group, &mut **windows)))
        })?;
    }
    Ok(())
}

/// Parses and unfilters a whole filtered tile into a new buffer.
pub(crate) fn unfilter_chunks(
    s: &ChunkSettings<'_>,
    filtered: &[u8],
    threads: usize,
) -> Result<(Vec<u8>, Option<Vec<u64>>)> {
    let (chunks, total) = parse_tile(s, filtered)?;
    if let Some(limit) = s.memory_limit
        && total as u64 > limit
    {
        return Err(Error::OutOfMemory(format!(
            "unfiltering the tile needs {total} bytes, over the memory limit of {limit} bytes"
        )));
    }
    let mut out = Vec::new();
    out.try_reserve_exact(total).map_err(|_| {
        Error::OutOfMemory(format!(
            "cannot allocate {total} bytes for the unfiltered tile"
        ))
    })?;
    // Written without zero-filling first: `out` gets its `total` bytes only when every
    // chunk's window has been written completely (`fill_range` checks the cursor). On error
    // `out` stays empty.
    let offsets = mem::fill_range(&mut out, 0, total, |buf| {
        unfilter_chunks_into(s, &chunks, threads, buf)
    })?;
    Ok((out, offsets))
}
