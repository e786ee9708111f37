//! What one filter stage sees and produces, forward (write) and reverse (read), per chunk
//! (docs/FORMAT.md §4.6–§4.8). Filters are written against these types only.

use crate::engine::parts::{PartList, Parts, ScratchBuf};
use crate::engine::thread_scratch::CodecContexts;
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::mem::OutBuf;

/// Per-stage context: the filter data type and the tile facts some filters need.
pub struct StageCtx<'a> {
    /// The filter data type of this stage (§4.8).
    pub datatype: Datatype,
    /// The tile's cell size in bytes (RLE's value width).
    pub cell_size: u64,
    /// The tile format version (BIT_WIDTH_REDUCTION / POSITIVE_DELTA consult it).
    pub version: u32,
    /// Skip checksum verification on read.
    pub skip_checksum_validation: bool,
    /// Codec contexts reused by this thread.
    pub codecs: &'a mut CodecContexts,
    /// Forward only: the cell start offsets (tile-relative) of the var-size data tile being
    /// filtered; RLE and DICTIONARY on STRING_ASCII/UTF8 use them (§5.8). `None` otherwise.
    pub offsets: Option<&'a [u64]>,
    /// The pipeline's AES-256-GCM cipher, when an encryption key is set.
    pub cipher: Option<&'a aes_gcm::Aes256Gcm>,
    /// Write GZIP with zlib, byte-identical to TileDB, instead of libdeflate.
    pub gzip_identical: bool,
    /// Forward only: a checksum stage leaves its digests zero, for the driver to compute
    /// for many chunks at once.
    pub defer_digests: bool,
}

impl<'a> StageCtx<'a> {
    /// A context for a fixed-size tile of the current format version.
    pub fn new(datatype: Datatype, cell_size: u64, codecs: &'a mut CodecContexts) -> StageCtx<'a> {
        StageCtx {
            datatype,
            cell_size,
            version: crate::format::format_version::FORMAT_VERSION,
            skip_checksum_validation: false,
            codecs,
            offsets: None,
            cipher: None,
            gzip_identical: false,
            defer_digests: false,
        }
    }
}

/// Forward input of a stage.
#[derive(Clone, Copy, Debug)]
pub struct FwdIn<'a> {
    /// Metadata parts from the previous stage.
    pub md: Parts<'a>,
    /// Data parts from the previous stage.
    pub data: Parts<'a>,
}

/// Forward output of a stage (both lists arrive empty).
pub struct FwdOut<'a> {
    /// Output metadata parts: the filter's own block first, then whatever it forwards.
    pub md: &'a mut PartList,
    /// Output data parts, unless the filter forwards its data input.
    pub data: &'a mut PartList,
}

/// Whether a stage wrote its data output or forwarded its data input unchanged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DataFlow {
    /// The output data is what the filter wrote.
    Written,
    /// The output data is the input data, forwarded (TileDB's append-view rule applies).
    Forwarded,
}

/// Reverse input of a stage: flat metadata and data streams.
#[derive(Clone, Copy, Debug)]
pub struct RevIn<'a> {
    /// Metadata stream; this filter's own block is at the front.
    pub md: &'a [u8],
    /// Data stream.
    pub data: &'a [u8],
}

/// What a reverse stage leaves as metadata for the stage before it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MdFlow {
    /// The input metadata after the first `n` bytes (the filter's own block).
    Rest(usize),
    /// What the filter wrote into [`RevOut::md`] (restored by a compressor or decryption).
    Written,
}

/// Reverse output of a stage.
pub struct RevOut<'a> {
    /// Restored metadata, when the filter returns [`MdFlow::Written`].
    pub md: &'a mut Vec<u8>,
    /// Where the restored data goes.
    pub data: DataSink<'a>,
    /// When the reader rebuilds a var-size tile's offsets from its data (§5.8): where the
    /// filter appends one tile-relative u64 start offset per cell. `None` otherwise.
    pub offsets: Option<&'a mut Vec<u64>>,
}

/// Destination of a reverse stage's data: scratch for inner stages, the tile itself for the first.
pub enum DataSink<'a> {
    /// A reusable scratch buffer, with the most bytes this stage may legitimately produce.
    Scratch {
        /// The buffer.
        buf: &'a mut ScratchBuf,
        /// Upper bound on the output size, derived from the chunk's original length.
        limit: usize,
    },
    /// The chunk's window in the output tile, which may not be initialised: exactly its
    /// unwritten `original_length` bytes, which the stage must write completely.
    Window(OutBuf<'a>),
}

impl DataSink<'_> {
    /// The most bytes this sink accepts.
    pub fn limit(&self) -> usize {
        match self {
            DataSink::Scratch { limit, .. } => *limit,
            DataSink::Window(w) => w.remaining(),
        }
    }

    /// Checks that `len` bytes may be produced here, before anything is decoded.
    pub fn check_len(&self, len: usize) -> Result<()> {
        match self {
            DataSink::Scratch { limit, .. } if len > *limit => Err(Error::corrupt(format!(
                "output of {len} bytes exceeds the {limit} bytes this stage can produce for the chunk"
            ))),
            DataSink::Window(w) if w.remaining() != len => Err(Error::corrupt(format!(
                "output of {len} bytes does not match the chunk's original length {}",
                w.remaining()
            ))),
            _ => Ok(()),
        }
    }

    /// Returns a cursor over exactly `len` bytes to write the output into, all of which the
    /// stage must write (they may be uninitialised; for the window, the driver checks).
    pub fn alloc(&mut self, len: usize) -> Result<OutBuf<'_>> {
        self.check_len(len)?;
        match self {
            DataSink::Scratch { buf, .. } => Ok(OutBuf::from_init(buf.alloc(len))),
            DataSink::Window(w) => Ok(w.rest()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn window_sinks_demand_the_exact_length_and_report_what_was_written() {
        let mut tile = vec![0u8; 6];
        let mut window = OutBuf::from_init(&mut tile);
        {
            let mut sink = DataSink::Window(window.rest());
            assert_eq!(sink.limit(), 6);
            assert!(sink.check_len(5).is_err());
            assert!(sink.alloc(7).is_err());
            let mut out = sink.alloc(6).unwrap();
            out.put(b"abcd");
        }
        // The stage wrote 4 of the 6 bytes: the driver sees it.
        assert_eq!((window.filled(), window.is_full()), (4, false));
        {
            let mut sink = DataSink::Window(window.rest());
            sink.alloc(2).unwrap().put(b"ef");
        }
        assert!(window.is_full());
        drop(window);
        assert_eq!(tile, b"abcdef");
    }

    #[test]
    fn scratch_sinks_bound_the_length() {
        let mut buf = ScratchBuf::default();
        let mut sink = DataSink::Scratch {
            buf: &mut buf,
            limit: 4,
        };
        assert!(sink.alloc(5).is_err());
        sink.alloc(3).unwrap().put(b"xyz");
        drop(sink);
        assert_eq!(buf.as_slice(), b"xyz");
    }
}
