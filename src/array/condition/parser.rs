//! The syntax tree of a condition text, read with Python's precedence (as TileDB-Py reads it
//! with `ast.parse`): `or` < `and` < `not` < comparisons (chained) < `|` < `^` < `&` < unary
//! signs < calls and atoms. So `a < 2 | a > 4` is `a < (2 | a) > 4`, refused later, and
//! conditions joined by `&`/`|` need parentheses, exactly as in TileDB-Py.

use super::lexer::{Literal, Tok, tokenize};
use super::parse_error as syntax_error;
use crate::error::Result;

/// A comparison operator as written.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CmpOp {
    /// `<`
    Lt,
    /// `<=`
    Le,
    /// `>`
    Gt,
    /// `>=`
    Ge,
    /// `==`
    Eq,
    /// `!=`
    Ne,
    /// `in`
    In,
    /// `not in`
    NotIn,
    /// `is`
    Is,
    /// `is not`
    IsNot,
}

/// A node of the syntax tree; `pos` is the byte offset of its first token.
#[derive(Clone, Debug, PartialEq)]
pub enum Syn {
    /// A bare name.
    Name(String, usize),
    /// A literal.
    Lit(Literal, usize),
    /// `func(args)`.
    Call(String, Vec<Syn>, usize),
    /// `[a, b, ...]`.
    List(Vec<Syn>, usize),
    /// `x and y and ...` (`and_` true) or `x or y or ...`.
    BoolOp(bool, Vec<Syn>, usize),
    /// `not x`.
    Not(Box<Syn>, usize),
    /// `-x` (`true`), `+x` (`false`).
    Sign(bool, Box<Syn>, usize),
    /// `~x`.
    Invert(Box<Syn>, usize),
    /// `x & y & ...`, `x | y | ...`, `x ^ y ^ ...` (the operator's symbol; a left-to-right
    /// chain of the same operator is one node).
    BinOp(&'static str, Vec<Syn>, usize),
    /// `left op0 c0 op1 c1 ...` with each operator's position.
    Compare(Box<Syn>, Vec<(CmpOp, usize)>, Vec<Syn>, usize),
}

impl Syn {
    /// The byte offset of the node in the text.
    pub fn pos(&self) -> usize {
        match self {
            Syn::Name(_, p)
            | Syn::Lit(_, p)
            | Syn::Call(_, _, p)
            | Syn::List(_, p)
            | Syn::BoolOp(_, _, p)
            | Syn::Not(_, p)
            | Syn::Sign(_, _, p)
            | Syn::Invert(_, p)
            | Syn::BinOp(_, _, p)
            | Syn::Compare(_, _, _, p) => *p,
        }
    }
}

/// Nesting deeper than this is refused (Python refuses deep nesting as well).
const MAX_DEPTH: usize = 64;

/// Parses `text` into a syntax tree.
pub fn parse(text: &str) -> Result<Syn> {
    let toks = tokenize(text)?;
    if toks.len() == 1 {
        return Err(syntax_error(text, 0, "the condition is empty"));
    }
    let mut p = Parser {
        text,
        toks,
        i: 0,
        depth: 0,
    };
    let e = p.or_expr()?;
    match p.peek() {
        Tok::End => Ok(e),
        t => Err(p.err_here(format!("unexpected {}", describe(t)))),
    }
}

fn describe(t: &Tok) -> String {
    match t {
        Tok::Name(n) => format!("name '{n}'"),
        Tok::Lit(_) => "literal".to_string(),
        Tok::Kw(k) => format!("'{k}'"),
        Tok::Punct(p) => format!("'{p}'"),
        Tok::End => "end of condition".to_string(),
    }
}

struct Parser<'a> {
    text: &'a str,
    toks: Vec<(Tok, usize)>,
    i: usize,
    depth: usize,
}

