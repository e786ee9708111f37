//! Pipeline specs: a comma-separated list of TileDB filter names in lower case, each
//! optionally followed by `:LEVEL` (or `:WINDOW` for window filters) and `:option=value`
//! pairs, e.g. `bitshuffle,zstd:3`, `gzip:level=9`, `bit_width_reduction:window=128`.
//! `none` alone (or the empty string) is the empty pipeline.

use crate::error::{Error, Result};
use crate::filters::config::{Filter, OptionValue};
use crate::format::datatype::Datatype;
use crate::format::filter_type::{FilterOption, FilterType};
use crate::pipeline::Pipeline;

/// Option names accepted in specs (short forms and TileDB's names in lower case).
fn option_by_name(name: &str) -> Option<FilterOption> {
    use FilterOption::*;
    Some(match name.to_ascii_lowercase().as_str() {
        "level" | "compression_level" => CompressionLevel,
        "bit_width_max_window" => BitWidthMaxWindow,
        "positive_delta_max_window" => PositiveDeltaMaxWindow,
        "byte_width" | "bytewidth" | "scale_float_bytewidth" => ScaleFloatBytewidth,
        "factor" | "scale" | "scale_float_factor" => ScaleFloatFactor,
        "offset" | "scale_float_offset" => ScaleFloatOffset,
        "quality" | "webp_quality" => WebpQuality,
        "format" | "input_format" | "webp_input_format" => WebpInputFormat,
        "lossless" | "webp_lossless" => WebpLossless,
        "reinterpret" | "reinterpret_datatype" | "compression_reinterpret_datatype" => {
            CompressionReinterpretDatatype
        }
        _ => return None,
    })
}

fn parse_value(option: FilterOption, text: &str) -> Result<OptionValue> {
    use crate::filters::config::OptionKind;
    let bad = || {
        Error::invalid(format!(
            "invalid value '{text}' for option {}",
            option.name().to_ascii_lowercase()
        ))
    };
    Ok(match option.kind() {
        OptionKind::I32 => OptionValue::I32(text.parse().map_err(|_| bad())?),
        OptionKind::U32 => OptionValue::U32(text.parse().map_err(|_| bad())?),
        OptionKind::U64 => OptionValue::U64(text.parse().map_err(|_| bad())?),
        OptionKind::F64 => OptionValue::F64(text.parse().map_err(|_| bad())?),
        OptionKind::F32 => OptionValue::F32(text.parse().map_err(|_| bad())?),
        OptionKind::U8 => {
            let lower = text.to_ascii_lowercase();
            let named = match option {
                FilterOption::CompressionReinterpretDatatype => {
                    Datatype::from_name(&lower).map(|d| d as u8)
                }
                FilterOption::WebpInputFormat => ["none", "rgb", "bgr", "rgba", "bgra"]
                    .iter()
                    .position(|f| *f == lower)
                    .map(|p| p as u8),
                FilterOption::WebpLossless => match lower.as_str() {
                    "true" | "yes" => Some(1),
                    "false" | "no" => Some(0),
                    _ => None,
                },
                _ => None,
            };
            match named {
                Some(v) => OptionValue::U8(v),
                None => OptionValue::U8(text.parse().map_err(|_| bad())?),
            }
        }
    })
}

/// Parses one filter of a spec, e.g. `zstd:3` or `scale_float:factor=0.5:byte_width=2`.
pub fn parse_filter(text: &str) -> Result<Filter> {
    let mut fields = text.split(':');
    let name = fields.next().unwrap_or("").trim();
    let t = FilterType::from_spec_name(name)
        .ok_or_else(|| Error::invalid(format!("unknown filter '{name}'")))?;
    let mut filter = Filter::new(t);
    for field in fields {
        let field = field.trim();
        let (option, value) = match field.split_once('=') {
            Some((k, v)) => {
                let k = k.trim();
                let option = match (k, t) {
                    ("window" | "max_window", FilterType::BitWidthReduction) => {
                        FilterOption::BitWidthMaxWindow
                    }
                    ("window" | "max_window", FilterType::PositiveDelta) => {
                        FilterOption::PositiveDeltaMaxWindow
                    }
                    ("y_extent" | "x_extent", FilterType::Webp) => {
                        let v: u16 = v.trim().parse().map_err(|_| {
                            Error::invalid(format!("{name}: invalid {k} '{}'", v.trim()))
                        })?;
                        let (mut y, mut x) = match &filter {
                            Filter::Webp(o) => (o.y_extent, o.x_extent),
                            _ => (0, 0),
                        };
                        if k == "y_extent" {
                            y = v;
                        } else {
                            x = v;
                        }
                        filter.set_webp_extents(y, x)?;
                        continue;
                    }
                    _ => option_by_name(k)
                        .ok_or_else(|| Error::invalid(format!("{name}: unknown option '{k}'")))?,
                };
                (option, v.trim())
            }
            None => (
                crate::filters::registry::descriptor(t)
                    .positional
                    .ok_or_else(|| {
                        Error::invalid(format!("{name} takes no positional value (got '{field}')"))
                    })?,
                field,
            ),
        };
        filter.set_option(option, parse_value(option, value)?)?;
    }
    Ok(filter)
}

