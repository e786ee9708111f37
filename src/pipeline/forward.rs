//! Forward (write) execution: each chunk runs through every stage (§4.6) and is appended to
//! the filtered tile with its header (§4.1). Chunks are independent and run in parallel.
//! (§: docs/FORMAT.md.)

use super::ChunkSettings;
use super::outer_digest;
use crate::engine::parts::Parts;
use crate::engine::stage::{DataFlow, FwdIn, FwdOut, StageCtx};
use crate::engine::thread_scratch::{ThreadScratch, with_scratch};
use crate::engine::threads;
use crate::error::{Error, Result};
use crate::filters;
use crate::format::tile_format::{CHUNK_HEADER_SIZE, chunk_header};
use std::ops::Range;

/// The fewest chunks per parallel group when the last filter is a checksum (the widest
/// multi-message digest kernel hashes 8 messages at once).
pub(crate) const OUTER_DIGEST_GROUP: usize = 8;

/// Chunks per parallel group otherwise.
const PARALLEL_GROUP: usize = 2;

/// Where filtered chunks go: a growing vector, or a caller's fixed buffer.
pub(crate) trait ChunkSink {
    /// Appends `bytes`, or fails when a fixed buffer is full.
    fn put(&mut self, bytes: &[u8]) -> Result<()>;
    /// Everything written so far.
    fn written_mut(&mut self) -> &mut [u8];
    /// Lends the sink's storage as a vector holding what was written so far, for the last
    /// stage of a chunk to write into directly, if the sink can lend it with room for `need`
    /// more bytes without growing; `None` otherwise. Every lent vector goes back through
    /// [`ChunkSink::put_back`].
    fn lend(&mut self, _need: usize) -> Option<Vec<u8>> {
        None
    }
    /// Takes back a vector from [`ChunkSink::lend`], grown by whole chunks.
    fn put_back(&mut self, _buf: Vec<u8>) {}
}

impl ChunkSink for Vec<u8> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        self.extend_from_slice(bytes);
        Ok(())
    }

    fn written_mut(&mut self) -> &mut [u8] {
        self
    }

    fn lend(&mut self, need: usize) -> Option<Vec<u8>> {
        // Within the reserved capacity the stage cannot make the vector reallocate (its
        // output stays within the bound), so peak memory is what it was with a copy.
        (self.capacity() - self.len() >= need).then(|| std::mem::take(self))
    }

    fn put_back(&mut self, buf: Vec<u8>) {
        *self = buf;
    }
}

/// A caller-owned output buffer filled from the front.
pub(crate) struct SliceSink<'a> {
    /// The buffer.
    pub buf: &'a mut [u8],
    /// Bytes written so far.
    pub pos: usize,
    /// A size that always suffices, reported when the buffer is too small.
    pub bound: usize,
}

impl ChunkSink for SliceSink<'_> {
    fn put(&mut self, bytes: &[u8]) -> Result<()> {
        let end = self.pos + bytes.len();
        if end > self.buf.len() {
            return Err(Error::BufferTooSmall {
                needed: self.bound.max(end),
                message: format!(
                    "output buffer of {} bytes is too small (at most {} bytes are needed)",
                    self.buf.len(),
                    self.bound.max(end)
                ),
            });
        }
        self.buf[self.pos..end].copy_from_slice(bytes);
        self.pos = end;
        Ok(())
    }

    fn written_mut(&mut self) -> &mut [u8] {
        &mut self.buf[..self.pos]
    }
}

