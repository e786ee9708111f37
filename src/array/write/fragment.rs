//! One fragment being written (docs/ARRAY.md §7): its folder under `__fragments/`, the data
//! files its tiles are appended to as soon as they are filtered, the per-tile metadata, and
//! the commit: data files and `__fragment_metadata.tdb` written and synced first, then the
//! empty `__commits/<name>.wrt` (the atomic commit). Until then the folder is invisible to
//! every reader; a writer that fails or is dropped removes it.

use super::dense::RawTile;
use super::tile_metadata::{self, SummaryField, TileMetadata};
use crate::array::directory::names;
use crate::array::field::{FieldInfo, FieldRef};
use crate::array::fragment::metadata::{ListKind, NewFragmentMetadata, TileMinMax};
use crate::array::rtree::{self, Mbr, RTree};
use crate::array::schema::{ArraySchema, Range};
use crate::engine::tile::Tile;
use crate::error::{Error, Result};
use crate::format::datatype::Datatype;
use crate::pipeline::Pipeline;
use crate::storage::{FileWriter, Storage, Uri};

/// A new metadata generator for one tile of `field`.
pub(crate) fn generator(field: &FieldInfo) -> tile_metadata::TileMetadataGenerator {
    tile_metadata::TileMetadataGenerator::new(
        field.datatype,
        field.is_dim(),
        field.is_var(),
        field.value_size(),
        field.cell_val_num,
    )
}

/// Whether the fragment metadata holds the minimum and maximum of `field`'s tiles.
fn has_min_max(field: &FieldInfo) -> bool {
    tile_metadata::has_min_max(
        field.datatype,
        field.is_dim(),
        field.is_var(),
        field.cell_val_num,
    )
}

/// Whether the fragment metadata holds the sum of `field`'s tiles.
fn has_sum(field: &FieldInfo) -> bool {
    !field.is_var() && tile_metadata::has_sum(field.datatype, false, field.cell_val_num)
}

/// The pipelines every field shares (with the array's key).
#[derive(Clone, Debug)]
pub(crate) struct SharedPipelines {
    /// Var-size offsets.
    pub offsets: Pipeline,
    /// Validity.
    pub validity: Pipeline,
}

pub(crate) use crate::array::field::{DELETE_CONDITION_INDEX, DELETE_TIMESTAMPS, TIMESTAMPS};

/// The fields a fragment of `schema` writes: every attribute, for sparse fragments every
/// dimension, with `timestamps` the per-cell timestamps ([`FieldRef::Timestamps`], named
/// [`TIMESTAMPS`]), and with `delete_meta` (only beside timestamps) the delete timestamps and
/// delete-condition indices ([`DELETE_TIMESTAMPS`], [`DELETE_CONDITION_INDEX`]);
/// pipelines get `key` and `threads`.
pub(crate) fn fields_of(
    schema: &ArraySchema,
    dense: bool,
    timestamps: bool,
    delete_meta: bool,
    key: Option<&[u8]>,
    threads: usize,
) -> Result<(Vec<FieldInfo>, SharedPipelines)> {
    let prep = |p: &Pipeline| -> Result<Pipeline> {
        let mut p = p.clone();
        if let Some(k) = key {
            p.set_encryption_key(k)?;
        }
        p.set_threads(threads);
        Ok(p)
    };
    let refs = (0..schema.attributes.len()).map(FieldRef::Attribute);
    let dims = (0..if dense { 0 } else { schema.dimensions.len() }).map(FieldRef::Dimension);
    let stamps = (timestamps && !dense).then_some(FieldRef::Timestamps);
    let deletes = (timestamps && delete_meta && !dense)
        .then_some([FieldRef::DeleteTimestamps, FieldRef::DeleteConditionIndex])
        .into_iter()
        .flatten();
    let mut fields: Vec<FieldInfo> = refs
        .chain(dims)
        .chain(stamps)
        .chain(deletes)
        .map(|r| r.info(schema))
        .collect();
    for f in &mut fields {
        f.filters = prep(&f.filters)?;
    }
    for f in &fields {
        f.filters
            .check_types(f.datatype, f.is_var())
            .map_err(|e| e.context(format!("field {}", f.name)))?;
    }
    Ok((
        fields,
        SharedPipelines {
            offsets: prep(&schema.offsets_filters)?,
            validity: prep(&schema.validity_filters)?,
        },
    ))
}

