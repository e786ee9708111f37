//! The R-tree of a fragment's metadata (docs/ARRAY.md §4.4; TileDB's tiledb/sm/rtree/rtree.cc):
//! one minimum bounding rectangle (MBR) per sparse data tile at the leaves, each parent the
//! union of up to `fanout` consecutive children, the root level first. Dense fragments store
//! an empty tree (no levels).
//!
//! Payload: `u32 fanout, u32 levels`, then per level `u64 mbr count` and the MBRs, each one
//! range per dimension (fixed: low and high bytes; var: `u64 size, u64 start size, bytes`).

use super::schema::{Dimension, Range};
use super::value;
use crate::error::Result;
use crate::format::byte_reader::ByteReader;

/// TileDB's R-tree fanout (`constants::rtree_fanout`).
pub const FANOUT: u32 = 10;

/// A multi-dimensional rectangle: one range per dimension.
pub type Mbr = Vec<Range>;

/// An R-tree: levels from the root to the leaves.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RTree {
    /// Children per parent.
    pub fanout: u32,
    /// The levels, root first; the last holds one MBR per tile.
    pub levels: Vec<Vec<Mbr>>,
}

impl RTree {
    /// The empty tree of a dense fragment.
    pub fn empty() -> RTree {
        RTree {
            fanout: FANOUT,
            levels: Vec::new(),
        }
    }

    /// Parses an R-tree payload with the fragment's dimensions.
    pub fn parse(payload: &[u8], dims: &[Dimension]) -> Result<RTree> {
        let mut r = ByteReader::new(payload, "R-tree");
        let fanout = r.u32()?;
        let level_num = r.u32()?;
        let mut levels = Vec::new();
        for _ in 0..level_num {
            let n = r.u64()?;
            let mut level = Vec::new();
            for _ in 0..n {
                let mut mbr = Vec::with_capacity(dims.len());
                for d in dims {
                    mbr.push(Range::read(&mut r, d.coord_size())?);
                }
                level.push(mbr);
            }
            levels.push(level);
        }
        Ok(RTree { fanout, levels })
    }

    /// The leaves: one MBR per tile (empty for dense fragments).
    pub fn leaves(&self) -> &[Mbr] {
        self.levels.last().map_or(&[], |l| l.as_slice())
    }

    /// Builds the tree over `leaves` bottom-up as TileDB's `build_tree` does: height
    /// `ceil(log_fanout(leaves)) + 1` (computed in double precision, as TileDB does), each
    /// parent the union of up to `fanout` consecutive children; one leaf makes one level, no
    /// leaves none.
    pub fn build(leaves: Vec<Mbr>, dims: &[Dimension]) -> RTree {
        let mut levels = Vec::new();
        if leaves.is_empty() {
            return RTree::empty();
        }
        let n = leaves.len();
        levels.push(leaves);
        if n > 1 {
            let height = ((n as f64).ln() / (FANOUT as f64).ln()).ceil() as usize + 1;
            for _ in 0..height - 1 {
                let below = levels.last().expect("the leaves");
                let level: Vec<Mbr> = below
                    .chunks(FANOUT as usize)
                    .map(|children| {
                        let mut mbr = children[0].clone();
                        for c in &children[1..] {
                            expand(&mut mbr, c, dims);
                        }
                        mbr
                    })
                    .collect();
                levels.push(level);
            }
            levels.reverse();
        }
        RTree {
            fanout: FANOUT,
            levels,
        }
    }

    /// The payload bytes (`RTree::serialize`).
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend_from_slice(&self.fanout.to_le_bytes());
        out.extend_from_slice(&(self.levels.len() as u32).to_le_bytes());
        for level in &self.levels {
            out.extend_from_slice(&(level.len() as u64).to_le_bytes());
            for mbr in level {
                for r in mbr {
                    write_range(r, &mut out);
                }
            }
        }
        out
    }
}

