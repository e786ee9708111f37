//! What TileDB 2.30 refuses when a schema is built and an array created (`ArraySchema::check`,
//! the `Dimension`, `Domain`, `Attribute` and `Enumeration` setters, `check_filter_types`),
//! refused here with TileDB's own reason, so that [`ArraySchema::check`] passes exactly the
//! schemas TileDB would create (docs/ARRAY.md §3).

use super::{ArraySchema, ArrayType, Attribute, Dimension, Enumeration, Layout, VAR_NUM};
use crate::array::value;
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::format::filter_type::FilterType;
use crate::pipeline::Pipeline;
use std::collections::HashSet;

/// The most dimensions a Hilbert cell order supports (TileDB's `Hilbert::HC_MAX_DIM`).
pub const HILBERT_MAX_DIMENSIONS: usize = 16;

/// TileDB's default `sm.enumerations_max_size` (10 MiB): the largest enumeration.
pub const ENUMERATION_MAX_SIZE: u64 = 10 << 20;

/// TileDB's default `sm.enumerations_max_total_size` (50 MiB): all enumerations of a schema.
pub const ENUMERATIONS_MAX_TOTAL_SIZE: u64 = 50 << 20;

/// The prefix TileDB reserves for internal attribute names.
const SPECIAL_NAME_PREFIX: &str = "__";

fn refuse(msg: impl Into<String>) -> Error {
    Error::invalid(msg)
}

impl ArraySchema {
    /// Checks the schema as TileDB does before creating an array, refusing what TileDB refuses
    /// with TileDB's reason (prefixed with the dimension, attribute or enumeration it is
    /// about): dimension types and domains, tile extents, dense-array rules, orders, capacity,
    /// unique names, filter types, fill values, enumerations. Dimension labels are refused as
    /// `Unsupported` (tdbfilter does not create label arrays).
    pub fn check(&self) -> Result<()> {
        if self.dimensions.is_empty() {
            return Err(refuse("Array schema check failed; No dimensions provided"));
        }
        if !self.labels.is_empty() {
            return Err(Error::Unsupported(format!(
                "the schema has {} dimension labels: tdbfilter does not create label arrays",
                self.labels.len()
            )));
        }
        self.check_orders()?;
        for d in &self.dimensions {
            check_dimension(d, self.cell_order)
                .map_err(|e| e.context(format!("dimension '{}'", d.name)))?;
        }
        let dense = self.array_type == ArrayType::Dense;
        if dense {
            let t = self.dimensions[0].datatype;
            if self.dimensions.iter().any(|d| d.datatype != t) {
                return Err(refuse(
                    "Cannot set domain; In dense arrays, all dimensions must have the same datatype",
                ));
            }
            if !(t.is_integer() || t.is_datetime() || t.is_time()) {
                return Err(refuse(format!(
                    "Cannot set domain; Dense arrays do not support dimension datatype '{t}'"
                )));
            }
            if self.allows_dups {
                return Err(refuse("Dense arrays cannot allow coordinate duplicates"));
            }
            if self.attributes.is_empty() {
                return Err(refuse("Array schema check failed; No attributes provided"));
            }
        } else if self.capacity == 0 {
            return Err(refuse(
                "Array schema check failed; Sparse arrays cannot have their capacity equal to zero.",
            ));
        }
        if self.cell_order == Layout::Hilbert && self.dimensions.len() > HILBERT_MAX_DIMENSIONS {
            return Err(refuse(
                "Array schema check failed; Maximum dimensions supported by Hilbert order exceeded",
            ));
        }
        self.check_coords_filters()?;
        self.check_names()?;
        self.check_enumerations()?;
        for a in &self.attributes {
            self.check_attribute(a)
                .map_err(|e| e.context(format!("attribute '{}'", a.name)))?;
        }
        self.check_webp()?;
        if (!dense || self.dimensions.len() != 1) && self.attributes.iter().any(|a| a.order != 0) {
            return Err(refuse(
                "Array schema check failed; Ordered attributes are only supported on dense arrays with 1 dimension.",
            ));
        }
        self.check_current_domain()
    }

