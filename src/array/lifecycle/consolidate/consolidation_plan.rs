//! TileDB 2.30's consolidation plan (`tiledb_consolidation_plan_create_with_mbr`, TileDB-Py's
//! `tiledb.ConsolidationPlan`): groups of an open array's fragments ("nodes") to consolidate
//! together towards a desired fragment size. It only advises; nothing is written.
//!
//! Each fragment starts as a node (its size as TileDB's `fragment_size`: data files plus the
//! metadata file; its non-empty domain). Nodes whose domains overlap are merged until none
//! overlap; then nodes of at most half the desired size are merged pairwise when the union of
//! their domains overlaps no other node. The plan lists the merged nodes, then the single
//! fragments of at least 1.5 times the desired size (to be split), in the order TileDB's
//! `std::partition` over its node list leaves them; the other nodes are dropped.

use crate::Datatype;
use crate::array::Array;
use crate::array::order::compare;
use crate::array::schema::Range;
use crate::error::{Error, Result};
use std::cmp::Ordering;

/// A group of fragments (TileDB's `PlanNode`).
struct Node {
    /// Indexes into the array's fragments, in the order merged.
    fragments: Vec<usize>,
    /// The union of their non-empty domains, `[lo, hi]` per dimension.
    ned: Vec<(Vec<u8>, Vec<u8>)>,
    size: u64,
}

fn overlap(types: &[Datatype], a: &[(Vec<u8>, Vec<u8>)], b: &[(Vec<u8>, Vec<u8>)]) -> bool {
    types.iter().zip(a.iter().zip(b)).all(|(&t, (x, y))| {
        compare(t, &x.0, &y.1) != Ordering::Greater && compare(t, &y.0, &x.1) != Ordering::Greater
    })
}

fn union(
    types: &[Datatype],
    a: &[(Vec<u8>, Vec<u8>)],
    b: &[(Vec<u8>, Vec<u8>)],
) -> Vec<(Vec<u8>, Vec<u8>)> {
    types
        .iter()
        .zip(a.iter().zip(b))
        .map(|(&t, (x, y))| {
            let lo = if compare(t, &y.0, &x.0) == Ordering::Less {
                &y.0
            } else {
                &x.0
            };
            let hi = if compare(t, &y.1, &x.1) == Ordering::Greater {
                &y.1
            } else {
                &x.1
            };
            (lo.clone(), hi.clone())
        })
        .collect()
}

impl Node {
    fn absorb(&mut self, types: &[Datatype], other: Node) {
        self.ned = union(types, &self.ned, &other.ned);
        self.fragments.extend(other.fragments);
        self.size += other.size;
    }
}

/// libstdc++'s `std::partition` over a bidirectional range, whose order TileDB's plan keeps:
/// the elements satisfying `pred` first; returns how many.
fn partition<T>(v: &mut [T], pred: impl Fn(&T) -> bool) -> usize {
    let (mut first, mut last) = (0, v.len());
    loop {
        while first != last && pred(&v[first]) {
            first += 1;
        }
        if first == last {
            return first;
        }
        last -= 1;
        while first != last && !pred(&v[last]) {
            last -= 1;
        }
        if first == last {
            return first;
        }
        v.swap(first, last);
        first += 1;
    }
}

/// The consolidation plan of the fragments `array` sees, for fragments of about
/// `fragment_size` bytes: per node, the names of its fragments.
pub fn consolidation_plan(array: &Array, fragment_size: u64) -> Result<Vec<Vec<String>>> {
    let types: Vec<Datatype> = array
        .schema()
        .dimensions
        .iter()
        .map(|d| d.datatype)
        .collect();
    let frags = array.fragments();
    let mut nodes = Vec::with_capacity(frags.len());
    for (i, f) in frags.iter().enumerate() {
        let ned = f.meta.non_empty_domain.as_ref().ok_or_else(|| {
            Error::corrupt(format!("fragment {} has no non-empty domain", f.name()))
        })?;
        nodes.push(Node {
            fragments: vec![i],
            ned: ned
                .iter()
                .map(|r: &Range| (r.lo().to_vec(), r.hi().to_vec()))
                .collect(),
            size: super::fragments::fragment_size(array, f)?,
        });
    }
    // Overlapping nodes merge until none overlap.
    let mut found = true;
    while found {
        found = false;
        let mut i = 0;
        while i < nodes.len() {
            let mut j = i + 1;
            while j < nodes.len() {
                if overlap(&types, &nodes[i].ned, &nodes[j].ned) {
                    found = true;
                    let other = nodes.remove(j);
                    nodes[i].absorb(&types, other);
                } else {
                    j += 1;
                }
            }
            i += 1;
        }
    }
    // Small nodes merge when their union overlaps no other node.
    let small = fragment_size / 2;
    found = true;
    while found {
        found = false;
        let mut i = 0;
        while i < nodes.len() {
            if nodes[i].size <= small {
                let mut j = i + 1;
                while j < nodes.len() {
                    if nodes[j].size > small {
                        j += 1;
                        continue;
                    }
                    let u = union(&types, &nodes[i].ned, &nodes[j].ned);
                    let blocked = nodes
                        .iter()
                        .enumerate()
                        .any(|(k, n)| k != i && k != j && overlap(&types, &n.ned, &u));
                    if blocked {
                        j += 1;
                    } else {
                        found = true;
                        let other = nodes.remove(j);
                        nodes[i].absorb(&types, other);
                    }
                }
            }
            i += 1;
        }
    }
    let combined = partition(&mut nodes, |n| n.fragments.len() > 1);
    let split = partition(&mut nodes[combined..], |n| {
        n.size as f64 >= 1.5 * fragment_size as f64
    });
    nodes.truncate(combined + split);
    Ok(nodes
        .into_iter()
        .map(|n| {
            n.fragments
                .into_iter()
                .map(|i| frags[i].name().to_string())
                .collect()
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::partition;

    #[test]
    fn partition_keeps_libstdcxx_order() {
        // [single, single, single, merged]: the merged node is swapped to the front and the
        // singles keep the order the swaps leave (TileDB lists 4+5, 2, 3, 1).
        let mut v = vec![1, 2, 3, 45];
        assert_eq!(partition(&mut v, |x| *x > 9), 1);
        assert_eq!(v, [45, 2, 3, 1]);
        let mut v = vec![5, 1, 7, 2, 9];
        assert_eq!(partition(&mut v, |x| *x > 4), 3);
        assert_eq!(v, [5, 9, 7, 2, 1]);
        let mut v: Vec<i32> = vec![];
        assert_eq!(partition(&mut v, |_| true), 0);
    }
}
