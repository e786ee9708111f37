//! An opened array: the visible fragments and schemas of an array folder for a timestamp
//! range (docs/ARRAY.md §1-§3), shared by reads, writes and the operations above them.

use super::directory::{ArrayDirectory, ConditionCommit, TimestampedName, names};
use super::field::FieldRef;
use super::fragment::metadata::FragmentMetadata;
use super::metadata;
use super::schema::{ArraySchema, Enumeration, Range};
use crate::error::{Error, Result};
use crate::pipeline::generic_tile;
use rayon::prelude::*;
use std::collections::HashMap;
use std::sync::Arc;
use zeroize::Zeroizing;

/// How to open an array. `Debug` does not print the key (nor the configuration's secrets).
#[derive(Clone, Default)]
pub struct OpenOptions {
    /// The AES-256-GCM key (32 bytes) of an encrypted array.
    pub key: Option<Vec<u8>>,
    /// First timestamp of the open range (ms; default 0).
    pub timestamp_start: u64,
    /// Last timestamp of the open range (ms; default: now, as TileDB opens).
    pub timestamp_end: Option<u64>,
    /// Threads decoding tiles (0 = all cores).
    pub threads: usize,
    /// The most bytes one field's result may take (`None`: no limit). A read needing more
    /// fails with [`Error::OutOfMemory`] naming both sizes, before allocating.
    pub memory_limit: Option<u64>,
    /// Object-store options (endpoint, credentials, …); unset ones come from the environment.
    pub config: crate::storage::StorageConfig,
}

impl std::fmt::Debug for OpenOptions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenOptions")
            .field("key", &self.key.as_ref().map(|_| "<redacted>"))
            .field("timestamp_start", &self.timestamp_start)
            .field("timestamp_end", &self.timestamp_end)
            .field("threads", &self.threads)
            .field("memory_limit", &self.memory_limit)
            .field("config", &self.config)
            .finish()
    }
}

/// A visible fragment: its metadata and the schema it was written with.
#[derive(Debug)]
pub struct Fragment {
    /// Footer and tile metadata.
    pub meta: FragmentMetadata,
    /// The fragment's own schema.
    pub schema: Arc<ArraySchema>,
}

impl Fragment {
    /// The fragment's folder name.
    pub fn name(&self) -> &str {
        &self.meta.dir.name.name
    }

    /// The timestamp range in the fragment's name.
    pub fn timestamps(&self) -> (u64, u64) {
        (self.meta.dir.name.t1, self.meta.dir.name.t2)
    }
}

/// An opened array: the visible fragments for a timestamp range, with their metadata.
pub struct Array {
    dir: ArrayDirectory,
    key: Option<Zeroizing<Vec<u8>>>,
    timestamp_start: u64,
    timestamp_end: u64,
    schemas: Vec<Arc<ArraySchema>>,
    latest: Arc<ArraySchema>,
    fragments: Vec<Fragment>,
    conditions: Vec<ConditionCommit>,
    threads: usize,
    memory_limit: Option<u64>,
}

impl std::fmt::Debug for Array {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Array")
            .field("root", &self.dir.root())
            .field("timestamps", &(self.timestamp_start, self.timestamp_end))
            .field("fragments", &self.fragments.len())
            .finish()
    }
}

impl Array {
    /// Opens the array at `uri` (a local folder or `file://` URI) for reading.
    pub fn open(uri: &str, options: &OpenOptions) -> Result<Array> {
        Ok(Self::open_inner(uri, options, false)?.0)
    }

    /// Opens the array like [`Array::open`], but leaves out the visible fragments whose
    /// metadata cannot be loaded and returns them (name, error) beside the array: what
    /// `tdbf array verify` reports.
    pub fn open_tolerant(
        uri: &str,
        options: &OpenOptions,
    ) -> Result<(Array, Vec<(String, Error)>)> {
        Self::open_inner(uri, options, true)
    }

