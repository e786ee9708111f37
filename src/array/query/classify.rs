//! Per-tile classification of a multi-range subarray: per dimension, its ranges as sorted,
//! disjoint intervals each carrying how many ranges cover it (integer coordinates, as order
//! words), so a tile's MBR is disjoint from the subarray, wholly inside it (every cell counted
//! the same number of times) or partial, and a cell's count is one binary search (skipped
//! while cells stay in the interval or gap of the previous cell).

use super::ranges::{MultiRange, contains};
use crate::array::order::Kind;
use crate::array::schema::{ArraySchema, Range};
use crate::format::datatype::Datatype;

/// How a tile's MBR meets the subarray.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Class {
    /// No cell of the MBR is selected.
    Disjoint,
    /// Every cell of the MBR is selected this many times (one range combination per time).
    Inside(u64),
    /// Some cells may be selected: they must be checked.
    Partial,
}

/// One dimension's ranges.
enum DimSel {
    /// No range: the whole domain, each cell once.
    All,
    /// Integer coordinates: disjoint intervals of order words sorted, with their counts.
    Words {
        kind: Kind,
        iv: Vec<(u64, u64, u64)>,
    },
    /// Floats and strings: the ranges, checked one by one.
    Generic {
        datatype: Datatype,
        var: bool,
        ranges: Vec<Range>,
    },
}

/// A multi-range subarray prepared for tile and cell tests.
pub(crate) struct Selector {
    dims: Vec<DimSel>,
}

/// The step function of `ranges` (inclusive order-word intervals): disjoint sorted intervals
/// where the count of covering ranges is positive, with that count.
fn step_function(ranges: &[(u64, u64)]) -> Vec<(u64, u64, u64)> {
    // +1 at lo, -1 after hi (u128: hi may be u64::MAX).
    let mut events: Vec<(u128, i64)> = Vec::with_capacity(ranges.len() * 2);
    for &(lo, hi) in ranges {
        events.push((lo as u128, 1));
        events.push((hi as u128 + 1, -1));
    }
    events.sort_unstable();
    let mut out: Vec<(u64, u64, u64)> = Vec::new();
    let mut count: i64 = 0;
    let mut k = 0;
    while k < events.len() {
        let at = events[k].0;
        while k < events.len() && events[k].0 == at {
            count += events[k].1;
            k += 1;
        }
        // The interval [at, next event) has `count` covering ranges.
        if count > 0 && k < events.len() {
            let end = (events[k].0 - 1) as u64;
            match out.last_mut() {
                Some(last) if last.1 as u128 + 1 == at && last.2 == count as u64 => last.1 = end,
                _ => out.push((at as u64, end, count as u64)),
            }
        }
    }
    out
}

impl Selector {
    /// The selector of `mr` over `schema`.
    pub(crate) fn new(schema: &ArraySchema, mr: &MultiRange) -> Selector {
        let dims = schema
            .dimensions
            .iter()
            .enumerate()
            .map(|(j, d)| {
                let rs = mr.ranges(j);
                if rs.is_empty() {
                    return DimSel::All;
                }
                let kind = Kind::fixed(d.datatype).filter(|k| {
                    !k.is_float()
                        && d.coord_size() == Some(k.size())
                        && rs
                            .iter()
                            .all(|r| r.lo().len() == k.size() && r.hi().len() == k.size())
                });
                match kind {
                    Some(kind) => {
                        let words: Vec<(u64, u64)> = rs
                            .iter()
                            .map(|r| (kind.order_word(r.lo()), kind.order_word(r.hi())))
                            .collect();
                        DimSel::Words {
                            kind,
                            iv: step_function(&words),
                        }
                    }
                    None => DimSel::Generic {
                        datatype: d.datatype,
                        var: d.is_var(),
                        ranges: rs.to_vec(),
                    },
                }
            })
            .collect();
        Selector { dims }
    }

    /// How dimension `j`'s ranges meet `[lo, hi]` (an MBR's bounds).
    pub(crate) fn classify_dim(&self, j: usize, lo: &[u8], hi: &[u8]) -> Class {
        match &self.dims[j] {
            DimSel::All => Class::Inside(1),
            DimSel::Words { kind, iv } => {
                let (l, h) = (kind.order_word(lo), kind.order_word(hi));
                let p = iv.partition_point(|x| x.1 < l);
                match iv.get(p) {
                    None => Class::Disjoint,
                    Some(x) if x.0 > h => Class::Disjoint,
                    Some(x) if x.0 <= l && h <= x.1 => Class::Inside(x.2),
                    Some(_) => Class::Partial,
                }
            }
            DimSel::Generic {
                datatype,
                var,
                ranges,
            } => {
                let le = |a: &[u8], b: &[u8]| {
                    if *var {
                        a <= b
                    } else {
                        crate::array::order::compare(*datatype, a, b).is_le()
                    }
                };
                let (mut meeting, mut holding) = (0u64, 0u64);
                for r in ranges {
                    if le(lo, r.hi()) && le(r.lo(), hi) {
                        meeting += 1;
                        if contains(*datatype, *var, r, lo) && contains(*datatype, *var, r, hi) {
                            holding += 1;
                        }
                    }
                }
                if meeting == 0 {
                    Class::Disjoint
                } else if meeting == holding {
                    Class::Inside(holding)
                } else {
                    Class::Partial
                }
            }
        }
    }

