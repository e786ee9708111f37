//! Which fragments a consolidation step merges: TileDB 2.30's
//! `FragmentConsolidator::compute_next_to_consolidate` and `are_consolidatable`, with the
//! same arithmetic (`f32` size ratios, the 1.25 preference for earlier sets, `f64`
//! amplification), so that the same fragments and configuration give the same plan.

/// One fragment as the plan sees it (TileDB's `SingleFragmentInfo`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Candidate {
    /// Bytes of its data files plus its metadata file.
    pub size: u64,
    /// Dense: the non-empty domain, per dimension `[lo, hi]` (empty for sparse fragments).
    pub ned: Vec<(i128, i128)>,
    /// Dense: the non-empty domain expanded to whole tiles.
    pub expanded: Vec<(i128, i128)>,
}

/// The knobs of the plan (TileDB's `sm.consolidation.*`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct PlanConfig {
    /// `sm.consolidation.amplification`.
    pub amplification: f32,
    /// `sm.consolidation.step_min_frags`.
    pub min_frags: u32,
    /// `sm.consolidation.step_max_frags`.
    pub max_frags: u32,
    /// `sm.consolidation.step_size_ratio`.
    pub size_ratio: f32,
}

/// The chosen set: the first fragment's index, how many follow it, and (dense) the union of
/// their non-empty domains.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Step {
    pub first: usize,
    pub count: usize,
    pub union: Vec<(i128, i128)>,
}

fn expand(a: &mut Vec<(i128, i128)>, b: &[(i128, i128)]) {
    if a.is_empty() {
        a.extend_from_slice(b);
        return;
    }
    for (x, y) in a.iter_mut().zip(b) {
        x.0 = x.0.min(y.0);
        x.1 = x.1.max(y.1);
    }
}

fn overlap(a: &[(i128, i128)], b: &[(i128, i128)]) -> bool {
    !a.is_empty() && !b.is_empty() && a.iter().zip(b).all(|(x, y)| x.0 <= y.1 && y.0 <= x.1)
}

fn cell_num(r: &[(i128, i128)]) -> f64 {
    r.iter().map(|(lo, hi)| (hi - lo + 1) as f64).product()
}

/// TileDB's `are_consolidatable` for dense fragments `start..=end` with union `union`: no
/// overlap with fragments before the consolidation range (`anterior`) or before `start`, and
/// the union's cells over the sum of the fragments' (tile-expanded) cells within the
/// amplification.
fn consolidatable(
    frags: &[Candidate],
    anterior: &[(i128, i128)],
    start: usize,
    end: usize,
    union: &[(i128, i128)],
    amplification: f32,
) -> bool {
    if overlap(union, anterior) {
        return false;
    }
    if frags[..start].iter().any(|f| overlap(union, &f.ned)) {
        return false;
    }
    let sum: f64 = frags[start..=end]
        .iter()
        .map(|f| cell_num(&f.expanded))
        .sum();
    cell_num(union) / sum <= f64::from(amplification)
}

