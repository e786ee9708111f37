//! Generic tiles (docs/FORMAT.md §6): a self-describing filtered tile, as TileDB stores array
//! schemas, fragment metadata sections, array and group metadata.
//!
//! Layout (header format version 22 in TileDB 2.30), little-endian:
//!
//! ```text
//! u32 version            u64 persisted_size     u64 tile_size
//! u8  datatype           u64 cell_size          u8  encryption_type
//! u32 filter_pipeline_size
//! u8  filter_pipeline[filter_pipeline_size]     // §3, with `version`'s option layouts
//! u8  filtered_tile[persisted_size]             // §4.1
//! ```
//!
//! TileDB writes datatype CHAR, cell size 1 and the pipeline [GZIP level 1]; an encrypted
//! generic tile stores [GZIP level 1, AES_256_GCM] and encryption type 1.
//!
//! ```
//! use tdbfilter::pipeline::generic_tile;
//! let bytes = generic_tile::write_payload(b"schema bytes", None).unwrap();
//! let (header, tile, used) = generic_tile::read(&bytes, None).unwrap();
//! assert_eq!((header.version, used), (22, bytes.len()));
//! assert_eq!(tile.data(), b"schema bytes");
//! ```

use crate::engine::tile::Tile;
use crate::error::{Error, Result};
use crate::filters::config::Filter;
use crate::format::byte_reader::ByteReader;
use crate::format::datatype::Datatype;
use crate::format::filter_type::FilterType;
use crate::format::tile_format;
use crate::pipeline::{FORMAT_VERSION, Pipeline};

/// Bytes of the fixed part of the header (TileDB's `GenericTileHeader::BASE_SIZE`).
pub const HEADER_BASE_SIZE: usize = 34;

/// The datatype TileDB writes into generic-tile headers.
pub const DATATYPE: Datatype = Datatype::Char;

/// The cell size TileDB writes into generic-tile headers.
pub const CELL_SIZE: u64 = 1;

/// The GZIP level of TileDB's generic-tile pipeline.
pub const COMPRESSION_LEVEL: i32 = 1;

/// TileDB's encryption types (docs/FORMAT.md §1.4), stored as one byte in the header.
#[repr(u8)]
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum EncryptionType {
    /// Not encrypted.
    NoEncryption = 0,
    /// AES-256-GCM; the header pipeline ends with the AES filter.
    Aes256Gcm = 1,
}

impl EncryptionType {
    /// The type stored as `value`, if it is one.
    pub fn from_u8(value: u8) -> Option<EncryptionType> {
        match value {
            0 => Some(EncryptionType::NoEncryption),
            1 => Some(EncryptionType::Aes256Gcm),
            _ => None,
        }
    }

    /// TileDB's name: `NO_ENCRYPTION` or `AES_256_GCM`.
    pub fn name(self) -> &'static str {
        match self {
            EncryptionType::NoEncryption => "NO_ENCRYPTION",
            EncryptionType::Aes256Gcm => "AES_256_GCM",
        }
    }

    fn of_key(key: Option<&[u8]>) -> EncryptionType {
        match key {
            Some(_) => EncryptionType::Aes256Gcm,
            None => EncryptionType::NoEncryption,
        }
    }
}

impl std::fmt::Display for EncryptionType {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// A parsed and validated generic-tile header: every stored field, with the pipeline
/// deserialized (an encrypted tile's pipeline ends with the AES filter).
#[derive(Clone, Debug, PartialEq)]
pub struct GenericTileHeader {
    /// Format version the header (and its pipeline) was written with.
    pub version: u32,
    /// Bytes of the filtered tile that follows the pipeline.
    pub persisted_size: u64,
    /// Bytes of the unfiltered tile.
    pub tile_size: u64,
    /// Datatype of the tile's cells (the base type of the pipeline).
    pub datatype: Datatype,
    /// Bytes per cell (drives chunking).
    pub cell_size: u64,
    /// Whether the tile is encrypted.
    pub encryption_type: EncryptionType,
    /// Bytes of the serialized pipeline.
    pub filter_pipeline_size: u32,
    /// The header's filter pipeline.
    pub pipeline: Pipeline,
}

impl GenericTileHeader {
    /// Bytes before the filtered tile: the fixed part and the serialized pipeline.
    pub fn header_size(&self) -> usize {
        HEADER_BASE_SIZE + self.filter_pipeline_size as usize
    }