/// A tile of one field, filtered and ready to append.
#[derive(Debug)]
pub(crate) struct FilteredTile {
    /// The fixed-size tile, or the offsets tile of a var-size field.
    pub fixed: Vec<u8>,
    /// The var-size data tile and its unfiltered size.
    pub var: Option<(Vec<u8>, u64)>,
    /// The validity tile.
    pub validity: Option<Vec<u8>>,
    /// Cells in the tile.
    pub cell_num: u64,
    /// Its metadata.
    pub meta: TileMetadata,
}

/// Filters one raw tile of `field` (TileDB's `WriterBase::filter_tile`).
pub(crate) fn filter(
    field: &FieldInfo,
    shared: &SharedPipelines,
    raw: RawTile,
    cell_num: u64,
) -> Result<FilteredTile> {
    let ctx = |e: Error| e.context(format!("field {}", field.name));
    let validity = match &raw.validity {
        Some(v) => Some(
            shared
                .validity
                .filter_tile(&Tile::new(Datatype::Uint8, 1, v.clone()).map_err(ctx)?)
                .map_err(|e| ctx(e.context("validity tile")))?,
        ),
        None => None,
    };
    let (fixed, var) = match raw.offsets {
        Some(offsets) => {
            let size = raw.data.len() as u64;
            let tile = Tile::new_var(field.datatype, offsets, raw.data).map_err(ctx)?;
            let (o, d) = field
                .filters
                .filter_var(&shared.offsets, &tile)
                .map_err(ctx)?;
            (o, Some((d, size)))
        }
        None => {
            let tile =
                Tile::new(field.datatype, field.value_size() as u64, raw.data).map_err(ctx)?;
            (field.filters.filter_tile(&tile).map_err(ctx)?, None)
        }
    };
    Ok(FilteredTile {
        fixed,
        var,
        validity,
        cell_num,
        meta: raw.meta,
    })
}

/// Per-slot tile metadata as it accumulates.
#[derive(Clone, Debug, Default)]
struct SlotMeta {
    mins: TileMinMax,
    maxs: TileMinMax,
    sums: Vec<[u8; 8]>,
    null_counts: Vec<u64>,
}

/// A fragment being written.
pub(crate) struct FragmentWriter {
    storage: Storage,
    root: Uri,
    dir: Uri,
    name: String,
    dense: bool,
    slot_num: usize,
    attribute_num: usize,
    dimension_num: usize,
    fields: Vec<FieldInfo>,
    files: Vec<[Option<FileWriter>; 3]>,
    meta: NewFragmentMetadata,
    slot_meta: Vec<SlotMeta>,
    tile_cells: Vec<u64>,
    mbrs: Vec<Mbr>,
    done: bool,
}

/// One step of a commit (a sync, an upload) for [`run_at_once`].
type Job<'a> = Box<dyn FnOnce() -> Result<()> + Send + 'a>;

/// Runs `jobs` (syncs, uploads) concurrently on at most 16 threads: file systems gather
/// concurrent syncs into one journal commit, where syncs one after the other each wait for
/// their own (a commit took 6 sequential syncs, 2-4 ms each on a virtual disk); object stores
/// take the uploads in parallel. Every job runs; the first error is returned.
fn run_at_once(jobs: Vec<Job<'_>>) -> Result<()> {
    if jobs.len() <= 1 {
        return jobs.into_iter().try_for_each(|job| job());
    }
    let per_thread = jobs.len().div_ceil(16);
    let mut groups: Vec<Vec<Job<'_>>> = Vec::new();
    let mut it = jobs.into_iter().peekable();
    while it.peek().is_some() {
        groups.push(it.by_ref().take(per_thread).collect());
    }
    std::thread::scope(|s| {
        let handles: Vec<_> = groups
            .into_iter()
            .map(|group| {
                s.spawn(move || {
                    let mut first = Ok(());
                    for job in group {
                        let r = job();
                        if first.is_ok() {
                            first = r;
                        }
                    }
                    first
                })
            })
            .collect();
        let mut first = Ok(());
        for h in handles {
            let r = h
                .join()
                .unwrap_or_else(|_| Err(Error::Internal("a sync thread panicked".into())));
            if first.is_ok() {
                first = r;
            }
        }
        first
    })
}

