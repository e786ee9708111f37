//! The view of a field every layer shares: which field of the schema a name is
//! ([`FieldRef`]), the one description of a field readers and writers both use ([`FieldInfo`]:
//! name, type, cell size, nullability, filters, attribute or dimension), and the cells of one
//! field ([`FieldData`]).

use super::open::Array;
use super::schema::ArraySchema;
use crate::error::Result;
use crate::pipeline::Pipeline;

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

/// A field of a schema: attribute `i` or dimension `j`; or one of the per-cell fields a
/// consolidation writes into sparse fragments (not schema fields): timestamps (`t.tdb`),
/// delete timestamps (`dt.tdb`) and delete-condition indices (`dci.tdb`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FieldRef {
    Attribute(usize),
    Dimension(usize),
    Timestamps,
    DeleteTimestamps,
    DeleteConditionIndex,
}

/// The name of the per-cell timestamps field of consolidated sparse fragments (`t.tdb`).
pub(crate) const TIMESTAMPS: &str = "__timestamps";
/// The per-cell delete timestamps of a consolidation without purge (`dt.tdb`): the
/// timestamp of the first delete that deletes the cell, `u64::MAX` for none.
pub(crate) const DELETE_TIMESTAMPS: &str = "__delete_timestamps";
/// The per-cell index of that delete in the fragment's processed conditions (`dci.tdb`),
/// `u64::MAX` for none.
pub(crate) const DELETE_CONDITION_INDEX: &str = "__delete_condition_index";

/// The description of one field of a schema, as readers and writers use it.
#[derive(Clone, Debug)]
pub(crate) struct FieldInfo {
    /// Which field of the schema.
    pub field: FieldRef,
    /// Name in the schema.
    pub name: String,
    /// Value type.
    pub datatype: crate::Datatype,
    /// Values per cell, or [`super::schema::VAR_NUM`].
    pub cell_val_num: u32,
    /// Bytes per cell of fixed-size fields; `None` for var-size ones.
    pub cell_size: Option<usize>,
    /// Nullable (attributes only).
    pub nullable: bool,
    /// The field's data pipeline (the schema's; writers give it their key and threads).
    pub filters: Pipeline,
}

impl FieldInfo {
    /// Var-size cells.
    pub(crate) fn is_var(&self) -> bool {
        self.cell_size.is_none()
    }

    /// A dimension (else an attribute).
    pub(crate) fn is_dim(&self) -> bool {
        matches!(self.field, FieldRef::Dimension(_))
    }

    /// Bytes per fixed-size cell; for var-size fields, bytes of one value.
    pub(crate) fn value_size(&self) -> usize {
        self.cell_size.unwrap_or(self.datatype.size())
    }

    /// Refuses a result of `cells` cells of this field over the array's memory limit (var-size
    /// fields count their 8-byte offsets, nullable ones their validity bytes).
    pub(crate) fn check_result(&self, array: &Array, cells: u64) -> Result<()> {
        let per_cell = self.cell_size.unwrap_or(8) as u64 + u64::from(self.nullable);
        array.check_result_size(&self.name, cells.saturating_mul(per_cell))
    }
}

impl FieldRef {
    /// The description of this field of `schema`.
    pub(crate) fn info(&self, schema: &ArraySchema) -> FieldInfo {
        match *self {
            FieldRef::Attribute(i) => {
                let a = &schema.attributes[i];
                FieldInfo {
                    field: *self,
                    name: a.name.clone(),
                    datatype: a.datatype,
                    cell_val_num: a.cell_val_num,
                    cell_size: a.cell_size(),
                    nullable: a.nullable,
                    filters: a.filters.clone(),
                }
            }
            FieldRef::Dimension(j) => {
                let d = &schema.dimensions[j];
                FieldInfo {
                    field: *self,
                    name: d.name.clone(),
                    datatype: d.datatype,
                    cell_val_num: d.cell_val_num,
                    cell_size: d.coord_size(),
                    nullable: false,
                    filters: d.filters.clone(),
                }
            }
            // uint64, filtered with the coordinates' pipeline, as TileDB's consolidation
            // writes them.
            FieldRef::Timestamps | FieldRef::DeleteTimestamps | FieldRef::DeleteConditionIndex => {
                FieldInfo {
                    field: *self,
                    name: match *self {
                        FieldRef::Timestamps => TIMESTAMPS,
                        FieldRef::DeleteTimestamps => DELETE_TIMESTAMPS,
                        _ => DELETE_CONDITION_INDEX,
                    }
                    .into(),
                    datatype: crate::Datatype::Uint64,
                    cell_val_num: 1,
                    cell_size: Some(8),
                    nullable: false,
                    filters: schema.coords_filters.clone(),
                }
            }
        }
    }

    /// The field's slot in the fragment metadata of a schema with `attribute_num` attributes
    /// and `dimension_num` dimensions (docs/ARRAY.md §4.1: the attributes, the zipped
    /// coordinates, the dimensions, then the timestamps and the delete metadata, which is
    /// only written beside timestamps).
    pub(crate) fn slot(&self, attribute_num: usize, dimension_num: usize) -> usize {
        match *self {
            FieldRef::Attribute(i) => i,
            FieldRef::Dimension(j) => attribute_num + 1 + j,
            FieldRef::Timestamps => attribute_num + 1 + dimension_num,
            FieldRef::DeleteTimestamps => attribute_num + 2 + dimension_num,
            FieldRef::DeleteConditionIndex => attribute_num + 3 + dimension_num,
        }
    }

    /// The stem of the field's data files in a fragment (`a<i>`, `d<j>`; format version 9+).
    pub(crate) fn file_stem(&self) -> String {
        match *self {
            FieldRef::Attribute(i) => format!("a{i}"),
            FieldRef::Dimension(j) => format!("d{j}"),
            FieldRef::Timestamps => "t".into(),
            FieldRef::DeleteTimestamps => "dt".into(),
            FieldRef::DeleteConditionIndex => "dci".into(),
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