/// Parses a whole spec into a pipeline.
pub fn parse(spec: &str) -> Result<Pipeline> {
    let mut p = Pipeline::new();
    let spec = spec.trim();
    if spec.is_empty() || spec.eq_ignore_ascii_case("none") {
        return Ok(p);
    }
    for (i, item) in spec.split(',').enumerate() {
        let f =
            parse_filter(item).map_err(|e| e.context(format!("filter {i} ('{}')", item.trim())))?;
        p.push(f)?;
    }
    Ok(p)
}

/// Renders a pipeline as a spec that [`parse`] turns back into the same filters.
pub fn to_spec(p: &Pipeline) -> String {
    if p.filters().is_empty() {
        return "none".into();
    }
    p.filters()
        .iter()
        .map(filter_spec)
        .collect::<Vec<_>>()
        .join(",")
}

fn filter_spec(f: &Filter) -> String {
    let name = f.filter_type().spec_name();
    match f {
        Filter::Compression(c) => {
            let mut s = format!("{name}:{}", c.level);
            if c.reinterpret != Datatype::Any {
                s.push_str(&format!(
                    ":reinterpret={}",
                    c.reinterpret.name().to_ascii_lowercase()
                ));
            }
            s
        }
        Filter::BitWidthReduction { max_window } | Filter::PositiveDelta { max_window } => {
            format!("{name}:{max_window}")
        }
        Filter::ScaleFloat(o) => format!(
            "{name}:factor={}:offset={}:byte_width={}",
            o.factor, o.offset, o.byte_width
        ),
        Filter::Webp(o) => format!(
            "{name}:quality={}:format={}:lossless={}:y_extent={}:x_extent={}",
            o.quality, o.input_format, o.lossless as u8, o.y_extent, o.x_extent
        ),
        _ => name.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_levels_and_options() {
        let p = parse("bitshuffle,zstd:3").unwrap();
        assert_eq!(p.filters().len(), 2);
        assert_eq!(
            p.filters()[1].get_option(FilterOption::CompressionLevel),
            Ok(OptionValue::I32(3))
        );
        let p = parse("gzip:level=9, checksum_sha256").unwrap();
        assert_eq!(p.filters()[1].filter_type(), FilterType::ChecksumSha256);
        assert_eq!(parse("none").unwrap().filters().len(), 0);
        assert_eq!(parse("").unwrap().filters().len(), 0);
        assert_eq!(
            parse("zstd").unwrap().filters()[0].get_option(FilterOption::CompressionLevel),
            Ok(OptionValue::I32(-1))
        );
    }

    #[test]
    fn errors_name_the_problem() {
        let e = parse("zstd,foo").unwrap_err();
        assert!(e.message().contains("unknown filter 'foo'"), "{e}");
        let e = parse("gzip:12").unwrap_err();
        assert!(e.message().contains("invalid compression level"), "{e}");
        assert!(parse("byteshuffle:3").is_err());
        assert!(parse("zstd:level=x").is_err());
        assert!(
            parse("aes_256_gcm").is_err(),
            "the internal AES filter has no spec name"
        );
        assert!(parse("rle:level=2,dictionary,double_delta:reinterpret=int32").is_ok());
    }

    #[test]
    fn spec_round_trips() {
        for s in [
            "none",
            "byteshuffle,zstd:3",
            "bitshuffle,lz4:-1",
            "checksum_md5,gzip:9,bzip2:1",
        ] {
            let p = parse(s).unwrap();
            assert_eq!(parse(&to_spec(&p)).unwrap(), p, "{s}");
        }
    }
}
