//! Reading cells on top of the on-disk structures: tiles located and decoded (`tiles`), dense
//! and sparse reads as TileDB 2.30 returns them, and the integrity check of a whole array.

pub mod deletes;
pub mod dense;
mod merge;
pub mod sparse;
pub mod tiles;
pub mod verify;

use super::field::{FieldData, FieldRef};
use super::open::{Array, pool};
use super::schema::Range;
use super::{order, value};
use crate::error::{Error, Result};

impl Array {
    /// The reader of `field`'s tiles in fragment `fragment` (tile-level access for engines);
    /// `None` when the fragment predates the attribute.
    pub fn tile_reader(
        &self,
        fragment: usize,
        field: &str,
    ) -> Result<Option<self::tiles::TileReader<'_>>> {
        let frag = self.fragments().get(fragment).ok_or_else(|| {
            Error::invalid(format!(
                "fragment index {fragment} out of range ({} fragments)",
                self.fragments().len()
            ))
        })?;
        let f = match self.field(field)? {
            FieldRef::Attribute(i) => self::tiles::TileField::Attribute(i),
            FieldRef::Dimension(j) => {
                if frag.meta.dense {
                    return Err(Error::invalid(format!(
                        "dense fragment {} stores no coordinates",
                        frag.name()
                    )));
                }
                self::tiles::TileField::Dimension(j)
            }
            FieldRef::Timestamps => self::tiles::TileField::Timestamps,
            FieldRef::DeleteTimestamps => self::tiles::TileField::DeleteTimestamps,
            FieldRef::DeleteConditionIndex => self::tiles::TileField::DeleteConditionIndex,
        };
        self::tiles::TileReader::new(self, frag, f)
    }

    /// The reader of any field's tiles (attribute, dimension, per-cell timestamps) in
    /// fragment `fragment`; `None` when the fragment does not have the field.
    pub(crate) fn tile_reader_field(
        &self,
        fragment: usize,
        field: self::tiles::TileField,
    ) -> Result<Option<self::tiles::TileReader<'_>>> {
        let frag = self.fragments().get(fragment).ok_or_else(|| {
            Error::invalid(format!(
                "fragment index {fragment} out of range ({} fragments)",
                self.fragments().len()
            ))
        })?;
        self::tiles::TileReader::new(self, frag, field)
    }

    /// Refuses what this reader cannot read exactly as TileDB would: update commits, and
    /// delete commits on a dense array (TileDB writes none there).
    pub(crate) fn check_readable(&self) -> Result<()> {
        for c in self.condition_commits() {
            if c.is_update {
                return Err(Error::Unsupported(format!(
                    "update commits (.upd) are not applied by this reader: {}",
                    c.marker
                )));
            }
            if self.schema().is_dense() {
                return Err(Error::Unsupported(format!(
                    "delete commits on a dense array are not applied (TileDB refuses deletes \
                     on dense arrays): {}",
                    c.marker
                )));
            }
        }
        Ok(())
    }

    /// Reads `fields` (attribute or dimension names) of the cells in `subarray` (per dimension
    /// an inclusive range in the dimension's type; `None` = the non-empty domain). Dense
    /// arrays: the cells of the box in row-major order, fill values where nothing was
    /// written. Sparse arrays: the visible cells in global order, after de-duplication,
    /// without the cells deleted by the delete commits of the open range.
    pub fn read(&self, fields: &[&str], subarray: Option<&[Range]>) -> Result<Vec<FieldData>> {
        self.check_readable()?;
        let refs: Vec<FieldRef> = fields
            .iter()
            .map(|f| self.field(f))
            .collect::<Result<_>>()?;
        if let Some(s) = subarray {
            self.check_subarray(s)?;
        }
        pool(self.threads())?.install(|| {
            if self.schema().is_dense() {
                self::dense::read(self, &refs, subarray)
            } else {
                self::sparse::read(self, &refs, subarray)
            }
        })
    }

    fn check_subarray(&self, s: &[Range]) -> Result<()> {
        let dims = &self.schema().dimensions;
        if s.len() != dims.len() {
            return Err(Error::invalid(format!(
                "the subarray has {} ranges, the array {} dimensions",
                s.len(),
                dims.len()
            )));
        }
        for (r, d) in s.iter().zip(dims) {
            match (r, d.coord_size()) {
                (Range::Fixed(lo, hi), Some(n)) if lo.len() == n && hi.len() == n => {
                    if order::compare(d.datatype, lo, hi).is_gt() {
                        return Err(Error::invalid(format!(
                            "subarray range of dimension {} is reversed",
                            d.name
                        )));
                    }
                    if let Some((dlo, dhi)) = &d.domain
                        && (order::compare(d.datatype, lo, dlo).is_lt()
                            || order::compare(d.datatype, hi, dhi).is_gt())
                    {
                        return Err(Error::invalid(format!(
                            "subarray range [{}, {}] of dimension {} is outside its domain [{}, {}]",
                            value::format_value(d.datatype, lo),
                            value::format_value(d.datatype, hi),
                            d.name,
                            value::format_value(d.datatype, dlo),
                            value::format_value(d.datatype, dhi)
                        )));
                    }
                }
                (Range::Var(lo, hi), None) => {
                    if lo > hi {
                        return Err(Error::invalid(format!(
                            "subarray range of dimension {} is reversed",
                            d.name
                        )));
                    }
                }
                _ => {
                    return Err(Error::invalid(format!(
                        "the subarray range of dimension {} does not match its type {}",
                        d.name, d.datatype
                    )));
                }
            }
        }
        Ok(())
    }
}
