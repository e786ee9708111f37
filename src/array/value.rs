//! Typed views of coordinate and cell bytes: integer coordinates of dense domains and text
//! for listings (their order is [`crate::array::order`]'s).

use crate::error::{Error, Result};
use crate::format::datatype::Datatype;

/// The integer value of an integer, datetime or time coordinate (`bytes` = one value).
pub fn as_i128(datatype: Datatype, bytes: &[u8]) -> Result<i128> {
    use Datatype::*;
    let b = |n: usize| -> Result<&[u8]> {
        bytes
            .get(..n)
            .ok_or_else(|| Error::corrupt(format!("{datatype} value truncated")))
    };
    Ok(match datatype {
        Int8 => i8::from_le_bytes(b(1)?.try_into().expect("1")) as i128,
        Uint8 | Bool => b(1)?[0] as i128,
        Int16 => i16::from_le_bytes(b(2)?.try_into().expect("2")) as i128,
        Uint16 => u16::from_le_bytes(b(2)?.try_into().expect("2")) as i128,
        Int32 => i32::from_le_bytes(b(4)?.try_into().expect("4")) as i128,
        Uint32 => u32::from_le_bytes(b(4)?.try_into().expect("4")) as i128,
        Uint64 => u64::from_le_bytes(b(8)?.try_into().expect("8")) as i128,
        d if d == Int64 || d.is_datetime() || d.is_time() => {
            i64::from_le_bytes(b(8)?.try_into().expect("8")) as i128
        }
        d => {
            return Err(Error::Unsupported(format!(
                "{d} is not an integer coordinate type"
            )));
        }
    })
}

/// `value` encoded as one value of the integer, datetime or time type `datatype`.
pub fn from_i128(datatype: Datatype, value: i128) -> Vec<u8> {
    let n = datatype.size();
    value.to_le_bytes()[..n].to_vec()
}

/// A dense tile extent as a positive count of cells.
pub fn as_u64_extent(datatype: Datatype, bytes: &[u8]) -> Result<u64> {
    let v = as_i128(datatype, bytes)?;
    u64::try_from(v)
        .ok()
        .filter(|v| *v > 0)
        .ok_or_else(|| Error::corrupt(format!("tile extent {v} is not positive")))
}

/// The value of a real or integer coordinate as f64 (for real-typed tile indices).
pub fn as_f64(datatype: Datatype, bytes: &[u8]) -> Result<f64> {
    match datatype {
        Datatype::Float32 => Ok(f32::from_le_bytes(
            bytes
                .get(..4)
                .ok_or_else(|| Error::corrupt("FLOAT32 value truncated"))?
                .try_into()
                .expect("4"),
        ) as f64),
        Datatype::Float64 => Ok(f64::from_le_bytes(
            bytes
                .get(..8)
                .ok_or_else(|| Error::corrupt("FLOAT64 value truncated"))?
                .try_into()
                .expect("8"),
        )),
        d => Ok(as_i128(d, bytes)? as f64),
    }
}

/// One value of `datatype` as text (numbers in Rust's shortest round-trip form).
pub fn format_value(datatype: Datatype, bytes: &[u8]) -> String {
    use Datatype::*;
    match datatype {
        Float32 | Float64 => {
            let v = as_f64(datatype, bytes).unwrap_or(f64::NAN);
            if datatype == Float32 {
                format!("{}", v as f32)
            } else {
                format!("{v}")
            }
        }
        d if d.is_integer() || d.is_datetime() || d.is_time() => {
            as_i128(d, bytes).map(|v| v.to_string()).unwrap_or_default()
        }
        _ => String::from_utf8_lossy(bytes).into_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integers_round_trip() {
        assert_eq!(
            as_i128(Datatype::Int16, &(-5i16).to_le_bytes()).unwrap(),
            -5
        );
        assert_eq!(
            as_i128(Datatype::Uint64, &u64::MAX.to_le_bytes()).unwrap(),
            u64::MAX as i128
        );
        assert_eq!(from_i128(Datatype::Int32, -2), (-2i32).to_le_bytes());
        assert!(as_i128(Datatype::Float32, &[0; 4]).is_err());
    }

    #[test]
    fn formatting() {
        assert_eq!(
            format_value(Datatype::Float32, &1.5f32.to_le_bytes()),
            "1.5"
        );
        assert_eq!(format_value(Datatype::Uint8, &[200]), "200");
    }
}