    fn check_orders(&self) -> Result<()> {
        match self.tile_order {
            Layout::RowMajor | Layout::ColMajor => {}
            Layout::Hilbert => {
                return Err(refuse(
                    "Cannot set tile order; Hilbert order is not applicable to tiles",
                ));
            }
            Layout::Unordered => {
                return Err(refuse(
                    "Cannot set tile order; Cannot create ArraySchema with UNORDERED tile order",
                ));
            }
            Layout::GlobalOrder => {
                // TileDB 2.30 creates such an array, then cannot open it ("Invalid Layout enum
                // 2"): refused here.
                return Err(refuse(
                    "Cannot set tile order; global-order is a query layout, not a tile order \
                     (TileDB 2.30 cannot open an array with it)",
                ));
            }
        }
        match self.cell_order {
            Layout::RowMajor | Layout::ColMajor => Ok(()),
            Layout::Hilbert if self.array_type == ArrayType::Sparse => Ok(()),
            Layout::Hilbert => Err(refuse(
                "Cannot set cell order; Hilbert order is only applicable to sparse arrays",
            )),
            Layout::Unordered => Err(refuse(
                "Cannot set cell order; Cannot create ArraySchema with UNORDERED cell order",
            )),
            // TileDB 2.30 accepts a global-order cell order (and reads such arrays).
            Layout::GlobalOrder => Ok(()),
        }
    }

    /// TileDB's `check_double_delta_compressor` and `check_string_compressor` on the coords
    /// filters, for the dimensions that inherit them.
    fn check_coords_filters(&self) -> Result<()> {
        let coords = &self.coords_filters;
        let has = |t: FilterType| coords.filters().iter().any(|f| f.filter_type() == t);
        let inheriting = || self.dimensions.iter().filter(|d| d.uses_coords_filters);
        if has(FilterType::DoubleDelta) && inheriting().any(|d| d.datatype.is_real()) {
            return Err(refuse(
                "Real dimension cannot inherit coordinate filters with DOUBLE DELTA compression",
            ));
        }
        if coords.filters().len() > 1
            && inheriting().any(|d| d.datatype == Datatype::StringAscii && d.is_var())
        {
            let first = coords.filters()[0].filter_type();
            if has(FilterType::Rle) && first != FilterType::Rle {
                return Err(refuse(
                    "RLE filter must be the first filter to apply when used on variable length string dimensions",
                ));
            }
            if has(FilterType::Dictionary) && first != FilterType::Dictionary {
                return Err(refuse(
                    "Dictionary filter must be the first filter to apply when used on variable length string dimensions",
                ));
            }
        }
        Ok(())
    }

    /// Attribute names must not start with `__`; attribute, dimension and label names must
    /// be unique (TileDB allows empty names: the anonymous attribute is `""`).
    fn check_names(&self) -> Result<()> {
        if let Some(a) = self
            .attributes
            .iter()
            .find(|a| a.name.starts_with(SPECIAL_NAME_PREFIX))
        {
            return Err(refuse(format!(
                "attribute '{}': Cannot add attribute: names starting with '{SPECIAL_NAME_PREFIX}' are reserved",
                a.name
            )));
        }
        let mut names = HashSet::new();
        let all = self
            .attributes
            .iter()
            .map(|a| &a.name)
            .chain(self.dimensions.iter().map(|d| &d.name))
            .chain(self.labels.iter().map(|l| &l.name));
        for n in all {
            if !names.insert(n) {
                return Err(refuse(format!(
                    "Array schema check failed; Attributes, dimensions and dimension labels must have unique names ('{n}' repeats)"
                )));
            }
        }
        Ok(())
    }

