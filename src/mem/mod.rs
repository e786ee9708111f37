//! Memory helpers, the one place besides the SIMD kernels and the C API where this crate uses
//! `unsafe`: writing outputs into memory that is not initialised yet ([`OutBuf`],
//! [`fill_range`]), handing such memory to C codecs that write it ([`codec_out`]), and large
//! zeroed buffers on huge pages ([`hugepages`]).
//!
//! Everything outside this module writes possibly uninitialised memory only through the safe
//! methods of [`OutBuf`], which never expose it as `&mut [u8]`.

pub mod codec_out;
pub(crate) mod hugepages;
pub mod uninit;

pub use uninit::{OutBuf, Unfilled, fill_range};
