//! The condition tree as TileDB 2.30 holds it (`tiledb/sm/query/ast/`): value nodes (a field,
//! an operator and a value, a set of values or a null test) under AND/OR expression nodes.
//! Negation is pushed down to the leaves (De Morgan), as TileDB's `get_negated_tree` does; the
//! builder functions construct trees without text, combining as TileDB's `combine` does.

use crate::error::{Error, Result};

/// A comparison operator, with TileDB's numbers (`tiledb_query_condition_op_t`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Op {
    /// `<`
    Lt = 0,
    /// `<=`
    Le = 1,
    /// `>`
    Gt = 2,
    /// `>=`
    Ge = 3,
    /// `==`
    Eq = 4,
    /// `!=`
    Ne = 5,
    /// `in [...]`
    In = 6,
    /// `not in [...]`
    NotIn = 7,
    /// Always true (a rewritten null test or enumeration label; TileDB-internal).
    AlwaysTrue = 253,
    /// Always false (likewise).
    AlwaysFalse = 254,
}

impl Op {
    /// The operator of number `v`, if TileDB defines it.
    pub fn from_u8(v: u8) -> Option<Op> {
        use Op::*;
        Some(match v {
            0 => Lt,
            1 => Le,
            2 => Gt,
            3 => Ge,
            4 => Eq,
            5 => Ne,
            6 => In,
            7 => NotIn,
            253 => AlwaysTrue,
            254 => AlwaysFalse,
            _ => return None,
        })
    }

    /// The operator matching exactly the cells this one does not match, nulls aside.
    pub fn negated(self) -> Op {
        use Op::*;
        match self {
            Lt => Ge,
            Le => Gt,
            Gt => Le,
            Ge => Lt,
            Eq => Ne,
            Ne => Eq,
            In => NotIn,
            NotIn => In,
            AlwaysTrue => AlwaysFalse,
            AlwaysFalse => AlwaysTrue,
        }
    }

    /// The operator with its operands swapped (`3 > a` is `a < 3`).
    pub fn swapped(self) -> Op {
        use Op::*;
        match self {
            Lt => Gt,
            Le => Ge,
            Gt => Lt,
            Ge => Le,
            o => o,
        }
    }

    /// Whether this is `in` or `not in`.
    pub fn is_set(self) -> bool {
        matches!(self, Op::In | Op::NotIn)
    }

    /// The operator as written in a condition.
    pub fn symbol(self) -> &'static str {
        use Op::*;
        match self {
            Lt => "<",
            Le => "<=",
            Gt => ">",
            Ge => ">=",
            Eq => "==",
            Ne => "!=",
            In => "in",
            NotIn => "not in",
            AlwaysTrue => "ALWAYS_TRUE",
            AlwaysFalse => "ALWAYS_FALSE",
        }
    }
}

/// How an expression node combines its children, with TileDB's numbers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum Combination {
    /// Every child holds.
    And = 0,
    /// Some child holds.
    Or = 1,
}

impl Combination {
    /// AND for OR and OR for AND (De Morgan).
    pub fn negated(self) -> Combination {
        match self {
            Combination::And => Combination::Or,
            Combination::Or => Combination::And,
        }
    }
}

/// What a value node compares its field with.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    /// A null test (`== None`, `!= None`).
    Null,
    /// One value in the field's type (raw bytes: little-endian numbers, string bytes).
    Value(Vec<u8>),
    /// The members of `in` / `not in`, in the order given.
    Set(Vec<Vec<u8>>),
}

/// A condition: a tree of value nodes under AND/OR nodes.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    /// A field compared with an operand.
    Value {
        /// Attribute or dimension name.
        field: String,
        /// Operator (`In`/`NotIn` exactly when the operand is a set).
        op: Op,
        /// Operand.
        operand: Operand,
    },
    /// Children combined by AND or OR.
    Expr {
        /// Combination.
        op: Combination,
        /// Children (at least two).
        children: Vec<Condition>,
    },
}

impl Condition {
    /// `field op value` with `value` already in the field's type (raw bytes).
    pub fn value(field: &str, op: Op, value: impl Into<Vec<u8>>) -> Result<Condition> {
        if op.is_set() {
            return Err(Error::invalid(format!(
                "condition on {field}: '{}' takes a set of values",
                op.symbol()
            )));
        }
        Ok(Condition::Value {
            field: field.to_string(),
            op,
            operand: Operand::Value(value.into()),
        })
    }