    fn check_attribute(&self, a: &Attribute) -> Result<()> {
        if a.datatype == Datatype::Any && a.cell_val_num != VAR_NUM {
            return Err(refuse(
                "Cannot set number of values per cell; Attribute datatype `ANY` is always variable-sized",
            ));
        }
        match a.order {
            0 => {}
            1 | 2 => {
                check_ordered_datatype(a.datatype)?;
                if a.datatype == Datatype::StringAscii {
                    if a.cell_val_num != VAR_NUM {
                        return Err(refuse(format!(
                            "Cannot set number of values per cell; Ordered attributes with datatype '{}' must have `cell_val_num=constants::var_num`.",
                            a.datatype
                        )));
                    }
                } else if a.cell_val_num != 1 {
                    return Err(refuse(format!(
                        "Ordered attributes with datatype '{}' must have `cell_val_num=1`.",
                        a.datatype
                    )));
                }
                if a.nullable {
                    return Err(refuse(
                        "Cannot set to nullable; An ordered attribute cannot be nullable.",
                    ));
                }
            }
            o => return Err(refuse(format!("Invalid data order {o}"))),
        }
        if a.cell_val_num == 0 {
            return Err(refuse("Cannot set zero values per cell"));
        }
        super::check_cell_size(&a.name, a.datatype, a.cell_val_num)?;
        check_filter_types(&a.filters, a.datatype, a.is_var(), "attribute")?;
        if a.fill_value.is_empty() {
            return Err(refuse("Cannot set fill value; Input size cannot be 0"));
        }
        if let Some(cell) = a.cell_size()
            && cell != a.fill_value.len()
        {
            return Err(refuse(
                "Cannot set fill value; Input size is not the same as cell size",
            ));
        }
        if !a.nullable && a.fill_validity != 0 {
            return Err(refuse("Cannot set fill value; Attribute is not nullable"));
        }
        if let Some(name) = &a.enumeration {
            if name.is_empty() {
                return Err(refuse("Invalid enumeration name, name must not be empty."));
            }
            if !self.enumerations.iter().any(|(n, _)| n == name) {
                return Err(refuse(format!(
                    "Cannot add attribute; Attribute refers to an unknown enumeration named '{name}'."
                )));
            }
            if !a.datatype.is_integer() {
                return Err(refuse(format!(
                    "Unable to use enumeration with attribute '{}', attribute must have an integral data type, not {}",
                    a.name, a.datatype
                )));
            }
            if a.cell_val_num != 1 {
                return Err(refuse(
                    "Attributes with enumerations must have a cell_val_num of 1.",
                ));
            }
            let e = self.loaded_enumeration(name).ok_or_else(|| {
                    refuse(format!(
                        "Cannot add attribute referencing enumeration '{name}' as the enumeration has not been loaded."
                    ))
                })?;
            if max_integral_value(a.datatype) <= e.len() as u64 {
                return Err(refuse(format!(
                    "Unable to use enumeration '{name}' for attribute '{}' because the attribute's type is not large enough to represent all enumeration values.",
                    a.name
                )));
            }
        }
        Ok(())
    }

    /// Every enumeration listed is loaded (its values are what creation writes), once, valid.
    fn check_enumerations(&self) -> Result<()> {
        let mut names = HashSet::new();
        let mut total: u64 = 0;
        for (name, file) in &self.enumerations {
            if !names.insert(name) {
                return Err(refuse(format!(
                    "Error adding enumeration. Enumeration with name '{name}' already exists in this ArraySchema."
                )));
            }
            let e = self.loaded_enumeration(name).ok_or_else(|| {
                refuse(format!(
                    "enumeration '{name}': its values are not loaded, so it cannot be written"
                ))
            })?;
            if &e.path_name != file {
                return Err(refuse(format!(
                    "Error storing enumeration. Path name mismatch for enumeration named '{name}'."
                )));
            }
            check_enumeration(e).map_err(|err| err.context(format!("enumeration '{name}'")))?;
            let size = e.data.len() as u64 + 8 * e.offsets.len() as u64;
            if size > ENUMERATION_MAX_SIZE {
                return Err(refuse(format!(
                    "Invalid enumeration '{name}' has a size exceeding {ENUMERATION_MAX_SIZE} bytes."
                )));
            }
            total += size;
        }
        if let Some(e) = self
            .loaded_enumerations
            .iter()
            .find(|e| !names.contains(&e.name))
        {
            return Err(refuse(format!(
                "enumeration '{}' is loaded but not listed in the schema",
                e.name
            )));
        }
        if total > ENUMERATIONS_MAX_TOTAL_SIZE {
            return Err(refuse(format!(
                "Total enumeration size for the entire schema exceeds {ENUMERATIONS_MAX_TOTAL_SIZE} bytes."
            )));
        }
        Ok(())
    }

