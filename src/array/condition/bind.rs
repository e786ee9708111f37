//! Binding a condition text to a schema, as TileDB-Py 0.36.1 and libtiledb 2.30 type it:
//! fields are attributes or (sparse arrays) dimensions; literals take the field's type
//! (`a < 2.5` on INT32 is `a < 2`, truncated as numpy casts; FLOAT32 literals are rounded to
//! FLOAT32; an integer outside the type's range is an error); datetimes compare as INT64, BOOL
//! as UINT8; enumerated attributes compare by label, rewritten to the label's index as
//! TileDB's `rewrite_for_schema` does (an absent label: `!=` always true, else always false);
//! null tests on non-nullable fields become always true (`!=`) or always false (`==`).
//! Where TileDB-Py fails on valid input this does better: `not` over a compound condition or
//! over `in` (TileDB-Py crashes), `val(3) < a`, negative numbers inside `in [...]`.

use super::ast::{Condition, Op, Operand};
use super::lexer::Literal;
use super::parser::{CmpOp, Syn, parse};
use super::syntax_error;
use crate::array::schema::{ArraySchema, Enumeration, VAR_NUM};
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;

/// Parses `text` (TileDB-Py's condition syntax) and types it against `schema`. Enumerated
/// attributes need their enumerations, from `enumerations` or the schema's loaded ones.
pub fn parse_condition(
    text: &str,
    schema: &ArraySchema,
    enumerations: &[Enumeration],
) -> Result<Condition> {
    let syn = parse(text)?;
    Binder {
        text,
        schema,
        enumerations,
    }
    .condition(&syn)
}

struct Binder<'a> {
    text: &'a str,
    schema: &'a ArraySchema,
    enumerations: &'a [Enumeration],
}

/// The facts of a field that typing needs.
struct Field<'a> {
    name: String,
    datatype: Datatype,
    nullable: bool,
    enumeration: Option<&'a Enumeration>,
}

fn is_string(d: Datatype) -> bool {
    matches!(
        d,
        Datatype::Char | Datatype::StringAscii | Datatype::StringUtf8
    )
}

impl<'a> Binder<'a> {
    fn err(&self, pos: usize, msg: impl Into<String>) -> Error {
        syntax_error(self.text, pos, msg)
    }

    fn condition(&self, s: &Syn) -> Result<Condition> {
        match s {
            Syn::BoolOp(and, values, _) => {
                let mut it = values.iter();
                let mut acc = self.condition(it.next().expect("two values"))?;
                for v in it {
                    let c = self.condition(v)?;
                    acc = if *and { acc.and(c) } else { acc.or(c) };
                }
                Ok(acc)
            }
            Syn::BinOp(op, operands, pos) => {
                if *op == "^" {
                    return Err(self.err(
                        *pos,
                        "'^' is not supported; combine with 'and', 'or', '&', '|'",
                    ));
                }
                let mut it = operands.iter();
                let mut acc = self.condition(it.next().expect("two operands"))?;
                for o in it {
                    let c = self.condition(o)?;
                    acc = if *op == "&" { acc.and(c) } else { acc.or(c) };
                }
                Ok(acc)
            }
            Syn::Not(e, _) => Ok(self.condition(e)?.negated()),
            Syn::Compare(left, ops, comps, _) => self.compare(left, ops, comps),
            other => Err(self.err(
                other.pos(),
                "a query condition must be made up of one or more boolean expressions \
                 (did you mean to compare a field with a value?)",
            )),
        }
    }

    fn compare(&self, left: &Syn, ops: &[(CmpOp, usize)], comps: &[Syn]) -> Result<Condition> {
        let (op0, pos0) = ops[0];
        match op0 {
            // TileDB-Py's messages, word for word.
            CmpOp::Is => {
                return Err(self.err(pos0, "the `is` operator is not supported; use `==`"));
            }
            CmpOp::IsNot => {
                return Err(self.err(pos0, "the `is not` operator is not supported; use `!=`"));
            }
            CmpOp::In | CmpOp::NotIn => {
                if ops.len() > 1 {
                    return Err(self.err(ops[1].1, "a set membership cannot be chained"));
                }
                return self.membership(left, op0 == CmpOp::NotIn, &comps[0], pos0);
            }
            _ => {}
        }
        let mut acc = self.pair(left, op0, pos0, &comps[0])?;
        for k in 1..ops.len() {
            let (op, pos) = ops[k];
            if matches!(op, CmpOp::In | CmpOp::NotIn | CmpOp::Is | CmpOp::IsNot) {
                return Err(self.err(pos, "only comparisons can be chained"));
            }
            acc = acc.and(self.pair(&comps[k - 1], op, pos, &comps[k])?);
        }
        Ok(acc)
    }

