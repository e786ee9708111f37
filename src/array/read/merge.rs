//! The merge of several fragments' cells into global order by per-cell keys: each candidate
//! cell gets a key of up to [`MAX_WORDS`] u64 words whose lexicographic order is the global
//! order (tile indices, then coordinates as order words, or the Hilbert value first), and the
//! keys are sorted in parallel with the cells' input positions as the last word, so equal keys
//! keep their input order (fragment order, then cell order: what the newest-wins
//! de-duplication relies on). When the words' widths add up to 64 bits at most (integer
//! dimensions with small domains: their words are offsets from the domain's low end), a key
//! packs into one u64 and (key, position) into a u128: 16 bytes a cell to sort.

//!
//! When each fragment's cells come with their keys already sorted (the usual case: fragments
//! are written in global order), [`merge_runs`] merges the sorted runs instead: splitter keys
//! cut every run into partitions (equal keys always in the same one) merged independently in
//! parallel, each by a tournament (loser) tree over its runs, ties going to the earlier run.

use rayon::prelude::*;

/// The most words a key may have (more: the caller's comparison sort).
pub(crate) const MAX_WORDS: usize = 8;

/// Cells in global order.
pub(crate) struct Merged {
    /// Input positions in global order (equal keys in input order).
    pub order: Vec<u32>,
    /// Per output position: whether its key equals the previous one's (same coordinates).
    pub same_as_previous: Vec<bool>,
    /// Whether `order` is the input order (0, 1, 2, ...): the cells need no moving.
    pub in_input_order: bool,
}

/// Sorts `n` cells by keys of `widths.len()` words: `fill(i, key)` writes cell `i`'s words,
/// word `w` below `2^widths[w]` (`false`: the cell has no key, e.g. a NaN coordinate or a
/// word out of its width). `None` when a cell has no key, there are no words or more than
/// [`MAX_WORDS`], or `n` does not fit a u32.
pub(crate) fn merge<F>(n: usize, widths: &[u32], fill: F) -> Option<Merged>
where
    F: Fn(usize, &mut [u64]) -> bool + Sync,
{
    let words = widths.len();
    if words > MAX_WORDS || u32::try_from(n).is_err() || widths.iter().any(|w| *w > 64) {
        return None;
    }
    if words > 0 && widths.iter().sum::<u32>() <= 64 {
        return packed(n, widths, &fill);
    }
    macro_rules! dispatch {
        ($($k:literal)*) => {
            match words {
                $($k => wide::<$k, F>(n, &fill),)*
                _ => None,
            }
        };
    }
    dispatch!(1 2 3 4 5 6 7 8)
}

/// Whether `w` fits `bits` bits.
fn fits(w: u64, bits: u32) -> bool {
    bits >= 64 || w >> bits == 0
}

/// Keys packed into a u64 (the first word in the highest bits), sorted as u128 with the
/// input position in the low 32 bits.
fn packed<F>(n: usize, widths: &[u32], fill: &F) -> Option<Merged>
where
    F: Fn(usize, &mut [u64]) -> bool + Sync,
{
    let mut keys: Vec<u128> = (0..n)
        .into_par_iter()
        .with_min_len(4096)
        .map_init(
            || vec![0u64; widths.len()],
            |k, i| {
                if !fill(i, k) {
                    return None;
                }
                let mut key = 0u128;
                for (&w, &bits) in k.iter().zip(widths) {
                    if !fits(w, bits) {
                        return None;
                    }
                    key = (key << bits) | u128::from(w);
                }
                Some((key << 32) | i as u128)
            },
        )
        .collect::<Option<_>>()?;
    sort(&mut keys);
    let same_as_previous = (0..keys.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| i > 0 && keys[i] >> 32 == keys[i - 1] >> 32)
        .collect();
    let order: Vec<u32> = keys.into_par_iter().map(|k| k as u32).collect();
    Some(Merged {
        in_input_order: is_identity(&order),
        order,
        same_as_previous,
    })
}

/// Whether `order` is 0, 1, 2, ...
fn is_identity(order: &[u32]) -> bool {
    order
        .par_iter()
        .with_min_len(1 << 14)
        .enumerate()
        .all(|(i, &o)| o as usize == i)
}