    /// TileDB's `check_webp_filter` (WEBP: UINT8 attributes of dense 2-D integer arrays).
    fn check_webp(&self) -> Result<()> {
        let mut any = false;
        for a in &self.attributes {
            if a.filters
                .filters()
                .iter()
                .any(|f| f.filter_type() == FilterType::Webp)
            {
                if a.datatype != Datatype::Uint8 {
                    return Err(refuse("WebP filter supports only uint8 attributes"));
                }
                any = true;
            }
        }
        if !any {
            return Ok(());
        }
        if self.array_type != ArrayType::Dense {
            return Err(refuse("WebP filter can only be applied to dense arrays"));
        }
        if self.dimensions.len() != 2 {
            return Err(refuse("WebP filter requires exactly 2 dimensions Y, X."));
        }
        if self.dimensions[0].datatype != self.dimensions[1].datatype {
            return Err(refuse(
                "WebP filter dimensions 0, 1 should have matching integral types",
            ));
        }
        if !self.dimensions[0].datatype.is_integer() {
            return Err(refuse(
                "WebP filter requires integral dimensions at index 0, 1",
            ));
        }
        Ok(())
    }

    /// TileDB's `CurrentDomain::check_schema_sanity`: one range per dimension, inside the
    /// domain.
    fn check_current_domain(&self) -> Result<()> {
        let Some(ranges) = &self.current_domain else {
            return Ok(());
        };
        if ranges.len() != self.dimensions.len() {
            return Err(refuse(
                "The array current domain and the array schema have a non-equal number of dimensions",
            ));
        }
        for (r, d) in ranges.iter().zip(&self.dimensions) {
            let Some((lo, hi)) = &d.domain else {
                continue;
            };
            let inside = crate::array::order::compare(d.datatype, r.lo(), lo).is_ge()
                && crate::array::order::compare(d.datatype, r.hi(), hi).is_le();
            if !inside || r.lo().len() != lo.len() || r.hi().len() != hi.len() {
                return Err(refuse(
                    "This array current domain has ranges past the boundaries of the array schema domain",
                ));
            }
        }
        Ok(())
    }
}

