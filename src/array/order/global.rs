//! Sparse writes put their cells in TileDB's global order (docs/ARRAY.md §5.4) and check them
//! first: every coordinate inside the domain (and the current domain), no duplicate
//! coordinates unless the schema allows them, and for global-order writes, cells already
//! sorted.
//!
//! The global order of TileDB 2.30's writers (`UnorderedWriter::sort_coords`, `GlobalCmpQB`,
//! `HilbertCmpQB`, `Domain::tile_order_cmp` / `cell_order_cmp`):
//! - row-major or col-major cell order: first the space-tile index of every fixed dimension
//!   with a tile extent, in the tile order (string dimensions and dimensions without extent
//!   are skipped), then the coordinates in the cell order;
//! - Hilbert cell order: the Hilbert value of the cell (no tile order), then the coordinates
//!   in row-major order;
//! - numbers compare numerically (`-0.0` equals `0.0`); strings compare bytewise as C++
//!   `char`, which is **signed** on x86-64 (`"\x80" < "a" < "\x7f"`), a shorter prefix first.
//!
//! TileDB's sort is not stable: the order among equal coordinates (duplicates) is unspecified.
//! Here it is deterministic: equal coordinates keep their input order, except that cells
//! equal in the order but with different bytes (`-0.0` and `0.0`) are ordered by their bytes,
//! so that identical coordinates are always adjacent for [`check_duplicates`].

use super::Kind;
use super::check::check_cells_domain;
use super::cpp::{cpp_general, tiledb_parallel_sort};
use super::hilbert::{coords_to_hilbert, hilbert_bits, map_kind_to_uint64};
use crate::array::schema::{ArraySchema, Dimension, Layout};
use crate::error::{Error, Result};
use rayon::prelude::*;
use std::cmp::Ordering;

/// The coordinates of one dimension for a batch of cells, as a writer is given them.
#[derive(Clone, Copy, Debug)]
pub enum DimCoords<'a> {
    /// Fixed-size dimensions: `cell_num × coord_size` little-endian bytes.
    Fixed(&'a [u8]),
    /// String dimensions: the byte offset of each cell's coordinate in `data` (one per cell,
    /// non-decreasing, no trailing end offset; cell `i` ends where cell `i + 1` starts, the last
    /// at the end of `data`), and the concatenated coordinate bytes.
    Var {
        /// Start of each cell's bytes in `data`.
        offsets: &'a [u64],
        /// The concatenated coordinates.
        data: &'a [u8],
    },
}

/// One dimension's coordinates, checked against the schema.
pub(crate) struct DimView<'a> {
    pub(crate) dim: &'a Dimension,
    pub(crate) kind: Kind,
    pub(crate) coords: DimCoords<'a>,
    /// (domain low, extent) when the dimension takes part in the tile order.
    pub(crate) tiling: Option<(&'a [u8], &'a [u8])>,
}

impl<'a> DimView<'a> {
    pub(crate) fn cell(&self, i: usize) -> &'a [u8] {
        match self.coords {
            DimCoords::Fixed(b) => {
                let n = self.kind.size();
                &b[i * n..(i + 1) * n]
            }
            DimCoords::Var { offsets, data } => {
                let start = offsets[i] as usize;
                let end = offsets.get(i + 1).map_or(data.len(), |e| *e as usize);
                &data[start..end]
            }
        }
    }
}

/// A batch of coordinates checked against the schema: one view per dimension, all with the
/// same number of cells.
pub(crate) struct Cells<'a> {
    pub(crate) schema: &'a ArraySchema,
    pub(crate) dims: Vec<DimView<'a>>,
    pub(crate) n: usize,
}