    fn open_inner(
        uri: &str,
        options: &OpenOptions,
        tolerant: bool,
    ) -> Result<(Array, Vec<(String, Error)>)> {
        let key = match &options.key {
            Some(k) => {
                crate::engine::encryption_key::EncryptionKey::new(k)?;
                Some(Zeroizing::new(k.clone()))
            }
            None => None,
        };
        let timestamp_start = options.timestamp_start;
        let timestamp_end = options.timestamp_end.unwrap_or_else(names::now_ms);
        if timestamp_start > timestamp_end {
            return Err(Error::invalid(format!(
                "timestamp range [{timestamp_start}, {timestamp_end}] is reversed"
            )));
        }
        let dir = ArrayDirectory::open(uri, &options.config)?;
        let k = key.as_ref().map(|k| k.as_slice());
        let schemas: Vec<Arc<ArraySchema>> = dir
            .schemas()
            .iter()
            .map(|s| dir.load_schema(s, k).map(Arc::new))
            .collect::<Result<_>>()?;
        let latest_name = &dir.latest_schema(timestamp_end).name;
        let latest = schemas
            .iter()
            .find(|s| &s.name == latest_name)
            .cloned()
            .expect("the latest schema is one of the listed schemas");
        let by_name: HashMap<&str, &Arc<ArraySchema>> =
            schemas.iter().map(|s| (s.name.as_str(), s)).collect();
        let dirs = dir.fragments(timestamp_start, timestamp_end, !latest.is_dense())?;
        let threads = options.threads;
        let loaded: Vec<Result<Fragment>> = pool(threads)?.install(|| {
            dirs.par_iter()
                .map(|d| {
                    let meta = FragmentMetadata::load(dir.storage(), d, |n| {
                        by_name.get(n).map(|s| s.as_ref())
                    })?;
                    let schema = Arc::clone(by_name[meta.schema_name.as_str()]);
                    Ok(Fragment { meta, schema })
                })
                .collect()
        });
        let mut fragments = Vec::new();
        let mut broken = Vec::new();
        for (d, f) in dirs.iter().zip(loaded) {
            match f {
                Ok(f) => fragments.push(f),
                Err(e) if tolerant => broken.push((d.name.name.clone(), e)),
                Err(e) => return Err(e),
            }
        }
        let conditions = dir.conditions_in(timestamp_start, timestamp_end)?;
        let array = Array {
            dir,
            key,
            timestamp_start,
            timestamp_end,
            schemas,
            latest,
            fragments,
            conditions,
            threads,
            memory_limit: options.memory_limit,
        };
        Ok((array, broken))
    }

    /// The array's folder.
    pub fn root(&self) -> &crate::storage::Uri {
        self.dir.root()
    }

    /// The storage holding the array.
    pub fn storage(&self) -> &crate::storage::Storage {
        self.dir.storage()
    }

    /// The schema the array is read with (the latest at the open end timestamp).
    pub fn schema(&self) -> &ArraySchema {
        &self.latest
    }

    /// Reads with the array's newest schema, whatever its timestamp: the schema a writer
    /// writes with (TileDB 2.30's writers take the newest one), so that a consolidation reads
    /// the fragments it merges with the schema the merged fragment is written with, as
    /// TileDB's consolidation does, even when an evolution is stamped after the open range.
    pub(crate) fn use_newest_schema(&mut self) {
        let newest = &self.dir.latest_schema(u64::MAX).name;
        if let Some(s) = self.schemas.iter().find(|s| &s.name == newest) {
            self.latest = Arc::clone(s);
        }
    }

    /// Every schema of the array, in listing order.
    pub fn schemas(&self) -> &[Arc<ArraySchema>] {
        &self.schemas
    }

    /// The visible fragments, oldest first (later ones win in merges).
    pub fn fragments(&self) -> &[Fragment] {
        &self.fragments
    }

    /// The open timestamp range.
    pub fn timestamps(&self) -> (u64, u64) {
        (self.timestamp_start, self.timestamp_end)
    }