    /// One `lhs op rhs` comparison; the field may be on either side.
    fn pair(&self, lhs: &Syn, op: CmpOp, pos: usize, rhs: &Syn) -> Result<Condition> {
        let op = match op {
            CmpOp::Lt => Op::Lt,
            CmpOp::Le => Op::Le,
            CmpOp::Gt => Op::Gt,
            CmpOp::Ge => Op::Ge,
            CmpOp::Eq => Op::Eq,
            CmpOp::Ne => Op::Ne,
            _ => unreachable!("comparisons only"),
        };
        let (var, val, op) = if self.is_field(lhs) {
            (lhs, rhs, op)
        } else if self.is_field(rhs) {
            (rhs, lhs, op.swapped())
        } else {
            return Err(self.err(
                pos,
                "a comparison needs a field (a name, attr(\"...\") or dim(\"...\")) on one side",
            ));
        };
        let field = self.field(var)?;
        let lit = self.literal(val)?;
        if let Literal::None = lit {
            if !matches!(op, Op::Eq | Op::Ne) {
                return Err(self.err(pos, "a null value can only be compared with '==' or '!='"));
            }
            return Ok(if field.nullable {
                Condition::is_null(&field.name, op == Op::Ne)
            } else {
                always(&field, op == Op::Ne)
            });
        }
        if let Some(e) = field.enumeration {
            return self.enum_value(&field, e, op, &lit, val.pos());
        }
        let bytes = self.typed(&field, &lit, val.pos(), false)?;
        Ok(Condition::Value {
            field: field.name,
            op,
            operand: Operand::Value(bytes),
        })
    }

    fn membership(&self, var: &Syn, negated: bool, list: &Syn, pos: usize) -> Result<Condition> {
        let Syn::List(items, lpos) = list else {
            return Err(self.err(
                list.pos(),
                "'in' must be followed by a list: name in [1, 2]",
            ));
        };
        if !self.is_field(var) || matches!(var, Syn::Call(f, ..) if f == "val") {
            return Err(self.err(var.pos(), "the left side of 'in' must be a field"));
        }
        let field = self.field(var)?;
        if items.is_empty() {
            return Err(self.err(
                *lpos,
                "At least one value must be provided to the set membership",
            ));
        }
        let lits: Vec<(Literal, usize)> = items
            .iter()
            .map(|i| Ok((self.literal(i)?, i.pos())))
            .collect::<Result<_>>()?;
        if let Some(e) = field.enumeration {
            return self.enum_set(&field, e, negated, &lits);
        }
        let members = lits
            .iter()
            .map(|(l, p)| self.typed(&field, l, *p, true))
            .collect::<Result<Vec<_>>>()?;
        let _ = pos;
        Condition::set(&field.name, members, negated)
    }

    /// A name, `attr("x")`, `dim("x")` (TileDB-Py's "variable nodes"; `val(...)` is a value).
    fn is_field(&self, s: &Syn) -> bool {
        match s {
            Syn::Name(..) => true,
            Syn::Call(f, args, _) => {
                (f == "attr" || f == "dim")
                    && matches!(args.as_slice(), [Syn::Lit(Literal::Str(_), _)])
            }
            _ => false,
        }
    }

