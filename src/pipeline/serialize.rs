//! Pipeline serialization exactly as TileDB writes it (docs/FORMAT.md §3): `u32 max_chunk_size`,
//! `u32 num_filters`, then per filter `u8 type, u32 options_length, options`.

use super::{Pipeline, check_filter};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::registry;
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;
use crate::format::format_version::{FORMAT_VERSION, MAX_READ_FORMAT_VERSION};

impl Pipeline {
    /// TileDB's serialized bytes of this pipeline (options layout of format version 22).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 16 * self.filters.len());
        out.extend_from_slice(&self.max_chunk_size.to_le_bytes());
        out.extend_from_slice(&(self.filters.len() as u32).to_le_bytes());
        for f in &self.filters {
            let layout = registry::descriptor(f.filter_type()).layout;
            out.push(f.filter_type() as u8);
            out.extend_from_slice(&(layout.len(FORMAT_VERSION) as u32).to_le_bytes());
            layout.write(f, FORMAT_VERSION, &mut out);
        }
        out
    }

    /// Parses exactly one serialized pipeline spanning all of `bytes`, with the option layouts
    /// of `format_version` (§2.2). An unknown filter type is `CorruptData`.
    pub fn deserialize(bytes: &[u8], format_version: u32) -> Result<Pipeline> {
        let (p, used) = Pipeline::deserialize_prefix(bytes, format_version)?;
        if used != bytes.len() {
            return Err(Error::corrupt(format!(
                "{} bytes follow the {used}-byte serialized pipeline",
                bytes.len() - used
            )));
        }
        Ok(p)
    }

    /// Parses the serialized pipeline at the start of `bytes`; returns it and its length.
    pub fn deserialize_prefix(bytes: &[u8], format_version: u32) -> Result<(Pipeline, usize)> {
        check_version(format_version)?;
        let mut r = ByteReader::new(bytes, "serialized pipeline");
        let max_chunk_size = r.u32()?;
        let n = r.u32()? as usize;
        if n > r.remaining() / 5 {
            return Err(Error::corrupt(format!(
                "serialized pipeline claims {n} filters but only {} bytes follow",
                r.remaining()
            )));
        }
        let mut filters = Vec::with_capacity(n);
        for i in 0..n {
            let f = read_filter(&mut r, format_version)
                .map_err(|e| e.context(format!("filter {i}")))?;
            if f != Filter::Aes256Gcm {
                // TileDB accepts its internal AES filter in serialized pipelines (generic-tile
                // headers store it); everything else must be a filter users can add.
                check_filter(&f).map_err(|e| e.context(format!("filter {i}")))?;
            }
            filters.push(f);
        }
        let p = Pipeline {
            filters,
            max_chunk_size,
            format_version,
            ..Pipeline::new()
        };
        Ok((p, r.position()))
    }
}

/// Refuses format versions this library does not read.
pub(super) fn check_version(format_version: u32) -> Result<()> {
    if format_version == 0 || format_version > MAX_READ_FORMAT_VERSION {
        return Err(Error::Unsupported(format!(
            "format version {format_version} is not supported (1 to {MAX_READ_FORMAT_VERSION})"
        )));
    }
    Ok(())
}

fn read_filter(r: &mut ByteReader<'_>, version: u32) -> Result<Filter> {
    let type_byte = r.u8()?;
    let t = FilterType::from_u32(type_byte as u32)
        .map_err(|_| Error::corrupt(format!("unknown filter type {type_byte}")))?;
    let len = r.u32()? as usize;
    let opts = r.take(len)?;
    let layout = registry::descriptor(t).layout;
    let want = layout.len(version);
    if len != want {
        return Err(Error::corrupt(format!(
            "{} options are {len} bytes, expected {want}",
            t.name()
        )));
    }
    layout.read(t, &mut ByteReader::new(opts, "filter options"), version)
}