/// Runs one chunk through the pipeline and appends its header, metadata and data to `out`.
/// With `defer_outer_digests` the last stage (a checksum) leaves its digests zero.
pub(crate) fn filter_chunk(
    s: &ChunkSettings<'_>,
    chunk: &[u8],
    defer_outer_digests: bool,
    scratch: &mut ThreadScratch,
    out: &mut impl ChunkSink,
) -> Result<()> {
    let ThreadScratch {
        codecs,
        fwd_md,
        fwd_data,
        fwd_md_guess,
        ..
    } = scratch;
    let n = s.filters.len();
    let chunk_lens = [chunk.len()];
    // Which buffer holds the current metadata / data (None: no metadata / the chunk itself).
    let mut md_at: Option<usize> = None;
    let mut data_at: Option<usize> = None;
    let mut data_forwarded = false;
    for (k, filter) in s.filters.iter().enumerate() {
        let w_md = usize::from(md_at == Some(0));
        let w_data = usize::from(data_at == Some(0));
        let [m0, m1] = &mut *fwd_md;
        let (md_read, md_write) = if w_md == 0 { (&*m1, m0) } else { (&*m0, m1) };
        let [d0, d1] = &mut *fwd_data;
        let (data_read, data_write) = if w_data == 0 { (&*d1, d0) } else { (&*d0, d1) };
        let md = match md_at {
            None => Parts::EMPTY,
            Some(_) => md_read.as_parts(),
        };
        let mut data = match data_at {
            None => Parts::new(chunk, &chunk_lens),
            Some(_) => data_read.as_parts(),
        };
        if data_forwarded {
            data = data.forwarded();
        }
        md_write.clear();
        data_write.clear();
        // The last stage writes its data straight into the sink when the sink lends its
        // storage: after room for the chunk header and for as much metadata as the previous
        // chunk had (moved into place afterwards if the guess was wrong).
        let lent = match k + 1 == n {
            true => out
                .lend(
                    filters::forward_bound(filter, data.total_len().saturating_add(md.total_len()))
                        .saturating_add(CHUNK_HEADER_SIZE + *fwd_md_guess),
                )
                .map(|mut buf| {
                    let start = buf.len();
                    let base = start + CHUNK_HEADER_SIZE + *fwd_md_guess;
                    buf.resize(base, 0);
                    (data_write.attach(buf, base), start, base)
                }),
            false => None,
        };
        let mut ctx = StageCtx {
            datatype: s.types[k],
            cell_size: s.cell_size,
            version: s.version,
            skip_checksum_validation: s.skip_checksum_validation,
            codecs,
            offsets: s.offsets,
            cipher: s.cipher,
            gzip_identical: s.gzip_identical,
            defer_digests: defer_outer_digests && k + 1 == s.filters.len(),
        };
        let flow = filters::forward(
            filter,
            &mut ctx,
            FwdIn { md, data },
            FwdOut {
                md: &mut *md_write,
                data: &mut *data_write,
            },
        )
        .map_err(|e| e.context(filter.name()));
        if let Some((previous, start, base)) = lent {
            let mut buf = data_write.detach(previous);
            if let Ok(DataFlow::Written) = flow {
                let md = md_write.as_parts().bytes();
                *fwd_md_guess = md.len();
                let result = place_chunk(&mut buf, start, base, chunk.len(), md);
                if result.is_err() {
                    buf.truncate(start);
                }
                out.put_back(buf);
                return result;
            }
            // A forwarded last stage leaves the data where it was: copied below.
            buf.truncate(start);
            out.put_back(buf);
        }
        let flow = flow?;
        md_at = Some(w_md);
        match flow {
            DataFlow::Written => {
                data_at = Some(w_data);
                data_forwarded = false;
            }
            DataFlow::Forwarded => data_forwarded = true,
        }
    }
    let md: &[u8] = match md_at {
        None => &[],
        Some(i) => fwd_md[i].as_parts().bytes(),
    };
    let data: &[u8] = match data_at {
        None => chunk,
        Some(i) => fwd_data[i].as_parts().bytes(),
    };
    // Forwarding never changes the bytes of a stream, only its part list.
    out.put(&header_of(chunk.len(), md.len(), data.len())?)?;
    out.put(md)?;
    out.put(data)
}