/// The dimension rules of TileDB's `Dimension` (type, values per coordinate, string
/// dimensions without domain or extent, `check_domain`, `check_tile_extent`).
fn check_dimension(d: &Dimension, cell_order: Layout) -> Result<()> {
    use Datatype::*;
    let t = d.datatype;
    if matches!(
        t,
        Char | Blob
            | GeomWkb
            | GeomWkt
            | Bool
            | StringUtf8
            | StringUtf16
            | StringUtf32
            | StringUcs2
            | StringUcs4
            | Any
    ) {
        return Err(refuse(format!(
            "Datatype::{t} is not a valid Dimension Datatype"
        )));
    }
    if t.is_string() && d.cell_val_num != VAR_NUM {
        return Err(refuse(
            "Cannot set non-variable number of values per coordinate for a string dimension",
        ));
    }
    if !t.is_string() && d.cell_val_num != 1 {
        return Err(refuse(
            "Cannot set number of values per coordinate; Currently only one value per coordinate is supported",
        ));
    }
    if !d.uses_coords_filters {
        check_filter_types(&d.filters, t, d.is_var(), "dimension")?;
    }
    if t.is_string() {
        if d.domain.is_some() {
            return Err(refuse(format!(
                "Setting the domain to a dimension with type '{t}' is not supported"
            )));
        }
        if d.tile_extent.is_some() {
            return Err(refuse(format!(
                "Setting the tile extent to a dimension with type '{t}' is not supported"
            )));
        }
        return Ok(());
    }
    let Some((lo, hi)) = &d.domain else {
        return Err(refuse(
            "Cannot set tile extent to domain range; Domain not set",
        ));
    };
    let n = t.size();
    if lo.len() != n || hi.len() != n {
        return Err(refuse(format!(
            "the domain bounds are {} and {} bytes, not {n} ({t})",
            lo.len(),
            hi.len()
        )));
    }
    if t.is_real() {
        let (l, h) = (value::as_f64(t, lo)?, value::as_f64(t, hi)?);
        if !l.is_finite() || !h.is_finite() {
            return Err(refuse("Domain check failed; domain contains NaN"));
        }
        if h < l {
            return Err(refuse(
                "Domain check failed; Upper domain bound should not be smaller than the lower one",
            ));
        }
    } else {
        let (l, h) = (value::as_i128(t, lo)?, value::as_i128(t, hi)?);
        if h < l {
            return Err(refuse(
                "Domain check failed; Upper domain bound should not be smaller than the lower one",
            ));
        }
        let (min, max) = integer_range(t);
        if l == min && h == max {
            return Err(refuse(
                "Domain check failed; Domain range (upper + lower + 1) is larger than the maximum unsigned number",
            ));
        }
    }
    match &d.tile_extent {
        None if cell_order != Layout::Hilbert => Err(refuse(format!(
            "dimension '{}' has no tile extent (TileDB sets the domain range)",
            d.name
        ))),
        None => Ok(()),
        Some(e) if e.len() != n => Err(refuse(format!(
            "a tile extent of {} bytes for {t} values of {n} bytes",
            e.len()
        ))),
        // TileDB checks the extents users set, not the ones it fills in with the domain range
        // (which wrap around in small integer types: INT8 [-100, 100] gets -55).
        Some(e) if *e == null_extent_fill(t, lo, hi) => Ok(()),
        Some(e) => check_tile_extent(d, lo, hi, e),
    }
}

/// TileDB's `Dimension::check_tile_extent<T>`, with its integer conversions.
fn check_tile_extent(d: &Dimension, lo: &[u8], hi: &[u8], e: &[u8]) -> Result<()> {
    let t = d.datatype;
    let name = &d.name;
    if t.is_real() {
        let exceeds = if t == Datatype::Float32 {
            let f = |b: &[u8]| f32::from_le_bytes(b.try_into().expect("4 bytes"));
            let (l, h, x) = (f(lo), f(hi), f(e));
            if x <= 0.0 {
                None
            } else {
                Some((x > h - l + 1.0, x as f64, l as f64, h as f64))
            }
        } else {
            let (l, h, x) = (
                value::as_f64(t, lo)?,
                value::as_f64(t, hi)?,
                value::as_f64(t, e)?,
            );
            if x <= 0.0 {
                None
            } else {
                Some((x > h - l + 1.0, x, l, h))
            }
        };
        return match exceeds {
            None => Err(refuse(format!(
                "Tile extent check failed on dimension '{name}'; Tile extent must be greater than 0"
            ))),
            Some((true, x, l, h)) => Err(refuse(format!(
                "Tile extent check failed on dimension '{name}'; Tile extent {x:.6} exceeds range on dimension domain [{l:.6}, {h:.6}]"
            ))),
            Some((false, ..)) => Ok(()),
        };
    }
    let (l, h, x) = (
        value::as_i128(t, lo)?,
        value::as_i128(t, hi)?,
        value::as_i128(t, e)?,
    );
    if x == 0 {
        return Err(refuse(format!(
            "Tile extent check failed on dimension '{name}'; Tile extent must not be 0"
        )));
    }
    // `uint64_t range = (uint64_t)hi - (uint64_t)lo + 1`, compared with `uint64_t(extent)`:
    // C++ conversions wrap, which also makes negative extents "exceed" the range.
    let range = (h as u64).wrapping_sub(l as u64).wrapping_add(1);
    if (x as u64) > range {
        return Err(refuse(format!(
            "Tile extent check failed on dimension '{name}'; Tile extent {x} exceeds range on dimension domain [{l}, {h}]"
        )));
    }
    if !range.is_multiple_of(x as u64) && upper_floor_exceeds(t, l, h, x) {
        return Err(refuse(
            "Tile extent check failed; domain max expanded to multiple of tile extent exceeds max value representable by domain type. Reduce domain max by 1 tile extent to allow for expansion.",
        ));
    }
    Ok(())
}

