//! Writing arrays: the code that writes on top of the on-disk structures of `array/`
//! (docs/ARRAY.md §7).

pub mod create;