impl FragmentWriter {
    /// Creates the folder of a new fragment of the array at `root` named for the timestamp
    /// range `timestamps` (`__t1_t2_<uuid>_22`).
    pub(crate) fn create(
        storage: &Storage,
        root: &Uri,
        schema: &ArraySchema,
        fields: Vec<FieldInfo>,
        dense: bool,
        timestamps: (u64, u64),
    ) -> Result<FragmentWriter> {
        let fragments = root.join(names::FRAGMENTS_DIR);
        storage.create_dir(&fragments)?;
        let name = names::new_timestamped_name(
            timestamps.0,
            timestamps.1,
            crate::array::fragment::metadata::MAX_FRAGMENT_VERSION,
        );
        let dir = fragments.join(&name);
        if !storage.create_dir(&dir)? {
            return Err(Error::invalid(format!(
                "{dir}: the fragment folder exists already"
            )));
        }
        let has_timestamps = fields.iter().any(|f| f.field == FieldRef::Timestamps);
        let has_delete_meta = fields.iter().any(|f| f.field == FieldRef::DeleteTimestamps);
        let slot_num = schema.attributes.len()
            + 1
            + schema.dimensions.len()
            + usize::from(has_timestamps)
            + 2 * usize::from(has_delete_meta);
        let mut meta = NewFragmentMetadata::with_slots(slot_num);
        meta.schema_name = schema.name.clone();
        meta.dense = dense;
        meta.has_timestamps = has_timestamps;
        meta.has_delete_meta = has_delete_meta;
        Ok(FragmentWriter {
            storage: storage.clone(),
            root: root.clone(),
            dir,
            name,
            dense,
            slot_num,
            attribute_num: schema.attributes.len(),
            dimension_num: schema.dimensions.len(),
            files: fields.iter().map(|_| [None, None, None]).collect(),
            fields,
            meta,
            slot_meta: vec![SlotMeta::default(); slot_num],
            tile_cells: Vec::new(),
            mbrs: Vec::new(),
            done: false,
        })
    }

    /// Sets the markers of the delete and update commits the fragment counts as processed.
    pub(crate) fn set_processed_conditions(&mut self, markers: Vec<String>) {
        self.meta.processed_conditions = markers;
    }

    /// Tiles appended so far (of every field).
    pub(crate) fn tile_num(&self) -> u64 {
        self.tile_cells.len() as u64
    }

    fn append_bytes(&mut self, field: usize, kind: usize, bytes: &[u8]) -> Result<u64> {
        let f = &self.fields[field];
        let path = self.dir.join(match kind {
            0 => format!("{}.tdb", f.field.file_stem()),
            1 => format!("{}_var.tdb", f.field.file_stem()),
            _ => format!("{}_validity.tdb", f.field.file_stem()),
        });
        if self.files[field][kind].is_none() {
            self.files[field][kind] = Some(self.storage.create_file(&path)?);
        }
        let file = self.files[field][kind].as_mut().expect("opened above");
        file.write(bytes)?;
        let slot = f.field.slot(self.attribute_num, self.dimension_num);
        let size = match kind {
            0 => &mut self.meta.file_sizes[slot],
            1 => &mut self.meta.file_var_sizes[slot],
            _ => &mut self.meta.file_validity_sizes[slot],
        };
        let at = *size;
        *size += bytes.len() as u64;
        Ok(at)
    }

    /// Appends the next tile of every field (`tiles[i]` is field `i`'s), recording offsets,
    /// sizes and tile metadata as TileDB's `WriterBase::write_tiles` does, and (sparse) the
    /// tile's MBR.
    pub(crate) fn append(&mut self, tiles: Vec<FilteredTile>, mbr: Option<Mbr>) -> Result<()> {
        if tiles.len() != self.fields.len() {
            return Err(Error::Internal(format!(
                "{} tiles for {} fields",
                tiles.len(),
                self.fields.len()
            )));
        }
        let cell_num = tiles[0].cell_num;
        for (i, t) in tiles.into_iter().enumerate() {
            if t.cell_num != cell_num {
                return Err(Error::Internal(format!(
                    "field {} has a tile of {} cells, the others {cell_num}",
                    self.fields[i].name, t.cell_num
                )));
            }
            let slot = self.fields[i]
                .field
                .slot(self.attribute_num, self.dimension_num);
            let off = self.append_bytes(i, 0, &t.fixed)?;
            self.meta.lists[ListKind::TileOffsets as usize][slot].push(off);
            if let Some((var, size)) = &t.var {
                let off = self.append_bytes(i, 1, var)?;
                self.meta.lists[ListKind::TileVarOffsets as usize][slot].push(off);
                self.meta.lists[ListKind::TileVarSizes as usize][slot].push(*size);
            }
            if let Some(v) = &t.validity {
                let off = self.append_bytes(i, 2, v)?;
                self.meta.lists[ListKind::TileValidityOffsets as usize][slot].push(off);
            }
            self.record_metadata(i, &t.meta, cell_num);
        }
        if !self.dense {
            self.mbrs
                .push(mbr.ok_or_else(|| Error::Internal("a sparse tile without MBR".into()))?);
        }
        self.tile_cells.push(cell_num);
        Ok(())
    }

