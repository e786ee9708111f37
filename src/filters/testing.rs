//! Test helpers: run one filter stage on given parts, forward and reverse.

use crate::engine::parts::{PartList, Parts};
use crate::engine::stage::{DataFlow, DataSink, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::engine::thread_scratch::CodecContexts;
use crate::error::Result;
use crate::filters::config::Filter;
use crate::format::datatype::Datatype;
use crate::mem::OutBuf;

/// The output of one forward stage: metadata parts and data parts (None when forwarded).
#[derive(Debug)]
pub struct Forwarded {
    /// Metadata parts, concatenated.
    pub md: Vec<u8>,
    /// Length of each metadata part.
    pub md_lens: Vec<usize>,
    /// Data parts, concatenated (the input's bytes when the filter forwarded them).
    pub data: Vec<u8>,
    /// Length of each data part.
    pub data_lens: Vec<usize>,
    /// Whether the filter forwarded its data input.
    pub flow: DataFlow,
}

/// Runs `filter` forward as a first stage on one data part `data` of `datatype` with tile
/// cell size `cell_size` (and the tile's cell offsets for the var-string path).
pub fn forward_one(
    filter: &Filter,
    datatype: Datatype,
    cell_size: u64,
    offsets: Option<&[u64]>,
    data: &[u8],
) -> Result<Forwarded> {
    let lens = [data.len()];
    forward_parts(
        filter,
        datatype,
        cell_size,
        offsets,
        Parts::EMPTY,
        Parts::new(data, &lens),
    )
}

/// Runs `filter` forward on arbitrary metadata and data parts.
pub fn forward_parts(
    filter: &Filter,
    datatype: Datatype,
    cell_size: u64,
    offsets: Option<&[u64]>,
    md: Parts<'_>,
    data: Parts<'_>,
) -> Result<Forwarded> {
    let mut codecs = CodecContexts::default();
    let mut ctx = StageCtx::new(datatype, cell_size, &mut codecs);
    ctx.offsets = offsets;
    let (mut out_md, mut out_data) = (PartList::default(), PartList::default());
    let flow = crate::filters::forward(
        filter,
        &mut ctx,
        FwdIn { md, data },
        FwdOut {
            md: &mut out_md,
            data: &mut out_data,
        },
    )?;
    let (data_bytes, data_lens) = match flow {
        DataFlow::Written => (
            out_data.as_parts().bytes().to_vec(),
            out_data.as_parts().lens().to_vec(),
        ),
        DataFlow::Forwarded => (
            data.forwarded().bytes().to_vec(),
            data.forwarded().lens().to_vec(),
        ),
    };
    Ok(Forwarded {
        md: out_md.as_parts().bytes().to_vec(),
        md_lens: out_md.as_parts().lens().to_vec(),
        data: data_bytes,
        data_lens,
        flow,
    })
}

/// The output of one reverse stage.
#[derive(Debug)]
pub struct Reversed {
    /// Metadata left for the previous stage.
    pub md: Vec<u8>,
    /// Restored data.
    pub data: Vec<u8>,
    /// Offsets rebuilt by the var-string path (when requested).
    pub offsets: Vec<u64>,
}

/// Runs `filter` in reverse as the first stage, into a window of exactly `original_len` bytes.
/// With `rebuild_offsets`, the var-string path's offsets are collected.
pub fn reverse_one(
    filter: &Filter,
    datatype: Datatype,
    cell_size: u64,
    md: &[u8],
    data: &[u8],
    original_len: usize,
    rebuild_offsets: bool,
) -> Result<Reversed> {
    let mut codecs = CodecContexts::default();
    let mut ctx = StageCtx::new(datatype, cell_size, &mut codecs);
    let mut out_md = Vec::new();
    let mut window = vec![0u8; original_len];
    let mut offsets = Vec::new();
    let mut w = OutBuf::from_init(&mut window);
    let (md_flow, data_flow) = crate::filters::reverse(
        filter,
        &mut ctx,
        RevIn { md, data },
        RevOut {
            md: &mut out_md,
            data: DataSink::Window(w.rest()),
            offsets: rebuild_offsets.then_some(&mut offsets),
        },
    )?;
    let written = w.filled();
    drop(w);
    let md_left = match md_flow {
        MdFlow::Rest(n) => md[n..].to_vec(),
        MdFlow::Written => out_md,
    };
    let data_out = match data_flow {
        DataFlow::Written => {
            check_window_written(written, original_len)?;
            window
        }
        DataFlow::Forwarded => data.to_vec(),
    };
    Ok(Reversed {
        md: md_left,
        data: data_out,
        offsets,
    })
}

/// Decodes hex digits, ignoring everything else (spaces, `|` separators).
pub fn unhex(s: &str) -> Vec<u8> {
    let s: String = s.chars().filter(|c| c.is_ascii_hexdigit()).collect();
    (0..s.len() / 2)
        .map(|i| u8::from_str_radix(&s[2 * i..2 * i + 2], 16).unwrap())
        .collect()
}

/// Lower-case hex of `bytes`.
pub fn to_hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// `unwrap_err` for results whose value type is not `Debug`.
pub trait ErrOnly {
    /// The error; panics on `Ok`.
    fn err_only(self) -> crate::error::Error;
}

impl<T> ErrOnly for Result<T> {
    fn err_only(self) -> crate::error::Error {
        match self {
            Ok(_) => panic!("expected an error"),
            Err(e) => e,
        }
    }
}

/// Runs `filter` in reverse as the first stage at tile format `version`, into a window of `len`
/// bytes pre-filled with 0xAA (so unwritten bytes show); returns (metadata left, data).
pub fn reverse_at(
    filter: &Filter,
    datatype: Datatype,
    version: u32,
    md: &[u8],
    data: &[u8],
    len: usize,
) -> Result<(Vec<u8>, Vec<u8>)> {
    let mut codecs = CodecContexts::default();
    let mut ctx = StageCtx::new(datatype, datatype.size() as u64, &mut codecs);
    ctx.version = version;
    let mut window = vec![0xAAu8; len];
    let mut out_md = Vec::new();
    let mut w = OutBuf::from_init(&mut window);
    let (md_flow, data_flow) = crate::filters::reverse(
        filter,
        &mut ctx,
        RevIn { md, data },
        RevOut {
            md: &mut out_md,
            data: DataSink::Window(w.rest()),
            offsets: None,
        },
    )?;
    let written = w.filled();
    drop(w);
    let md_left = match md_flow {
        MdFlow::Rest(n) => md[n..].to_vec(),
        MdFlow::Written => out_md,
    };
    let data_out = match data_flow {
        DataFlow::Written => {
            check_window_written(written, len)?;
            window
        }
        DataFlow::Forwarded => data.to_vec(),
    };
    Ok((md_left, data_out))
}

/// The pipeline driver's check after a first stage that wrote its window: all of it.
fn check_window_written(written: usize, len: usize) -> Result<()> {
    if written != len {
        return Err(crate::mem::Unfilled { written, len }.into());
    }
    Ok(())
}

/// A xorshift64 generator for test data: deterministic, no dependencies.
pub fn xorshift(mut state: u64) -> impl FnMut() -> u64 {
    move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    }
}
