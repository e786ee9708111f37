//! CHECKSUM_MD5 (12) and CHECKSUM_SHA256 (13): a digest of every metadata and data part,
//! data forwarded unchanged (docs/FORMAT.md §5.16).
//!
//! Own metadata: `u32 num_md_parts, u32 num_data_parts`, then per md part and per data part
//! `u64 length, digest`, followed by the forwarded input metadata.
//!
//! The per-chunk functions here hash one part at a time. When the checksum is the pipeline's
//! outermost filter, the drivers instead hash many chunks at once with the multi-message
//! kernels ([`DigestKind::digest_many`]): `forward` then leaves the digests zeroed for the
//! driver to fill ([`DigestTable`] locates them) and `reverse` is told the digests were
//! already verified.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::registry::{FilterDescriptor, plain_descriptor};
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;
use crate::kernels::{md5_lanes, sha256_lanes};
use md5::Digest;

/// The digest a checksum filter computes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DigestKind {
    /// MD5, 16 bytes (CHECKSUM_MD5).
    Md5,
    /// SHA-256, 32 bytes (CHECKSUM_SHA256).
    Sha256,
}

impl DigestKind {
    /// The digest length in bytes.
    pub fn size(self) -> usize {
        match self {
            DigestKind::Md5 => 16,
            DigestKind::Sha256 => 32,
        }
    }

    /// Writes the digest of `part` into `out` (exactly [`size`](Self::size) bytes).
    pub fn digest_into(self, part: &[u8], out: &mut [u8]) {
        match self {
            DigestKind::Md5 => out.copy_from_slice(&md5::Md5::digest(part)),
            DigestKind::Sha256 => out.copy_from_slice(&sha2::Sha256::digest(part)),
        }
    }

    /// The digests of all `parts`, concatenated, computed several at a time by the SIMD
    /// multi-message kernels.
    pub fn digest_many(self, parts: &[&[u8]]) -> Vec<u8> {
        match self {
            DigestKind::Md5 => {
                let mut d = vec![[0u8; 16]; parts.len()];
                md5_lanes::md5_many(parts, &mut d);
                d.concat()
            }
            DigestKind::Sha256 => {
                let mut d = vec![[0u8; 32]; parts.len()];
                sha256_lanes::sha256_many(parts, &mut d);
                d.concat()
            }
        }
    }
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Forward: own block of digests, metadata and data forwarded. With `compute` false the
/// digests are left zero, for the driver to fill in later.
pub fn forward(kind: DigestKind, compute: bool, input: FwdIn<'_>, out: FwdOut<'_>) -> DataFlow {
    let h = kind.size();
    let own_len = 8 + (input.md.count() + input.data.count()) * (8 + h);
    let own = out.md.push_uninit(own_len);
    own[0..4].copy_from_slice(&(input.md.count() as u32).to_le_bytes());
    own[4..8].copy_from_slice(&(input.data.count() as u32).to_le_bytes());
    let mut pos = 8;
    for part in input.md.iter().chain(input.data.iter()) {
        own[pos..pos + 8].copy_from_slice(&(part.len() as u64).to_le_bytes());
        let slot = &mut own[pos + 8..pos + 8 + h];
        if compute {
            kind.digest_into(part, slot);
        } else {
            slot.fill(0);
        }
        pos += 8 + h;
    }
    out.md.extend_forwarded(input.md);
    DataFlow::Forwarded
}

/// One covered part of a chunk: its bytes and where its digest sits in the own block.
pub struct CoveredPart<'a> {
    /// The part's bytes.
    pub bytes: &'a [u8],
    /// Offset of its digest within the checksum's own metadata block.
    pub digest_at: usize,
    /// Whether it is a metadata part (else a data part).
    pub is_metadata: bool,
    /// Its index among all parts (metadata parts first).
    pub index: usize,
}

/// The own metadata block of a checksum stage, parsed and checked against the stage input.
pub struct DigestTable {
    n_md: usize,
    n_data: usize,
    /// Length of the own block; the rest of the stage's metadata is forwarded input metadata.
    pub own_len: usize,
    kind: DigestKind,
}

impl DigestTable {
    /// Parses the block at the start of `md` (the stage's metadata input on read).
    pub fn parse(kind: DigestKind, md: &[u8]) -> Result<DigestTable> {
        let h = kind.size();
        let mut r = ByteReader::new(md, "checksum metadata");
        let n_md = r.u32()? as usize;
        let n_data = r.u32()? as usize;
        let table_len = (n_md as u64 + n_data as u64) * (8 + h as u64);
        if table_len > r.remaining() as u64 {
            return Err(Error::corrupt(format!(
                "checksum metadata truncated: {n_md} metadata and {n_data} data digests need {table_len} bytes, {} left",
                r.remaining()
            )));
        }
        Ok(DigestTable {
            n_md,
            n_data,
            own_len: 8 + table_len as usize,
            kind,
        })
    }

    /// Calls `f` with every covered part, in order: the metadata parts (from
    /// `md[own_len..]`) then the data parts (from `data`). Fails if the lengths the block
    /// records do not fit the bytes.
    pub fn for_each_part<'a>(
        &self,
        md: &'a [u8],
        data: &'a [u8],
        mut f: impl FnMut(CoveredPart<'a>) -> Result<()>,
    ) -> Result<()> {
        let h = self.kind.size();
        let mut covered = [
            ByteReader::new(&md[self.own_len..], "metadata covered by the checksum"),
            ByteReader::new(data, "data covered by the checksum"),
        ];
        for i in 0..self.n_md + self.n_data {
            let at = 8 + i * (8 + h);
            let len = u64::from_le_bytes(md[at..at + 8].try_into().expect("8 bytes"));
            let len = usize::try_from(len)
                .map_err(|_| Error::corrupt("checksum part length overflows"))?;
            let is_metadata = i < self.n_md;
            let bytes = covered[usize::from(!is_metadata)].take(len)?;
            f(CoveredPart {
                bytes,
                digest_at: at + 8,
                is_metadata,
                index: if is_metadata { i } else { i - self.n_md },
            })?;
        }
        Ok(())
    }
}

