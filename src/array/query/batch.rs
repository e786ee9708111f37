//! Results in bounded batches: a query's cells handed out in pieces of at most a byte budget
//! (data, offsets and validity of every field), never splitting a cell, as TileDB hands out
//! an incomplete query's results buffer by buffer.

use super::gather::gather;
use crate::array::FieldData;
use crate::array::schema::VAR_NUM;
use crate::error::{Error, Result};

/// One batch of cells.
#[derive(Clone, Debug, PartialEq)]
pub struct Batch {
    /// The fields' cells of this batch.
    pub fields: Vec<FieldData>,
    /// Whether this is the last batch (TileDB's "complete"; otherwise "incomplete").
    pub complete: bool,
}

/// The batches of a query's result.
#[derive(Debug)]
pub struct Batches {
    fields: Vec<FieldData>,
    next: u64,
    budget: u64,
    done: bool,
}

impl Batches {
    pub(crate) fn new(fields: Vec<FieldData>, budget: u64) -> Batches {
        Batches {
            fields,
            next: 0,
            budget,
            done: false,
        }
    }

    fn cells(&self) -> u64 {
        self.fields.first().map_or(0, |f| f.cell_count)
    }

    /// The bytes cell `i` takes in a batch.
    fn cost(&self, i: usize) -> u64 {
        self.fields
            .iter()
            .map(|f| {
                let data = if f.cell_val_num == VAR_NUM {
                    8 + f.cell(i).len() as u64
                } else {
                    (f.datatype.size() * f.cell_val_num as usize) as u64
                };
                data + u64::from(f.validity.is_some())
            })
            .sum()
    }

    /// The next batch (`None` after the complete one). A single cell over the budget is
    /// [`Error::BufferTooSmall`].
    pub fn next_batch(&mut self) -> Result<Option<Batch>> {
        if self.done {
            return Ok(None);
        }
        let total = self.cells();
        let start = self.next;
        let mut end = start;
        let mut used = 0u64;
        while end < total {
            let c = self.cost(end as usize);
            if used + c > self.budget {
                break;
            }
            used += c;
            end += 1;
        }
        if end == start && start < total {
            let needed = self.cost(start as usize);
            return Err(Error::BufferTooSmall {
                needed: needed as usize,
                message: format!(
                    "cell {start} takes {needed} bytes, over the batch budget of {} bytes",
                    self.budget
                ),
            });
        }
        let picks: Vec<(u32, u64)> = (start..end).map(|c| (0, c)).collect();
        let fields = self
            .fields
            .iter()
            .map(|f| gather(f, &[f], &picks))
            .collect();
        self.next = end;
        self.done = end == total;
        Ok(Some(Batch {
            fields,
            complete: self.done,
        }))
    }
}

impl Iterator for Batches {
    type Item = Result<Batch>;

    fn next(&mut self) -> Option<Result<Batch>> {
        self.next_batch().transpose()
    }
}
