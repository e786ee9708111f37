//! `tdbf inspect` on files of generic tiles (docs/FORMAT.md §6): array schemas (`__schema/*`),
//! fragment metadata (`__fragment_metadata.tdb`: generic tiles, then a footer), array and
//! group metadata. Reports every generic tile's header, its pipeline as a spec, its payload
//! sizes and whether it unfilters, then where the generic tiles stop.

use crate::common::{CliResult, Failure, describe_pipeline, ratio};
use std::io::Write;
use tdbfilter::pipeline::generic_tile::{self, EncryptionType, GenericTileHeader};
use tdbfilter::{Datatype, Pipeline, format::tile_format};

/// Whether `file` is (or starts like) a file of generic tiles: its first generic tile parses,
/// or at least its header does with TileDB's datatype CHAR, cell size 1 and a non-empty
/// pipeline (so a truncated schema is reported as such, not as a broken data file).
pub fn looks_generic(file: &[u8]) -> bool {
    if generic_tile::read_header(file).is_ok() {
        return true;
    }
    let Some(fixed) = file.get(..generic_tile::HEADER_BASE_SIZE) else {
        return false;
    };
    let u32_at = |at: usize| u32::from_le_bytes(fixed[at..at + 4].try_into().expect("4 bytes"));
    let version = u32_at(0);
    let cell_size = u64::from_le_bytes(fixed[21..29].try_into().expect("8 bytes"));
    let pipeline_end = generic_tile::HEADER_BASE_SIZE + u32_at(30) as usize;
    (1..=tdbfilter::pipeline::FORMAT_VERSION + 1).contains(&version)
        && fixed[20] == Datatype::Char as u8
        && cell_size == 1
        && EncryptionType::from_u8(fixed[29]).is_some()
        && file
            .get(generic_tile::HEADER_BASE_SIZE..pipeline_end)
            .and_then(|bytes| Pipeline::deserialize(bytes, version).ok())
            .is_some_and(|p| !p.filters().is_empty())
}

/// How one generic tile fared.
enum Outcome {
    Ok,
    NotDecrypted,
    Failed(String),
}

/// Counts over the generic tiles.
#[derive(Default)]
struct Totals {
    tiles: u64,
    filtered: u64,
    unfiltered: u64,
    ok: u64,
    not_decrypted: u64,
    failed: u64,
}

/// Reports the generic tiles of `data` (named `name` in messages) on `out`.
pub fn run(
    out: &mut impl Write,
    name: &str,
    data: &[u8],
    key: Option<&[u8]>,
    verbose: bool,
) -> CliResult<()> {
    let scan = generic_tile::scan(data);
    let mut totals = Totals::default();
    for (index, scanned) in scan.tiles.iter().enumerate() {
        let h = &scanned.header;
        let outcome = if h.encryption_type == EncryptionType::Aes256Gcm && key.is_none() {
            Outcome::NotDecrypted
        } else {
            match generic_tile::read(&data[scanned.offset..], key) {
                Ok(_) => Outcome::Ok,
                Err(e) => Outcome::Failed(e.to_string()),
            }
        };
        report_tile(out, index, scanned.offset, h, &outcome)?;
        if verbose {
            report_chunks(out, &data[scanned.offset + h.header_size()..], h)?;
        }
        totals.tiles += 1;
        totals.filtered += h.persisted_size;
        totals.unfiltered += h.tile_size;
        match outcome {
            Outcome::Ok => totals.ok += 1,
            Outcome::NotDecrypted => totals.not_decrypted += 1,
            Outcome::Failed(_) => totals.failed += 1,
        }
    }
    let t = &totals;
    let mut line = format!(
        "{} generic tile(s), {} filtered bytes, {} unfiltered bytes, ratio {}: {} ok, {} failed",
        t.tiles,
        t.filtered,
        t.unfiltered,
        ratio(t.unfiltered, t.filtered),
        t.ok,
        t.failed
    );
    if t.not_decrypted > 0 {
        line.push_str(&format!(
            ", {} not decrypted (encrypted; pass --key)",
            t.not_decrypted
        ));
    }
    outln!(out, "{line}");
    let trailing = &data[scan.end..];
    let footer = is_fragment_footer(trailing);
    if trailing.is_empty() {
        outln!(
            out,
            "the generic tiles end at the end of the file (byte {})",
            scan.end
        );
    } else if footer {
        outln!(
            out,
            "fragment metadata footer at byte {}: {} bytes (not a generic tile)",
            scan.end,
            trailing.len()
        );
    }
    if t.failed > 0 {
        return Err(Failure::new(format!(
            "{name}: {} generic tile(s) failed to unfilter",
            t.failed
        )));
    }
    if !trailing.is_empty() && !footer {
        let reason = scan.stop_reason.map(|e| e.to_string()).unwrap_or_default();
        return Err(Failure::new(format!(
            "{name}: the {} bytes at byte {} are neither a generic tile nor a fragment \
             metadata footer: {reason}",
            trailing.len(),
            scan.end
        )));
    }
    Ok(())
}

