//! The R-tree of a fragment (docs/ARRAY.md §4.4), its parse and its write side: the payload
//! of the first generic tile of `__fragment_metadata.tdb`, `u32 fanout, u32 levels`, then per
//! level (the root first, the leaves last) `u64 n` and `n` MBRs, one range per dimension
//! encoded like the non-empty domain. The leaves are the MBRs of the sparse data tiles; a
//! dense fragment's tree has no levels.
//!
//! The write side is TileDB 2.30's (`RTree::build_tree`, `build_level`, `serialize`,
//! `Dimension::compute_mbr`, `Domain::expand_ndrange`), so that the bytes equal TileDB's.

use super::order::global::DimCoords;
use super::order::{StringOrder, cmp_strings, coord_less};
use super::schema::{ArraySchema, Range};
use crate::error::{Error, Result};
use crate::format::byte_reader::ByteReader;

/// The fanout TileDB builds R-trees with (`constants::rtree_fanout`).
pub const FANOUT: u32 = 10;

/// A minimum bounding rectangle: one range per dimension.
pub type Mbr = Vec<Range>;

/// An R-tree: its fanout and levels, the root first, the leaves last.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RTree {
    /// Children per inner node.
    pub fanout: u32,
    /// Levels, the root (one MBR) first, the leaves (one MBR per sparse tile) last.
    pub levels: Vec<Vec<Mbr>>,
}

impl RTree {
    /// Parses an R-tree payload (format version 5 and later) of a fragment with `schema`.
    pub fn parse(payload: &[u8], schema: &ArraySchema) -> Result<RTree> {
        let mut r = ByteReader::new(payload, "R-tree");
        let fanout = r.u32()?;
        let level_num = r.u32()?;
        let mut levels = Vec::new();
        for l in 0..level_num {
            let n = r.u64()?;
            // Each MBR takes at least one byte, so a count above the bytes left is corrupt.
            if n > r.remaining() as u64 {
                return Err(Error::corrupt(format!(
                    "R-tree level {l}: {n} MBRs in {} bytes",
                    r.remaining()
                )));
            }
            let mut level = Vec::with_capacity(n as usize);
            for _ in 0..n {
                let mut mbr = Vec::with_capacity(schema.dimensions.len());
                for d in &schema.dimensions {
                    mbr.push(Range::read(&mut r, d.coord_size())?);
                }
                level.push(mbr);
            }
            levels.push(level);
        }
        if r.remaining() != 0 {
            return Err(Error::corrupt(format!(
                "{} bytes follow the R-tree",
                r.remaining()
            )));
        }
        Ok(RTree { fanout, levels })
    }

    /// The leaves (one MBR per sparse tile; empty for dense fragments).
    pub fn leaves(&self) -> &[Mbr] {
        self.levels.last().map_or(&[], Vec::as_slice)
    }

    /// Takes the leaves out of the tree.
    pub fn into_leaves(mut self) -> Vec<Mbr> {
        self.levels.pop().unwrap_or_default()
    }

    /// Builds the tree over `leaves` bottom-up as TileDB does: `ceil(log_fanout(leaves)) + 1`
    /// levels (computed in `double`, as TileDB does), each parent the union of up to `fanout`
    /// consecutive children; one leaf is a one-level tree, no leaves a tree without levels.
    pub fn build(schema: &ArraySchema, leaves: Vec<Mbr>) -> Result<RTree> {
        for (i, m) in leaves.iter().enumerate() {
            check_mbr(schema, m).map_err(|e| e.context(format!("R-tree leaf {i}")))?;
        }
        let fanout = FANOUT;
        let n = leaves.len();
        let mut levels = vec![leaves];
        if n > 1 {
            let height = ((n as f64).ln() / (fanout as f64).ln()).ceil() as usize + 1;
            for _ in 0..height - 1 {
                let below = levels.last().expect("a level");
                let level: Vec<Mbr> = below
                    .chunks(fanout as usize)
                    .map(|children| {
                        let mut parent = children[0].clone();
                        for c in &children[1..] {
                            expand(schema, &mut parent, c);
                        }
                        parent
                    })
                    .collect();
                levels.push(level);
            }
            levels.reverse();
        } else if n == 0 {
            levels.clear();
        }
        Ok(RTree { fanout, levels })
    }

