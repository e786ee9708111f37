//! AES-256-GCM (internal filter 11): every metadata and data part encrypted separately with a
//! fresh random 12-byte IV from the operating system and a 16-byte tag, no AAD (docs/FORMAT.md
//! §5.20).
//!
//! Own metadata: `u32 num_md_parts, u32 num_data_parts`, then per part `u32 plaintext_length,
//! u32 ciphertext_length, u8 iv[12], u8 tag[16]`. Data: one part, the ciphertexts concatenated
//! (metadata parts first). The input metadata travels encrypted inside the data.

use crate::engine::stage::{DataFlow, DataSink, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::registry::{FilterDescriptor, plain_descriptor};
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;
use aes_gcm::aead::{AeadCore, AeadInPlace, OsRng};
use aes_gcm::{Aes256Gcm, Nonce, Tag};

/// Bytes of metadata per part.
const ENTRY: usize = 8 + 12 + 16;

/// OpenSSL (TileDB's backend) refuses parts of 2 GiB or more.
const MAX_PART: usize = i32::MAX as usize;

fn cipher<'a>(ctx: &StageCtx<'a>) -> Result<&'a Aes256Gcm> {
    ctx.cipher
        .ok_or_else(|| Error::invalid("no encryption key set (the tile is encrypted)"))
}

/// Forward: encrypts every metadata and data part.
pub fn forward(ctx: &mut StageCtx<'_>, input: FwdIn<'_>, out: FwdOut<'_>) -> Result<DataFlow> {
    let cipher = cipher(ctx)?;
    let parts = input.md.count() + input.data.count();
    let own = out.md.push_uninit(8 + ENTRY * parts);
    own[0..4].copy_from_slice(&(input.md.count() as u32).to_le_bytes());
    own[4..8].copy_from_slice(&(input.data.count() as u32).to_le_bytes());
    let total = input.md.total_len() + input.data.total_len();
    let dst = out.data.push_uninit(total);
    let mut pos = 0;
    for (k, part) in input.md.iter().chain(input.data.iter()).enumerate() {
        if part.len() > MAX_PART {
            return Err(Error::invalid("part of 2 GiB or more cannot be encrypted"));
        }
        let nonce = Aes256Gcm::generate_nonce(&mut OsRng);
        let buf = &mut dst[pos..pos + part.len()];
        buf.copy_from_slice(part);
        let tag = cipher
            .encrypt_in_place_detached(&nonce, b"", buf)
            .map_err(|_| Error::Internal("AES-256-GCM encryption failed".into()))?;
        let e = &mut own[8 + ENTRY * k..8 + ENTRY * (k + 1)];
        e[0..4].copy_from_slice(&(part.len() as u32).to_le_bytes());
        e[4..8].copy_from_slice(&(part.len() as u32).to_le_bytes());
        e[8..20].copy_from_slice(&nonce);
        e[20..36].copy_from_slice(&tag);
        pos += part.len();
    }
    Ok(DataFlow::Written)
}