/// Whether `bytes` is a fragment metadata footer: it ends with a u64 holding the length of
/// the rest of the footer (format version 10 and later).
fn is_fragment_footer(bytes: &[u8]) -> bool {
    bytes.len() >= 8 && bytes[bytes.len() - 8..] == ((bytes.len() - 8) as u64).to_le_bytes()
}

fn report_tile(
    out: &mut impl Write,
    index: usize,
    offset: usize,
    h: &GenericTileHeader,
    outcome: &Outcome,
) -> CliResult<()> {
    outln!(
        out,
        "generic tile {index} at byte {offset}: {} bytes",
        h.total_size()
    );
    outln!(
        out,
        "  header: version {}, persisted_size {}, tile_size {}, datatype {}, cell_size {}, \
         encryption_type {}, filter_pipeline_size {}",
        h.version,
        h.persisted_size,
        h.tile_size,
        h.datatype,
        h.cell_size,
        h.encryption_type,
        h.filter_pipeline_size
    );
    outln!(out, "  pipeline: {}", describe_pipeline(&h.pipeline));
    let status = match outcome {
        Outcome::Ok => "unfiltered ok".to_string(),
        Outcome::NotDecrypted => "not decrypted (encrypted; pass --key)".to_string(),
        Outcome::Failed(e) => format!("FAILED: {e}"),
    };
    outln!(
        out,
        "  payload: {} filtered bytes, {} unfiltered bytes, ratio {}, {status}",
        h.persisted_size,
        h.tile_size,
        ratio(h.tile_size, h.persisted_size)
    );
    Ok(())
}

/// Lists the chunks of the filtered tile at the start of `filtered`.
fn report_chunks(out: &mut impl Write, filtered: &[u8], h: &GenericTileHeader) -> CliResult<()> {
    let table = tile_format::parse(&filtered[..h.persisted_size as usize])?;
    outln!(
        out,
        "  {:>8} {:>12} {:>12} {:>12}",
        "chunk",
        "original",
        "metadata",
        "data"
    );
    for (i, c) in table.chunks.iter().enumerate() {
        outln!(
            out,
            "  {:>8} {:>12} {:>12} {:>12}",
            i,
            c.original_length,
            c.metadata.len(),
            c.data.len()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::common::parse_key;

    #[test]
    fn keys_parse_as_strings_or_hex() {
        let k = parse_key("0123456789abcdeF0123456789abcdeF").unwrap();
        assert_eq!(&k[..], b"0123456789abcdeF0123456789abcdeF");
        let k = parse_key(&format!("hex:{}", "00ff".repeat(16))).unwrap();
        assert_eq!(k[1], 0xff);
        assert_eq!(k.len(), 32);
        for bad in [
            "short",
            "hex:00ff",
            &format!("hex:{}", "zz".repeat(32)),
            &"x".repeat(33),
        ] {
            let e = parse_key(bad).unwrap_err();
            assert!(e.message().unwrap_or("").contains("32 bytes"), "{bad}");
        }
    }

    #[test]
    fn generic_files_are_recognised() {
        let one = generic_tile::write_payload(b"payload", None).unwrap();
        assert!(looks_generic(&one));
        assert!(
            looks_generic(&one[..one.len() - 1]),
            "a truncated generic tile"
        );
        assert!(!looks_generic(&one[..20]));
        let mut data_tile = 1u64.to_le_bytes().to_vec();
        data_tile.extend_from_slice(&[4, 0, 0, 0, 4, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4]);
        assert!(!looks_generic(&data_tile));
        assert!(!looks_generic(&[]));
    }

    #[test]
    fn footers_end_with_their_length() {
        let mut f = vec![7u8; 20];
        f.extend_from_slice(&20u64.to_le_bytes());
        assert!(is_fragment_footer(&f));
        f[20] = 21;
        assert!(!is_fragment_footer(&f));
        assert!(!is_fragment_footer(&[0; 7]));
        assert!(is_fragment_footer(&[0; 8]));
    }
}