impl<'a> Cells<'a> {
    pub(crate) fn new(schema: &'a ArraySchema, coords: &[DimCoords<'a>]) -> Result<Cells<'a>> {
        if coords.len() != schema.dimensions.len() {
            return Err(Error::invalid(format!(
                "{} coordinate buffers for the {} dimensions of the array",
                coords.len(),
                schema.dimensions.len()
            )));
        }
        let mut dims = Vec::with_capacity(coords.len());
        let mut n: Option<(usize, &str)> = None;
        for (dim, c) in schema.dimensions.iter().zip(coords) {
            let kind = Kind::of(dim)?;
            let count = match (*c, kind) {
                (DimCoords::Fixed(b), k) if k != Kind::Str => {
                    if b.len() % k.size() != 0 {
                        return Err(Error::invalid(format!(
                            "dimension {}: {} bytes of coordinates are not whole {}-byte {} values",
                            dim.name,
                            b.len(),
                            k.size(),
                            dim.datatype
                        )));
                    }
                    b.len() / k.size()
                }
                (DimCoords::Var { offsets, data }, Kind::Str) => {
                    check_offsets(&dim.name, offsets, data.len())?;
                    offsets.len()
                }
                (DimCoords::Fixed(_), _) => {
                    return Err(Error::invalid(format!(
                        "dimension {} is var-size: its coordinates need offsets",
                        dim.name
                    )));
                }
                (DimCoords::Var { .. }, _) => {
                    return Err(Error::invalid(format!(
                        "dimension {} is fixed-size: its coordinates take no offsets",
                        dim.name
                    )));
                }
            };
            match n {
                None => n = Some((count, &dim.name)),
                Some((m, first)) if m != count => {
                    return Err(Error::invalid(format!(
                        "dimension {} has {count} coordinates, dimension {first} {m}",
                        dim.name
                    )));
                }
                Some(_) => {}
            }
            let tiling = match (&dim.domain, &dim.tile_extent) {
                (Some((lo, _)), Some(e)) if kind != Kind::Str => {
                    Some((lo.as_slice(), e.as_slice()))
                }
                _ => None,
            };
            if kind != Kind::Str && dim.domain.is_none() {
                return Err(Error::corrupt(format!(
                    "dimension {} has no domain",
                    dim.name
                )));
            }
            dims.push(DimView {
                dim,
                kind,
                coords: *c,
                tiling,
            });
        }
        Ok(Cells {
            schema,
            dims,
            n: n.map_or(0, |(m, _)| m),
        })
    }

    /// The dimensions in `layout` order (row-major: first to last; col-major: last to first).
    pub(crate) fn in_order(&self, layout: Layout) -> Vec<usize> {
        let n = self.dims.len();
        if layout == Layout::ColMajor {
            (0..n).rev().collect()
        } else {
            (0..n).collect()
        }
    }

    /// Cell `i` as TileDB prints coordinates in messages: `(3, 0.5, ab)`.
    pub(crate) fn describe(&self, i: usize) -> String {
        let parts: Vec<String> = self
            .dims
            .iter()
            .map(|d| format_coord(d.kind, d.cell(i), 6))
            .collect();
        format!("({})", parts.join(", "))
    }
}

/// Checks var-size coordinate offsets: non-decreasing and inside the data.
pub(crate) fn check_offsets(name: &str, offsets: &[u64], len: usize) -> Result<()> {
    let mut prev = 0u64;
    for (i, &o) in offsets.iter().enumerate() {
        if (i > 0 && o < prev) || o > len as u64 {
            return Err(Error::invalid(format!(
                "dimension {name}: offset {o} of cell {i} is {} (previous {prev}, data {len} bytes)",
                if o > len as u64 {
                    "past the data"
                } else {
                    "below the previous offset"
                }
            )));
        }
        prev = o;
    }
    Ok(())
}

/// A value of `kind` printed as TileDB's messages print it (C++ `operator<<` with
/// `precision` significant digits for reals; 8-bit integers as numbers, where TileDB prints
/// them as characters).
pub(crate) fn format_coord(kind: Kind, b: &[u8], precision: usize) -> String {
    match kind {
        Kind::Str => String::from_utf8_lossy(b).into_owned(),
        Kind::F32 | Kind::F64 => cpp_general(kind.float(b), precision),
        k => k.int(b).to_string(),
    }
}