    /// How the subarray meets a tile's MBR, the dimensions whose cells must be checked
    /// (those classified partial), and the times the other dimensions count every cell.
    pub(crate) fn classify(&self, mbr: &[Range]) -> (Class, Vec<usize>, u64) {
        let mut times = 1u64;
        let mut partial = Vec::new();
        for (j, r) in mbr.iter().enumerate() {
            match self.classify_dim(j, r.lo(), r.hi()) {
                Class::Disjoint => return (Class::Disjoint, Vec::new(), 0),
                Class::Inside(k) => times = times.saturating_mul(k),
                Class::Partial => partial.push(j),
            }
        }
        if partial.is_empty() {
            (Class::Inside(times), partial, times)
        } else {
            (Class::Partial, partial, times)
        }
    }

    /// Whether dimension `j` has no range (every cell counts once).
    pub(crate) fn is_all(&self, j: usize) -> bool {
        matches!(self.dims[j], DimSel::All)
    }

    /// Multiplies each `times[c]` by the number of ranges of dimension `j` holding cell `c`,
    /// given the dimension's cells: fixed-size `data` or var-size `data` with `offsets`.
    /// Cells whose time is already 0 are skipped.
    pub(crate) fn multiply(
        &self,
        j: usize,
        data: &[u8],
        offsets: Option<&[u64]>,
        times: &mut [u64],
    ) {
        match &self.dims[j] {
            DimSel::All => {}
            DimSel::Words { kind, iv } => {
                let size = kind.size();
                match kind {
                    Kind::I8 => count_words(iv, data, size, times, |b| Kind::I8.order_word(b)),
                    Kind::U8 => count_words(iv, data, size, times, |b| b[0] as u64),
                    Kind::I16 => count_words(iv, data, size, times, |b| {
                        (i16::from_le_bytes([b[0], b[1]]) as i64 as u64) ^ (1 << 63)
                    }),
                    Kind::U16 => count_words(iv, data, size, times, |b| {
                        u16::from_le_bytes([b[0], b[1]]) as u64
                    }),
                    Kind::I32 => count_words(iv, data, size, times, |b| {
                        (i32::from_le_bytes(b.try_into().expect("4 bytes")) as i64 as u64)
                            ^ (1 << 63)
                    }),
                    Kind::U32 => count_words(iv, data, size, times, |b| {
                        u32::from_le_bytes(b.try_into().expect("4 bytes")) as u64
                    }),
                    Kind::I64 => count_words(iv, data, size, times, |b| {
                        (i64::from_le_bytes(b.try_into().expect("8 bytes")) as u64) ^ (1 << 63)
                    }),
                    Kind::U64 => count_words(iv, data, size, times, |b| {
                        u64::from_le_bytes(b.try_into().expect("8 bytes"))
                    }),
                    k => count_words(iv, data, size, times, |b| k.order_word(b)),
                }
            }
            DimSel::Generic {
                datatype,
                var,
                ranges,
            } => {
                let size = datatype.size();
                for (c, t) in times.iter_mut().enumerate() {
                    if *t == 0 {
                        continue;
                    }
                    let v = match offsets {
                        Some(o) => {
                            let end = o.get(c + 1).map_or(data.len(), |e| *e as usize);
                            &data[o[c] as usize..end]
                        }
                        None => &data[c * size..(c + 1) * size],
                    };
                    *t *= ranges
                        .iter()
                        .filter(|r| contains(*datatype, *var, r, v))
                        .count() as u64;
                }
            }
        }
    }
}

/// Per cell of `data` (cells of `size` bytes): its order word's count in the step function
/// `iv` multiplied into `times`. The interval or gap holding the previous cell is tried
/// first (cells in a tile come in runs), then a binary search.
#[inline]
fn count_words(
    iv: &[(u64, u64, u64)],
    data: &[u8],
    size: usize,
    times: &mut [u64],
    word: impl Fn(&[u8]) -> u64,
) {
    // The current piece [lo, hi] of the step function (an interval or a gap) and its count.
    let (mut lo, mut hi, mut k) = (1u64, 0u64, 0u64);
    for (cell, t) in data.chunks_exact(size).zip(times.iter_mut()) {
        if *t == 0 {
            continue;
        }
        let v = word(cell);
        if v < lo || v > hi {
            let p = iv.partition_point(|x| x.1 < v);
            match iv.get(p) {
                Some(x) if x.0 <= v => (lo, hi, k) = *x,
                next => {
                    // A gap: from after the previous interval to before the next one.
                    lo = if p == 0 { 0 } else { iv[p - 1].1 + 1 };
                    hi = next.map_or(u64::MAX, |x| x.0 - 1);
                    k = 0;
                }
            }
        }
        *t *= k;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn step_functions_count_overlaps_and_merge_adjacent_pieces() {
        assert_eq!(
            step_function(&[(5, 9), (1, 3), (4, 4), (8, 12), (20, 20)]),
            vec![(1, 7, 1), (8, 9, 2), (10, 12, 1), (20, 20, 1)]
        );
        assert_eq!(
            step_function(&[(0, u64::MAX), (u64::MAX, u64::MAX)]),
            vec![(0, u64::MAX - 1, 1), (u64::MAX, u64::MAX, 2)]
        );
        let iv = step_function(&[(2, 3), (2, 3), (7, 8)]);
        let data: Vec<u8> = [0u8, 2, 3, 4, 7, 9, 3, 8].to_vec();
        let mut times = vec![1u64; 8];
        count_words(&iv, &data, 1, &mut times, |b| b[0] as u64);
        assert_eq!(times, [0, 2, 2, 0, 1, 0, 2, 1]);
    }
}