/// The error for a part whose digest is not the recorded one.
pub fn mismatch(part: &CoveredPart<'_>, expected: &[u8], got: &[u8]) -> Error {
    let kind = if part.is_metadata { "metadata" } else { "data" };
    Error::ChecksumMismatch(format!(
        "checksum mismatch in {kind} part {}: expected {}, got {}",
        part.index,
        hex(expected),
        hex(got)
    ))
}

/// Reverse: verifies every digest (unless validation is skipped or the driver already
/// verified them); forwards the rest.
pub fn reverse(
    kind: DigestKind,
    ctx: &StageCtx<'_>,
    input: RevIn<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let table = DigestTable::parse(kind, input.md)?;
    let flow = (MdFlow::Rest(table.own_len), DataFlow::Forwarded);
    if ctx.skip_checksum_validation {
        return Ok(flow);
    }
    let h = kind.size();
    let mut got = [0u8; 32];
    table.for_each_part(input.md, input.data, |part| {
        let expected = &input.md[part.digest_at..part.digest_at + h];
        kind.digest_into(part.bytes, &mut got[..h]);
        if &got[..h] != expected {
            return Err(mismatch(&part, expected, &got[..h]));
        }
        Ok(())
    })?;
    Ok(flow)
}

/// The ChecksumMd5 filter's descriptor (see [`crate::filters::registry`]).
pub const MD5_DESCRIPTOR: FilterDescriptor = plain_descriptor(
    FilterType::ChecksumMd5,
    Filter::ChecksumMd5,
    |_, ctx, input, out| Ok(forward(DigestKind::Md5, !ctx.defer_digests, input, out)),
    |_, ctx, input, _| reverse(DigestKind::Md5, ctx, input),
);

/// The ChecksumSha256 filter's descriptor (see [`crate::filters::registry`]).
pub const SHA256_DESCRIPTOR: FilterDescriptor = plain_descriptor(
    FilterType::ChecksumSha256,
    Filter::ChecksumSha256,
    |_, ctx, input, out| Ok(forward(DigestKind::Sha256, !ctx.defer_digests, input, out)),
    |_, ctx, input, _| reverse(DigestKind::Sha256, ctx, input),
);

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::parts::{PartList, Parts};
    use crate::engine::thread_scratch::CodecContexts;
    use crate::format::datatype::Datatype;

    fn run_forward(kind: DigestKind, data: &[u8]) -> Vec<u8> {
        let (mut md, mut out) = (PartList::default(), PartList::default());
        let lens = [data.len()];
        let flow = forward(
            kind,
            true,
            FwdIn {
                md: Parts::EMPTY,
                data: Parts::new(data, &lens),
            },
            FwdOut {
                md: &mut md,
                data: &mut out,
            },
        );
        assert_eq!(flow, DataFlow::Forwarded);
        md.as_parts().bytes().to_vec()
    }

    fn run_reverse(
        kind: DigestKind,
        md: &[u8],
        data: &[u8],
        skip: bool,
    ) -> Result<(MdFlow, DataFlow)> {
        let mut codecs = CodecContexts::default();
        let mut ctx = StageCtx::new(Datatype::Uint8, 1, &mut codecs);
        ctx.skip_checksum_validation = skip;
        reverse(kind, &ctx, RevIn { md, data })
    }

    #[test]
    fn md5_matches_tiledb_vector() {
        // docs/FORMAT.md §9.2: CHECKSUM_MD5 of UINT8 [1,2,3].
        let md = run_forward(DigestKind::Md5, &[1, 2, 3]);
        assert_eq!(
            hex(&md),
            "00000000010000000300000000000000\
             5289df737df57326fcdd22597afb1fac"
        );
        assert_eq!(
            run_reverse(DigestKind::Md5, &md, &[1, 2, 3], false).unwrap(),
            (MdFlow::Rest(32), DataFlow::Forwarded)
        );
    }

    #[test]
    fn empty_chunk_digests_the_empty_part() {
        let md = run_forward(DigestKind::Sha256, &[]);
        assert_eq!(md.len(), 8 + 40);
        assert_eq!(&md[4..8], &1u32.to_le_bytes());
        assert!(run_reverse(DigestKind::Sha256, &md, &[], false).is_ok());
    }

    #[test]
    fn mismatch_is_reported_unless_skipped() {
        let data = vec![7u8; 1000];
        let md = run_forward(DigestKind::Sha256, &data);
        let mut bad = data.clone();
        bad[500] ^= 1;
        let e = run_reverse(DigestKind::Sha256, &md, &bad, false).unwrap_err();
        assert!(matches!(e, Error::ChecksumMismatch(_)), "{e:?}");
        assert!(run_reverse(DigestKind::Sha256, &md, &bad, true).is_ok());
        assert!(matches!(
            run_reverse(DigestKind::Sha256, &md, &data[..999], false),
            Err(Error::CorruptData(_))
        ));
        assert!(matches!(
            run_reverse(DigestKind::Sha256, &md[..20], &data, false),
            Err(Error::CorruptData(_))
        ));
    }
}
