//! The serialized condition of a delete commit (`__commits/__t_t_<uuid>_<v>.del`, a generic
//! tile whose payload is this; TileDB's `deletes_and_updates/serialization.cc`). Little-endian,
//! depth first:
//!
//! ```text
//! node   := u8 node_type (0 expression, 1 value) then expr | value
//! value  := u8 op (0..7, 253, 254) · u32 field name length · name bytes
//!           · u64 data size · data · (op in/not in only) u64 offsets size · u64 offsets
//! expr   := u8 combination (0 AND, 1 OR, 2 NOT) · u64 child count · children
//! ```
//!
//! A delete stores the *negation* of the condition the user gave (cells are kept where the
//! stored condition holds, so a null cell fails it and is deleted). A null test has no data,
//! so it reads back as a comparison with the empty value: TileDB 2.30 reads `x == None` of a
//! `.del` as `x == ''` (and refuses it on fixed-size fields, "value size mismatch").
//! [`parse`] returns what TileDB reads; [`serialize`] writes TileDB's bytes.

use super::ast::{Combination, Condition, Op, Operand};
use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;

/// Nesting deeper than this is refused (TileDB's recursion has no bound; ours must).
const MAX_DEPTH: usize = 256;

/// The payload TileDB writes for `cond` (already negated for a delete: see
/// [`delete_payload`]).
pub fn serialize(cond: &Condition) -> Result<Vec<u8>> {
    let mut out = Vec::new();
    write(cond, &mut out)?;
    Ok(out)
}

/// The payload of the `.del` commit TileDB writes for a delete with condition `cond`.
pub fn delete_payload(cond: &Condition) -> Result<Vec<u8>> {
    serialize(&cond.negated())
}

fn write(cond: &Condition, out: &mut Vec<u8>) -> Result<()> {
    match cond {
        Condition::Value { field, op, operand } => {
            out.push(1);
            out.push(*op as u8);
            let n = u32::try_from(field.len())
                .map_err(|_| Error::invalid("condition field name is too long"))?;
            out.extend_from_slice(&n.to_le_bytes());
            out.extend_from_slice(field.as_bytes());
            match operand {
                Operand::Null => out.extend_from_slice(&0u64.to_le_bytes()),
                Operand::Value(v) => {
                    out.extend_from_slice(&(v.len() as u64).to_le_bytes());
                    out.extend_from_slice(v);
                }
                Operand::Set(m) => {
                    let total: usize = m.iter().map(Vec::len).sum();
                    out.extend_from_slice(&(total as u64).to_le_bytes());
                    m.iter().for_each(|x| out.extend_from_slice(x));
                }
            }
            if op.is_set() {
                let Operand::Set(m) = operand else {
                    return Err(Error::invalid(format!(
                        "condition on '{field}': '{}' needs a set",
                        op.symbol()
                    )));
                };
                out.extend_from_slice(&((m.len() * 8) as u64).to_le_bytes());
                let mut at = 0u64;
                for x in m {
                    out.extend_from_slice(&at.to_le_bytes());
                    at += x.len() as u64;
                }
            }
        }
        Condition::Expr { op, children } => {
            out.push(0);
            out.push(*op as u8);
            out.extend_from_slice(&(children.len() as u64).to_le_bytes());
            for c in children {
                write(c, out)?;
            }
        }
    }
    Ok(())
}

/// Reads a serialized condition as TileDB 2.30 reads it, with its checks (valid operators,
/// offsets not decreasing and within the data, two or more children per expression). `what`
/// names the file in errors. A NOT expression node, which TileDB cannot evaluate, is
/// [`Error::Unsupported`].
pub fn parse(payload: &[u8], what: &str) -> Result<Condition> {
    let mut r = ByteReader::new(payload, "delete condition");
    let c = read(&mut r, 0).map_err(|e| e.context(what))?;
    if r.remaining() != 0 {
        return Err(Error::corrupt(format!(
            "{what}: {} bytes after the condition",
            r.remaining()
        )));
    }
    Ok(c)
}