    fn record_metadata(&mut self, field: usize, m: &TileMetadata, cell_num: u64) {
        let f = &self.fields[field];
        let (has_min_max, has_sum) = (has_min_max(f), has_sum(f));
        let sm = &mut self.slot_meta[f.field.slot(self.attribute_num, self.dimension_num)];
        // TileDB stores the bounds only of tiles that are not all null; the others keep
        // zeros (fixed) or an empty string (var).
        let stored = m.null_count != cell_num;
        if has_min_max {
            if f.is_var() {
                for (b, v) in [(&mut sm.mins, &m.min), (&mut sm.maxs, &m.max)] {
                    b.fixed
                        .extend_from_slice(&(b.var.len() as u64).to_le_bytes());
                    if stored {
                        b.var.extend_from_slice(v);
                    }
                }
            } else {
                for (b, v) in [(&mut sm.mins, &m.min), (&mut sm.maxs, &m.max)] {
                    if stored {
                        b.fixed.extend_from_slice(v);
                    } else {
                        b.fixed.extend(std::iter::repeat_n(0u8, f.value_size()));
                    }
                }
            }
        }
        if has_sum {
            sm.sums.push(m.sum);
        }
        if f.nullable {
            sm.null_counts.push(m.null_count);
        }
    }

    /// The fragment's folder name.
    pub(crate) fn name(&self) -> &str {
        &self.name
    }

    /// Writes the metadata and commits: writes `__fragment_metadata.tdb`, syncs it with the
    /// data files, the fragment folder and `__fragments/`, then creates `__commits/<name>.wrt`
    /// and syncs it and `__commits/`. `non_empty_domain` is the dense box (sparse fragments use the union of the MBRs).
    /// Returns the fragment's name.
    pub(crate) fn commit(
        mut self,
        schema: &ArraySchema,
        non_empty_domain: Option<Vec<Range>>,
        key: Option<&[u8]>,
    ) -> Result<String> {
        let tile_num = self.tile_num();
        let cells_per_tile = if self.dense {
            schema.cells_per_tile()?
        } else {
            schema.capacity
        };
        let last = self.tile_cells.last().copied().unwrap_or(0);
        self.meta.sparse_tile_num = if self.dense { 0 } else { tile_num };
        self.meta.last_tile_cell_num = if self.dense || last == 0 {
            cells_per_tile
        } else {
            last
        };
        self.meta.non_empty_domain = match non_empty_domain {
            Some(n) => n,
            None => rtree::union(schema, &self.mbrs)
                .ok_or_else(|| Error::invalid("a sparse fragment without cells"))?,
        };
        if !self.dense {
            self.meta.rtree = RTree::build(schema, std::mem::take(&mut self.mbrs))?;
        }
        // Every slot lists every tile (zeros where a kind does not apply).
        let n = tile_num as usize;
        for lists in self.meta.lists.iter_mut() {
            for l in lists.iter_mut() {
                l.resize(n, 0);
            }
        }
        self.fill_slot_metadata(schema, tile_num);
        // Everything the marker needs is made durable first, concurrently: the data files
        // whole (synced, or uploaded), the metadata file, the fragment folder and
        // `__fragments/` (their order among themselves does not matter). Until the marker
        // exists no reader sees the fragment.
        let bytes = self.meta.serialize(key)?;
        let storage = &self.storage;
        let meta_uri = self.dir.join(names::FRAGMENT_METADATA_FILE);
        let fragments = self.root.join(names::FRAGMENTS_DIR);
        let dir = &self.dir;
        let mut jobs: Vec<Job<'_>> = Vec::new();
        for file in std::mem::take(&mut self.files)
            .into_iter()
            .flatten()
            .flatten()
        {
            jobs.push(Box::new(move || {
                file.finish()
                    .map_err(|e| e.context("finishing a data file"))
            }));
        }
        jobs.push(Box::new(|| storage.write_new(&meta_uri, &bytes)));
        jobs.push(Box::new(|| storage.sync_dir(dir)));
        jobs.push(Box::new(|| storage.sync_dir(&fragments)));
        run_at_once(jobs)?;
        let commits = self.root.join(names::COMMITS_DIR);
        if storage.create_dir(&commits)? {
            // A folder this call made has its parent synced, so that after a power loss a
            // commit marker never survives the folder it is in.
            storage.sync_dir(&self.root)?;
        }
        let marker = commits.join(names::commit_file_name(&self.name));
        // From here every reader may see the fragment. When the marker cannot be made durable
        // it is withdrawn before `Drop` removes the folder; a marker that cannot be removed
        // keeps its folder, so that no marker ever names a missing fragment.
        if let Err(e) = storage
            .write_new(&marker, &[])
            .and_then(|()| storage.sync_dir(&commits))
        {
            if storage.is_file(&marker).unwrap_or(true) && storage.remove_file(&marker).is_err() {
                self.done = true;
            }
            return Err(e);
        }
        self.done = true;
        Ok(std::mem::take(&mut self.name))
    }

