//! The hook through which a query condition plugs into queries: a per-cell filter that reads
//! some fields of the candidate cells and says which pass.

use crate::array::FieldData;
use crate::array::condition::{TileStats, Tri};
use crate::error::{Error, Result};

/// A per-cell filter (what a query condition evaluates to). Dense queries keep every cell and
/// give failing cells the attribute's fill value (null for nullable attributes); sparse
/// queries drop failing cells; aggregates use passing cells only (dense `count` excepted).
pub trait CellFilter: Send + Sync {
    /// The fields (attributes or dimensions) the filter reads.
    fn fields(&self) -> Vec<String>;
    /// Whether each cell passes, given the cells' values of [`fields`](Self::fields) (in that
    /// order, every field with the same cell count).
    fn evaluate(&self, cells: &[FieldData]) -> Result<Vec<bool>>;
    /// Whether any cell of a tile can pass, given its fields' statistics (`stats(name)`,
    /// `None`: unknown); [`Tri::Never`] lets the query skip the tile without decoding it.
    /// The default knows nothing: [`Tri::Maybe`].
    fn prune(&self, stats: &dyn Fn(&str) -> Option<TileStats>) -> Tri {
        let _ = stats;
        Tri::Maybe
    }
}

/// A [`CellFilter`] from a closure.
pub struct FnFilter<F> {
    fields: Vec<String>,
    f: F,
}

impl<F> FnFilter<F>
where
    F: Fn(&[FieldData]) -> Result<Vec<bool>> + Send + Sync,
{
    /// The filter reading `fields` and deciding with `f`.
    pub fn new(fields: &[&str], f: F) -> FnFilter<F> {
        FnFilter {
            fields: fields.iter().map(|s| s.to_string()).collect(),
            f,
        }
    }
}

impl<F> CellFilter for FnFilter<F>
where
    F: Fn(&[FieldData]) -> Result<Vec<bool>> + Send + Sync,
{
    fn fields(&self) -> Vec<String> {
        self.fields.clone()
    }

    fn evaluate(&self, cells: &[FieldData]) -> Result<Vec<bool>> {
        (self.f)(cells)
    }
}

/// Runs `filter` on `cells` and checks it answered one flag per cell.
pub(crate) fn run(filter: &dyn CellFilter, cells: &[FieldData], n: u64) -> Result<Vec<bool>> {
    let pass = filter.evaluate(cells)?;
    if pass.len() as u64 != n {
        return Err(Error::Internal(format!(
            "the query condition answered {} flags for {n} cells",
            pass.len()
        )));
    }
    Ok(pass)
}