    /// `field in members` (or `not in`, with `negated`), members in the field's type.
    pub fn set(field: &str, members: Vec<Vec<u8>>, negated: bool) -> Result<Condition> {
        if members.is_empty() {
            return Err(Error::invalid(format!(
                "condition on {field}: a set membership needs at least one value"
            )));
        }
        Ok(Condition::Value {
            field: field.to_string(),
            op: if negated { Op::NotIn } else { Op::In },
            operand: Operand::Set(members),
        })
    }

    /// `field == None` (or `!= None` with `negated`).
    pub fn is_null(field: &str, negated: bool) -> Condition {
        Condition::Value {
            field: field.to_string(),
            op: if negated { Op::Ne } else { Op::Eq },
            operand: Operand::Null,
        }
    }

    /// `self and rhs`, flattened as TileDB's `combine` flattens.
    pub fn and(self, rhs: Condition) -> Condition {
        self.combine(rhs, Combination::And)
    }

    /// `self or rhs`, flattened as TileDB's `combine` flattens.
    pub fn or(self, rhs: Condition) -> Condition {
        self.combine(rhs, Combination::Or)
    }

    /// Combines two conditions as TileDB's `ASTNode::combine`: an operand that is already an
    /// expression of the same combination gives its children instead of itself.
    pub fn combine(self, rhs: Condition, op: Combination) -> Condition {
        let mut children = Vec::new();
        for side in [self, rhs] {
            match side {
                Condition::Expr { op: o, children: c } if o == op => children.extend(c),
                other => children.push(other),
            }
        }
        Condition::Expr { op, children }
    }

    /// The negation, pushed down to the leaves as TileDB's `get_negated_tree`: operators
    /// negated (so nulls still fail every comparison but the null tests), AND and OR swapped.
    pub fn negated(&self) -> Condition {
        match self {
            Condition::Value { field, op, operand } => Condition::Value {
                field: field.clone(),
                op: op.negated(),
                operand: operand.clone(),
            },
            Condition::Expr { op, children } => Condition::Expr {
                op: op.negated(),
                children: children.iter().map(Condition::negated).collect(),
            },
        }
    }

    /// The field names the condition reads, each once, in order of appearance.
    pub fn fields(&self) -> Vec<&str> {
        let mut out: Vec<&str> = Vec::new();
        self.visit_fields(&mut out);
        out
    }

    fn visit_fields<'a>(&'a self, out: &mut Vec<&'a str>) {
        match self {
            Condition::Value { field, .. } => {
                if !out.contains(&field.as_str()) {
                    out.push(field);
                }
            }
            Condition::Expr { children, .. } => children.iter().for_each(|c| c.visit_fields(out)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(f: &str, op: Op, x: i32) -> Condition {
        Condition::value(f, op, x.to_le_bytes()).unwrap()
    }

    #[test]
    fn combine_flattens_like_tiledb() {
        let c = v("a", Op::Lt, 1)
            .and(v("b", Op::Gt, 2))
            .and(v("c", Op::Eq, 3));
        let Condition::Expr { op, children } = &c else {
            panic!("not an expression")
        };
        assert_eq!((*op, children.len()), (Combination::And, 3));
        let d = v("a", Op::Lt, 1).or(c.clone());
        let Condition::Expr { children, .. } = &d else {
            panic!("not an expression")
        };
        assert_eq!(children.len(), 2);
        assert_eq!(children[1], c);
    }

    #[test]
    fn negation_is_de_morgan_on_leaves() {
        let c = v("a", Op::Lt, 1).or(Condition::set("b", vec![vec![1]], false).unwrap());
        let n = c.negated();
        assert_eq!(
            n,
            v("a", Op::Ge, 1).and(Condition::set("b", vec![vec![1]], true).unwrap())
        );
        assert_eq!(n.negated(), c);
        assert_eq!(c.fields(), vec!["a", "b"]);
    }

    #[test]
    fn builder_refuses_bad_shapes() {
        assert!(Condition::value("a", Op::In, vec![1]).is_err());
        assert!(Condition::set("a", vec![], false).is_err());
    }
}
