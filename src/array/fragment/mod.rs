//! Fragments: the on-disk metadata of one fragment (`__fragment_metadata.tdb`), and the
//! consolidated fragment metadata files (`__fragment_meta/*.meta`) holding many footers.

pub mod metadata;

use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;

/// The fragment names a consolidated fragment metadata payload (the generic tile of a
/// `__fragment_meta/<name>.meta` file) holds footers of, in file order: a `u32` count, then
/// per fragment its name (`u64` size, bytes) and its footer's offset (`u64`) in the payload.
pub fn consolidated_footer_names(payload: &[u8]) -> Result<Vec<String>> {
    let mut r = ByteReader::new(payload, "consolidated fragment metadata");
    let n = r.u32()? as usize;
    let mut out = Vec::with_capacity(n.min(payload.len() / 16));
    for _ in 0..n {
        let size = usize::try_from(r.u64()?)
            .map_err(|_| Error::corrupt("consolidated fragment metadata: name size"))?;
        let name = String::from_utf8_lossy(r.take(size)?).into_owned();
        let offset = r.u64()?;
        if offset > payload.len() as u64 {
            return Err(Error::corrupt(format!(
                "consolidated fragment metadata: the footer of {name} at {offset} is past the \
                 {} bytes",
                payload.len()
            )));
        }
        out.push(name);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn footer_names_and_truncation() {
        let mut p = Vec::new();
        p.extend(2u32.to_le_bytes());
        let names = ["__1_1_a_22", "__2_2_b_22"];
        let header = 4 + names.iter().map(|n| 16 + n.len()).sum::<usize>();
        for (i, n) in names.iter().enumerate() {
            p.extend((n.len() as u64).to_le_bytes());
            p.extend(n.as_bytes());
            p.extend(((header + 3 * i) as u64).to_le_bytes());
        }
        p.extend([0u8; 6]);
        assert_eq!(consolidated_footer_names(&p).unwrap(), names);
        assert!(consolidated_footer_names(&p[..p.len() - 20]).is_err());
        let mut bad = p.clone();
        bad[4 + 8 + names[0].len()] = 0xff; // the first footer's offset past the end
        assert!(consolidated_footer_names(&bad).is_err());
    }
}
