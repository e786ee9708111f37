//! Tokens of TileDB-Py's condition text: the part of Python's expression syntax that
//! `tiledb.QueryCondition` accepts (names, numbers, strings, bytes, `None`/`True`/`False`,
//! comparison, boolean and bitwise operators, brackets). Positions are byte offsets.

use super::parse_error as syntax_error;
use crate::error::Result;

/// A literal value as Python reads it.
#[derive(Clone, Debug, PartialEq)]
pub enum Literal {
    /// An integer (Python ints are unbounded; wider ones are refused here).
    Int(i128),
    /// A float.
    Float(f64),
    /// A `str` literal, as UTF-8.
    Str(String),
    /// A `bytes` literal.
    Bytes(Vec<u8>),
    /// `True` / `False`.
    Bool(bool),
    /// `None`.
    None,
}

/// One token.
#[derive(Clone, Debug, PartialEq)]
pub enum Tok {
    /// An identifier.
    Name(String),
    /// A literal.
    Lit(Literal),
    /// A keyword: `and`, `or`, `not`, `in`, `is`.
    Kw(&'static str),
    /// An operator or bracket.
    Punct(&'static str),
    /// End of text.
    End,
}

const PUNCT: [&str; 19] = [
    "<=", ">=", "==", "!=", "<", ">", "&", "|", "^", "(", ")", "[", "]", ",", "-", "+", "~", "*",
    "/",
];

/// Splits `text` into tokens with their byte offsets, ending with [`Tok::End`].
pub fn tokenize(text: &str) -> Result<Vec<(Tok, usize)>> {
    let b = text.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' || c == b'\n' || c == b'\r' || c == b'\x0c' {
            i += 1;
            continue;
        }
        if c == b'\\' && matches!(b.get(i + 1), Some(b'\n')) {
            i += 2;
            continue;
        }
        if c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
            continue;
        }
        let start = i;
        if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(|d| d.is_ascii_digit())) {
            let (lit, end) = number(text, i)?;
            out.push((Tok::Lit(lit), start));
            i = end;
            continue;
        }
        let ch = text[i..].chars().next().expect("in bounds");
        if ch == '_' || ch.is_alphabetic() {
            let mut end = i;
            for (k, x) in text[i..].char_indices() {
                if x == '_' || x.is_alphanumeric() {
                    end = i + k + x.len_utf8();
                } else {
                    break;
                }
            }
            let word = &text[i..end];
            if matches!(b.get(end), Some(b'\'') | Some(b'"')) && is_prefix(word) {
                let (lit, e) = string(text, end, word)?;
                out.push((Tok::Lit(lit), start));
                i = e;
                continue;
            }
            let tok = match word {
                "and" => Tok::Kw("and"),
                "or" => Tok::Kw("or"),
                "not" => Tok::Kw("not"),
                "in" => Tok::Kw("in"),
                "is" => Tok::Kw("is"),
                "None" => Tok::Lit(Literal::None),
                "True" => Tok::Lit(Literal::Bool(true)),
                "False" => Tok::Lit(Literal::Bool(false)),
                w => Tok::Name(w.to_string()),
            };
            out.push((tok, start));
            i = end;
            continue;
        }
        if c == b'\'' || c == b'"' {
            let (lit, e) = string(text, i, "")?;
            out.push((Tok::Lit(lit), start));
            i = e;
            continue;
        }
        match PUNCT.iter().find(|p| text[i..].starts_with(**p)) {
            Some(p) => {
                out.push((Tok::Punct(p), start));
                i += p.len();
            }
            None => {
                return Err(syntax_error(
                    text,
                    i,
                    format!("unexpected character {ch:?}"),
                ));
            }
        }
    }
    out.push((Tok::End, b.len()));
    // Adjacent string literals concatenate, as in Python.
    let mut merged: Vec<(Tok, usize)> = Vec::with_capacity(out.len());
    for (t, p) in out {
        if let (Some((Tok::Lit(prev), pp)), Tok::Lit(cur)) = (merged.last_mut(), &t) {
            match (prev, cur) {
                (Literal::Str(a), Literal::Str(b)) => {
                    a.push_str(b);
                    continue;
                }
                (Literal::Bytes(a), Literal::Bytes(b)) => {
                    a.extend_from_slice(b);
                    continue;
                }
                (Literal::Str(_), Literal::Bytes(_)) | (Literal::Bytes(_), Literal::Str(_)) => {
                    return Err(syntax_error(
                        text,
                        *pp,
                        "cannot mix bytes and nonbytes literals",
                    ));
                }
                _ => {}
            }
        }
        merged.push((t, p));
    }
    Ok(merged)
}

