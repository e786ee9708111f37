//! BYTESHUFFLE (9): blosc2's byte shuffle of each data part (docs/FORMAT.md §5.15).
//!
//! Own metadata: `u32 num_parts`, then `u32 length` per data part. Data: each part shuffled
//! with element size `t = datatype size`: `out[j·n + i] = in[i·t + j]`, the `L mod t` trailing
//! bytes copied verbatim.

use crate::engine::stage::{DataFlow, FwdIn, FwdOut, MdFlow, RevIn, RevOut, StageCtx};
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::filters::registry::{FilterDescriptor, plain_descriptor};
use crate::format::byte_reader::ByteReader;
use crate::format::filter_type::FilterType;

/// Shuffles `src` into `dst` (same length) with element size `t`, with the best SIMD kernel
/// of this CPU ([`crate::kernels`]).
pub fn shuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    crate::kernels::shuffle(t, src, dst);
}

/// Reverses [`shuffle`].
pub fn unshuffle(t: usize, src: &[u8], dst: &mut [u8]) {
    crate::kernels::unshuffle(t, src, dst);
}

/// Forward: own block of part lengths; one output part, the shuffled parts concatenated.
pub fn forward(ctx: &StageCtx<'_>, input: FwdIn<'_>, out: FwdOut<'_>) -> Result<DataFlow> {
    let t = ctx.datatype.size();
    let own = out.md.push_uninit(4 + 4 * input.data.count());
    own[..4].copy_from_slice(&(input.data.count() as u32).to_le_bytes());
    for (k, part) in input.data.iter().enumerate() {
        let len = u32::try_from(part.len())
            .map_err(|_| Error::invalid("part longer than 4 GiB cannot be shuffled"))?;
        own[4 + 4 * k..8 + 4 * k].copy_from_slice(&len.to_le_bytes());
    }
    out.md.extend_forwarded(input.md);
    // The parts tile the output exactly: each kernel call appends one part.
    out.data.push_filled(input.data.total_len(), |dst| {
        for part in input.data.iter() {
            crate::kernels::shuffle_into(t, part, dst);
        }
        Ok::<_, Error>(())
    })?;
    Ok(DataFlow::Written)
}

/// Reverse: unshuffles each recorded part.
pub fn reverse(
    ctx: &StageCtx<'_>,
    input: RevIn<'_>,
    mut out: RevOut<'_>,
) -> Result<(MdFlow, DataFlow)> {
    let t = ctx.datatype.size();
    let mut r = ByteReader::new(input.md, "byteshuffle metadata");
    let count = r.u32()? as usize;
    let lens = r.take(
        count
            .checked_mul(4)
            .ok_or_else(|| Error::corrupt("part count overflows"))?,
    )?;
    let total: u64 = lens
        .chunks_exact(4)
        .map(|l| u32::from_le_bytes(l.try_into().unwrap()) as u64)
        .sum();
    if total > input.data.len() as u64 {
        return Err(Error::corrupt(format!(
            "parts total {total} bytes but only {} bytes of data",
            input.data.len()
        )));
    }
    let mut dst = out.data.alloc(total as usize)?;
    let mut pos = 0;
    for l in lens.chunks_exact(4) {
        let len = u32::from_le_bytes(l.try_into().unwrap()) as usize;
        crate::kernels::unshuffle_into(t, &input.data[pos..pos + len], &mut dst);
        pos += len;
    }
    Ok((MdFlow::Rest(r.position()), DataFlow::Written))
}

/// The Byteshuffle filter's descriptor (see [`crate::filters::registry`]).
pub const DESCRIPTOR: FilterDescriptor = plain_descriptor(
    FilterType::Byteshuffle,
    Filter::Byteshuffle,
    |_, ctx, input, out| forward(ctx, input, out),
    |_, ctx, input, out| reverse(ctx, input, out),
);

#[cfg(test)]
mod tests {
    use super::*;

    fn reference_shuffle(t: usize, src: &[u8]) -> Vec<u8> {
        let n = src.len() / t;
        let mut out = vec![0u8; src.len()];
        for j in 0..t {
            for i in 0..n {
                out[j * n + i] = src[i * t + j];
            }
        }
        out[n * t..].copy_from_slice(&src[n * t..]);
        out
    }

    #[test]
    fn shuffle_matches_reference_for_all_sizes_and_lengths() {
        for t in [1usize, 2, 3, 4, 8, 16] {
            for len in [
                0usize, 1, 2, 3, 7, 8, 9, 15, 16, 17, 100, 1001, 65536, 65537,
            ] {
                let src: Vec<u8> = (0..len).map(|i| (i * 31 + i / 7) as u8).collect();
                let mut dst = vec![0u8; len];
                shuffle(t, &src, &mut dst);
                assert_eq!(dst, reference_shuffle(t, &src), "t={t} len={len}");
                let mut back = vec![0u8; len];
                unshuffle(t, &dst, &mut back);
                assert_eq!(back, src, "t={t} len={len}");
            }
        }
    }

    #[test]
    fn tiledb_vector_int32() {
        // docs/FORMAT.md §9.2: INT32 [1..8] shuffles to 01..08 followed by 24 zero bytes.
        let src: Vec<u8> = (1..=8i32).flat_map(|v| v.to_le_bytes()).collect();
        let mut dst = vec![0u8; 32];
        shuffle(4, &src, &mut dst);
        assert_eq!(&dst[..8], &[1, 2, 3, 4, 5, 6, 7, 8]);
        assert!(dst[8..].iter().all(|&b| b == 0));
    }
}