    /// The encryption key given at open.
    pub fn key(&self) -> Option<&[u8]> {
        self.key.as_ref().map(|k| k.as_slice())
    }

    /// Threads decoding tiles (0 = all cores).
    pub fn threads(&self) -> usize {
        self.threads
    }

    /// Sets the threads decoding tiles (0 = all cores).
    pub fn set_threads(&mut self, threads: usize) {
        self.threads = threads;
    }

    /// Keeps only the visible fragments `keep` accepts (in their order): what a consolidation
    /// reads from.
    pub(crate) fn retain_fragments(&mut self, keep: impl Fn(&Fragment) -> bool) {
        self.fragments.retain(|f| keep(f));
    }

    /// Sets the most bytes one field's result may take (`None`: no limit).
    pub fn set_memory_limit(&mut self, limit: Option<u64>) {
        self.memory_limit = limit;
    }

    /// Refuses a result of `bytes` for `field` over the memory limit, before it is allocated.
    pub(crate) fn check_result_size(&self, field: &str, bytes: u64) -> Result<()> {
        match self.memory_limit {
            Some(limit) if bytes > limit => Err(Error::OutOfMemory(format!(
                "reading {field} needs {bytes} bytes, over the memory limit of {limit} bytes"
            ))),
            _ => Ok(()),
        }
    }

    /// The delete and update commits that apply to the open range.
    pub fn condition_commits(&self) -> &[ConditionCommit] {
        &self.conditions
    }

    /// The array's non-empty domain: per dimension the union of the visible fragments'
    /// non-empty domains; `None` when no fragment is visible.
    pub fn non_empty_domain(&self) -> Option<Vec<Range>> {
        let dims = &self.latest.dimensions;
        let mut out: Option<Vec<Range>> = None;
        for f in &self.fragments {
            let Some(ned) = &f.meta.non_empty_domain else {
                continue;
            };
            out = Some(match out {
                None => ned.clone(),
                Some(cur) => cur
                    .into_iter()
                    .zip(ned)
                    .zip(dims)
                    .map(|((a, b), d)| union(d.datatype, &a, b))
                    .collect(),
            });
        }
        out
    }