    /// The payload TileDB writes (`RTree::serialize`): fixed ranges as `lo, hi`, var ranges
    /// as `u64 size, u64 start size, lo, hi`.
    pub fn serialize(&self) -> Vec<u8> {
        let mut out = Vec::new();
        out.extend(self.fanout.to_le_bytes());
        out.extend((self.levels.len() as u32).to_le_bytes());
        for level in &self.levels {
            out.extend((level.len() as u64).to_le_bytes());
            for mbr in level {
                for r in mbr {
                    write_range(&mut out, r);
                }
            }
        }
        out
    }
}

/// Appends a range as TileDB serializes MBRs and non-empty domains.
pub fn write_range(out: &mut Vec<u8>, r: &Range) {
    match r {
        Range::Fixed(lo, hi) => {
            out.extend_from_slice(lo);
            out.extend_from_slice(hi);
        }
        Range::Var(lo, hi) => {
            out.extend(((lo.len() + hi.len()) as u64).to_le_bytes());
            out.extend((lo.len() as u64).to_le_bytes());
            out.extend_from_slice(lo);
            out.extend_from_slice(hi);
        }
    }
}

/// Refuses an MBR whose ranges do not fit the schema's dimensions.
fn check_mbr(schema: &ArraySchema, mbr: &Mbr) -> Result<()> {
    if mbr.len() != schema.dimensions.len() {
        return Err(Error::invalid(format!(
            "an MBR of {} ranges for {} dimensions",
            mbr.len(),
            schema.dimensions.len()
        )));
    }
    for (d, r) in schema.dimensions.iter().zip(mbr) {
        let ok = match (r, d.coord_size()) {
            (Range::Fixed(lo, hi), Some(n)) => lo.len() == n && hi.len() == n,
            (Range::Var(..), None) => true,
            _ => false,
        };
        if !ok {
            return Err(Error::invalid(format!(
                "the MBR's range of dimension {} does not fit its type {}",
                d.name, d.datatype
            )));
        }
    }
    Ok(())
}

/// Expands `acc` to cover `mbr` as TileDB's `Domain::expand_ndrange` does: per dimension
/// `std::min`/`std::max` of the bounds (numeric for fixed dimensions, `std::string` order —
/// unsigned bytes — for strings). Where bounds compare equal (`-0.0`, `0.0`), `mbr`'s win.
pub fn expand(schema: &ArraySchema, acc: &mut Mbr, mbr: &Mbr) {
    for ((d, a), m) in schema.dimensions.iter().zip(acc.iter_mut()).zip(mbr) {
        let less = |x: &[u8], y: &[u8]| {
            if d.is_var() {
                cmp_strings(x, y, StringOrder::UnsignedBytes).is_lt()
            } else {
                coord_less(d.datatype, x, y)
            }
        };
        // std::min(m, a) is a when a < m; std::max(m, a) is a when m < a.
        let lo = if less(a.lo(), m.lo()) { a.lo() } else { m.lo() }.to_vec();
        let hi = if less(m.hi(), a.hi()) { a.hi() } else { m.hi() }.to_vec();
        *a = match a {
            Range::Fixed(..) => Range::Fixed(lo, hi),
            Range::Var(..) => Range::Var(lo, hi),
        };
    }
}

/// The union of `mbrs` in order (TileDB's `expand_non_empty_domain`): a sparse fragment's
/// non-empty domain from its tile MBRs. `None` when there are none.
pub fn union(schema: &ArraySchema, mbrs: &[Mbr]) -> Option<Mbr> {
    let (first, rest) = mbrs.split_first()?;
    let mut acc = first.clone();
    for m in rest {
        expand(schema, &mut acc, m);
    }
    Some(acc)
}