    /// The tile min/max/sum/null-count lists of every slot and the fragment summaries, with
    /// TileDB's shapes (`FragmentMetadata::set_num_tiles`): the legacy coords slot gets
    /// `tile_num × D × coord size` zero bytes of minimums and maximums and zero sums; dense
    /// dimensions get nothing.
    fn fill_slot_metadata(&mut self, schema: &ArraySchema, tile_num: u64) {
        let a = schema.attributes.len();
        let dims = &schema.dimensions;
        let d0 = &dims[0];
        let dense_array = schema.is_dense();
        let coords = SummaryField {
            datatype: d0.datatype,
            is_dim: false,
            var: false,
            cell_val_num: 1,
            nullable: false,
            dense_array,
        };
        let n = tile_num as usize;
        let coords_cell = dims.len() * d0.coord_size().unwrap_or(d0.datatype.size());
        if tile_metadata::has_min_max(d0.datatype, false, false, 1) {
            let zeros = TileMinMax {
                fixed: vec![0; n * coords_cell],
                var: Vec::new(),
            };
            self.slot_meta[a].mins = zeros.clone();
            self.slot_meta[a].maxs = zeros;
        }
        if tile_metadata::has_sum(d0.datatype, false, 1) {
            self.slot_meta[a].sums = vec![[0; 8]; n];
        }
        let mut summary_fields = vec![coords; self.slot_num];
        for f in &self.fields {
            summary_fields[f.field.slot(a, self.dimension_num)] = SummaryField {
                datatype: f.datatype,
                is_dim: f.is_dim(),
                var: f.is_var(),
                cell_val_num: f.cell_val_num,
                nullable: f.nullable,
                dense_array,
            };
        }
        let cells = self.tile_cells.clone();
        for (slot, field) in summary_fields.iter().enumerate() {
            let written = slot == a
                || self
                    .fields
                    .iter()
                    .any(|f| f.field.slot(a, self.dimension_num) == slot);
            let sm = std::mem::take(&mut self.slot_meta[slot]);
            if written {
                self.meta.summaries[slot] = tile_metadata::fragment_summary(
                    field,
                    &sm.mins,
                    &sm.maxs,
                    &sm.sums,
                    &sm.null_counts,
                    tile_num,
                    |t| cells[t as usize],
                );
            }
            self.meta.mins[slot] = sm.mins;
            self.meta.maxs[slot] = sm.maxs;
            self.meta.sums[slot] = sm.sums;
            self.meta.null_counts[slot] = sm.null_counts;
        }
    }
}

impl Drop for FragmentWriter {
    /// A fragment that was not committed leaves nothing behind (best effort: what cannot be
    /// removed stays an uncommitted folder every reader ignores).
    fn drop(&mut self) {
        if !self.done {
            self.files.clear();
            let _ = self.storage.remove_dir_all(&self.dir);
        }
    }
}