/// Reverse: decrypts and authenticates every part; a wrong key or tampered bytes fail.
pub fn reverse(
    ctx: &mut StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let cipher = ctx.cipher.ok_or_else(|| {
        Error::DecryptionFailed("the tile is encrypted and no key was given".into())
    })?;
    let mut r = ByteReader::new(input.md, "encryption metadata");
    let n_md = r.u32()? as usize;
    let n_data = r.u32()? as usize;
    let table = r.take(
        (n_md as u64 + n_data as u64)
            .checked_mul(ENTRY as u64)
            .and_then(|n| usize::try_from(n).ok())
            .ok_or_else(|| Error::corrupt("encryption metadata: part count overflows"))?,
    )?;
    let entries: Vec<&[u8]> = table.chunks_exact(ENTRY).collect();
    let plain = |e: &[u8]| u32::from_le_bytes(e[0..4].try_into().unwrap()) as usize;
    let cipher_len = |e: &[u8]| u32::from_le_bytes(e[4..8].try_into().unwrap()) as usize;
    for (k, e) in entries.iter().enumerate() {
        if plain(e) != cipher_len(e) {
            return Err(Error::corrupt(format!(
                "part {k}: ciphertext length {} differs from plaintext length {}",
                cipher_len(e),
                plain(e)
            )));
        }
    }
    let md_total: usize = entries[..n_md].iter().map(|e| plain(e)).sum();
    let data_total: usize = entries[n_md..].iter().map(|e| plain(e)).sum();
    if md_total + data_total > input.data.len() {
        return Err(Error::corrupt(format!(
            "encrypted parts total {} bytes but only {} bytes of data",
            md_total + data_total,
            input.data.len()
        )));
    }
    if let DataSink::Scratch { limit, .. } = &out.data
        && md_total > *limit
    {
        return Err(Error::corrupt(format!(
            "decrypted metadata of {md_total} bytes exceeds the {limit} bytes possible"
        )));
    }
    // Decrypts `buf` (a copy of the ciphertext) in place.
    let decrypt = |e: &[u8], what: String, buf: &mut [u8]| -> Result<()> {
        cipher
            .decrypt_in_place_detached(
                Nonce::from_slice(&e[8..20]),
                b"",
                buf,
                Tag::from_slice(&e[20..36]),
            )
            .map_err(|_| {
                Error::DecryptionFailed(format!(
                    "{what}: decryption failed (wrong key or tampered bytes)"
                ))
            })
    };
    out.md.clear();
    out.md.resize(md_total, 0);
    let mut src = 0;
    let mut pos = 0;
    for (k, e) in entries[..n_md].iter().enumerate() {
        let len = plain(e);
        let what = format!("metadata part {k}");
        let buf = &mut out.md[pos..pos + len];
        buf.copy_from_slice(&input.data[src..src + len]);
        decrypt(e, what, buf)?;
        src += len;
        pos += len;
    }
    let mut dst = out.data.alloc(data_total)?;
    for (k, e) in entries[n_md..].iter().enumerate() {
        let len = plain(e);
        let what = format!("data part {k}");
        let start = dst.filled();
        dst.put(&input.data[src..src + len]);
        decrypt(e, what, &mut dst.written_mut()[start..])?;
        src += len;
    }
    Ok((MdFlow::Written, DataFlow::Written))
}

/// The Aes256Gcm filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = plain_descriptor(
    FilterType::Aes256Gcm,
    Filter::Aes256Gcm,
    |_, ctx, input, out| forward(ctx, input, out),
    |_, ctx, input, out| reverse(ctx, input, out),
);

#[cfg(test)]
mod tests {
    use crate::error::Error;
    use crate::pipeline::spec;
    use crate::{Datatype, Pipeline, Tile};

    fn keyed(spec_text: &str, key: u8) -> Pipeline {
        let mut p = spec::parse(spec_text).unwrap();
        p.set_encryption_key(&[key; 32]).unwrap();
        p
    }

    #[test]
    fn round_trips_with_fresh_ivs_and_is_never_serialized() {
        let data: Vec<u8> = (0..200_000u32).map(|i| (i / 9) as u8).collect();
        let tile = Tile::new(Datatype::Uint8, 1, data.clone()).unwrap();
        for s in ["none", "zstd", "byteshuffle,checksum_md5,lz4", "rle"] {
            let p = keyed(s, 7);
            assert_eq!(p.serialize(), spec::parse(s).unwrap().serialize());
            let a = p.filter_tile(&tile).unwrap();
            let b = p.filter_tile(&tile).unwrap();
            assert_ne!(a, b, "{s}: IVs must differ between writes");
            assert_eq!(a.len(), b.len(), "AES does not change sizes");
            assert_eq!(
                p.unfilter_tile(&a, Datatype::Uint8, 1).unwrap().data(),
                &data[..]
            );
        }
    }

