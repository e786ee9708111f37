//! The view of a field every layer shares: which field of the schema a name is
//! ([`FieldRef`]), the facts a result of it needs ([`FieldInfo`]), and the cells of one field
//! ([`FieldData`]).

use super::open::Array;
use super::schema::ArraySchema;
use crate::error::Result;

/// The cells of one field, as read.
#[derive(Clone, Debug, PartialEq)]
pub struct FieldData {
    /// Field name.
    pub name: String,
    /// Value type.
    pub datatype: crate::Datatype,
    /// Values per cell, or [`super::schema::VAR_NUM`].
    pub cell_val_num: u32,
    /// Cell values, concatenated.
    pub data: Vec<u8>,
    /// Var-size fields: the byte offset of each cell in `data` (one per cell).
    pub offsets: Option<Vec<u64>>,
    /// Nullable attributes: one byte per cell (0 null, 1 valid).
    pub validity: Option<Vec<u8>>,
    /// Number of cells.
    pub cell_count: u64,
}

impl FieldData {
    /// The bytes of cell `i`.
    pub fn cell(&self, i: usize) -> &[u8] {
        match &self.offsets {
            Some(o) => {
                let end = o.get(i + 1).map_or(self.data.len(), |e| *e as usize);
                &self.data[o[i] as usize..end]
            }
            None => {
                let n = self.data.len() / (self.cell_count.max(1) as usize);
                &self.data[i * n..(i + 1) * n]
            }
        }
    }
}

/// A field of the array's (latest) schema.
#[derive(Clone, Debug)]
pub(crate) enum FieldRef {
    Attribute(usize),
    Dimension(usize),
}

/// The facts of a field a result needs.
pub(crate) struct FieldInfo {
    pub name: String,
    pub datatype: crate::Datatype,
    pub cell_val_num: u32,
    /// Bytes per cell of fixed-size fields.
    pub cell_size: Option<usize>,
    pub nullable: bool,
}

impl FieldInfo {
    /// Refuses a result of `cells` cells of this field over the array's memory limit (var-size
    /// fields count their 8-byte offsets, nullable ones their validity bytes).
    pub(crate) fn check_result(&self, array: &Array, cells: u64) -> Result<()> {
        let per_cell = self.cell_size.unwrap_or(8) as u64 + u64::from(self.nullable);
        array.check_result_size(&self.name, cells.saturating_mul(per_cell))
    }
}

impl FieldRef {
    pub(crate) fn info(&self, schema: &ArraySchema) -> FieldInfo {
        match self {
            FieldRef::Attribute(i) => {
                let a = &schema.attributes[*i];
                FieldInfo {
                    name: a.name.clone(),
                    datatype: a.datatype,
                    cell_val_num: a.cell_val_num,
                    cell_size: a.cell_size(),
                    nullable: a.nullable,
                }
            }
            FieldRef::Dimension(j) => {
                let d = &schema.dimensions[*j];
                FieldInfo {
                    name: d.name.clone(),
                    datatype: d.datatype,
                    cell_val_num: d.cell_val_num,
                    cell_size: d.coord_size(),
                    nullable: false,
                }
            }
        }
    }
}

impl FieldInfo {
    /// A result without cells.
    pub(crate) fn empty(self) -> FieldData {
        FieldData {
            name: self.name,
            datatype: self.datatype,
            cell_val_num: self.cell_val_num,
            data: Vec::new(),
            offsets: self.cell_size.is_none().then(Vec::new),
            validity: self.nullable.then(Vec::new),
            cell_count: 0,
        }
    }
}
