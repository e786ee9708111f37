//! Merging the byte ranges of one object into few requests, as TileDB's
//! `VFS::compute_read_batches` does (`vfs.min_batch_gap`, `vfs.min_batch_size`), with a cap
//! on one request's size so that a large read still spreads over parallel requests.

use std::ops::Range;

/// How ranges are merged.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct BatchRule {
    /// Ranges at most this far apart share a request (TileDB's `vfs.min_batch_gap`).
    pub min_gap: u64,
    /// Ranges share a request while it stays at most this long, whatever the gap (TileDB's
    /// `vfs.min_batch_size`).
    pub min_size: u64,
    /// No request grows past this by merging (a single longer range is one request).
    pub max_size: u64,
}

impl Default for BatchRule {
    /// TileDB 2.30's defaults (500 KB gap, 20 MB batch) and requests of at most 10 MB (TileDB's
    /// `vfs.min_parallel_size`).
    fn default() -> Self {
        BatchRule {
            min_gap: 500 * 1024,
            min_size: 20 * 1024 * 1024,
            max_size: 10 * 1024 * 1024,
        }
    }
}

/// The requests covering `ranges` (in any order, possibly overlapping; empty ones ignored):
/// sorted, disjoint, each the union of whole ranges plus the gaps between them.
pub(crate) fn coalesce(ranges: &[Range<u64>], rule: BatchRule) -> Vec<Range<u64>> {
    let mut sorted: Vec<Range<u64>> = ranges.iter().filter(|r| r.end > r.start).cloned().collect();
    sorted.sort_by_key(|r| (r.start, r.end));
    let mut out: Vec<Range<u64>> = Vec::new();
    for r in sorted {
        if let Some(last) = out.last_mut() {
            let end = last.end.max(r.end);
            let size = end - last.start;
            let overlaps = r.start < last.end;
            let gap = r.start.saturating_sub(last.end);
            if overlaps || ((gap <= rule.min_gap || size <= rule.min_size) && size <= rule.max_size)
            {
                last.end = end;
                continue;
            }
        }
        out.push(r);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn near_ranges_merge_far_ones_do_not() {
        let rule = BatchRule {
            min_gap: 10,
            min_size: 0,
            max_size: 1000,
        };
        let got = coalesce(&[50..60, 0..10, 15..20, 100..110, 108..120, 5..5], rule);
        assert_eq!(got, vec![0..20, 50..60, 100..120]);
    }

    #[test]
    fn small_batches_merge_across_gaps_and_large_ones_split() {
        let rule = BatchRule {
            min_gap: 0,
            min_size: 100,
            max_size: 150,
        };
        // Up to 100 bytes merge across any gap; adjacent ranges merge up to 150 bytes.
        let got = coalesce(&[0..10, 50..60, 90..140, 140..200, 200..210], rule);
        assert_eq!(got, vec![0..60, 90..210]);
        let got = coalesce(&[0..100, 100..200, 200..250], rule);
        assert_eq!(got, vec![0..100, 100..250]);
        // One range longer than max_size is a request of its own.
        let got = coalesce(&[0..500, 500..510], rule);
        assert_eq!(got, vec![0..500, 500..510]);
    }

    #[test]
    fn every_range_lies_inside_one_request() {
        let rule = BatchRule {
            min_gap: 7,
            min_size: 20,
            max_size: 40,
        };
        let ranges: Vec<Range<u64>> = (0..200u64)
            .map(|i| {
                let s = (i * 37) % 1000;
                s..s + (i % 13) + 1
            })
            .collect();
        let got = coalesce(&ranges, rule);
        assert!(got.windows(2).all(|w| w[0].end < w[1].start));
        for r in &ranges {
            assert!(
                got.iter().any(|b| b.start <= r.start && r.end <= b.end),
                "{r:?}"
            );
        }
    }
}