fn is_prefix(word: &str) -> bool {
    matches!(
        word.to_ascii_lowercase().as_str(),
        "r" | "u" | "b" | "br" | "rb" | "f" | "rf" | "fr"
    )
}

/// A Python number starting at `i`: its value and the offset after it.
fn number(text: &str, i: usize) -> Result<(Literal, usize)> {
    let b = text.as_bytes();
    let mut end = i;
    while end < b.len()
        && (b[end].is_ascii_alphanumeric()
            || b[end] == b'_'
            || b[end] == b'.'
            || ((b[end] == b'+' || b[end] == b'-')
                && matches!(b[end - 1], b'e' | b'E')
                && !text[i..end].starts_with("0x")
                && !text[i..end].starts_with("0X")))
    {
        end += 1;
    }
    let raw = &text[i..end];
    let bad = || syntax_error(text, i, format!("invalid number literal '{raw}'"));
    if raw.starts_with('_') || raw.ends_with('_') || raw.contains("__") {
        return Err(bad());
    }
    let s: String = raw.chars().filter(|c| *c != '_').collect();
    let lower = s.to_ascii_lowercase();
    for (prefix, radix) in [("0x", 16), ("0o", 8), ("0b", 2)] {
        if let Some(digits) = lower.strip_prefix(prefix) {
            let digits = digits.strip_prefix('_').unwrap_or(digits);
            return i128::from_str_radix(digits, radix)
                .ok()
                .filter(|_| !digits.is_empty() && !digits.starts_with(['+', '-']))
                .map(|v| (Literal::Int(v), end))
                .ok_or_else(bad);
        }
    }
    if lower.ends_with('j') {
        return Err(syntax_error(text, i, "complex numbers are not supported"));
    }
    if lower.bytes().all(|c| c.is_ascii_digit()) {
        if lower.len() > 1 && lower.starts_with('0') && lower.bytes().any(|c| c != b'0') {
            return Err(bad());
        }
        return lower
            .parse::<i128>()
            .map(|v| (Literal::Int(v), end))
            .map_err(|_| syntax_error(text, i, format!("integer literal '{raw}' is too large")));
    }
    let valid = lower
        .bytes()
        .all(|c| c.is_ascii_digit() || matches!(c, b'.' | b'e' | b'+' | b'-'));
    match lower.parse::<f64>() {
        Ok(v) if valid && !lower.starts_with(['+', '-']) => Ok((Literal::Float(v), end)),
        _ => Err(bad()),
    }
}

/// A Python string or bytes literal whose quote starts at `i` (after `prefix`): its value and
/// the offset after it.
fn string(text: &str, i: usize, prefix: &str) -> Result<(Literal, usize)> {
    let p = prefix.to_ascii_lowercase();
    let start = i - prefix.len();
    if p.contains('f') {
        return Err(syntax_error(text, start, "f-strings are not supported"));
    }
    let raw = p.contains('r');
    let bytes = p.contains('b');
    let b = text.as_bytes();
    let q = b[i];
    let triple = b.get(i + 1) == Some(&q) && b.get(i + 2) == Some(&q);
    let mut j = i + if triple { 3 } else { 1 };
    let mut out: Vec<u8> = Vec::new();
    loop {
        let Some(&c) = b.get(j) else {
            return Err(syntax_error(text, start, "unterminated string literal"));
        };
        if c == q && (!triple || (b.get(j + 1) == Some(&q) && b.get(j + 2) == Some(&q))) {
            j += if triple { 3 } else { 1 };
            break;
        }
        if c == b'\n' && !triple {
            return Err(syntax_error(text, start, "unterminated string literal"));
        }
        if bytes && !c.is_ascii() {
            return Err(syntax_error(
                text,
                j,
                "bytes can only contain ASCII literal characters",
            ));
        }
        if c != b'\\' || raw {
            if raw && c == b'\\' && b.get(j + 1).is_some() {
                out.extend_from_slice(&b[j..j + 2]);
                j += 2;
                continue;
            }
            out.push(c);
            j += 1;
            continue;
        }
        let Some(&e) = b.get(j + 1) else {
            return Err(syntax_error(text, start, "unterminated string literal"));
        };
        j += 2;
        let simple = match e {
            b'\n' => Some(None),
            b'\\' => Some(Some(b'\\')),
            b'\'' => Some(Some(b'\'')),
            b'"' => Some(Some(b'"')),
            b'a' => Some(Some(7)),
            b'b' => Some(Some(8)),
            b'f' => Some(Some(12)),
            b'n' => Some(Some(b'\n')),
            b'r' => Some(Some(b'\r')),
            b't' => Some(Some(b'\t')),
            b'v' => Some(Some(11)),
            _ => None,
        };
        if let Some(s) = simple {
            out.extend(s);
            continue;
        }
        let hex = |from: usize, n: usize| -> Result<u32> {
            text.get(from..from + n)
                .filter(|h| h.bytes().all(|c| c.is_ascii_hexdigit()))
                .and_then(|h| u32::from_str_radix(h, 16).ok())
                .ok_or_else(|| syntax_error(text, from - 2, "truncated escape sequence"))
        };
        match e {
            b'0'..=b'7' => {
                let mut v = u32::from(e - b'0');
                let mut k = 0;
                while k < 2 && b.get(j).is_some_and(|d| (b'0'..=b'7').contains(d)) {
                    v = v * 8 + u32::from(b[j] - b'0');
                    j += 1;
                    k += 1;
                }
                push_code(&mut out, v, bytes, text, j)?;
            }
            b'x' => {
                let v = hex(j, 2)?;
                j += 2;
                push_code(&mut out, v, bytes, text, j)?;
            }
            b'u' | b'U' if !bytes => {
                let n = if e == b'u' { 4 } else { 8 };
                let v = hex(j, n)?;
                j += n;
                push_code(&mut out, v, false, text, j)?;
            }
            b'N' if !bytes => {
                return Err(syntax_error(
                    text,
                    j - 2,
                    "\\N{...} escapes are not supported",
                ));
            }
            other => {
                out.push(b'\\');
                if !other.is_ascii() {
                    // keep the whole character
                    let ch = text[j - 1..].chars().next().expect("in bounds");
                    out.extend_from_slice(ch.to_string().as_bytes());
                    j += ch.len_utf8() - 1;
                } else {
                    out.push(other);
                }
            }
        }
    }
    let lit = if bytes {
        Literal::Bytes(out)
    } else {
        Literal::Str(
            String::from_utf8(out)
                .map_err(|_| syntax_error(text, start, "string literal is not valid text"))?,
        )
    };
    Ok((lit, j))
}

