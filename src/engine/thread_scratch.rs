//! Per-thread reusable state: codec contexts and the stage buffers of the chunk drivers.
//! Chunks run on many threads; each thread reuses its own copy across chunks and tiles.

use crate::codecs::{bzip2::libbzip2::Bzip2Contexts, gzip::GzipContexts, zstd::ZstdContexts};
use crate::engine::parts::{PartList, ScratchBuf};
use std::cell::RefCell;

/// Codec contexts of one thread.
#[derive(Default)]
pub struct CodecContexts {
    /// zlib deflate/inflate streams.
    pub gzip: GzipContexts,
    /// zstd compression/decompression contexts.
    pub zstd: ZstdContexts,
    /// bzip2 encoder buffers.
    pub bzip2: Bzip2Contexts,
}

/// Everything a thread reuses while filtering chunks.
#[derive(Default)]
pub struct ThreadScratch {
    /// Codec contexts.
    pub codecs: CodecContexts,
    /// Forward ping-pong buffers: metadata lists.
    pub fwd_md: [PartList; 2],
    /// Forward ping-pong buffers: data lists.
    pub fwd_data: [PartList; 2],
    /// Forward: the metadata length of the last chunk this thread filtered, the guess of
    /// where a chunk's data starts when the last stage writes it straight into the output.
    pub fwd_md_guess: usize,
    /// Reverse ping-pong buffers: metadata streams.
    pub rev_md: [Vec<u8>; 2],
    /// Reverse ping-pong buffers: data streams.
    pub rev_data: [ScratchBuf; 2],
}

thread_local! {
    static SCRATCH: RefCell<ThreadScratch> = RefCell::new(ThreadScratch::default());
}

/// Runs `f` with this thread's scratch. Falls back to a fresh scratch if re-entered.
pub fn with_scratch<R>(f: impl FnOnce(&mut ThreadScratch) -> R) -> R {
    SCRATCH.with(|cell| match cell.try_borrow_mut() {
        Ok(mut s) => f(&mut s),
        Err(_) => f(&mut ThreadScratch::default()),
    })
}