    /// Loads enumeration `name` (`__schema/__enumerations/<file>`).
    pub fn enumeration(&self, name: &str) -> Result<Enumeration> {
        let file = self
            .latest
            .enumerations
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, f)| f)
            .ok_or_else(|| Error::invalid(format!("the schema has no enumeration '{name}'")))?;
        let path = self
            .dir
            .root()
            .join(names::SCHEMA_DIR)
            .join(names::ENUMERATIONS_DIR)
            .join(file);
        let bytes = self.dir.read_file(&path)?;
        let (_, tile, _) = generic_tile::read(&bytes, self.key())
            .map_err(|e| e.context(format!("enumeration {name}")))?;
        Enumeration::parse(tile.data())
    }

    /// The fragments whose footers a consolidated fragment metadata file holds
    /// (`__fragment_meta/*.meta` whose timestamps lie inside the open range), sorted: TileDB's
    /// fragment info reports them as having consolidated metadata.
    pub fn consolidated_footers(&self) -> Result<std::collections::BTreeSet<String>> {
        let dir = self.root().join(names::FRAGMENT_META_DIR);
        let storage = self.storage();
        let mut out = std::collections::BTreeSet::new();
        if !storage.is_dir(&dir)? {
            return Ok(out);
        }
        for e in storage.list(&dir)? {
            if e.is_dir || !e.name.ends_with(".meta") {
                continue;
            }
            let n = TimestampedName::parse(&e.name)
                .map_err(|err| err.context(format!("{}/{}", names::FRAGMENT_META_DIR, e.name)))?;
            if n.t1 < self.timestamp_start || n.t2 > self.timestamp_end {
                continue;
            }
            let bytes = storage.read(&dir.join(&e.name))?;
            let (_, tile, _) = generic_tile::read(&bytes, self.key())
                .map_err(|err| err.context(format!("consolidated fragment metadata {}", e.name)))?;
            let names = crate::array::fragment::consolidated_footer_names(tile.data())
                .map_err(|err| err.context(e.name.clone()))?;
            out.extend(names);
        }
        Ok(out)
    }

    /// The array metadata (`__meta`) visible at the open range, sorted by key.
    pub fn metadata(&self) -> Result<Vec<metadata::MetadataEntry>> {
        let files = self
            .dir
            .metadata_files(self.timestamp_start, self.timestamp_end)?;
        metadata::load(self.storage(), &files, self.key())
    }

    /// Writes `changes` to the array metadata as one new `__meta` file at `timestamp`
    /// (milliseconds; `None`: now), encrypted with this array's key, as TileDB writes the
    /// metadata of an array opened for writing. This handle's view is not refreshed: open the
    /// array again to read the changes. Returns the new file's name (`None` for no changes).
    pub fn put_metadata(
        &self,
        changes: &[metadata::MetadataChange],
        timestamp: Option<u64>,
    ) -> Result<Option<String>> {
        metadata::write(self.storage(), self.root(), self.key(), timestamp, changes)
    }

    /// Resolves a field name of the latest schema.
    pub(crate) fn field(&self, name: &str) -> Result<FieldRef> {
        if let Some(i) = self.latest.attribute_index(name) {
            return Ok(FieldRef::Attribute(i));
        }
        if let Some(j) = self.latest.dimension_index(name) {
            return Ok(FieldRef::Dimension(j));
        }
        if let Some(l) = self.latest.labels.iter().find(|l| l.name == name) {
            return Err(Error::Unsupported(format!(
                "'{name}' is a dimension label (label arrays are not read; its array is {})",
                l.uri
            )));
        }
        Err(Error::invalid(format!(
            "'{name}' is not an attribute or dimension of the array"
        )))
    }
}

/// The union of two ranges of a dimension of `datatype`.
fn union(datatype: crate::Datatype, a: &Range, b: &Range) -> Range {
    let pick = |x: &[u8], y: &[u8], want_lt: bool| -> Vec<u8> {
        let lt = match (a, b) {
            (Range::Var(..), _) | (_, Range::Var(..)) => x < y,
            _ => crate::array::order::compare(datatype, x, y).is_lt(),
        };
        if lt == want_lt {
            x.to_vec()
        } else {
            y.to_vec()
        }
    };
    let lo = pick(a.lo(), b.lo(), true);
    let hi = pick(a.hi(), b.hi(), false);
    match a {
        Range::Fixed(..) => Range::Fixed(lo, hi),
        Range::Var(..) => Range::Var(lo, hi),
    }
}

/// The thread pool for `threads` (0 = all cores).
pub(crate) fn pool(threads: usize) -> Result<Arc<rayon::ThreadPool>> {
    crate::engine::threads::pool(crate::engine::threads::effective_threads(threads))
}

#[cfg(test)]
mod tests {
    use super::OpenOptions;

    #[test]
    fn open_options_debug_redacts_the_key_and_secrets() {
        let mut o = OpenOptions {
            key: Some(b"0123456789abcdef0123456789ABCDEF".to_vec()),
            threads: 3,
            ..OpenOptions::default()
        };
        o.config
            .set("vfs.s3.aws_secret_access_key", "very-secret")
            .unwrap();
        let shown = format!("{o:?} {o:#?}");
        assert!(!shown.contains("0123456789"), "{shown}");
        assert!(!shown.contains("48, 49, 50"), "{shown}");
        assert!(!shown.contains("very-secret"), "{shown}");
        assert!(
            shown.contains("<redacted>") && shown.contains("threads: 3"),
            "{shown}"
        );
        let none = format!("{:?}", OpenOptions::default());
        assert!(none.contains("key: None"), "{none}");
    }
}