fn push_code(out: &mut Vec<u8>, v: u32, bytes: bool, text: &str, at: usize) -> Result<()> {
    if bytes {
        out.push(v as u8);
        return Ok(());
    }
    let ch = char::from_u32(v)
        .ok_or_else(|| syntax_error(text, at, format!("invalid character code {v:#x}")))?;
    out.extend_from_slice(ch.to_string().as_bytes());
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lits(t: &str) -> Vec<Tok> {
        tokenize(t).unwrap().into_iter().map(|(t, _)| t).collect()
    }

    #[test]
    fn numbers_as_python_reads_them() {
        let cases: [(&str, Literal); 9] = [
            ("0x1F", Literal::Int(31)),
            ("0o17", Literal::Int(15)),
            ("0b101", Literal::Int(5)),
            ("1_000", Literal::Int(1000)),
            ("2.5", Literal::Float(2.5)),
            (".5", Literal::Float(0.5)),
            ("5.", Literal::Float(5.0)),
            ("1e3", Literal::Float(1000.0)),
            ("2.5E-1", Literal::Float(0.25)),
        ];
        for (t, want) in cases {
            assert_eq!(lits(t)[0], Tok::Lit(want), "{t}");
        }
        for bad in ["1__0", "1_", "012", "0x", "1e", "3j", "1.2.3"] {
            assert!(tokenize(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn strings_and_escapes() {
        assert_eq!(lits(r#"'a\'b'"#)[0], Tok::Lit(Literal::Str("a'b".into())));
        assert_eq!(
            lits(r#""\xff\u00e9""#)[0],
            Tok::Lit(Literal::Str("ÿé".into()))
        );
        assert_eq!(lits(r"b'\xff'")[0], Tok::Lit(Literal::Bytes(vec![255])));
        assert_eq!(lits(r"r'\n'")[0], Tok::Lit(Literal::Str("\\n".into())));
        assert_eq!(lits("'a' 'b'")[0], Tok::Lit(Literal::Str("ab".into())));
        assert_eq!(lits("'''x'y'''")[0], Tok::Lit(Literal::Str("x'y".into())));
        for bad in ["'abc", "b'é'", "'a' b'b'", "f'x'", "'\\x4'"] {
            assert!(tokenize(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn operators_keywords_positions() {
        let t = tokenize("a<=1 and not(b != None)").unwrap();
        let pos: Vec<usize> = t.iter().map(|(_, p)| *p).collect();
        assert_eq!(pos, vec![0, 1, 3, 5, 9, 12, 13, 15, 18, 22, 23]);
        assert_eq!(t[3].0, Tok::Kw("and"));
        assert!(
            tokenize("a $ 1")
                .unwrap_err()
                .message()
                .contains("column 3")
        );
    }
}