fn read(r: &mut ByteReader<'_>, depth: usize) -> Result<Condition> {
    if depth > MAX_DEPTH {
        return Err(Error::corrupt("condition nested too deeply"));
    }
    match r.u8()? {
        1 => {
            let v = r.u8()?;
            let op = Op::from_u8(v)
                .ok_or_else(|| Error::corrupt(format!("invalid condition operator {v}")))?;
            let n = r.u32()? as usize;
            let field = String::from_utf8(r.take(n)?.to_vec())
                .map_err(|_| Error::corrupt("condition field name is not UTF-8"))?;
            let size = usize::try_from(r.u64()?).map_err(|_| Error::corrupt("data size"))?;
            let data = r.take(size)?.to_vec();
            if !op.is_set() {
                return Ok(Condition::Value {
                    field,
                    op,
                    operand: Operand::Value(data),
                });
            }
            let osize = usize::try_from(r.u64()?).map_err(|_| Error::corrupt("offsets size"))?;
            let ob = r.take(osize)?;
            if osize % 8 != 0 {
                return Err(Error::corrupt(format!(
                    "set offsets of '{field}' are not whole u64s"
                )));
            }
            if size > 0 && osize == 0 {
                return Err(Error::corrupt(format!(
                    "set of '{field}' has data but no offsets"
                )));
            }
            let offs: Vec<u64> = ob
                .chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
                .collect();
            if offs.windows(2).any(|w| w[1] < w[0]) || offs.last().is_some_and(|l| *l > size as u64)
            {
                return Err(Error::corrupt(format!(
                    "set offsets of '{field}' are invalid"
                )));
            }
            let members = offs
                .iter()
                .enumerate()
                .map(|(i, s)| {
                    let e = offs.get(i + 1).map_or(size, |e| *e as usize);
                    data[*s as usize..e].to_vec()
                })
                .collect();
            Ok(Condition::Value {
                field,
                op,
                operand: Operand::Set(members),
            })
        }
        0 => {
            let op = match r.u8()? {
                0 => Combination::And,
                1 => Combination::Or,
                2 => {
                    return Err(Error::Unsupported(
                        "a NOT condition node (TileDB 2.30 cannot evaluate it either)".into(),
                    ));
                }
                v => return Err(Error::corrupt(format!("invalid condition combination {v}"))),
            };
            let n = r.u64()?;
            if n < 2 {
                return Err(Error::corrupt(format!(
                    "condition expression with {n} children (TileDB requires two or more)"
                )));
            }
            // every child takes at least 14 bytes
            if n > (r.remaining() / 14) as u64 {
                return Err(Error::corrupt(format!(
                    "condition expression claims {n} children"
                )));
            }
            let children = (0..n)
                .map(|_| read(r, depth + 1))
                .collect::<Result<Vec<_>>>()?;
            Ok(Condition::Expr { op, children })
        }
        t => Err(Error::corrupt(format!("invalid condition node type {t}"))),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_and_layout() {
        let c = Condition::value("a", Op::Lt, 5i32.to_le_bytes())
            .unwrap()
            .or(Condition::set("s", vec![b"x".to_vec(), b"yz".to_vec()], true).unwrap());
        let b = serialize(&c).unwrap();
        let mut want = vec![0u8, 1];
        want.extend(2u64.to_le_bytes());
        want.extend([1, 0]);
        want.extend(1u32.to_le_bytes());
        want.push(b'a');
        want.extend(4u64.to_le_bytes());
        want.extend(5i32.to_le_bytes());
        want.extend([1, 7]);
        want.extend(1u32.to_le_bytes());
        want.push(b's');
        want.extend(3u64.to_le_bytes());
        want.extend(b"xyz");
        want.extend(16u64.to_le_bytes());
        want.extend(0u64.to_le_bytes());
        want.extend(1u64.to_le_bytes());
        assert_eq!(b, want);
        assert_eq!(parse(&b, "t").unwrap(), c);
        // every truncation is an error, never a panic
        for n in 0..b.len() {
            assert!(parse(&b[..n], "t").is_err());
        }
    }

    #[test]
    fn null_tests_read_back_as_empty_values() {
        let b = serialize(&Condition::is_null("s", false)).unwrap();
        assert_eq!(
            parse(&b, "t").unwrap(),
            Condition::value("s", Op::Eq, Vec::new()).unwrap()
        );
    }

    #[test]
    fn refusals() {
        assert!(matches!(
            parse(&[0, 2, 2, 0, 0, 0, 0, 0, 0, 0], "t"),
            Err(Error::Unsupported(_))
        ));
        assert!(parse(&[1, 9, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0], "t").is_err());
        assert!(parse(&[0, 0, 1, 0, 0, 0, 0, 0, 0, 0], "t").is_err());
        let deep: Vec<u8> = std::iter::repeat_n([0u8, 0, 2, 0, 0, 0, 0, 0, 0, 0], 400)
            .flatten()
            .collect();
        assert!(parse(&deep, "t").is_err());
    }
}
