//! Reading TileDB array folders without libtiledb (docs/ARRAY.md): the folder's visibility rules,
//! schemas, fragment metadata, and the cells of dense and sparse arrays as TileDB 2.30 returns
//! them.
//!
//! ```no_run
//! use tdbfilter::array::{Array, OpenOptions};
//! let array = Array::open("my_array", &OpenOptions::default()).unwrap();
//! let a = array.read(&["a"], None).unwrap().remove(0);
//! println!("{} cells of {}", a.cell_count, a.datatype);
//! ```
//!
//! What is read: local folders and object stores (`s3://`, `azure://`, `gs://`, see
//! [`crate::storage`]) holding arrays of format versions 5 to 22 (TileDB 2.0 to 2.30), every
//! visible fragment with its own schema, fixed, var-size and nullable fields, encryption
//! (AES-256-GCM key at open), consolidated fragments with per-cell timestamps and delete
//! timestamps. What would need evaluation this reader does not do (delete conditions of
//! `.del` commits still to be applied, update commits, sparse fragments in dense arrays) is
//! refused with [`Error::Unsupported`] naming the feature.

pub mod condition;
pub mod directory;
pub mod field;
pub mod fragment;
pub mod geometry;
pub mod lifecycle;
pub mod metadata;
pub mod open;
pub mod order;
pub mod query;
pub mod read;
pub mod rtree;
pub mod schema;
pub mod subarray;
pub mod value;
pub mod write;

pub use field::FieldData;
pub use fragment::metadata as fragment_metadata;
pub use open::{Array, Fragment, OpenOptions};
pub use schema::json as schema_json;
pub use write::create::create;
pub use write::{FieldBuffers, WriteLayout, Writer, write_metadata};
