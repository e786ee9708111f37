//! Query conditions (TileDB-Py's `cond="..."`, TileDB's `QueryCondition`): used by queries to
//! filter cells, by readers to apply delete commits and by the lifecycle code to write them.
//!
//! - [`lexer`] and [`parser`]: TileDB-Py's condition text (Python expression syntax) to a
//!   syntax tree, errors naming the column;
//! - [`ast`]: the condition tree as TileDB holds it, with a builder for programs;
//! - [`bind`]: typing the text against a schema (literal casts, enumerations, null tests);
//! - [`eval`]: per-cell evaluation over decoded buffers, and tile pruning;
//! - [`serialize`]: the condition tile of `.del` commits, read and written.
//!
//! ```
//! use tdbfilter::array::condition::{Condition, Op};
//! let c = Condition::value("a", Op::Lt, 5i32.to_le_bytes())?
//!     .and(Condition::is_null("s", true));
//! assert_eq!(c.fields(), ["a", "s"]);
//! # Ok::<(), tdbfilter::Error>(())
//! ```

pub mod ast;
pub mod bind;
pub mod eval;
pub mod lexer;
pub mod parser;
pub mod serialize;

pub use ast::{Combination, Condition, Op, Operand};
pub use bind::parse_condition;
pub use eval::{Column, TileStats, Tri, evaluate, evaluate_fields, prune};

use crate::error::Error;

/// An [`Error::InvalidArgument`] about condition `text` at byte offset `at`, naming the
/// column (1-based, in characters) and quoting the text.
pub(crate) fn syntax_error(text: &str, at: usize, msg: impl Into<String>) -> Error {
    let at = at.min(text.len());
    let col = text.char_indices().take_while(|(i, _)| *i < at).count() + 1;
    Error::invalid(format!("condition {text:?}, column {col}: {}", msg.into()))
}

/// An [`Error::InvalidArgument`] for condition `text` that does not parse (lexer and parser
/// errors): [`syntax_error`] with TileDB-Py's words for it first.
pub(crate) fn parse_error(text: &str, at: usize, msg: impl Into<String>) -> Error {
    syntax_error(
        text,
        at,
        format!(
            "Could not parse the given QueryCondition statement: {text} ({})",
            msg.into()
        ),
    )
}