/// The MBR of the cells `cells` of a batch of coordinates (one tile, in global order), as
/// TileDB's `Dimension::compute_mbr` / `compute_mbr_var` computes it: the first cell, then
/// each further cell replaces a bound it is strictly beyond (numerically for fixed
/// dimensions, as `std::string` — unsigned bytes — for strings).
pub fn tile_mbr(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    cells: std::ops::Range<usize>,
) -> Result<Mbr> {
    if coords.len() != schema.dimensions.len() {
        return Err(Error::invalid(format!(
            "{} coordinate buffers for the {} dimensions of the array",
            coords.len(),
            schema.dimensions.len()
        )));
    }
    if cells.is_empty() {
        return Err(Error::invalid("the MBR of a tile without cells"));
    }
    let mut mbr = Vec::with_capacity(coords.len());
    for (d, c) in schema.dimensions.iter().zip(coords) {
        let cell = |i: usize| -> Result<&[u8]> {
            let v = match (*c, d.coord_size()) {
                (DimCoords::Fixed(b), Some(n)) => b.get(i * n..(i + 1) * n),
                (DimCoords::Var { offsets, data }, None) => {
                    let start = offsets.get(i).map(|o| *o as usize);
                    let end = offsets.get(i + 1).map_or(data.len(), |e| *e as usize);
                    start.and_then(|s| data.get(s..end))
                }
                _ => {
                    return Err(Error::invalid(format!(
                        "dimension {}: coordinates of the wrong kind (fixed/var)",
                        d.name
                    )));
                }
            };
            v.ok_or_else(|| {
                Error::invalid(format!(
                    "dimension {}: cell {i} is past the coordinates",
                    d.name
                ))
            })
        };
        let first = cell(cells.start)?;
        let (mut lo, mut hi) = (first, first);
        for i in cells.start + 1..cells.end {
            let v = cell(i)?;
            if d.is_var() {
                if cmp_strings(v, lo, StringOrder::UnsignedBytes).is_lt() {
                    lo = v;
                }
                if cmp_strings(v, hi, StringOrder::UnsignedBytes).is_gt() {
                    hi = v;
                }
            } else {
                if coord_less(d.datatype, v, lo) {
                    lo = v;
                }
                if coord_less(d.datatype, hi, v) {
                    hi = v;
                }
            }
        }
        mbr.push(if d.is_var() {
            Range::Var(lo.to_vec(), hi.to_vec())
        } else {
            Range::Fixed(lo.to_vec(), hi.to_vec())
        });
    }
    Ok(mbr)
}