/// Sorts distinct keys; fragments that do not overlap, written in order, come already sorted
/// (no sort then).
fn sort<T: Ord + Send + Sync>(keys: &mut [T]) {
    if !keys.par_windows(2).with_min_len(4096).all(|w| w[0] <= w[1]) {
        keys.par_sort_unstable();
    }
}

/// Keys of `K` words each, sorted as (key, position) pairs.
fn wide<const K: usize, F>(n: usize, fill: &F) -> Option<Merged>
where
    F: Fn(usize, &mut [u64]) -> bool + Sync,
{
    let mut keys: Vec<([u64; K], u32)> = (0..n)
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| {
            let mut k = [0u64; K];
            fill(i, &mut k).then_some((k, i as u32))
        })
        .collect::<Option<_>>()?;
    sort(&mut keys);
    let same_as_previous = (0..keys.len())
        .into_par_iter()
        .with_min_len(4096)
        .map(|i| i > 0 && keys[i].0 == keys[i - 1].0)
        .collect();
    let order: Vec<u32> = keys.into_par_iter().map(|(_, i)| i).collect();
    Some(Merged {
        in_input_order: is_identity(&order),
        order,
        same_as_previous,
    })
}

/// A key of packed words (u64 or u128) for [`merge_runs`].
pub(crate) trait Packed: Copy + Ord + Default + Send + Sync {
    /// A key tagged with a segment number, ordered by key then number.
    type Tagged: Copy + Ord;
    /// The key with word `w` (`w < 2^bits`) appended in its low `bits` bits.
    fn push(self, bits: u32, w: u64) -> Self;
    /// The key tagged with segment `seg`.
    fn tag(self, seg: u32) -> Self::Tagged;
    /// The key and segment of a tagged key.
    fn untag(t: Self::Tagged) -> (Self, u32);
    /// The bits below and at the highest bit where `self` and `other` differ.
    fn differing_bits(self, other: Self) -> u32;
    /// The `RADIX_BITS` bits of the key from bit `shift` up.
    fn digit(self, shift: u32) -> usize;
}

impl Packed for u64 {
    type Tagged = u128;
    fn push(self, bits: u32, w: u64) -> Self {
        if bits >= 64 { w } else { (self << bits) | w }
    }
    fn tag(self, seg: u32) -> u128 {
        (u128::from(self) << 32) | u128::from(seg)
    }
    fn untag(t: u128) -> (u64, u32) {
        ((t >> 32) as u64, t as u32)
    }
    fn differing_bits(self, other: u64) -> u32 {
        64 - (self ^ other).leading_zeros()
    }
    fn digit(self, shift: u32) -> usize {
        (self >> shift) as usize & RADIX_MASK
    }
}

impl Packed for u128 {
    type Tagged = (u128, u32);
    fn push(self, bits: u32, w: u64) -> Self {
        (self << bits) | u128::from(w)
    }
    fn tag(self, seg: u32) -> (u128, u32) {
        (self, seg)
    }
    fn untag(t: (u128, u32)) -> (u128, u32) {
        t
    }
    fn differing_bits(self, other: u128) -> u32 {
        128 - (self ^ other).leading_zeros()
    }
    fn digit(self, shift: u32) -> usize {
        (self >> shift) as usize & RADIX_MASK
    }
}

/// Cells per partition [`merge_runs`] aims at.
const PARTITION: usize = 1 << 15;

/// Segments up to which a partition is merged by a loser tree; more (fragments that overlap
/// a lot) are sorted by a stable radix sort, cheaper than log2(segments) mispredicted
/// comparisons per cell.
const TREE_SEGMENTS: usize = 8;

/// Bits per radix sort pass.
const RADIX_BITS: u32 = 11;
const RADIX_MASK: usize = (1 << RADIX_BITS) - 1;

