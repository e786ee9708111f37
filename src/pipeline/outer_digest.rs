//! A checksum filter at the outer end of a pipeline (its last filter: the stored chunk's
//! own metadata block) hashed for many chunks at once.
//!
//! One MD5 or SHA-256 stream is bound by instruction latency; a tile's chunks are
//! independent, so the multi-message kernels hash several of them side by side. Forward, the
//! checksum stage leaves its digests zero and [`fill`] computes them once a group of chunks is
//! written; reverse, [`verify`] checks a group's digests before its chunks are unfiltered,
//! which then skip that stage's own check. The bytes and errors are those of the per-chunk
//! path.

use super::ChunkSettings;
use crate::error::{Error, Result};
use crate::filters::checksum::{self, DigestKind, DigestTable};
use crate::filters::digest_kind;
use crate::format::tile_format::ChunkRef;

/// The digest of the pipeline's last filter, when it is a checksum.
pub(crate) fn outer_kind(s: &ChunkSettings<'_>) -> Option<DigestKind> {
    s.filters.last().and_then(digest_kind)
}

/// Forward: computes the zeroed outer digests of the chunks written in `buf` at `starts`
/// (the offset of each chunk header).
pub(crate) fn fill(kind: DigestKind, buf: &mut [u8], starts: &[usize]) -> Result<()> {
    // Each covered part, and the absolute offset of its digest slot.
    let mut parts: Vec<&[u8]> = Vec::with_capacity(starts.len() * 2);
    let mut slots: Vec<usize> = Vec::with_capacity(starts.len() * 2);
    for &start in starts {
        let (md, data) = split_chunk(buf, start)?;
        let table = DigestTable::parse(kind, md)?;
        table.for_each_part(md, data, |part| {
            parts.push(part.bytes);
            slots.push(start + 12 + part.digest_at);
            Ok(())
        })?;
    }
    let digests = kind.digest_many(&parts);
    drop(parts);
    let h = kind.size();
    for (slot, d) in slots.into_iter().zip(digests.chunks_exact(h)) {
        buf[slot..slot + h].copy_from_slice(d);
    }
    Ok(())
}

/// The metadata and data of the chunk whose header starts at `start` in `buf`.
fn split_chunk(buf: &[u8], start: usize) -> Result<(&[u8], &[u8])> {
    let field = |i: usize| -> Result<usize> {
        let at = start + 4 * i;
        buf.get(at..at + 4)
            .map(|b| u32::from_le_bytes(b.try_into().expect("4 bytes")) as usize)
            .ok_or_else(|| Error::Internal("written chunk header out of range".into()))
    };
    let (data_len, md_len) = (field(1)?, field(2)?);
    let md_at = start + 12;
    let md = buf
        .get(md_at..md_at + md_len)
        .ok_or_else(|| Error::Internal("written chunk metadata out of range".into()))?;
    let data = buf
        .get(md_at + md_len..md_at + md_len + data_len)
        .ok_or_else(|| Error::Internal("written chunk data out of range".into()))?;
    Ok((md, data))
}