/// The Hilbert value TileDB's writer gives each cell (`WriterBase::calculate_hilbert_values`),
/// for any cell order of the schema.
pub fn hilbert_values(schema: &ArraySchema, coords: &[DimCoords<'_>]) -> Result<Vec<u64>> {
    let cells = Cells::new(schema, coords)?;
    cells_hilbert(&cells)
}

pub(crate) fn cells_hilbert(cells: &Cells<'_>) -> Result<Vec<u64>> {
    let bits = hilbert_bits(cells.dims.len())?;
    let bounds: Vec<(&[u8], &[u8])> = cells
        .dims
        .iter()
        .map(|d| {
            d.dim
                .domain
                .as_ref()
                .map_or((&[][..], &[][..]), |(l, h)| (l.as_slice(), h.as_slice()))
        })
        .collect();
    Ok((0..cells.n)
        .into_par_iter()
        .map_init(
            || vec![0u64; cells.dims.len()],
            |x, i| {
                for (d, v) in cells.dims.iter().enumerate() {
                    x[d] = map_kind_to_uint64(v.kind, v.cell(i), bounds[d].0, bounds[d].1, bits);
                }
                coords_to_hilbert(x, bits)
            },
        )
        .collect())
}

/// The comparison of cells in the global order, over one batch.
pub(crate) struct Order<'c, 'a> {
    pub(crate) cells: &'c Cells<'a>,
    /// Dimensions compared by space tile, in tile order (empty for Hilbert).
    pub(crate) tile_dims: Vec<usize>,
    /// Dimensions compared by coordinate, in cell order (row-major for Hilbert).
    pub(crate) cell_dims: Vec<usize>,
    pub(crate) hilbert: Option<Vec<u64>>,
}

impl<'c, 'a> Order<'c, 'a> {
    pub(crate) fn new(cells: &'c Cells<'a>) -> Result<Order<'c, 'a>> {
        let schema = cells.schema;
        let hilbert = schema.cell_order == Layout::Hilbert;
        let tile_dims = if hilbert {
            Vec::new()
        } else {
            cells
                .in_order(schema.tile_order)
                .into_iter()
                .filter(|&d| cells.dims[d].tiling.is_some())
                .collect()
        };
        let cell_dims = cells.in_order(if hilbert {
            Layout::RowMajor
        } else {
            schema.cell_order
        });
        let hilbert = if hilbert {
            Some(cells_hilbert(cells)?)
        } else {
            None
        };
        Ok(Order {
            cells,
            tile_dims,
            cell_dims,
            hilbert,
        })
    }

    /// TileDB's order of cells `a` and `b` (`Equal` for coordinates TileDB finds equal).
    pub(crate) fn cmp(&self, a: usize, b: usize) -> Ordering {
        if let Some(h) = &self.hilbert {
            let o = h[a].cmp(&h[b]);
            if o != Ordering::Equal {
                return o;
            }
        }
        self.cmp_tiles((self.cells, a), (self.cells, b))
            .then_with(|| self.cmp_coords((self.cells, a), (self.cells, b)))
    }

    /// The tile order of two cells, each of a batch of this schema.
    pub(crate) fn cmp_tiles(
        &self,
        (x, a): (&Cells<'_>, usize),
        (y, b): (&Cells<'_>, usize),
    ) -> Ordering {
        for &d in &self.tile_dims {
            let (va, vb) = (&x.dims[d], &y.dims[d]);
            let (lo, e) = va.tiling.expect("tile dims have tiling");
            let o = va
                .kind
                .tile_index(va.cell(a), lo, e)
                .cmp(&vb.kind.tile_index(vb.cell(b), lo, e));
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// The cell order (coordinates only) of two cells, each of a batch of this schema.
    pub(crate) fn cmp_coords(
        &self,
        (x, a): (&Cells<'_>, usize),
        (y, b): (&Cells<'_>, usize),
    ) -> Ordering {
        for &d in &self.cell_dims {
            let o = x.dims[d].kind.cmp(x.dims[d].cell(a), y.dims[d].cell(b));
            if o != Ordering::Equal {
                return o;
            }
        }
        Ordering::Equal
    }

    /// Cells equal in the order but not in their bytes (`-0.0` and `0.0`): by their bytes.
    pub(crate) fn cmp_bytes(&self, a: usize, b: usize) -> Ordering {
        for v in &self.cells.dims {
            if v.kind.is_float() {
                let o = v.cell(a).cmp(v.cell(b));
                if o != Ordering::Equal {
                    return o;
                }
            }
        }
        Ordering::Equal
    }
}

/// The permutation that puts the cells into TileDB's global order: entry `k` is the input
/// index of the `k`-th cell in the order. Checks the coordinates first ([`check_domain`]).
/// Equal coordinates keep their input order (TileDB's order among duplicates is unspecified).
///
/// Where the order of fixed-size dimensions fits 128 bits (tile indices and coordinates
/// relative to the domain's low bound, or the Hilbert value and coordinates), cells are sorted
/// by one packed integer key; otherwise (string dimensions, wide domains) by comparing cells.
pub fn global_order(schema: &ArraySchema, coords: &[DimCoords<'_>]) -> Result<Vec<u64>> {
    let cells = Cells::new(schema, coords)?;
    check_cells_domain(&cells)?;
    Ok(sorted(&Order::new(&cells)?))
}

/// The cells' order, ties by input index (and by bytes where values are equal).
pub(crate) fn sorted(order: &Order<'_, '_>) -> Vec<u64> {
    match order.packed_key() {
        Some(parts) if parts.width <= 64 && order.cells.n <= u32::MAX as usize => {
            sort_packed::<u64>(order, &parts)
        }
        Some(parts) if parts.width <= 128 && order.cells.n <= u32::MAX as usize => {
            sort_packed::<u128>(order, &parts)
        }
        _ => sort_compared(order),
    }
}

/// Sorts by comparing cells (any schema).
pub(crate) fn sort_compared(order: &Order<'_, '_>) -> Vec<u64> {
    let mut perm: Vec<u64> = (0..order.cells.n as u64).collect();
    perm.par_sort_by(|&a, &b| {
        order
            .cmp(a as usize, b as usize)
            .then_with(|| order.cmp_bytes(a as usize, b as usize))
    });
    perm
}

/// A part of a packed sort key.
#[derive(Clone, Copy, Debug)]
pub(crate) enum Part {
    /// The Hilbert value.
    Hilbert,
    /// The space-tile index on a dimension.
    Tile(usize),
    /// The coordinate on a dimension, as its order word minus the domain low's.
    Coord(usize, u64),
}

/// The parts of a packed key, most significant first, with their widths in bits.
pub(crate) struct PackedKey {
    pub(crate) parts: Vec<(Part, u32)>,
    pub(crate) width: u32,
}

/// Bits needed for values up to `max`.
pub(crate) fn bits_for(max: u64) -> u32 {
    64 - max.leading_zeros()
}

impl Order<'_, '_> {
    /// The packed key of this order, when every dimension is fixed-size.
    pub(crate) fn packed_key(&self) -> Option<PackedKey> {
        let dims = &self.cells.dims;
        if dims.iter().any(|v| v.kind == Kind::Str) {
            return None;
        }
        let mut parts = Vec::new();
        if self.hilbert.is_some() {
            parts.push((
                Part::Hilbert,
                hilbert_bits(dims.len()).ok()? * dims.len() as u32,
            ));
        }
        for &d in &self.tile_dims {
            let v = &dims[d];
            let (lo, e) = v.tiling?;
            let (_, hi) = v.dim.domain.as_ref()?;
            if v.kind.is_float() && (v.kind.float(hi) - v.kind.float(lo)) / v.kind.float(e) >= 9e18
            {
                // Real tile indices past 2^63 do not convert monotonically (C++ leaves them
                // undefined): compare cells instead.
                return None;
            }
            parts.push((Part::Tile(d), bits_for(v.kind.tile_index(hi, lo, e))));
        }
        for &d in &self.cell_dims {
            let v = &dims[d];
            let (lo, hi) = v.dim.domain.as_ref()?;
            let base = v.kind.order_word(lo);
            parts.push((
                Part::Coord(d, base),
                bits_for(v.kind.order_word(hi).wrapping_sub(base)),
            ));
        }
        let width = parts.iter().map(|(_, w)| w).sum();
        Some(PackedKey { parts, width })
    }

    /// The packed key of cell `i`.
    pub(crate) fn key<K: SortKey>(&self, parts: &PackedKey, i: usize) -> K {
        let mut k = K::from(0);
        for &(p, w) in &parts.parts {
            let v = match p {
                Part::Hilbert => self.hilbert.as_ref().expect("Hilbert order")[i],
                Part::Tile(d) => {
                    let v = &self.cells.dims[d];
                    let (lo, e) = v.tiling.expect("tile dims have tiling");
                    v.kind.tile_index(v.cell(i), lo, e)
                }
                Part::Coord(d, base) => {
                    let v = &self.cells.dims[d];
                    v.kind.order_word(v.cell(i)).wrapping_sub(base)
                }
            };
            k = k.shl(w) | K::from(v);
        }
        k
    }
}

/// Integers packed keys are built in.
pub(crate) trait SortKey:
    Copy + Ord + Send + Sync + From<u64> + std::ops::BitOr<Output = Self>
{
    /// `self << bits` (0 when `bits` is the whole width).
    fn shl(self, bits: u32) -> Self;
}

impl SortKey for u64 {
    fn shl(self, bits: u32) -> u64 {
        self.checked_shl(bits).unwrap_or(0)
    }
}

impl SortKey for u128 {
    fn shl(self, bits: u32) -> u128 {
        self.checked_shl(bits).unwrap_or(0)
    }
}

/// Sorts by packed keys (ties by input index); cells equal in the order but not in their
/// bytes (`-0.0`, `0.0`) then by their bytes.
pub(crate) fn sort_packed<K: SortKey>(order: &Order<'_, '_>, parts: &PackedKey) -> Vec<u64> {
    let mut keyed: Vec<(K, u32)> = (0..order.cells.n)
        .into_par_iter()
        .map(|i| (order.key::<K>(parts, i), i as u32))
        .collect();
    keyed.par_sort_unstable();
    let has_floats = order.cells.dims.iter().any(|v| v.kind.is_float());
    let mut perm: Vec<u64> = keyed.iter().map(|&(_, i)| i as u64).collect();
    if has_floats {
        let mut start = 0;
        while start < keyed.len() {
            let mut end = start + 1;
            while end < keyed.len() && keyed[end].0 == keyed[start].0 {
                end += 1;
            }
            if end - start > 1 {
                perm[start..end]
                    .sort_by(|&a, &b| order.cmp_bytes(a as usize, b as usize).then(a.cmp(&b)));
            }
            start = end;
        }
    }
    perm
}

/// The permutation TileDB 2.30's unordered writer gives the cells when its compute thread
/// pool has `concurrency_level` threads (`sm.compute_concurrency_level`, by default the
/// machine's hardware threads): the same as [`global_order`] where no two cells are equal in
/// the order, and where some are (duplicates, `-0.0` and `0.0`), TileDB's own arrangement of
/// them. TileDB's `parallel_sort` is a quicksort that partitions `log2(concurrency) + 2`
/// levels deep around middle pivots, then hands each part to `std::sort` (libstdc++'s
/// introsort, as TileDB's Linux builds use); both are reproduced here, so the result is
/// deterministic for a given concurrency level.
pub fn global_order_as_tiledb(
    schema: &ArraySchema,
    coords: &[DimCoords<'_>],
    concurrency_level: usize,
) -> Result<Vec<u64>> {
    let cells = Cells::new(schema, coords)?;
    check_cells_domain(&cells)?;
    let order = Order::new(&cells)?;
    let perm = sorted(&order);
    let ties = (1..perm.len())
        .into_par_iter()
        .any(|k| order.cmp(perm[k - 1] as usize, perm[k] as usize).is_eq());
    if !ties {
        return Ok(perm);
    }
    drop(perm);
    let mut pos: Vec<u64> = (0..cells.n as u64).collect();
    let c = concurrency_level;
    match order.packed_key() {
        Some(parts) if parts.width <= 64 => {
            sort_keyed_as_tiledb::<u64>(&order, &parts, &mut pos, c)
        }
        Some(parts) if parts.width <= 128 => {
            sort_keyed_as_tiledb::<u128>(&order, &parts, &mut pos, c)
        }
        _ => {
            let less = |a: u64, b: u64| order.cmp(a as usize, b as usize).is_lt();
            tiledb_parallel_sort(&mut pos, c, &less);
        }
    }
    Ok(pos)
}

/// TileDB's sort of `pos`, comparing packed keys.
pub(crate) fn sort_keyed_as_tiledb<K: SortKey>(
    order: &Order<'_, '_>,
    parts: &PackedKey,
    pos: &mut [u64],
    concurrency: usize,
) {
    let keys: Vec<K> = (0..order.cells.n)
        .into_par_iter()
        .map(|i| order.key::<K>(parts, i))
        .collect();
    let less = |a: u64, b: u64| keys[a as usize] < keys[b as usize];
    tiledb_parallel_sort(pos, concurrency, &less);
}
