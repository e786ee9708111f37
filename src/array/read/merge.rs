//! The merge of several fragments' cells into global order by per-cell keys: each candidate
//! cell gets a key of up to [`MAX_WORDS`] u64 words whose lexicographic order is the global
//! order (tile indices, then coordinates as order words, or the Hilbert value first), and the
//! keys are sorted in parallel with the cells' input positions as the last word, so equal keys
//! keep their input order (fragment order, then cell order: what the newest-wins
//! de-duplication relies on). When the words' widths add up to 64 bits at most (integer
//! dimensions with small domains: their words are offsets from the domain's low end), a key
//! packs into one u64 and (key, position) into a u128: 16 bytes a cell to sort.

use rayon::prelude::*;

/// The most words a key may have (more: the caller's comparison sort).
pub(crate) const MAX_WORDS: usize = 8;

/// Cells in global order.
pub(crate) struct Merged {
    /// Input positions in global order (equal keys in input order).
    pub order: Vec<u32>,
    /// Per output position: whether its key equals the previous one's (same coordinates).
    pub same_as_previous: Vec<bool>,
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
    let order = keys.into_par_iter().map(|k| k as u32).collect();
    Some(Merged {
        order,
        same_as_previous,
    })
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
    let order = keys.into_par_iter().map(|(_, i)| i).collect();
    Some(Merged {
        order,
        same_as_previous,
    })
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
}