/// TileDB's `check_tile_extent_upper_floor`: whether the domain's last tile, expanded to a
/// whole tile, passes the type's maximum (computed in i64 for signed types, u64 otherwise).
fn upper_floor_exceeds(t: Datatype, lo: i128, hi: i128, extent: i128) -> bool {
    let (_, type_max) = integer_range(t);
    // `domain[1] - domain[0] + 1` in T (promoted to int below 32 bits, wrapping above).
    let exact = hi - lo + 1;
    let range = match (t.size(), t.is_signed()) {
        (1 | 2, _) => exact as i64 as u64,
        (4, true) => exact as i32 as i64 as u64,
        (4, false) => exact as u32 as u64,
        _ => exact as u64,
    };
    let floor = (range.wrapping_sub(1) / extent as u64)
        .wrapping_mul(extent as u64)
        .wrapping_add(lo as u64);
    if t.is_signed() {
        let floor = floor as i64;
        let floor_max = i64::MAX - (extent as i64 - 1);
        floor > floor_max || floor as i128 > type_max
    } else {
        let floor_max = u64::MAX - (extent as u64 - 1);
        floor > floor_max || floor as i128 > type_max
    }
}

/// The tile extent TileDB's `set_null_tile_extent_to_range` gives a dimension without one:
/// the domain range, `hi - lo + 1` for integers and `hi - lo` for reals, computed in the
/// coordinate type (so it wraps around in small integer types, as in TileDB).
pub(crate) fn null_extent_fill(t: Datatype, lo: &[u8], hi: &[u8]) -> Vec<u8> {
    match t {
        Datatype::Float32 => {
            let f = |b: &[u8]| f32::from_le_bytes(b.try_into().expect("4 bytes"));
            (f(hi) - f(lo)).to_le_bytes().to_vec()
        }
        Datatype::Float64 => {
            let f = |b: &[u8]| f64::from_le_bytes(b.try_into().expect("8 bytes"));
            (f(hi) - f(lo)).to_le_bytes().to_vec()
        }
        _ => {
            let (l, h) = (
                value::as_i128(t, lo).unwrap_or(0),
                value::as_i128(t, hi).unwrap_or(0),
            );
            value::from_i128(t, h - l + 1)
        }
    }
}

/// The range of an integer, datetime or time type.
pub(crate) fn integer_range(t: Datatype) -> (i128, i128) {
    let bits = 8 * t.size() as u32;
    if t.is_signed() {
        (-(1i128 << (bits - 1)), (1i128 << (bits - 1)) - 1)
    } else {
        (0, (1i128 << bits) - 1)
    }
}

/// TileDB's `datatype_max_integral_value` for the integer types.
fn max_integral_value(t: Datatype) -> u64 {
    integer_range(t).1 as u64
}

/// TileDB's `ensure_ordered_attribute_datatype_is_valid`.
fn check_ordered_datatype(t: Datatype) -> Result<()> {
    use Datatype::*;
    let ok = matches!(
        t,
        Int32 | Int64 | Float32 | Float64 | Int8 | Uint8 | Int16 | Uint16 | Uint32 | Uint64
    ) || t == StringAscii
        || t.is_datetime()
        || t.is_time();
    if ok {
        Ok(())
    } else {
        Err(refuse(format!(
            "Datatype '{t}' is not a valid datatype for an ordered attribute."
        )))
    }
}