/// The next set of fragments to merge, or `None` when no set of at least two qualifies.
pub(crate) fn next(
    frags: &[Candidate],
    anterior: &[(i128, i128)],
    dense: bool,
    config: &PlanConfig,
) -> Option<Step> {
    let n = frags.len();
    let min = (config.min_frags as usize).min(n);
    let max = (config.max_frags as usize).min(n);
    if max == 0 {
        return None;
    }
    // m_sizes[i][j]: the size of fragments j..=j+i, u64::MAX when the set is invalid.
    let mut sizes = vec![vec![u64::MAX; n]; max];
    let mut unions: Vec<Vec<Vec<(i128, i128)>>> = vec![vec![Vec::new(); n]; max];
    for i in 0..max {
        for j in 0..n {
            if i == 0 {
                sizes[0][j] = frags[j].size;
                unions[0][j] = frags[j].ned.clone();
            } else if i + j < n {
                let a = frags[i + j - 1].size as f32;
                let b = frags[i + j].size as f32;
                let mut ratio = a / b;
                if ratio > 1.0 {
                    ratio = 1.0 / ratio;
                }
                if ratio >= config.size_ratio && sizes[i - 1][j] != u64::MAX {
                    let mut u = unions[i - 1][j].clone();
                    expand(&mut u, &frags[i + j].ned);
                    if dense && !consolidatable(frags, anterior, j, j + i, &u, config.amplification)
                    {
                        continue;
                    }
                    sizes[i][j] = sizes[i - 1][j].saturating_add(frags[i + j].size);
                    unions[i][j] = u;
                }
            }
        }
    }
    let mut i = max as isize - 1;
    while i >= 0 && i >= min as isize - 1 {
        let row = &sizes[i as usize];
        let mut min_size = u64::MAX;
        let mut min_col = 0;
        for (j, &s) in row.iter().enumerate() {
            if min_size == u64::MAX || (s as f64) < (min_size as f64 / 1.25) {
                min_size = s;
                min_col = j;
            }
        }
        if min_size != u64::MAX {
            return Some(Step {
                first: min_col,
                count: i as usize + 1,
                union: unions[i as usize][min_col].clone(),
            });
        }
        i -= 1;
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn dense(size: u64, lo: i128, hi: i128) -> Candidate {
        Candidate {
            size,
            ned: vec![(lo, hi)],
            expanded: vec![(lo, hi)],
        }
    }

    const ALL: PlanConfig = PlanConfig {
        amplification: 1.0,
        min_frags: u32::MAX,
        max_frags: u32::MAX,
        size_ratio: 0.0,
    };

    #[test]
    fn defaults_merge_everything_or_nothing() {
        let f = [dense(10, 0, 9), dense(10, 10, 19), dense(10, 20, 29)];
        let s = next(&f, &[], true, &ALL).unwrap();
        assert_eq!((s.first, s.count, s.union), (0, 3, vec![(0, 29)]));
        // A gap makes the union larger than the cells written: amplification 1.0 refuses.
        let g = [dense(10, 0, 9), dense(10, 20, 29)];
        assert_eq!(next(&g, &[], true, &ALL), None);
        let loose = PlanConfig {
            amplification: 1.5,
            ..ALL
        };
        assert_eq!(next(&g, &[], true, &loose).unwrap().count, 2);
        // Sparse fragments have no amplification check.
        let one = Candidate {
            size: 5,
            ned: vec![],
            expanded: vec![],
        };
        let sp = [one.clone(), one];
        assert_eq!(next(&sp, &[], false, &ALL).unwrap().count, 2);
    }

    #[test]
    fn size_ratio_and_window() {
        // Sizes 100, 1, 1, 1: with ratio 0.5 the big one cannot join.
        let f = [
            dense(100, 0, 9),
            dense(1, 10, 19),
            dense(1, 20, 29),
            dense(1, 30, 39),
        ];
        let c = PlanConfig {
            min_frags: 2,
            max_frags: 4,
            size_ratio: 0.5,
            ..ALL
        };
        let s = next(&f, &[], true, &c).unwrap();
        assert_eq!((s.first, s.count), (1, 3));
        // Max 2: the earliest of the equal-size pairs wins.
        let c2 = PlanConfig { max_frags: 2, ..c };
        let s = next(&f, &[], true, &c2).unwrap();
        assert_eq!((s.first, s.count), (1, 2));
    }

    #[test]
    fn overlap_with_earlier_fragments_blocks() {
        // Fragment 0 overlaps the union of 1 and 2: only sets starting at 0 qualify.
        let f = [dense(1, 5, 14), dense(1, 0, 9), dense(1, 10, 19)];
        let c = PlanConfig {
            min_frags: 2,
            amplification: 2.0,
            ..ALL
        };
        let s = next(&f, &[], true, &c).unwrap();
        assert_eq!((s.first, s.count), (0, 3));
        assert_eq!(next(&f, &[(0, 3)], true, &c), None);
    }
}
