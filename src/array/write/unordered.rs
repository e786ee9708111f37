//! Unordered sparse writes (TileDB's `UnorderedWriter`): one batch of cells in any order,
//! sorted into the global order as TileDB 2.30 sorts it (ties included) and permuted field by
//! field before it is cut into tiles like a global-order batch. Several batches are each
//! sorted when submitted, kept, and sorted together at finalize into one fragment.

use super::Writer;
use super::batch::{Input, coords_of, var_cell};
use super::global::{Pending, append_cells};
use crate::array::field::FieldInfo;
use crate::array::order::check;
use crate::array::order::global as global_order;
use crate::engine::threads;
use crate::error::Result;
use rayon::prelude::*;
use std::borrow::Cow;

impl Writer {
    /// An unordered sparse batch: sorted into TileDB's global order (after the domain check),
    /// duplicates refused unless allowed, every field's cells permuted alike. One field at a
    /// time, each replacing its input, so that memory holds the batch and one field's copy.
    pub(super) fn sort_sparse_batch(&self, inputs: &mut [Input<'_>]) -> Result<()> {
        // On the writer's threads (the sort and the gathers are parallel). Cells equal in the
        // order (duplicates, -0.0 and 0.0) are arranged as TileDB's sort arranges them on a
        // compute pool of as many threads as this writer's (TileDB's default concurrency is
        // the machine's hardware threads, as the writer's default).
        let threads = threads::effective_threads(self.threads);
        let pool = threads::pool(threads)?;
        let (schema, fields) = (&self.schema, &self.fields);
        let check_dups = self.check_coord_dups;
        pool.install(|| {
            let order = {
                let coords = coords_of(schema, fields, inputs);
                let order = global_order::global_order_as_tiledb(schema, &coords, threads)?;
                if check_dups {
                    check::check_duplicates(schema, &coords, &order)?;
                }
                order
            };
            for (f, input) in fields.iter().zip(inputs.iter_mut()) {
                *input = permute(f, input, &order);
            }
            Ok(())
        })
    }

    /// Keeps a sorted unordered batch: the first as it is (no copy), later ones appended.
    pub(super) fn collect_unordered(&mut self, inputs: Vec<Input<'_>>, cells: u64) {
        match &mut self.unordered {
            None => {
                let fields = inputs
                    .into_iter()
                    .map(|i| Pending {
                        data: i.data.map(Cow::into_owned).unwrap_or_default(),
                        offsets: i.offsets.map(Cow::into_owned).unwrap_or_default(),
                        validity: i.validity.map(Cow::into_owned).unwrap_or_default(),
                    })
                    .collect();
                self.unordered = Some(Unordered {
                    fields,
                    cells,
                    sorted: true,
                });
            }
            Some(u) => {
                for ((p, input), f) in u.fields.iter_mut().zip(&inputs).zip(&self.fields) {
                    append_cells(p, input, f, 0, cells);
                }
                u.cells += cells;
                u.sorted &= cells == 0;
            }
        }
    }

    /// Sorts the unordered batches together (duplicates across them refused unless allowed)
    /// and writes them.
    pub(super) fn write_unordered(&mut self) -> Result<()> {
        let Some(u) = self.unordered.take() else {
            return Ok(());
        };
        let mut inputs: Vec<Input<'_>> = u
            .fields
            .into_iter()
            .zip(&self.fields)
            .map(|(p, f)| Input {
                data: Some(Cow::Owned(p.data)),
                offsets: f.is_var().then_some(Cow::Owned(p.offsets)),
                validity: f.nullable.then_some(Cow::Owned(p.validity)),
            })
            .collect();
        if !u.sorted {
            self.sort_sparse_batch(&mut inputs)
                .map_err(|e| e.context("the unordered batches together"))?;
        }
        self.write_global(&inputs, u.cells)
    }
}

/// The cells of the unordered sparse batches submitted so far, one buffer per field.
#[derive(Debug)]
pub(super) struct Unordered {
    fields: Vec<Pending>,
    cells: u64,
    /// Whether the cells are in global order (one batch so far, sorted when submitted).
    sorted: bool,
}

/// An input's cells in `order` (entry k: the input cell that comes k-th).
pub(super) fn permute(f: &FieldInfo, input: &Input<'_>, order: &[u64]) -> Input<'static> {
    let data = input.data.as_deref().unwrap_or(&[]);
    let (data, offsets) = match input.offsets.as_deref() {
        Some(o) if f.is_var() => {
            let mut d = Vec::with_capacity(data.len());
            let mut offs = Vec::with_capacity(o.len());
            for &c in order {
                offs.push(d.len() as u64);
                d.extend_from_slice(var_cell(data, o, c as usize));
            }
            (d, Some(Cow::Owned(offs)))
        }
        _ => {
            // Fixed-size cells: gathered in parallel, a chunk of cells per job.
            let n = f.value_size();
            let mut d = vec![0u8; order.len() * n];
            const CHUNK: usize = 1 << 14;
            d.par_chunks_mut(CHUNK * n)
                .zip(order.par_chunks(CHUNK))
                .for_each(|(out, cells)| {
                    for (o, &c) in out.chunks_exact_mut(n).zip(cells) {
                        let c = c as usize;
                        o.copy_from_slice(&data[c * n..(c + 1) * n]);
                    }
                });
            (d, None)
        }
    };
    let validity = input
        .validity
        .as_ref()
        .map(|v| Cow::Owned(order.iter().map(|&c| v[c as usize]).collect()));
    Input {
        data: Some(Cow::Owned(data)),
        offsets,
        validity,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::field::FieldRef;
    use crate::array::schema::ArraySchema;

    #[test]
    fn permute_gathers_every_buffer_alike() {
        let schema = ArraySchema::from_json(
            r#"{"sparse": true,
                "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 9], "tile": 5}],
                "attributes": [{"name": "s", "type": "STRING_ASCII", "cell_val_num": "var",
                                "nullable": true},
                               {"name": "x", "type": "INT16"}]}"#,
        )
        .unwrap();
        let (s, x) = (
            FieldRef::Attribute(0).info(&schema),
            FieldRef::Attribute(1).info(&schema),
        );
        let order = [2u64, 0, 1];
        let var = Input {
            data: Some(Cow::Borrowed(b"abbccc")),
            offsets: Some(Cow::Owned(vec![0, 1, 3])),
            validity: Some(Cow::Owned(vec![1, 0, 1])),
        };
        let p = permute(&s, &var, &order);
        assert_eq!(p.data.as_deref(), Some(&b"cccabb"[..]));
        assert_eq!(p.offsets.as_deref(), Some(&[0u64, 3, 4][..]));
        assert_eq!(p.validity.as_deref(), Some(&[1u8, 1, 0][..]));
        let fixed = Input {
            data: Some(Cow::Owned([7i16, 8, 9].map(i16::to_le_bytes).concat())),
            offsets: None,
            validity: None,
        };
        let p = permute(&x, &fixed, &order);
        assert_eq!(p.data.as_deref(), Some(&[9u8, 0, 7, 0, 8, 0][..]));
        assert!(p.offsets.is_none() && p.validity.is_none());
    }
}