/// Merges the sorted runs `keys[bounds[r]..bounds[r + 1]]` (`bounds` ascending, from 0 to
/// `keys.len()`) into global order: equal keys in input order (earlier runs first, then by
/// position). `None` when a run is not sorted, or `keys.len()` does not fit a u32 (the
/// caller sorts then).
pub(crate) fn merge_runs<K: Packed>(keys: &[K], bounds: &[usize]) -> Option<Merged> {
    let n = keys.len();
    if u32::try_from(n).is_err()
        || u32::try_from(bounds.len()).is_err()
        || bounds.first().is_some_and(|b| *b != 0)
        || bounds.last().is_some_and(|b| *b != n)
        || bounds.windows(2).any(|w| w[0] > w[1])
        || (bounds.is_empty() && n > 0)
    {
        return None;
    }
    let runs: Vec<(usize, usize)> = bounds
        .windows(2)
        .map(|w| (w[0], w[1]))
        .filter(|(a, b)| a < b)
        .collect();
    let sorted = runs.par_iter().all(|&(a, b)| {
        keys[a..b]
            .par_windows(2)
            .with_min_len(4096)
            .all(|w| w[0] <= w[1])
    });
    if !sorted {
        return None;
    }
    // Each run starting at or after the end of the one before (fragments that do not overlap,
    // written in order: appends): the input is the order, equal keys only next to each other.
    if runs.windows(2).all(|w| keys[w[0].1 - 1] <= keys[w[1].0]) {
        let same_as_previous = (0..n)
            .into_par_iter()
            .with_min_len(1 << 14)
            .map(|i| i > 0 && keys[i] == keys[i - 1])
            .collect();
        return Some(Merged {
            order: (0..n as u32).collect(),
            same_as_previous,
            in_input_order: true,
        });
    }
    // Splitters: quantiles of a regular sample of all keys (each run sampled in proportion
    // to its length), distinct and ascending.
    let parts = n.div_ceil(PARTITION).clamp(1, 1024);
    let mut splitters: Vec<K> = Vec::new();
    if parts > 1 {
        let step = (n / (parts * 16)).max(1);
        let mut sample: Vec<K> = (step / 2..n).step_by(step).map(|i| keys[i]).collect();
        sample.sort_unstable();
        splitters = (1..parts)
            .map(|j| sample[j * sample.len() / parts])
            .collect();
        splitters.dedup();
    }
    // cuts[j][r]: where partition j starts in run r (the first key not below splitter j).
    let mut cuts: Vec<Vec<usize>> = Vec::with_capacity(splitters.len() + 2);
    cuts.push(runs.iter().map(|r| r.0).collect());
    cuts.par_extend(splitters.par_iter().map(|s| {
        runs.iter()
            .map(|&(a, b)| a + keys[a..b].partition_point(|k| k < s))
            .collect::<Vec<usize>>()
    }));
    cuts.push(runs.iter().map(|r| r.1).collect());
    let mut order = vec![0u32; n];
    let mut same = vec![false; n];
    let mut jobs = Vec::with_capacity(cuts.len() - 1);
    let (mut o_rest, mut s_rest) = (&mut order[..], &mut same[..]);
    for j in 0..cuts.len() - 1 {
        let segs: Vec<(usize, usize)> = cuts[j]
            .iter()
            .zip(&cuts[j + 1])
            .map(|(&a, &b)| (a, b))
            .filter(|(a, b)| a < b)
            .collect();
        let len: usize = segs.iter().map(|(a, b)| b - a).sum();
        let (o, ro) = o_rest.split_at_mut(len);
        let (s, rs) = s_rest.split_at_mut(len);
        (o_rest, s_rest) = (ro, rs);
        jobs.push((segs, o, s));
    }
    jobs.into_par_iter()
        .for_each(|(segs, o, s)| merge_partition(keys, &segs, o, s));
    Some(Merged {
        order,
        same_as_previous: same,
        in_input_order: false,
    })
}

/// Merges the sorted `segs` of `keys` (in input order) into `order` (input positions) and
/// `same` (equal to the previous key of the partition: a partition's first key is never equal
/// to one of an earlier partition).
fn merge_partition<K: Packed>(
    keys: &[K],
    segs: &[(usize, usize)],
    order: &mut [u32],
    same: &mut [bool],
) {
    match segs {
        [] => {}
        [(a, b)] => {
            for (k, (o, s)) in (*a..*b).zip(order.iter_mut().zip(same.iter_mut())) {
                *o = k as u32;
                *s = k > *a && keys[k] == keys[k - 1];
            }
        }
        _ if segs.len() > TREE_SEGMENTS => radix_partition(keys, segs, order, same),
        _ => {
            let mut tree = LoserTree::new(keys, segs);
            let mut last: Option<K> = None;
            for (o, s) in order.iter_mut().zip(same.iter_mut()) {
                let (i, key) = tree.pop();
                *o = i as u32;
                *s = last == Some(key);
                last = Some(key);
            }
        }
    }
}