/// The chunk header for these lengths, or an error when a length does not fit its `u32`.
fn header_of(original: usize, md_len: usize, data_len: usize) -> Result<[u8; CHUNK_HEADER_SIZE]> {
    let too_big = |what: &str| Error::invalid(format!("filtered chunk {what} exceeds 4 GiB"));
    let md_len = u32::try_from(md_len).map_err(|_| too_big("metadata"))?;
    let data_len = u32::try_from(data_len).map_err(|_| too_big("data"))?;
    Ok(chunk_header(original as u32, data_len, md_len))
}

/// Completes a chunk whose data the last stage wrote into `buf` from `base` on: the header at
/// `start`, then the metadata `md`, then the data, moved if `md` does not end at `base`.
fn place_chunk(
    buf: &mut Vec<u8>,
    start: usize,
    base: usize,
    original: usize,
    md: &[u8],
) -> Result<()> {
    let data_len = buf.len() - base;
    let header = header_of(original, md.len(), data_len)?;
    let md_start = start + CHUNK_HEADER_SIZE;
    let data_start = md_start + md.len();
    if data_start != base {
        if data_start > base {
            buf.resize(data_start + data_len, 0);
        }
        buf.copy_within(base..base + data_len, data_start);
        buf.truncate(data_start + data_len);
    }
    buf[start..md_start].copy_from_slice(&header);
    buf[md_start..data_start].copy_from_slice(md);
    Ok(())
}

fn filter_range(
    s: &ChunkSettings<'_>,
    tile: &[u8],
    chunks: &[Range<usize>],
    first_index: usize,
    out: &mut impl ChunkSink,
) -> Result<()> {
    let outer = outer_digest::outer_kind(s);
    let mut starts = Vec::with_capacity(if outer.is_some() { chunks.len() } else { 0 });
    with_scratch(|scratch| {
        for (i, r) in chunks.iter().enumerate() {
            if outer.is_some() {
                starts.push(out.written_mut().len());
            }
            filter_chunk(s, &tile[r.clone()], outer.is_some(), scratch, out)
                .map_err(|e| e.context(format!("chunk {}", first_index + i)))?;
        }
        Ok::<_, Error>(())
    })?;
    match outer {
        Some(kind) => outer_digest::fill(kind, out.written_mut(), &starts),
        None => Ok(()),
    }
}

/// Filters every chunk of `tile` into `out` as one filtered tile.
pub(crate) fn filter_chunks(
    s: &ChunkSettings<'_>,
    tile: &[u8],
    chunks: &[Range<usize>],
    threads: usize,
    out: &mut impl ChunkSink,
) -> Result<()> {
    out.put(&(chunks.len() as u64).to_le_bytes())?;
    if threads <= 1 || chunks.len() <= 1 {
        return filter_range(s, tile, chunks, 0, out);
    }
    // Groups of a few contiguous chunks, filtered in rounds of a few groups per thread into
    // buffers reused from round to round: the groups of a round balance uneven chunks between
    // threads, and no more than a round's output is held besides `out`.
    let (per_group, round) = match outer_digest::outer_kind(s) {
        // Enough chunks per group for the multi-message digest kernels' lanes.
        Some(_) => (
            OUTER_DIGEST_GROUP.min(chunks.len().div_ceil(threads)),
            threads,
        ),
        None => (PARALLEL_GROUP, threads * 2),
    };
    let groups: Vec<&[Range<usize>]> = chunks.chunks(per_group).collect();
    let mut bufs: Vec<Vec<u8>> = (0..round.min(groups.len())).map(|_| Vec::new()).collect();
    for (r, batch) in groups.chunks(round).enumerate() {
        let bufs = &mut bufs[..batch.len()];
        threads::run_each(s.executor, threads, bufs, |j, buf| {
            buf.clear();
            filter_range(s, tile, batch[j], (r * round + j) * per_group, buf)
        })?;
        for buf in bufs.iter() {
            out.put(buf)?;
        }
    }
    Ok(())
}
