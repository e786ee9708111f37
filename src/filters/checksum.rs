//! CHECKSUM_MD5 (12) and CHECKSUM_SHA256 (13): a digest of every metadata and data part,
//! data forwarded unchanged (FORMAT.md §5.16).
//!
//! Own metadata: `u32 num_md_parts, u32 num_data_parts`, then per md part and per data part
//! `u64 length, digest`, followed by the forwarded input metadata.

use crate::byte_reader::ByteReader;
use crate::error::{Error, Result};
use crate::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, StageCtx};
use md5::Digest;

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// Forward: own block of digests, metadata and data forwarded.
pub fn forward<D: Digest>(input: FwdIn<'_>, out: FwdOut<'_>) -> DataFlow {
    let h = <D as Digest>::output_size();
    let own_len = 8 + (input.md.count() + input.data.count()) * (8 + h);
    let own = out.md.push_uninit(own_len);
    own[0..4].copy_from_slice(&(input.md.count() as u32).to_le_bytes());
    own[4..8].copy_from_slice(&(input.data.count() as u32).to_le_bytes());
    let mut pos = 8;
    for part in input.md.iter().chain(input.data.iter()) {
        own[pos..pos + 8].copy_from_slice(&(part.len() as u64).to_le_bytes());
        own[pos + 8..pos + 8 + h].copy_from_slice(&D::digest(part));
        pos += 8 + h;
    }
    out.md.extend_forwarded(input.md);
    DataFlow::Forwarded
}

/// Reverse: verifies every digest (unless validation is skipped); forwards the rest.
pub fn reverse<D: Digest>(ctx: &StageCtx<'_>, input: RevIn<'_>) -> Result<(MdFlow, DataFlow)> {
    let h = <D as Digest>::output_size();
    let mut r = ByteReader::new(input.md, "checksum metadata");
    let n_md = r.u32()? as usize;
    let n_data = r.u32()? as usize;
    let table_len = (n_md as u64 + n_data as u64) * (8 + h as u64);
    if table_len > r.remaining() as u64 {
        return Err(Error::corrupt(format!(
            "checksum metadata truncated: {n_md} metadata and {n_data} data digests need {table_len} bytes, {} left",
            r.remaining()
        )));
    }
    let own_len = 8 + table_len as usize;
    if ctx.skip_checksum_validation {
        return Ok((MdFlow::Rest(own_len), DataFlow::Forwarded));
    }
    let mut covered = [
        ByteReader::new(&input.md[own_len..], "metadata covered by the checksum"),
        ByteReader::new(input.data, "data covered by the checksum"),
    ];
    for (i, stream) in (0..n_md + n_data).map(|i| if i < n_md { (i, 0) } else { (i - n_md, 1) }) {
        let len = r.u64()?;
        let expected = r.take(h)?;
        let len =
            usize::try_from(len).map_err(|_| Error::corrupt("checksum part length overflows"))?;
        let part = covered[stream].take(len)?;
        let got = D::digest(part);
        if got.as_slice() != expected {
            let kind = if stream == 0 { "metadata" } else { "data" };
            return Err(Error::ChecksumMismatch(format!(
                "checksum mismatch in {kind} part {i}: expected {}, got {}",
                hex(expected),
                hex(&got)
            )));
        }
    }
    Ok((MdFlow::Rest(own_len), DataFlow::Forwarded))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::datatype::Datatype;
    use crate::parts::{PartList, Parts};
    use crate::thread_scratch::CodecContexts;

    fn run_forward<D: Digest>(data: &[u8]) -> Vec<u8> {
        let (mut md, mut out) = (PartList::default(), PartList::default());
        let lens = [data.len()];
        let flow = forward::<D>(
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

    fn run_reverse<D: Digest>(md: &[u8], data: &[u8], skip: bool) -> Result<(MdFlow, DataFlow)> {
        let mut codecs = CodecContexts::default();
        let mut ctx = StageCtx::new(Datatype::Uint8, 1, &mut codecs);
        ctx.skip_checksum_validation = skip;
        reverse::<D>(&ctx, RevIn { md, data })
    }

    #[test]
    fn md5_matches_tiledb_vector() {
        // FORMAT.md §9.2: CHECKSUM_MD5 of UINT8 [1,2,3].
        let md = run_forward::<md5::Md5>(&[1, 2, 3]);
        assert_eq!(
            hex(&md),
            "00000000010000000300000000000000\
             5289df737df57326fcdd22597afb1fac"
        );
        assert_eq!(
            run_reverse::<md5::Md5>(&md, &[1, 2, 3], false).unwrap(),
            (MdFlow::Rest(32), DataFlow::Forwarded)
        );
    }

    #[test]
    fn empty_chunk_digests_the_empty_part() {
        let md = run_forward::<sha2::Sha256>(&[]);
        assert_eq!(md.len(), 8 + 40);
        assert_eq!(&md[4..8], &1u32.to_le_bytes());
        assert!(run_reverse::<sha2::Sha256>(&md, &[], false).is_ok());
    }

    #[test]
    fn mismatch_is_reported_unless_skipped() {
        let data = vec![7u8; 1000];
        let md = run_forward::<sha2::Sha256>(&data);
        let mut bad = data.clone();
        bad[500] ^= 1;
        let e = run_reverse::<sha2::Sha256>(&md, &bad, false).unwrap_err();
        assert!(matches!(e, Error::ChecksumMismatch(_)), "{e:?}");
        assert!(run_reverse::<sha2::Sha256>(&md, &bad, true).is_ok());
        assert!(matches!(
            run_reverse::<sha2::Sha256>(&md, &data[..999], false),
            Err(Error::CorruptData(_))
        ));
        assert!(matches!(
            run_reverse::<sha2::Sha256>(&md[..20], &data, false),
            Err(Error::CorruptData(_))
        ));
    }
}