/// [`merge_partition`] of many segments: their (key, position) pairs in input order sorted
/// by a least-significant-digit radix sort (stable: equal keys stay in input order) over the
/// bits where the partition's keys differ.
fn radix_partition<K: Packed>(
    keys: &[K],
    segs: &[(usize, usize)],
    order: &mut [u32],
    same: &mut [bool],
) {
    let mut a: Vec<(K, u32)> = Vec::with_capacity(order.len());
    for &(s, e) in segs {
        a.extend((s..e).map(|i| (keys[i], i as u32)));
    }
    let (Some(lo), Some(hi)) = (
        segs.iter().map(|s| keys[s.0]).min(),
        segs.iter().map(|s| keys[s.1 - 1]).max(),
    ) else {
        return;
    };
    let bits = lo.differing_bits(hi);
    let mut b: Vec<(K, u32)> = vec![(K::default(), 0); a.len()];
    let mut count = vec![0usize; 1 << RADIX_BITS];
    let mut shift = 0;
    while shift < bits {
        count.fill(0);
        for e in &a {
            count[e.0.digit(shift)] += 1;
        }
        // A digit all keys share: nothing to move.
        if !count.contains(&a.len()) {
            let mut at = 0;
            for c in count.iter_mut() {
                let n = *c;
                *c = at;
                at += n;
            }
            for e in &a {
                let d = e.0.digit(shift);
                b[count[d]] = *e;
                count[d] += 1;
            }
            std::mem::swap(&mut a, &mut b);
        }
        shift += RADIX_BITS;
    }
    for (i, ((o, s), e)) in order.iter_mut().zip(same.iter_mut()).zip(&a).enumerate() {
        *o = e.1;
        *s = i > 0 && a[i - 1].0 == e.0;
    }
}

/// A tournament tree of losers over sorted segments, each node holding its loser's head key
/// tagged with its segment: a pop costs one comparison per level; ties go to the earlier
/// segment. An exhausted segment's head is the partition's largest key tagged with
/// `u32::MAX`, after every real head (the caller pops exactly the cells there are).
struct LoserTree<'k, K: Packed> {
    keys: &'k [K],
    /// Per segment: the next position and the end.
    pos: Vec<usize>,
    end: Vec<usize>,
    /// Internal nodes 1.. hold the loser of their match; node 0 the overall winner.
    tree: Vec<K::Tagged>,
    sentinel: K::Tagged,
    leaves: usize,
}

impl<'k, K: Packed> LoserTree<'k, K> {
    fn new(keys: &'k [K], segs: &[(usize, usize)]) -> Self {
        let leaves = segs.len().next_power_of_two();
        let max = segs.iter().map(|s| keys[s.1 - 1]).max().unwrap_or_default();
        let sentinel = max.tag(u32::MAX);
        let mut win: Vec<K::Tagged> = vec![sentinel; 2 * leaves];
        for (l, &(a, _)) in segs.iter().enumerate() {
            win[leaves + l] = keys[a].tag(l as u32);
        }
        let mut tree = vec![sentinel; leaves];
        // Winners of each subtree, bottom up (leaves at leaves..2 * leaves).
        for node in (1..leaves).rev() {
            let (a, b) = (win[2 * node], win[2 * node + 1]);
            win[node] = a.min(b);
            tree[node] = a.max(b);
        }
        tree[0] = win[1];
        LoserTree {
            keys,
            pos: segs.iter().map(|s| s.0).collect(),
            end: segs.iter().map(|s| s.1).collect(),
            tree,
            sentinel,
            leaves,
        }
    }