    fn field(&self, s: &Syn) -> Result<Field<'a>> {
        let (name, kind, pos) = match s {
            Syn::Name(n, p) => (n.clone(), None, *p),
            Syn::Call(f, args, p) => match args.as_slice() {
                [Syn::Lit(Literal::Str(n), _)] => (n.clone(), Some(f.as_str()), *p),
                _ => return Err(self.err(*p, format!("{f}() takes one string argument"))),
            },
            other => return Err(self.err(other.pos(), "expected a field name")),
        };
        let schema = self.schema;
        if let Some(i) = schema.attribute_index(&name) {
            if kind == Some("dim") {
                return Err(self.err(pos, format!("'{name}' is not a dimension")));
            }
            let a = &schema.attributes[i];
            let enumeration = match &a.enumeration {
                Some(e) => Some(
                    self.enumerations
                        .iter()
                        .find(|x| &x.name == e)
                        .or_else(|| schema.loaded_enumeration(e))
                        .ok_or_else(|| {
                            Error::invalid(format!(
                                "condition on '{name}': the values of its enumeration '{e}' are not loaded"
                            ))
                        })?,
                ),
                None => None,
            };
            self.check_field(&name, a.datatype, a.cell_val_num, pos)?;
            return Ok(Field {
                name,
                datatype: enumeration.map_or(a.datatype, |e| e.datatype),
                nullable: a.nullable,
                enumeration,
            });
        }
        if let Some(j) = schema.dimension_index(&name) {
            if kind == Some("attr") {
                return Err(self.err(pos, format!("'{name}' is not an attribute")));
            }
            if schema.is_dense() {
                return Err(self.err(
                    pos,
                    format!(
                        "Cannot apply query condition to dimensions on dense arrays \
                         (dimension '{name}')"
                    ),
                ));
            }
            let d = &schema.dimensions[j];
            self.check_field(&name, d.datatype, d.cell_val_num, pos)?;
            return Ok(Field {
                name,
                datatype: d.datatype,
                nullable: false,
                enumeration: None,
            });
        }
        Err(self.err(pos, format!("unknown attribute or dimension '{name}'")))
    }

    /// TileDB's `check_node_validity` rules on the field's type.
    fn check_field(&self, name: &str, d: Datatype, cell_val_num: u32, pos: usize) -> Result<()> {
        use Datatype::*;
        if matches!(
            d,
            Any | StringUtf16 | StringUtf32 | StringUcs2 | StringUcs4 | Blob | GeomWkb | GeomWkt
        ) {
            return Err(self.err(
                pos,
                format!("field '{name}' of type {d} cannot be compared"),
            ));
        }
        if !is_string(d) && cell_val_num != 1 {
            let what = if cell_val_num == VAR_NUM {
                "var-size"
            } else {
                "multi-value"
            };
            return Err(self.err(
                pos,
                format!(
                    "field '{name}' is {what}: only strings may hold more than one value per cell"
                ),
            ));
        }
        Ok(())
    }

    /// The constant of a value node: a literal, a signed literal or `val(literal)`.
    fn literal(&self, s: &Syn) -> Result<Literal> {
        match s {
            Syn::Lit(l, _) => Ok(l.clone()),
            Syn::Call(f, args, p) if f == "val" => match args.as_slice() {
                [a] => self.literal(a),
                _ => Err(self.err(*p, "val() takes exactly one argument")),
            },
            Syn::Sign(neg, e, p) => match (self.literal(e)?, neg) {
                (l, false) => match l {
                    Literal::Int(_) | Literal::Float(_) | Literal::Bool(_) => Ok(l),
                    _ => Err(self.err(*p, "a sign applies to numbers only")),
                },
                (Literal::Int(v), true) => Ok(Literal::Int(-v)),
                (Literal::Bool(b), true) => Ok(Literal::Int(-i128::from(b))),
                (Literal::Float(v), true) => Ok(Literal::Float(-v)),
                _ => Err(self.err(*p, "a sign applies to numbers only")),
            },
            Syn::Name(n, p) => Err(self.err(
                *p,
                format!(
                    "'{n}' is a name: right-hand sides must be constant expressions, not \
                     variables -- did you mean to quote the right-hand side as a string?"
                ),
            )),
            other => Err(self.err(other.pos(), "expected a constant value")),
        }
    }

    /// The bytes of `lit` in the field's type, cast as TileDB-Py casts (numpy for single
    /// values; pybind11 for set members, which refuses floats for integer fields).
    fn typed(&self, f: &Field<'_>, lit: &Literal, pos: usize, member: bool) -> Result<Vec<u8>> {
        use Datatype::*;
        let name = &f.name;
        let d = f.datatype;
        if is_string(d) {
            return match lit {
                Literal::Str(s) => Ok(s.as_bytes().to_vec()),
                Literal::Bytes(b) => Ok(b.clone()),
                _ => Err(self.err(
                    pos,
                    format!("'{name}' holds strings: compare it with a string"),
                )),
            };
        }
        let int = match lit {
            Literal::Str(_) | Literal::Bytes(_) => {
                return Err(self.err(pos, format!("cannot cast a string to {d} (field '{name}')")));
            }
            Literal::None => {
                return Err(self.err(pos, "None can only be compared with '==' or '!='"));
            }
            Literal::Int(v) => Some(*v),
            Literal::Bool(b) => Some(i128::from(*b)),
            Literal::Float(x) => {
                if matches!(d, Float32 | Float64) {
                    None
                } else if member {
                    return Err(self.err(
                        pos,
                        format!("set members of integer field '{name}' must be integers"),
                    ));
                } else if !x.is_finite() {
                    return Err(self.err(pos, format!("cannot cast {x} to {d} (field '{name}')")));
                } else {
                    // numpy casts a float to an integer type by truncation toward zero
                    Some(x.trunc() as i128)
                }
            }
        };
        match (d, int, lit) {
            (Float32, Some(v), _) => Ok((v as f32).to_le_bytes().to_vec()),
            (Float64, Some(v), _) => Ok((v as f64).to_le_bytes().to_vec()),
            (Float32, None, Literal::Float(x)) => Ok((*x as f32).to_le_bytes().to_vec()),
            (Float64, None, Literal::Float(x)) => Ok(x.to_le_bytes().to_vec()),
            (_, Some(v), _) => {
                let (lo, hi, size): (i128, i128, usize) = match d {
                    Int8 => (i8::MIN.into(), i8::MAX.into(), 1),
                    Uint8 | Bool => (0, u8::MAX.into(), 1),
                    Int16 => (i16::MIN.into(), i16::MAX.into(), 2),
                    Uint16 => (0, u16::MAX.into(), 2),
                    Int32 => (i32::MIN.into(), i32::MAX.into(), 4),
                    Uint32 => (0, u32::MAX.into(), 4),
                    Uint64 => (0, u64::MAX.into(), 8),
                    d if d == Int64 || d.is_datetime() || d.is_time() => {
                        (i64::MIN.into(), i64::MAX.into(), 8)
                    }
                    d => {
                        return Err(self.err(
                            pos,
                            format!("field '{name}' of type {d} cannot be compared"),
                        ));
                    }
                };
                if v < lo || v > hi {
                    return Err(self.err(
                        pos,
                        format!("{v} is out of bounds for {d} (field '{name}')"),
                    ));
                }
                Ok(v.to_le_bytes()[..size].to_vec())
            }
            _ => unreachable!("floats handled above"),
        }
    }

    fn enum_index(&self, f: &Field<'_>, e: &Enumeration, bytes: &[u8]) -> Option<Vec<u8>> {
        (0..e.len())
            .find(|i| e.value(*i) == Some(bytes))
            .map(|i| self.attr_int(f, i as i128))
    }

    fn attr_int(&self, f: &Field<'_>, v: i128) -> Vec<u8> {
        let a = &self.schema.attributes[self.schema.attribute_index(&f.name).expect("attribute")];
        v.to_le_bytes()[..a.datatype.size()].to_vec()
    }

    fn enum_value(
        &self,
        f: &Field<'_>,
        e: &Enumeration,
        op: Op,
        lit: &Literal,
        pos: usize,
    ) -> Result<Condition> {
        if !e.ordered && matches!(op, Op::Lt | Op::Le | Op::Gt | Op::Ge) {
            return Err(self.err(
                pos,
                format!(
                    "cannot apply an inequality to unordered enumeration '{}' of '{}'",
                    e.name, f.name
                ),
            ));
        }
        let bytes = self.typed(f, lit, pos, false)?;
        Ok(match self.enum_index(f, e, &bytes) {
            Some(idx) => Condition::Value {
                field: f.name.clone(),
                op,
                operand: Operand::Value(idx),
            },
            None => Condition::Value {
                field: f.name.clone(),
                op: if op == Op::Ne {
                    Op::AlwaysTrue
                } else {
                    Op::AlwaysFalse
                },
                operand: Operand::Value(self.attr_int(f, 0)),
            },
        })
    }

    fn enum_set(
        &self,
        f: &Field<'_>,
        e: &Enumeration,
        negated: bool,
        lits: &[(Literal, usize)],
    ) -> Result<Condition> {
        let mut members: Vec<Vec<u8>> = Vec::new();
        for (l, p) in lits {
            let b = self.typed(f, l, *p, true)?;
            if let Some(idx) = self.enum_index(f, e, &b)
                && !members.contains(&idx)
            {
                members.push(idx);
            }
        }
        Ok(Condition::Value {
            field: f.name.clone(),
            op: if negated { Op::NotIn } else { Op::In },
            operand: Operand::Set(members),
        })
    }
}

/// The rewritten null test of a non-nullable field.
fn always(f: &Field<'_>, ne: bool) -> Condition {
    Condition::Value {
        field: f.name.clone(),
        op: if ne { Op::AlwaysTrue } else { Op::AlwaysFalse },
        operand: Operand::Null,
    }
}
