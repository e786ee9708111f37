//! BITSHUFFLE (8): blosc2's bit transposition (docs/FORMAT.md §5.14).
//!
//! Each data part of length L is cut into sub-parts `L − L mod 8` and `L mod 8` (when
//! `L mod 8 ≠ 0`; an empty first sub-part is still listed). Own metadata: `u32 count`, then
//! `u32 length` per sub-part. Sub-parts that are multiples of 8 and of the element size are
//! bit-transposed in 8192-byte blocks; other sub-parts are copied verbatim.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::registry::{FilterDescriptor, plain_descriptor};
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;
use crate::kernels;
use crate::mem::OutBuf;

/// Bytes per bitshuffle block, as in TileDB's use of blosc2.
pub const BLOCK_SIZE: usize = 8192;

/// blosc2_bitshuffle of one block: the first `N` elements (N = ⌊len/t⌋ rounded down to a
/// multiple of 8) are bit-transposed, the remaining bytes copied. Runs the best SIMD kernel of
/// this CPU ([`crate::kernels`]).
pub fn bitshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    crate::kernels::bitshuffle_block(t, src, dst);
}

/// Reverses [`bitshuffle_block`].
pub fn bitunshuffle_block(t: usize, src: &[u8], dst: &mut [u8]) {
    crate::kernels::bitunshuffle_block(t, src, dst);
}

/// A kernel appending its transposition of a block to a cursor.
type BlockKernel = fn(usize, &[u8], &mut OutBuf<'_>);

/// Appends one processed sub-part to `dst`: transposed block by block when it is a multiple
/// of 8 and of `t`, else copied.
fn apply_subpart(t: usize, src: &[u8], dst: &mut OutBuf<'_>, kernel: BlockKernel) {
    if !src.len().is_multiple_of(8) || !src.len().is_multiple_of(t) {
        dst.put(src);
        return;
    }
    for s in src.chunks(BLOCK_SIZE) {
        kernel(t, s, dst);
    }
}

/// The sub-part lengths of a part of length `len`.
fn subparts(len: usize) -> impl Iterator<Item = usize> {
    let rem = len % 8;
    let first = std::iter::once(len - rem);
    first.chain((rem != 0).then_some(rem))
}

/// Forward: own block of sub-part lengths; one output part.
pub fn forward(ctx: &StageCtx<'_>, input: FwdIn<'_>, out: FwdOut<'_>) -> Result<DataFlow> {
    let t = ctx.datatype.size();
    let count: usize = input.data.iter().map(|p| subparts(p.len()).count()).sum();
    let own = out.md.push_uninit(4 + 4 * count);
    own[..4].copy_from_slice(&(count as u32).to_le_bytes());
    let mut k = 0;
    for part in input.data.iter() {
        if part.len() > u32::MAX as usize {
            return Err(Error::invalid(
                "part longer than 4 GiB cannot be bitshuffled",
            ));
        }
        for len in subparts(part.len()) {
            own[4 + 4 * k..8 + 4 * k].copy_from_slice(&(len as u32).to_le_bytes());
            k += 1;
        }
    }
    out.md.extend_forwarded(input.md);
    // The sub-parts tile the output exactly; each is appended, copied or transposed block
    // by block.
    out.data.push_filled(input.data.total_len(), |dst| {
        for part in input.data.iter() {
            let mut sub_pos = 0;
            for len in subparts(part.len()) {
                apply_subpart(
                    t,
                    &part[sub_pos..sub_pos + len],
                    dst,
                    kernels::bitshuffle_block_into,
                );
                sub_pos += len;
            }
        }
        Ok::<_, Error>(())
    })?;
    Ok(DataFlow::Written)
}

/// Reverse: un-transposes each recorded sub-part.
pub fn reverse(
    ctx: &StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let t = ctx.datatype.size();
    let mut r = ByteReader::new(input.md, "bitshuffle metadata");
    let count = r.u32()? as usize;
    let lens = r.take(
        count
            .checked_mul(4)
            .ok_or_else(|| Error::corrupt("sub-part count overflows"))?,
    )?;
    let total: u64 = lens
        .chunks_exact(4)
        .map(|l| u32::from_le_bytes(l.try_into().unwrap()) as u64)
        .sum();
    if total > input.data.len() as u64 {
        return Err(Error::corrupt(format!(
            "sub-parts total {total} bytes but only {} bytes of data",
            input.data.len()
        )));
    }
    let mut dst = out.data.alloc(total as usize)?;
    let mut pos = 0;
    for l in lens.chunks_exact(4) {
        let len = u32::from_le_bytes(l.try_into().unwrap()) as usize;
        apply_subpart(
            t,
            &input.data[pos..pos + len],
            &mut dst,
            kernels::bitunshuffle_block_into,
        );
        pos += len;
    }
    Ok((MdFlow::Rest(r.position()), DataFlow::Written))
}

/// The Bitshuffle filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = plain_descriptor(
    FilterType::Bitshuffle,
    Filter::Bitshuffle,
    |_, ctx, input, out| forward(ctx, input, out),
    |_, ctx, input, out| reverse(ctx, input, out),
);

#[cfg(test)]
mod tests {
    use super::*;

    /// Bit-by-bit reference of docs/FORMAT.md §5.14's layout.
    fn reference(t: usize, src: &[u8]) -> Vec<u8> {
        let n = (src.len() / t) & !7;
        let r = n / 8;
        let mut out = vec![0u8; src.len()];
        for i in 0..n {
            for b in 0..t {
                for k in 0..8 {
                    let bit = (src[i * t + b] >> k) & 1;
                    out[(8 * b + k) * r + i / 8] |= bit << (i % 8);
                }
            }
        }
        out[n * t..].copy_from_slice(&src[n * t..]);
        out
    }

    #[test]
    fn block_kernel_matches_reference() {
        for t in [1usize, 2, 3, 4, 5, 8, 16] {
            for len in [0usize, 1, 7, 8, 9, 16, 63, 64, 65, 127, 128, 1000, 8192] {
                let src: Vec<u8> = (0..len).map(|i| (i * 37 + i / 3) as u8).collect();
                let mut dst = vec![0u8; len];
                bitshuffle_block(t, &src, &mut dst);
                assert_eq!(dst, reference(t, &src), "t={t} len={len}");
                let mut back = vec![0u8; len];
                bitunshuffle_block(t, &dst, &mut back);
                assert_eq!(back, src, "t={t} len={len}");
            }
        }
    }

    #[test]
    fn subparts_follow_tiledb() {
        assert_eq!(subparts(10).collect::<Vec<_>>(), vec![8, 2]);
        assert_eq!(subparts(3).collect::<Vec<_>>(), vec![0, 3]);
        assert_eq!(subparts(0).collect::<Vec<_>>(), vec![0]);
        assert_eq!(subparts(16).collect::<Vec<_>>(), vec![16]);
    }

    #[test]
    fn tiledb_vector_uint8() {
        // docs/FORMAT.md §9.2: UINT8 [1..10] → 5566788000000000 090a.
        let src: Vec<u8> = (1..=10).collect();
        let mut dst = vec![0u8; 8];
        apply_subpart(
            1,
            &src[..8],
            &mut OutBuf::from_init(&mut dst),
            kernels::bitshuffle_block_into,
        );
        assert_eq!(dst, [0x55, 0x66, 0x78, 0x80, 0, 0, 0, 0]);
    }
}