/// The MBRs of consecutive tiles of `capacity` cells over a batch of `cell_num` cells in
/// global order (the last tile may be partial).
pub fn tile_mbrs(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    cell_num: usize,
    capacity: u64,
) -> Result<Vec<Mbr>> {
    if capacity == 0 {
        return Err(Error::invalid("a tile capacity of 0 cells"));
    }
    let cap = usize::try_from(capacity).unwrap_or(usize::MAX);
    (0..cell_num)
        .step_by(cap)
        .map(|s| tile_mbr(schema, coords, s..cell_num.min(s.saturating_add(cap))))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::array::order::tests::{dim, schema, str_dim};
    use crate::array::schema::Layout;
    use crate::format::datatype::Datatype;

    fn int_schema() -> ArraySchema {
        schema(
            vec![dim(
                "x",
                Datatype::Int64,
                &0i64.to_le_bytes(),
                &1000i64.to_le_bytes(),
                None,
            )],
            Layout::RowMajor,
            Layout::RowMajor,
        )
    }

    fn leaf(lo: i64, hi: i64) -> Mbr {
        vec![Range::Fixed(
            lo.to_le_bytes().to_vec(),
            hi.to_le_bytes().to_vec(),
        )]
    }

    #[test]
    fn levels_grow_with_the_fanout() {
        let s = int_schema();
        for (n, sizes) in [
            (0usize, vec![]),
            (1, vec![1]),
            (2, vec![1, 2]),
            (10, vec![1, 10]),
            (11, vec![1, 2, 11]),
            (100, vec![1, 10, 100]),
            (101, vec![1, 2, 11, 101]),
            (1000, vec![1, 10, 100, 1000]),
        ] {
            let leaves = (0..n as i64).map(|i| leaf(i, i + 1)).collect();
            let t = RTree::build(&s, leaves).unwrap();
            let got: Vec<usize> = t.levels.iter().map(Vec::len).collect();
            assert_eq!(got, sizes, "{n} leaves");
            if n > 1 {
                assert_eq!(t.levels[0][0], leaf(0, n as i64));
            }
            let bytes = t.serialize();
            assert_eq!(RTree::parse(&bytes, &s).unwrap(), t);
        }
        // A dense fragment's tree: fanout 10, no levels.
        assert_eq!(
            RTree::build(&s, Vec::new()).unwrap().serialize(),
            [10, 0, 0, 0, 0, 0, 0, 0]
        );
    }

    #[test]
    fn serialization_of_fixed_and_var_ranges() {
        let s = schema(
            vec![
                dim(
                    "x",
                    Datatype::Int32,
                    &0i32.to_le_bytes(),
                    &9i32.to_le_bytes(),
                    None,
                ),
                str_dim("s"),
            ],
            Layout::RowMajor,
            Layout::RowMajor,
        );
        let m = vec![
            Range::Fixed(1i32.to_le_bytes().to_vec(), 2i32.to_le_bytes().to_vec()),
            Range::Var(b"ab".to_vec(), b"c".to_vec()),
        ];
        let t = RTree::build(&s, vec![m]).unwrap();
        let mut want = vec![10, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0];
        want.extend([1, 0, 0, 0, 2, 0, 0, 0]);
        want.extend(3u64.to_le_bytes());
        want.extend(2u64.to_le_bytes());
        want.extend(b"abc");
        assert_eq!(t.serialize(), want);
        assert!(RTree::build(&s, vec![vec![leaf(0, 1)[0].clone()]]).is_err());
    }

    #[test]
    fn tile_mbrs_follow_tiledbs_comparisons() {
        let s = schema(
            vec![
                dim(
                    "y",
                    Datatype::Float32,
                    &(-1f32).to_le_bytes(),
                    &1f32.to_le_bytes(),
                    None,
                ),
                str_dim("s"),
            ],
            Layout::RowMajor,
            Layout::RowMajor,
        );
        let y: Vec<u8> = [0.5f32, -0.0, 0.0, -0.25, 0.75]
            .iter()
            .flat_map(|v| v.to_le_bytes())
            .collect();
        let data = b"b\x80a\x7fzz";
        let offsets = [0u64, 1, 2, 3, 4];
        let coords = [
            DimCoords::Fixed(&y),
            DimCoords::Var {
                offsets: &offsets,
                data,
            },
        ];
        let mbrs = tile_mbrs(&s, &coords, 5, 3).unwrap();
        assert_eq!(mbrs.len(), 2);
        // Floats: -0.0 is kept once seen, 0.0 does not replace it; strings by unsigned bytes.
        assert_eq!(
            mbrs[0],
            vec![
                Range::Fixed(
                    (-0.0f32).to_le_bytes().to_vec(),
                    0.5f32.to_le_bytes().to_vec()
                ),
                Range::Var(b"a".to_vec(), b"\x80".to_vec()),
            ]
        );
        assert_eq!(
            mbrs[1],
            vec![
                Range::Fixed(
                    (-0.25f32).to_le_bytes().to_vec(),
                    0.75f32.to_le_bytes().to_vec()
                ),
                Range::Var(b"zz".to_vec(), b"\x7f".to_vec()),
            ]
        );
        let ned = union(&s, &mbrs).unwrap();
        assert_eq!(
            ned,
            vec![
                Range::Fixed(
                    (-0.25f32).to_le_bytes().to_vec(),
                    0.75f32.to_le_bytes().to_vec()
                ),
                Range::Var(b"a".to_vec(), b"\x80".to_vec()),
            ]
        );
        assert!(tile_mbrs(&s, &coords, 5, 0).is_err());
    }
}