    /// The smallest head: its input position and key.
    fn pop(&mut self) -> (usize, K) {
        let (key, seg) = K::untag(self.tree[0]);
        let seg = seg as usize;
        let at = self.pos[seg];
        self.pos[seg] += 1;
        let mut v = match self.keys.get(at + 1) {
            Some(k) if at + 1 < self.end[seg] => k.tag(seg as u32),
            _ => self.sentinel,
        };
        let mut node = (seg + self.leaves) / 2;
        while node > 0 {
            let t = self.tree[node];
            // Which way a match goes is data: no branch to mispredict.
            let lt = t < v;
            self.tree[node] = std::hint::select_unpredictable(lt, v, t);
            v = std::hint::select_unpredictable(lt, t, v);
            node /= 2;
        }
        self.tree[0] = v;
        (at, key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Merges `keys` with words of 64 bits (the wide path) and, where they fit, of `bits`
    /// bits (the packed path); both must agree.
    fn run(keys: &[Vec<u64>]) -> Option<Merged> {
        let words = keys.first().map_or(1, Vec::len);
        let fill = |i: usize, k: &mut [u64]| {
            k.copy_from_slice(&keys[i]);
            true
        };
        let wide = merge(keys.len(), &vec![64; words], fill)?;
        let max = keys.iter().flatten().copied().max().unwrap_or(0);
        let bits = 64 - max.leading_zeros();
        if bits * words as u32 <= 64 {
            let packed = merge(keys.len(), &vec![bits.max(1); words], fill).unwrap();
            assert_eq!(packed.order, wide.order);
            assert_eq!(packed.same_as_previous, wide.same_as_previous);
        }
        Some(wide)
    }

    #[test]
    fn equal_keys_keep_their_input_order() {
        // Three "fragments" of sorted runs with repeated coordinates across them.
        let keys = vec![
            vec![0, 5],
            vec![1, 2],
            vec![0, 5],
            vec![1, 1],
            vec![0, 5],
            vec![0, 4],
        ];
        let m = run(&keys).unwrap();
        assert_eq!(m.order, vec![5, 0, 2, 4, 3, 1]);
        assert_eq!(
            m.same_as_previous,
            vec![false, false, true, true, false, false]
        );
    }

    #[test]
    fn sorted_input_stays_as_it_is() {
        let keys: Vec<Vec<u64>> = (0..10_000u64).map(|i| vec![i / 7, i % 7]).collect();
        let m = run(&keys).unwrap();
        assert_eq!(m.order, (0..10_000).collect::<Vec<u32>>());
        assert!(m.same_as_previous.iter().all(|s| !s));
    }

    #[test]
    fn many_runs_merge_like_a_stable_sort() {
        // 300 runs of 100 sorted keys each over a small key space (many ties across runs).
        let mut keys = Vec::new();
        let mut x = 12345u64;
        for _ in 0..300 {
            let mut run: Vec<Vec<u64>> = (0..100)
                .map(|_| {
                    x = x
                        .wrapping_mul(6364136223846793005)
                        .wrapping_add(1442695040888963407);
                    vec![(x >> 60) % 5, (x >> 40) % 50, 3]
                })
                .collect();
            run.sort();
            keys.extend(run);
        }
        let m = run(&keys).unwrap();
        let mut want: Vec<u32> = (0..keys.len() as u32).collect();
        want.sort_by(|a, b| keys[*a as usize].cmp(&keys[*b as usize]));
        assert_eq!(m.order, want);
        for (i, s) in m.same_as_previous.iter().enumerate() {
            let eq = i > 0 && keys[want[i] as usize] == keys[want[i - 1] as usize];
            assert_eq!(*s, eq, "position {i}");
        }
    }

    #[test]
    fn no_key_or_too_many_words_is_none() {
        assert!(merge(3, &[64, 64], |i, _| i != 1).is_none());
        assert!(merge(3, &[4, 4], |i, _| i != 1).is_none());
        assert!(merge(3, &[64; MAX_WORDS + 1], |_, _| true).is_none());
        assert!(merge(3, &[], |_, _| true).is_none());
        let m = merge(0, &[3, 3], |_, _| true).unwrap();
        assert!(m.order.is_empty() && m.same_as_previous.is_empty());
    }

    #[test]
    fn a_word_wider_than_its_width_has_no_key() {
        // Coordinates outside the domain (a damaged fragment): the caller's comparison sort.
        assert!(
            merge(2, &[4, 8], |i, k| {
                k[0] = 3;
                k[1] = if i == 1 { 256 } else { 255 };
                true
            })
            .is_none()
        );
    }

    #[test]
    fn packed_keys_order_by_their_first_word_first() {
        // Word widths 2 and 30: the first word decides before the (larger) second.
        let keys = [[1u64, 5], [0, (1 << 30) - 1], [1, 0], [0, 0], [1, 5]];
        let m = merge(keys.len(), &[2, 30], |i, k| {
            k.copy_from_slice(&keys[i]);
            true
        })
        .unwrap();
        assert_eq!(m.order, vec![3, 1, 2, 0, 4]);
        assert_eq!(m.same_as_previous, vec![false, false, false, false, true]);
    }

    #[test]
    fn one_word_keys_sort_as_unsigned() {
        let keys = vec![vec![u64::MAX], vec![0], vec![1 << 63], vec![0]];
        let m = run(&keys).unwrap();
        assert_eq!(m.order, vec![1, 3, 2, 0]);
        assert_eq!(m.same_as_previous, vec![false, true, false, false]);
    }

    /// The stable sort of `keys` (input order on ties) and its equal-neighbour flags.
    fn stable(keys: &[u64]) -> (Vec<u32>, Vec<bool>) {
        let mut want: Vec<u32> = (0..keys.len() as u32).collect();
        want.sort_by_key(|&i| keys[i as usize]);
        let same = (0..want.len())
            .map(|i| i > 0 && keys[want[i] as usize] == keys[want[i - 1] as usize])
            .collect();
        (want, same)
    }

    /// Runs of the given lengths with keys from `next`, each sorted.
    fn runs(lens: &[usize], mut next: impl FnMut() -> u64) -> (Vec<u64>, Vec<usize>) {
        let (mut keys, mut bounds) = (Vec::new(), vec![0]);
        for &l in lens {
            let mut r: Vec<u64> = (0..l).map(|_| next()).collect();
            r.sort_unstable();
            keys.extend(r);
            bounds.push(keys.len());
        }
        (keys, bounds)
    }

    fn lcg(seed: u64) -> impl FnMut() -> u64 {
        let mut x = seed;
        move || {
            x = x
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            x >> 33
        }
    }

    #[test]
    fn merged_runs_keep_duplicates_in_run_order() {
        // Equal keys across runs: the earlier run (older fragment) first, adjacent, flagged.
        let keys = [1u64, 5, 7, 5, 7, 9, 0, 5, 7];
        let m = merge_runs(&keys, &[0, 3, 6, 9]).unwrap();
        assert_eq!(m.order, vec![6, 0, 1, 3, 7, 2, 4, 8, 5]);
        assert_eq!(
            m.same_as_previous,
            vec![false, false, false, true, true, false, true, true, false]
        );
    }

    #[test]
    fn runs_already_in_order_keep_the_input_order() {
        // Appends: each run starts at or after the previous one's end (a tie at a boundary
        // and an empty run included); a run starting below the previous end is merged.
        let keys = [1u64, 2, 4, 4, 6, 6, 8, 9];
        let m = merge_runs(&keys, &[0, 3, 3, 5, 8]).unwrap();
        assert!(m.in_input_order);
        assert_eq!(m.order, (0..8).collect::<Vec<u32>>());
        assert_eq!(
            m.same_as_previous,
            vec![false, false, false, true, false, true, false, false]
        );
        let keys = [1u64, 2, 4, 3, 6];
        let m = merge_runs(&keys, &[0, 3, 5]).unwrap();
        assert!(!m.in_input_order);
        assert_eq!(m.order, vec![0, 1, 3, 2, 4]);
        // Many runs in order across several partitions: the same answer as a stable sort.
        let (keys, bounds) = runs(&[5000; 40], {
            let mut k = 0;
            move || {
                k += 3;
                k / 4
            }
        });
        let m = merge_runs(&keys, &bounds).unwrap();
        let (want, same) = stable(&keys);
        assert!(m.in_input_order);
        assert_eq!((m.order, m.same_as_previous), (want, same));
    }

    #[test]
    fn empty_runs_one_run_and_no_cells() {
        let m = merge_runs::<u64>(&[], &[0]).unwrap();
        assert!(m.order.is_empty() && m.same_as_previous.is_empty());
        let m = merge_runs::<u64>(&[], &[0, 0, 0]).unwrap();
        assert!(m.order.is_empty());
        let keys = [2u64, 2, 3];
        let m = merge_runs(&keys, &[0, 0, 3, 3]).unwrap();
        assert_eq!(m.order, vec![0, 1, 2]);
        assert_eq!(m.same_as_previous, vec![false, true, false]);
        let keys = [4u64, 1, 2];
        let m = merge_runs(&keys, &[0, 1, 1, 3, 3]).unwrap();
        assert_eq!(m.order, vec![1, 2, 0]);
    }

    #[test]
    fn an_unsorted_run_or_bad_bounds_is_none() {
        assert!(merge_runs(&[1u64, 3, 2], &[0, 3]).is_none());
        assert!(merge_runs(&[1u64, 3, 2], &[0, 2, 3]).is_some());
        assert!(merge_runs(&[1u64, 2], &[0, 1]).is_none());
        assert!(merge_runs(&[1u64, 2], &[1, 2]).is_none());
        assert!(merge_runs(&[1u64, 2], &[0, 2, 1, 2]).is_none());
        assert!(merge_runs(&[1u64, 2], &[]).is_none());
    }

    #[test]
    fn many_partitions_match_a_stable_sort() {
        // 1000 runs over a small key space: many ties, among them at the splitters.
        let lens: Vec<usize> = (0..1000).map(|i| [0, 1, 37, 300, 500][i % 5]).collect();
        let (keys, bounds) = runs(&lens, {
            let mut r = lcg(7);
            move || r() % 5000
        });
        assert!(keys.len() > 4 * PARTITION);
        let m = merge_runs(&keys, &bounds).unwrap();
        let (order, same) = stable(&keys);
        assert_eq!(m.order, order);
        assert_eq!(m.same_as_previous, same);
    }

    #[test]
    fn many_overlapping_runs_in_one_partition() {
        // 40 runs (the radix sort) over a few keys, one partition: equal keys in run order.
        let (keys, bounds) = runs(&[50; 40], {
            let mut r = lcg(11);
            move || (r() % 7) << 30
        });
        assert!(keys.len() < PARTITION);
        let m = merge_runs(&keys, &bounds).unwrap();
        let (order, same) = stable(&keys);
        assert_eq!(m.order, order);
        assert_eq!(m.same_as_previous, same);
        let wide: Vec<u128> = keys.iter().map(|&k| u128::from(k) << 70).collect();
        let w = merge_runs(&wide, &bounds).unwrap();
        assert_eq!(w.order, order);
        assert_eq!(w.same_as_previous, same);
    }

    #[test]
    fn few_distinct_keys_make_few_partitions() {
        // Every splitter equal: one partition holds everything, still in order.
        let (keys, bounds) = runs(&[40_000, 40_000, 50_000], {
            let mut r = lcg(3);
            move || r() % 2
        });
        let m = merge_runs(&keys, &bounds).unwrap();
        let (order, same) = stable(&keys);
        assert_eq!(m.order, order);
        assert_eq!(m.same_as_previous, same);
    }

    #[test]
    fn disjoint_runs_and_wide_keys() {
        // Runs in global order one after the other (appends), and u128 keys.
        let (keys, bounds) = runs(&[30_000, 30_000, 30_000], lcg(5));
        let mut keys = keys;
        for (r, w) in bounds.windows(2).enumerate() {
            for k in &mut keys[w[0]..w[1]] {
                *k += (r as u64) << 40;
            }
        }
        let m = merge_runs(&keys, &bounds).unwrap();
        assert_eq!(m.order, (0..keys.len() as u32).collect::<Vec<_>>());
        let wide: Vec<u128> = keys.iter().map(|&k| (u128::from(k) << 64) | 7).collect();
        let w = merge_runs(&wide, &bounds).unwrap();
        assert_eq!(w.order, m.order);
        assert_eq!(w.same_as_previous, m.same_as_previous);
    }

    #[test]
    fn packed_words_append_in_order() {
        assert_eq!(0u64.push(4, 3).push(60, 5), (3 << 60) | 5);
        assert_eq!(9u64.push(64, 5), 5);
        assert_eq!(1u128.push(64, 2).push(60, 3), ((1u128 << 64 | 2) << 60) | 3);
    }
}