/// Appends a range as [`Range::read`] reads it (non-empty domains, MBRs).
pub fn write_range(range: &Range, out: &mut Vec<u8>) {
    match range {
        Range::Fixed(lo, hi) => {
            out.extend_from_slice(lo);
            out.extend_from_slice(hi);
        }
        Range::Var(lo, hi) => {
            out.extend_from_slice(&((lo.len() + hi.len()) as u64).to_le_bytes());
            out.extend_from_slice(&(lo.len() as u64).to_le_bytes());
            out.extend_from_slice(lo);
            out.extend_from_slice(hi);
        }
    }
}

/// Expands `mbr` to cover `other` (TileDB's `Domain::expand_ndrange`): per dimension the
/// smaller low and the larger high (strings bytewise, a prefix first).
pub fn expand(mbr: &mut Mbr, other: &Mbr, dims: &[Dimension]) {
    for ((r, o), d) in mbr.iter_mut().zip(other).zip(dims) {
        *r = union(d, r, o);
    }
}

/// The union of two ranges of dimension `d`.
pub fn union(d: &Dimension, a: &Range, b: &Range) -> Range {
    match (a, b) {
        (Range::Fixed(al, ah), Range::Fixed(bl, bh)) => {
            // std::min(a, b) keeps a unless b < a; std::max keeps a unless a < b.
            let lo = if value::compare(d.datatype, bl, al).is_lt() {
                bl
            } else {
                al
            };
            let hi = if value::compare(d.datatype, ah, bh).is_lt() {
                bh
            } else {
                ah
            };
            Range::Fixed(lo.clone(), hi.clone())
        }
        _ => {
            let lo = if a.lo() < b.lo() { a.lo() } else { b.lo() };
            let hi = if a.hi() < b.hi() { b.hi() } else { a.hi() };
            Range::Var(lo.to_vec(), hi.to_vec())
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::format::datatype::Datatype;
    use crate::pipeline::Pipeline;

    fn dim() -> Dimension {
        Dimension {
            name: "d".into(),
            datatype: Datatype::Int32,
            cell_val_num: 1,
            filters: Pipeline::new(),
            uses_coords_filters: true,
            domain: Some((0i32.to_le_bytes().to_vec(), 1000i32.to_le_bytes().to_vec())),
            tile_extent: Some(10i32.to_le_bytes().to_vec()),
        }
    }

    fn mbr(lo: i32, hi: i32) -> Mbr {
        vec![Range::Fixed(
            lo.to_le_bytes().to_vec(),
            hi.to_le_bytes().to_vec(),
        )]
    }

    #[test]
    fn dense_tree_is_empty() {
        assert_eq!(RTree::empty().serialize(), [10, 0, 0, 0, 0, 0, 0, 0]);
    }

    #[test]
    fn built_bottom_up_root_first() {
        let dims = [dim()];
        let one = RTree::build(vec![mbr(1, 2)], &dims);
        assert_eq!(one.levels.len(), 1);
        let leaves: Vec<Mbr> = (0..23).map(|i| mbr(i * 3, i * 3 + 2)).collect();
        let t = RTree::build(leaves.clone(), &dims);
        // ceil(log10(23)) + 1 = 3 levels: 1 root, 3 parents, 23 leaves.
        assert_eq!(
            t.levels.iter().map(Vec::len).collect::<Vec<_>>(),
            [1, 3, 23]
        );
        assert_eq!(t.levels[0][0], mbr(0, 68));
        assert_eq!(t.levels[1][2], mbr(60, 68));
        let back = RTree::parse(&t.serialize(), &dims).unwrap();
        assert_eq!(back, t);
        assert_eq!(back.leaves(), leaves.as_slice());
        // Exactly 100 leaves: log10(100) is 2 in double precision, so 3 levels.
        let t = RTree::build((0..100).map(|i| mbr(i, i)).collect(), &dims);
        assert_eq!(t.levels.len(), 3);
    }
}
