//! Pipeline serialization exactly as TileDB writes it (FORMAT.md §3): `u32 max_chunk_size`,
//! `u32 num_filters`, then per filter `u8 type, u32 options_length, options`.

use super::{Pipeline, check_filter};
use crate::byte_reader::ByteReader;
use crate::datatype::Datatype;
use crate::error::{Error, Result};
use crate::filter::{CompressionOptions, Filter, ScaleFloatOptions, WebpOptions};
use crate::filter_type::{Compressor, FilterType};

/// The format version TileDB 2.30 writes.
pub const FORMAT_VERSION: u32 = 22;

/// The newest format version whose tiles this library reads (23 adds no tile changes).
pub const MAX_READ_FORMAT_VERSION: u32 = 23;

fn options(filter: &Filter) -> Vec<u8> {
    let mut o = Vec::new();
    match filter {
        Filter::Compression(c) if c.compressor != Compressor::NoCompression => {
            o.push(c.compressor as u8);
            o.extend_from_slice(&c.level.to_le_bytes());
            if matches!(c.compressor, Compressor::Delta | Compressor::DoubleDelta) {
                o.push(c.reinterpret as u8);
            }
        }
        Filter::BitWidthReduction { max_window } | Filter::PositiveDelta { max_window } => {
            o.extend_from_slice(&max_window.to_le_bytes());
        }
        Filter::ScaleFloat(s) => {
            o.extend_from_slice(&s.factor.to_le_bytes());
            o.extend_from_slice(&s.offset.to_le_bytes());
            o.extend_from_slice(&s.byte_width.to_le_bytes());
        }
        Filter::Webp(w) => {
            o.extend_from_slice(&w.quality.to_le_bytes());
            o.push(w.input_format);
            o.push(w.lossless as u8);
            o.extend_from_slice(&w.y_extent.to_le_bytes());
            o.extend_from_slice(&w.x_extent.to_le_bytes());
            o.extend_from_slice(&[0, 0]);
        }
        _ => {}
    }
    o
}

impl Pipeline {
    /// TileDB's serialized bytes of this pipeline (options layout of format version 22).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(8 + 16 * self.filters.len());
        out.extend_from_slice(&self.max_chunk_size.to_le_bytes());
        out.extend_from_slice(&(self.filters.len() as u32).to_le_bytes());
        for f in &self.filters {
            let o = options(f);
            out.push(f.filter_type() as u8);
            out.extend_from_slice(&(o.len() as u32).to_le_bytes());
            out.extend_from_slice(&o);
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
    let mut o = ByteReader::new(opts, "filter options");
    let expect = |want: usize| {
        if len != want {
            Err(Error::corrupt(format!(
                "{} options are {len} bytes, expected {want}",
                t.name()
            )))
        } else {
            Ok(())
        }
    };
    let filter = match t {
        FilterType::Gzip
        | FilterType::Zstd
        | FilterType::Lz4
        | FilterType::Rle
        | FilterType::Bzip2
        | FilterType::DoubleDelta
        | FilterType::Dictionary
        | FilterType::Delta => {
            let has_reinterpret = (t == FilterType::DoubleDelta && version >= 20)
                || (t == FilterType::Delta && version >= 19);
            expect(if has_reinterpret { 6 } else { 5 })?;
            let c = o.u8()?;
            let compressor = Compressor::from_u8(c)
                .ok_or_else(|| Error::corrupt(format!("unknown compressor {c}")))?;
            let level = o.i32()?;
            let reinterpret = if has_reinterpret {
                let d = o.u8()?;
                Datatype::from_u8(d)
                    .ok_or_else(|| Error::corrupt(format!("unknown reinterpret datatype {d}")))?
            } else {
                Datatype::Any
            };
            if compressor == Compressor::NoCompression {
                Filter::None
            } else {
                Filter::Compression(CompressionOptions {
                    compressor,
                    level,
                    reinterpret,
                })
            }
        }
        FilterType::BitWidthReduction => {
            expect(4)?;
            Filter::BitWidthReduction {
                max_window: o.u32()?,
            }
        }
        FilterType::PositiveDelta => {
            expect(4)?;
            Filter::PositiveDelta {
                max_window: o.u32()?,
            }
        }
        FilterType::ScaleFloat => {
            expect(24)?;
            Filter::ScaleFloat(ScaleFloatOptions {
                factor: o.f64()?,
                offset: o.f64()?,
                byte_width: o.u64()?,
            })
        }
        FilterType::Webp => {
            expect(12)?;
            Filter::Webp(WebpOptions {
                quality: o.f32()?,
                input_format: o.u8()?,
                lossless: o.u8()? != 0,
                y_extent: o.u16()?,
                x_extent: o.u16()?,
            })
        }
        other => {
            expect(0)?;
            Filter::new(other)
        }
    };
    Ok(filter)
}