/// Reverse: verifies the outer digests of `chunks` (numbered from `first_index` in errors,
/// `filter_name` being the checksum's name). Returns, per chunk, whether its digests were
/// verified here; a chunk whose digest block does not parse is left to the per-chunk path,
/// which reports the problem.
pub(crate) fn verify(
    kind: DigestKind,
    filter_name: &str,
    chunks: &[ChunkRef<'_>],
    first_index: usize,
) -> Result<Vec<bool>> {
    let mut verified = vec![false; chunks.len()];
    let mut jobs: Vec<(usize, checksum::CoveredPart<'_>)> = Vec::with_capacity(chunks.len() * 2);
    for (i, c) in chunks.iter().enumerate() {
        let Ok(table) = DigestTable::parse(kind, c.metadata) else {
            continue;
        };
        let start = jobs.len();
        let parsed = table.for_each_part(c.metadata, c.data, |part| {
            jobs.push((i, part));
            Ok(())
        });
        if parsed.is_ok() {
            verified[i] = true;
        } else {
            jobs.truncate(start);
        }
    }
    let parts: Vec<&[u8]> = jobs.iter().map(|(_, p)| p.bytes).collect();
    let digests = kind.digest_many(&parts);
    let h = kind.size();
    for ((i, part), got) in jobs.iter().zip(digests.chunks_exact(h)) {
        let expected = &chunks[*i].metadata[part.digest_at..part.digest_at + h];
        if got != expected {
            return Err(checksum::mismatch(part, expected, got)
                .context(filter_name)
                .context(format!("chunk {}", first_index + i)));
        }
    }
    Ok(verified)
}

#[cfg(test)]
mod tests {
    use crate::engine::tile::Tile;
    use crate::error::Error;
    use crate::filters::checksum::{DigestKind, DigestTable};
    use crate::format::datatype::Datatype;
    use crate::pipeline::spec;

    fn data(n: usize) -> Vec<u8> {
        let mut x = 0x1234_5678_9abc_def1u64;
        (0..n)
            .map(|i| {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                if i % 3 == 0 { x as u8 } else { (i / 7) as u8 }
            })
            .collect()
    }

    /// Checks every chunk's outer digests one part at a time with the scalar digests.
    fn assert_digests_correct(kind: DigestKind, filtered: &[u8]) -> usize {
        let t = crate::format::tile_format::parse(filtered).unwrap();
        let mut parts = 0;
        for c in &t.chunks {
            let table = DigestTable::parse(kind, c.metadata).unwrap();
            table
                .for_each_part(c.metadata, c.data, |p| {
                    let mut want = [0u8; 32];
                    kind.digest_into(p.bytes, &mut want[..kind.size()]);
                    assert_eq!(
                        &c.metadata[p.digest_at..p.digest_at + kind.size()],
                        &want[..kind.size()]
                    );
                    parts += 1;
                    Ok(())
                })
                .unwrap();
        }
        parts
    }

    #[test]
    fn batched_digests_equal_per_part_digests_at_every_thread_count() {
        // 1.3 MB: 20 chunks, a short last one; metadata parts covered via zstd+md5 and
        // the md5-then-sha256 stack.
        let tile = Tile::new(Datatype::Uint8, 1, data(1_300_000)).unwrap();
        for (text, kind) in [
            ("checksum_md5", DigestKind::Md5),
            ("checksum_sha256", DigestKind::Sha256),
            ("zstd,checksum_md5", DigestKind::Md5),
            ("bitshuffle,lz4,checksum_sha256", DigestKind::Sha256),
            ("checksum_md5,checksum_sha256", DigestKind::Sha256),
            ("checksum_sha256,checksum_md5", DigestKind::Md5),
        ] {
            let mut p = spec::parse(text).unwrap();
            let mut first: Option<Vec<u8>> = None;
            for threads in [1, 2, 3, 8] {
                p.set_threads(threads);
                let f = p.filter_tile(&tile).unwrap();
                let parts = assert_digests_correct(kind, &f);
                assert!(parts >= 20, "{text}: {parts} parts");
                match &first {
                    None => first = Some(f.clone()),
                    Some(b) => assert_eq!(&f, b, "{text} at {threads} threads"),
                }
                let back = p.unfilter_tile(&f, Datatype::Uint8, 1).unwrap();
                assert!(back.data() == tile.data(), "{text} at {threads} threads");
            }
        }
    }

    #[test]
    fn a_flipped_byte_is_reported_in_its_chunk_and_part_at_every_thread_count() {
        let tile = Tile::new(Datatype::Uint8, 1, data(1_000_000)).unwrap();
        for text in ["checksum_md5", "checksum_md5,checksum_sha256"] {
            let mut p = spec::parse(text).unwrap();
            let f = p.filter_tile(&tile).unwrap();
            let t = crate::format::tile_format::parse(&f).unwrap();
            for (chunk, part_is_md) in [(0usize, false), (7, false), (15, true)] {
                let c = &t.chunks[chunk];
                let at = if part_is_md && text.contains(',') {
                    // The md5 block covered by the outer sha256, past its own block.
                    let own = DigestTable::parse(DigestKind::Sha256, c.metadata)
                        .unwrap()
                        .own_len;
                    c.metadata[own..].as_ptr() as usize - f.as_ptr() as usize + 9
                } else {
                    c.data.as_ptr() as usize - f.as_ptr() as usize + 100
                };
                let mut bad = f.clone();
                bad[at] ^= 0x40;
                for threads in [1, 2, 4] {
                    p.set_threads(threads);
                    let e = p.unfilter_tile(&bad, Datatype::Uint8, 1).unwrap_err();
                    assert!(matches!(e, Error::ChecksumMismatch(_)), "{e}");
                    let name = if text.contains(',') {
                        "CHECKSUM_SHA256"
                    } else {
                        "CHECKSUM_MD5"
                    };
                    let kind = if part_is_md && text.contains(',') {
                        "metadata part 0"
                    } else {
                        "data part 0"
                    };
                    let want = format!("chunk {chunk}: {name}: checksum mismatch in {kind}");
                    assert!(e.message().starts_with(&want), "{e} (want {want})");
                }
            }
            p.set_skip_checksum_validation(true);
            assert!(p.unfilter_tile(&f, Datatype::Uint8, 1).is_ok());
        }
    }

    #[test]
    fn a_truncated_digest_block_is_left_to_the_per_chunk_path() {
        // A chunk whose metadata is too short for its digest table: the batch skips it and
        // the per-chunk reverse reports it as corrupt, naming the chunk.
        let p = spec::parse("checksum_md5").unwrap();
        let tile = Tile::new(Datatype::Uint8, 1, data(200_000)).unwrap();
        let f = p.filter_tile(&tile).unwrap();
        let t = crate::format::tile_format::parse(&f).unwrap();
        // Rewrite chunk 1's header: claim 4 fewer metadata bytes and 4 more data bytes.
        let hdr = t.chunks[1].metadata.as_ptr() as usize - f.as_ptr() as usize - 12;
        let mut bad = f.clone();
        let field = |b: &[u8], i: usize| {
            u32::from_le_bytes(b[hdr + 4 * i..hdr + 4 * i + 4].try_into().unwrap())
        };
        let (data_len, md_len) = (field(&bad, 1), field(&bad, 2));
        bad[hdr + 4..hdr + 8].copy_from_slice(&(data_len + 28).to_le_bytes());
        bad[hdr + 8..hdr + 12].copy_from_slice(&(md_len - 28).to_le_bytes());
        let e = p.unfilter_tile(&bad, Datatype::Uint8, 1).unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e}");
        assert!(e.message().starts_with("chunk 1: CHECKSUM_MD5: "), "{e}");
    }
}