impl Parser<'_> {
    fn peek(&self) -> &Tok {
        &self.toks[self.i].0
    }

    fn pos(&self) -> usize {
        self.toks[self.i].1
    }

    fn bump(&mut self) -> (Tok, usize) {
        let t = self.toks[self.i].clone();
        if self.i + 1 < self.toks.len() {
            self.i += 1;
        }
        t
    }

    fn err_here(&self, msg: impl Into<String>) -> crate::error::Error {
        syntax_error(self.text, self.pos(), msg)
    }

    fn eat(&mut self, t: &Tok) -> bool {
        if self.peek() == t {
            self.bump();
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &'static str) -> Result<()> {
        if self.eat(&Tok::Punct(p)) {
            Ok(())
        } else {
            Err(self.err_here(format!("expected '{p}', found {}", describe(self.peek()))))
        }
    }

    fn nest<T>(&mut self, f: impl FnOnce(&mut Self) -> Result<T>) -> Result<T> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(self.err_here("the condition is nested too deeply"));
        }
        let r = f(self);
        self.depth -= 1;
        r
    }

    fn or_expr(&mut self) -> Result<Syn> {
        self.bool_chain("or", Self::and_expr)
    }

    fn and_expr(&mut self) -> Result<Syn> {
        self.bool_chain("and", Self::not_expr)
    }

    fn bool_chain(&mut self, kw: &'static str, next: fn(&mut Self) -> Result<Syn>) -> Result<Syn> {
        let first = next(self)?;
        let pos = first.pos();
        let mut values = vec![first];
        while self.eat(&Tok::Kw(kw)) {
            values.push(next(self)?);
        }
        Ok(if values.len() == 1 {
            values.pop().expect("one")
        } else {
            Syn::BoolOp(kw == "and", values, pos)
        })
    }

    fn not_expr(&mut self) -> Result<Syn> {
        if matches!(self.peek(), Tok::Kw("not")) {
            let (_, pos) = self.bump();
            let e = self.nest(Self::not_expr)?;
            return Ok(Syn::Not(Box::new(e), pos));
        }
        self.comparison()
    }

    fn comparison(&mut self) -> Result<Syn> {
        let left = self.bitor()?;
        let pos = left.pos();
        let mut ops = Vec::new();
        let mut comps = Vec::new();
        loop {
            let at = self.pos();
            let op = match self.peek() {
                Tok::Punct("<") => CmpOp::Lt,
                Tok::Punct("<=") => CmpOp::Le,
                Tok::Punct(">") => CmpOp::Gt,
                Tok::Punct(">=") => CmpOp::Ge,
                Tok::Punct("==") => CmpOp::Eq,
                Tok::Punct("!=") => CmpOp::Ne,
                Tok::Kw("in") => CmpOp::In,
                Tok::Kw("is") => {
                    self.bump();
                    if self.eat(&Tok::Kw("not")) {
                        ops.push((CmpOp::IsNot, at));
                    } else {
                        ops.push((CmpOp::Is, at));
                    }
                    comps.push(self.bitor()?);
                    continue;
                }
                Tok::Kw("not")
                    if self.toks.get(self.i + 1).map(|t| &t.0) == Some(&Tok::Kw("in")) =>
                {
                    self.bump();
                    CmpOp::NotIn
                }
                _ => break,
            };
            self.bump();
            ops.push((op, at));
            comps.push(self.bitor()?);
        }
        Ok(if ops.is_empty() {
            left
        } else {
            Syn::Compare(Box::new(left), ops, comps, pos)
        })
    }

    fn bitor(&mut self) -> Result<Syn> {
        self.binop("|", Self::bitxor)
    }

    fn bitxor(&mut self) -> Result<Syn> {
        self.binop("^", Self::bitand)
    }

    fn bitand(&mut self) -> Result<Syn> {
        self.binop("&", Self::arith)
    }

    fn binop(&mut self, sym: &'static str, next: fn(&mut Self) -> Result<Syn>) -> Result<Syn> {
        let first = next(self)?;
        let pos = first.pos();
        let mut operands = vec![first];
        while self.peek() == &Tok::Punct(sym) {
            self.bump();
            operands.push(next(self)?);
        }
        Ok(if operands.len() == 1 {
            operands.pop().expect("one")
        } else {
            Syn::BinOp(sym, operands, pos)
        })
    }

    /// Binary `+ - * /` are valid Python but not conditions: refused where they appear.
    fn arith(&mut self) -> Result<Syn> {
        let e = self.unary()?;
        if let Tok::Punct(p @ ("+" | "-" | "*" | "/")) = self.peek() {
            return Err(self.err_here(format!(
                "arithmetic ('{p}') is not supported in a condition"
            )));
        }
        Ok(e)
    }

    fn unary(&mut self) -> Result<Syn> {
        match self.peek() {
            Tok::Punct(s @ ("-" | "+" | "~")) => {
                let s = *s;
                let (_, pos) = self.bump();
                let e = self.nest(Self::unary)?;
                Ok(if s == "~" {
                    Syn::Invert(Box::new(e), pos)
                } else {
                    Syn::Sign(s == "-", Box::new(e), pos)
                })
            }
            _ => self.primary(),
        }
    }

    fn primary(&mut self) -> Result<Syn> {
        let (tok, pos) = self.bump();
        match tok {
            Tok::Lit(l) => Ok(Syn::Lit(l, pos)),
            Tok::Name(n) => {
                if self.eat(&Tok::Punct("(")) {
                    let args = self.items(")")?;
                    Ok(Syn::Call(n, args, pos))
                } else {
                    Ok(Syn::Name(n, pos))
                }
            }
            Tok::Punct("(") => {
                let e = self.nest(Self::or_expr)?;
                self.expect(")")?;
                Ok(e)
            }
            Tok::Punct("[") => Ok(Syn::List(self.items("]")?, pos)),
            t => Err(syntax_error(
                self.text,
                pos,
                format!("unexpected {}", describe(&t)),
            )),
        }
    }

    /// Comma-separated expressions up to `close` (a trailing comma allowed).
    fn items(&mut self, close: &'static str) -> Result<Vec<Syn>> {
        let mut out = Vec::new();
        loop {
            if self.eat(&Tok::Punct(close)) {
                return Ok(out);
            }
            out.push(self.nest(Self::or_expr)?);
            if !self.eat(&Tok::Punct(",")) {
                self.expect(close)?;
                return Ok(out);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn python_precedence() {
        // `|` binds tighter than `<`: a chained comparison with a BinOp inside.
        let Syn::Compare(_, ops, comps, _) = parse("a < 2 | a > 4").unwrap() else {
            panic!("not a comparison")
        };
        assert_eq!(ops.len(), 2);
        assert!(matches!(comps[0], Syn::BinOp("|", ..)));
        assert!(
            matches!(parse("(a < 1) & (b < 2) & (c < 3)").unwrap(), Syn::BinOp("&", ref v, _) if v.len() == 3)
        );
        // `or` below `and` below `not`.
        let Syn::BoolOp(false, v, _) = parse("a < 1 or not b > 2 and c == 3").unwrap() else {
            panic!("not or")
        };
        assert!(matches!(&v[1], Syn::BoolOp(true, w, _) if matches!(w[0], Syn::Not(..))));
        assert!(matches!(
            parse("a not in [1, 2,]").unwrap(),
            Syn::Compare(_, ref o, ref c, _) if o[0].0 == CmpOp::NotIn && matches!(&c[0], Syn::List(l, _) if l.len() == 2)
        ));
    }

    #[test]
    fn errors_name_the_column() {
        for (t, col) in [
            ("a > 3 and", "column 10"),
            ("(a > 1", "column 7"),
            ("a + 1 > 2", "column 3"),
            ("", "column 1"),
        ] {
            let e = parse(t).unwrap_err();
            assert!(e.message().contains(col), "{t}: {}", e.message());
        }
        assert!(parse(&"(".repeat(500)).is_err());
        assert!(parse(&"not ".repeat(500)).is_err());
    }
}