/// TileDB's `FilterPipeline::check_filter_types` for a field of type `base` (`what` is
/// "attribute" or "dimension"), with TileDB's messages.
fn check_filter_types(p: &Pipeline, base: Datatype, is_var: bool, what: &str) -> Result<()> {
    let filters = p.filters();
    if filters.is_empty() {
        return Ok(());
    }
    let var_string = is_var && matches!(base, Datatype::StringAscii | Datatype::StringUtf8);
    if var_string && filters.len() > 1 {
        let first = filters[0].filter_type();
        let has = |t: FilterType| filters.iter().any(|f| f.filter_type() == t);
        if has(FilterType::Rle) && first != FilterType::Rle {
            return Err(refuse(format!(
                "RLE filter must be the first filter to apply when used on a variable length string {what}"
            )));
        }
        if has(FilterType::Dictionary) && first != FilterType::Dictionary {
            return Err(refuse(format!(
                "Dictionary filter must be the first filter to apply when used on a variable length string {what}"
            )));
        }
    }
    // Locate the first filter whose input type the pipeline's own check refuses, and say so
    // in TileDB's words (`Filter::ensure_accepts_datatype`, `ensure_compatible`).
    if p.check_types(base, is_var).is_ok() {
        return Ok(());
    }
    let types = p.stage_datatypes(base);
    let mut prefix = Pipeline::new();
    for (i, f) in filters.iter().enumerate() {
        prefix.push(*f)?;
        if prefix.check_types(base, is_var).is_err() {
            return Err(refuse(if i == 0 {
                format!(
                    "Filter {} does not accept input type {}",
                    f.filter_type().name(),
                    types[0]
                )
            } else {
                format!(
                    "Filter {} produces {} but second filter {} does not accept this type.",
                    filters[i - 1].filter_type().name(),
                    types[i],
                    f.filter_type().name()
                )
            }));
        }
    }
    // The whole pipeline fails but no prefix does: report the pipeline's own reason.
    p.check_types(base, is_var)
}

/// TileDB's `Enumeration` constructor checks (`validate`, `generate_value_map`).
fn check_enumeration(e: &Enumeration) -> Result<()> {
    if e.name.is_empty() {
        return Err(refuse("Enumeration name must not be empty"));
    }
    if e.path_name.contains('/') {
        return Err(refuse(
            "Enumeration path name must not contain path separators",
        ));
    }
    if e.cell_val_num == 0 {
        return Err(refuse("Invalid cell_val_num in Enumeration"));
    }
    let empty = e.data.is_empty() && e.offsets.is_empty();
    if e.cell_val_num == VAR_NUM {
        if !empty {
            if e.offsets.is_empty() {
                return Err(refuse(
                    "Var sized enumeration values require a non-zero offsets size.",
                ));
            }
            crate::engine::tile::check_offsets(&e.offsets, e.data.len()).map_err(|m| {
                refuse(format!(
                    "Invalid data input, data_size is smaller than the last provided offset. ({m})"
                ))
            })?;
        }
    } else {
        if !e.offsets.is_empty() {
            return Err(refuse(
                "Fixed length value type defined but offsets size is non-zero.",
            ));
        }
        let cell = e.datatype.size() as u64 * u64::from(e.cell_val_num);
        if !e.data.is_empty() && !(e.data.len() as u64).is_multiple_of(cell) {
            return Err(refuse(
                "Invalid data size is not a multiple of the cell size.",
            ));
        }
    }
    let mut seen = HashSet::new();
    for i in 0..e.len() {
        let v = e.value(i).unwrap_or_default();
        if !seen.insert(v) {
            return Err(refuse(format!(
                "Invalid duplicated value in enumeration '{}'",
                String::from_utf8_lossy(v)
            )));
        }
    }
    Ok(())
}