    /// Bytes of the whole generic tile (header, pipeline and filtered tile).
    pub fn total_size(&self) -> u64 {
        self.header_size() as u64 + self.persisted_size
    }
}

/// TileDB's generic-tile pipeline: [GZIP level 1], `max_chunk_size` 65536, writing zlib's
/// exact bytes.
pub fn default_pipeline() -> Pipeline {
    let mut p = Pipeline::new();
    p.push(Filter::compression(FilterType::Gzip, COMPRESSION_LEVEL))
        .expect("GZIP is always available");
    p
}

/// TileDB's encrypted generic-tile pipeline: [GZIP level 1] with an AES-256-GCM key
/// (32 bytes); [`write`] stores it as [GZIP level 1, AES_256_GCM].
pub fn encrypted_pipeline(key: &[u8]) -> Result<Pipeline> {
    let mut p = default_pipeline();
    p.set_encryption_key(key)?;
    Ok(p)
}

/// Parses and validates the generic tile at the start of `bytes` without unfiltering it: the
/// header fields, the pipeline (and its AES filter against the encryption type), the
/// filtered tile's chunk table, its size against `persisted_size` and its chunks' original
/// lengths against `tile_size`. Bytes after the tile are not examined; the tile spans
/// [`GenericTileHeader::total_size`] bytes. Malformed input is `CorruptData`; a format
/// version or filter this build does not read is `Unsupported`.
pub fn read_header(bytes: &[u8]) -> Result<GenericTileHeader> {
    read_header_inner(bytes).map_err(|e| e.context("generic tile"))
}

fn read_header_inner(bytes: &[u8]) -> Result<GenericTileHeader> {
    let mut r = ByteReader::new(bytes, "header");
    let version = r.u32()?;
    let persisted_size = r.u64()?;
    let tile_size = r.u64()?;
    let datatype_byte = r.u8()?;
    let cell_size = r.u64()?;
    let encryption_byte = r.u8()?;
    let filter_pipeline_size = r.u32()?;
    if version == 0 {
        return Err(Error::corrupt("header version is 0"));
    }
    let datatype = Datatype::from_u8(datatype_byte)
        .ok_or_else(|| Error::corrupt(format!("unknown datatype {datatype_byte}")))?;
    crate::engine::tile::check_cell_size(datatype, cell_size)
        .map_err(|e| Error::corrupt(e.message().to_string()))?;
    let encryption_type = EncryptionType::from_u8(encryption_byte)
        .ok_or_else(|| Error::corrupt(format!("unknown encryption type {encryption_byte}")))?;
    let pipeline_bytes = r.take(filter_pipeline_size as usize)?;
    let pipeline =
        Pipeline::deserialize(pipeline_bytes, version).map_err(|e| e.context("header pipeline"))?;
    check_aes_filter(&pipeline, encryption_type)?;
    let persisted = usize::try_from(persisted_size)
        .ok()
        .filter(|n| *n <= r.remaining())
        .ok_or_else(|| {
            Error::corrupt(format!(
                "truncated: persisted_size is {persisted_size} but only {} bytes follow the header",
                r.remaining()
            ))
        })?;
    let filtered = r.take(persisted)?;
    let table = tile_format::parse(filtered)?;
    if table.tile_size != persisted {
        return Err(Error::corrupt(format!(
            "persisted_size is {persisted_size} but the filtered tile is {} bytes",
            table.tile_size
        )));
    }
    if table.unfiltered_size != tile_size {
        return Err(Error::corrupt(format!(
            "tile_size is {tile_size} but the chunks' original lengths sum to {}",
            table.unfiltered_size
        )));
    }
    Ok(GenericTileHeader {
        version,
        persisted_size,
        tile_size,
        datatype,
        cell_size,
        encryption_type,
        filter_pipeline_size,
        pipeline,
    })
}

/// Checks the header pipeline's AES filter against the encryption type: an encrypted tile's
/// pipeline holds exactly one, as its last filter (TileDB never writes it elsewhere); an
/// unencrypted tile's holds none.
fn check_aes_filter(pipeline: &Pipeline, encryption: EncryptionType) -> Result<()> {
    let filters = pipeline.filters();
    let aes: Vec<usize> = (0..filters.len())
        .filter(|&i| filters[i] == Filter::Aes256Gcm)
        .collect();
    match (encryption, aes.as_slice()) {
        (EncryptionType::NoEncryption, []) => Ok(()),
        (EncryptionType::NoEncryption, _) => Err(Error::corrupt(
            "encryption type is NO_ENCRYPTION but the header pipeline has an AES_256_GCM filter",
        )),
        (EncryptionType::Aes256Gcm, []) => Err(Error::corrupt(
            "encryption type is AES_256_GCM but the header pipeline has no encryption filter",
        )),
        (EncryptionType::Aes256Gcm, [i]) if *i + 1 == filters.len() => Ok(()),
        (EncryptionType::Aes256Gcm, [i]) => Err(Error::Unsupported(format!(
            "the header pipeline's AES_256_GCM filter is filter {i} of {}; only a final one \
             is supported",
            filters.len()
        ))),
        (EncryptionType::Aes256Gcm, _) => Err(Error::corrupt(
            "the header pipeline has more than one AES_256_GCM filter",
        )),
    }
}

/// Reads the generic tile at the start of `bytes`: validates it as [`read_header`] does,
/// then unfilters it. `key` is the 32-byte AES-256-GCM key of an encrypted tile and must be
/// `None` for an unencrypted one. Returns the header, the unfiltered tile (of the header's
/// datatype and cell size) and the bytes the generic tile occupies.
///
/// Errors: an encrypted tile without a key, a wrong key or tampered ciphertext are
/// `DecryptionFailed`; a key for an unencrypted tile or a key that is not 32 bytes is
/// `InvalidArgument`; malformed bytes are `CorruptData`.
pub fn read(bytes: &[u8], key: Option<&[u8]>) -> Result<(GenericTileHeader, Tile, usize)> {
    let mut header = read_header(bytes)?;
    let tile = unfilter(&mut header, bytes, key).map_err(|e| e.context("generic tile"))?;
    let used = header.header_size() + header.persisted_size as usize;
    Ok((header, tile, used))
}

/// Unfilters the tile of a validated `header` found at the start of `bytes`.
fn unfilter(header: &mut GenericTileHeader, bytes: &[u8], key: Option<&[u8]>) -> Result<Tile> {
    let given = EncryptionType::of_key(key);
    if given != header.encryption_type {
        let message = format!(
            "tile is encrypted with {} but given key is for {given}",
            header.encryption_type
        );
        return Err(match key {
            None => Error::DecryptionFailed(message),
            Some(_) => Error::InvalidArgument(message),
        });
    }
    if let Some(key) = key {
        header.pipeline.set_encryption_key(key)?;
    }
    let start = header.header_size();
    let filtered = &bytes[start..start + header.persisted_size as usize];
    let tile = header
        .pipeline
        .unfilter_tile(filtered, header.datatype, header.cell_size);
    header.pipeline.clear_encryption_key();
    let tile = tile?;
    if tile.data().len() as u64 != header.tile_size {
        return Err(Error::corrupt(format!(
            "unfiltered {} bytes, header tile_size is {}",
            tile.data().len(),
            header.tile_size
        )));
    }
    Ok(tile)
}

/// Writes `tile` (fixed-size) as a generic tile through `pipeline`: header version 22, the
/// tile's datatype and cell size (which drives chunking: TileDB uses CHAR and 1), and the
/// pipeline serialized in the header. When the pipeline has an encryption key, the header
/// stores the pipeline with the AES filter at the end and encryption type AES_256_GCM.
pub fn write(pipeline: &Pipeline, tile: &Tile) -> Result<Vec<u8>> {
    if tile.offsets().is_some() {
        return Err(Error::invalid(
            "a generic tile holds a fixed-size tile, not a var-size one",
        ));
    }
    if pipeline.format_version() != FORMAT_VERSION {
        return Err(Error::invalid(format!(
            "generic tiles are written with format version {FORMAT_VERSION}, but the pipeline \
             has format version {}",
            pipeline.format_version()
        )));
    }
    let filters = pipeline.filters();
    let stored_aes = filters.last() == Some(&Filter::Aes256Gcm);
    let aes_count = filters.iter().filter(|f| **f == Filter::Aes256Gcm).count();
    if aes_count > usize::from(stored_aes) {
        return Err(Error::invalid(
            "the pipeline's AES_256_GCM filter must be its last filter",
        ));
    }
    if stored_aes && !pipeline.has_encryption_key() {
        return Err(Error::invalid(
            "the pipeline ends with AES_256_GCM but no encryption key is set",
        ));
    }
    let encryption = if pipeline.has_encryption_key() {
        EncryptionType::Aes256Gcm
    } else {
        EncryptionType::NoEncryption
    };
    let filtered = pipeline.filter_tile(tile)?;
    let mut serialized = pipeline.serialize();
    if encryption == EncryptionType::Aes256Gcm && !stored_aes {
        append_aes_entry(&mut serialized)?;
    }
    let pipeline_size = u32::try_from(serialized.len())
        .map_err(|_| Error::invalid("the serialized pipeline exceeds 4 GiB"))?;
    let mut out = Vec::new();
    out.try_reserve_exact(HEADER_BASE_SIZE + serialized.len() + filtered.len())
        .map_err(|_| Error::OutOfMemory("cannot allocate the generic tile".into()))?;
    out.extend_from_slice(&FORMAT_VERSION.to_le_bytes());
    out.extend_from_slice(&(filtered.len() as u64).to_le_bytes());
    out.extend_from_slice(&(tile.data().len() as u64).to_le_bytes());
    out.push(tile.datatype() as u8);
    out.extend_from_slice(&tile.cell_size().to_le_bytes());
    out.push(encryption as u8);
    out.extend_from_slice(&pipeline_size.to_le_bytes());
    out.extend_from_slice(&serialized);
    out.extend_from_slice(&filtered);
    Ok(out)
}

/// Appends the serialized AES filter (type 11, no options) to a serialized pipeline.
fn append_aes_entry(serialized: &mut Vec<u8>) -> Result<()> {
    let count = u32::from_le_bytes(serialized[4..8].try_into().expect("4 bytes"));
    let count = count
        .checked_add(1)
        .ok_or_else(|| Error::invalid("too many filters"))?;
    serialized[4..8].copy_from_slice(&count.to_le_bytes());
    serialized.push(FilterType::Aes256Gcm as u8);
    serialized.extend_from_slice(&0u32.to_le_bytes());
    Ok(())
}

/// Writes `payload` as TileDB does: datatype CHAR, cell size 1, [GZIP level 1], plus
/// AES-256-GCM when `key` (32 bytes) is given.
pub fn write_payload(payload: &[u8], key: Option<&[u8]>) -> Result<Vec<u8>> {
    let pipeline = match key {
        Some(k) => encrypted_pipeline(k)?,
        None => default_pipeline(),
    };
    write(
        &pipeline,
        &Tile::new(DATATYPE, CELL_SIZE, payload.to_vec())?,
    )
}

/// A generic tile found by [`scan`].
#[derive(Clone, Debug, PartialEq)]
pub struct ScannedTile {
    /// Byte offset of the generic tile in the scanned bytes.
    pub offset: usize,
    /// Its validated header.
    pub header: GenericTileHeader,
}

/// The generic tiles at the start of some bytes, and where they stop.
#[derive(Clone, Debug, PartialEq)]
pub struct Scan {
    /// The consecutive generic tiles, in order.
    pub tiles: Vec<ScannedTile>,
    /// Offset of the first byte after the last generic tile.
    pub end: usize,
    /// Why the bytes at `end` are not a generic tile; `None` when `end` is the end of input.
    pub stop_reason: Option<Error>,
}

/// Walks the consecutive generic tiles at the start of `bytes` (for example the sections of
/// a `__fragment_metadata.tdb`, which a footer that is not a generic tile follows) without
/// unfiltering them. Stops at the first position that does not parse as a generic tile
/// ([`read_header`]) and reports it; this never fails.
pub fn scan(bytes: &[u8]) -> Scan {
    let mut tiles = Vec::new();
    let mut offset = 0;
    while offset < bytes.len() {
        match read_header(&bytes[offset..]) {
            Ok(header) => {
                let next = offset + header.total_size() as usize;
                tiles.push(ScannedTile { offset, header });
                offset = next;
            }
            Err(e) => {
                return Scan {
                    tiles,
                    end: offset,
                    stop_reason: Some(e),
                };
            }
        }
    }
    Scan {
        tiles,
        end: offset,
        stop_reason: None,
    }
}

/// A generic tile read by [`read_all`].
#[derive(Clone, Debug, PartialEq)]
pub struct ReadTile {
    /// Byte offset of the generic tile in the input.
    pub offset: usize,
    /// Its header.
    pub header: GenericTileHeader,
    /// Its unfiltered tile.
    pub tile: Tile,
}

/// The generic tiles read by [`read_all`], and where they stop.
#[derive(Clone, Debug, PartialEq)]
pub struct ReadAll {
    /// The unfiltered generic tiles, in order.
    pub tiles: Vec<ReadTile>,
    /// Offset of the first byte after the last generic tile (for a fragment metadata file:
    /// where its footer starts).
    pub end: usize,
    /// Why the bytes at `end` are not a generic tile; `None` when `end` is the end of input.
    pub stop_reason: Option<Error>,
}

/// Reads the consecutive generic tiles at the start of `bytes` with `key` (see [`read`]),
/// stopping cleanly at the first position that does not parse as a generic tile (see
/// [`scan`]). A tile that parses but fails to unfilter (wrong or missing key, corrupt
/// compressed data) is an error naming its index and offset.
pub fn read_all(bytes: &[u8], key: Option<&[u8]>) -> Result<ReadAll> {
    let scanned = scan(bytes);
    let mut tiles = Vec::with_capacity(scanned.tiles.len());
    for (i, s) in scanned.tiles.into_iter().enumerate() {
        let (header, tile, _) = read(&bytes[s.offset..], key)
            .map_err(|e| e.context(format!("tile {i} at byte {}", s.offset)))?;
        tiles.push(ReadTile {
            offset: s.offset,
            header,
            tile,
        });
    }
    Ok(ReadAll {
        tiles,
        end: scanned.end,
        stop_reason: scanned.stop_reason,
    })
}

#[cfg(test)]
mod tests;