    #[test]
    fn metadata_layout_matches_tiledb() {
        // [AES] on one chunk: own metadata 8 + 36 bytes, data = ciphertext of the chunk.
        let p = keyed("none", 1);
        let tile = Tile::new(Datatype::Uint8, 1, vec![5; 100]).unwrap();
        let f = p.filter_tile(&tile).unwrap();
        let t = crate::format::tile_format::parse(&f).unwrap();
        let md = t.chunks[0].metadata;
        assert_eq!(md.len(), 8 + 36);
        assert_eq!(&md[0..8], &[0, 0, 0, 0, 1, 0, 0, 0]);
        assert_eq!(&md[8..16], &[100, 0, 0, 0, 100, 0, 0, 0]);
        assert_eq!(t.chunks[0].data.len(), 100);
    }

    #[test]
    fn wrong_key_tampering_and_missing_key_fail() {
        let data = vec![3u8; 150_000];
        let tile = Tile::new(Datatype::Uint8, 1, data).unwrap();
        let p = keyed("zstd", 1);
        let f = p.filter_tile(&tile).unwrap();
        let e = keyed("zstd", 2)
            .unfilter_tile(&f, Datatype::Uint8, 1)
            .unwrap_err();
        assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
        // ZSTD's own metadata is the first part AES encrypted.
        assert!(
            e.message()
                .starts_with("chunk 0: AES_256_GCM: metadata part 0:"),
            "{e}"
        );
        let mut bad = f.clone();
        let last = bad.len() - 1;
        bad[last] ^= 0x10;
        let e = p.unfilter_tile(&bad, Datatype::Uint8, 1).unwrap_err();
        assert!(matches!(e, Error::DecryptionFailed(_)), "{e:?}");
        assert!(e.message().starts_with("chunk 2: "), "{e}");
        // Flipping a tag byte of chunk 0's metadata.
        let mut bad = f.clone();
        bad[8 + 12 + 8 + 8 + 12] ^= 1;
        assert!(matches!(
            p.unfilter_tile(&bad, Datatype::Uint8, 1),
            Err(Error::DecryptionFailed(_))
        ));
        // Reading an encrypted tile without a key is not silently wrong, even with no filters
        // left to run: the AES metadata belongs to no filter of the keyless pipeline.
        let plain = keyed("none", 1).filter_tile(&tile).unwrap();
        let e = spec::parse("none")
            .unwrap()
            .unfilter_tile(&plain, Datatype::Uint8, 1)
            .unwrap_err();
        assert!(matches!(e, Error::CorruptData(_)), "{e:?}");
        assert!(e.message().contains("belong to no filter"), "{e}");
        assert!(spec::parse("zstd,aes_256_gcm").is_err());
        let unkeyed = spec::parse("zstd").unwrap();
        assert!(unkeyed.unfilter_tile(&f, Datatype::Uint8, 1).is_err());
        // A pipeline deserialized with the AES filter (generic tiles) needs the key.
        let with_aes = Pipeline::deserialize(
            &[0, 0, 1, 0, 1, 0, 0, 0, 11, 0, 0, 0, 0],
            crate::pipeline::FORMAT_VERSION,
        )
        .unwrap();
        let e = with_aes
            .filter_tile(&Tile::new(Datatype::Char, 1, vec![1, 2, 3]).unwrap())
            .unwrap_err();
        assert!(e.message().contains("no encryption key"), "{e}");
    }

    #[test]
    fn var_string_offsets_marker_stays_unencrypted() {
        let p = keyed("rle", 9);
        let o = keyed("zstd", 9);
        let tile = Tile::new_var(Datatype::StringAscii, vec![0, 2, 4], b"aaaabb".to_vec()).unwrap();
        let (offsets, data) = p.filter_var(&o, &tile).unwrap();
        assert_eq!(offsets, vec![0u8; 8]);
        assert_eq!(
            p.unfilter_var(&o, &offsets, &data, Datatype::StringAscii)
                .unwrap(),
            tile
        );
        // Encrypted offsets tile through an encrypted offsets pipeline.
        let p = keyed("lz4", 9);
        let (offsets, data) = p.filter_var(&o, &tile).unwrap();
        assert!(offsets.len() > 8);
        assert_eq!(
            p.unfilter_var(&o, &offsets, &data, Datatype::StringAscii)
                .unwrap(),
            tile
        );
    }
}
