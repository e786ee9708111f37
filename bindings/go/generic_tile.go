package tdbfilter

/*
#include <tdbfilter.h>

// Parses the header of the generic tile at the start of bytes and unfilters the tile in one
// call; *tile receives it and *data, *size borrow its bytes.
static tdb_status_t tdbgo_generic_read(const uint8_t *bytes, size_t n, const uint8_t *key,
                                       size_t key_len, tdb_generic_tile_header_t *header,
                                       tdb_tile_t **tile, const uint8_t **data, size_t *size,
                                       uint64_t *consumed, tdb_error_t **err) {
  tdb_status_t s = tdb_generic_tile_header(bytes, n, header, err);
  if (s != TDB_OK) return s;
  s = tdb_generic_tile_read(bytes, n, key, key_len, tile, consumed, err);
  if (s != TDB_OK) return s;
  return tdb_tile_data(*tile, data, size, err);
}
*/
import "C"

import "fmt"

// EncryptionType is how a generic tile is encrypted (tiledb_encryption_type_t values).
type EncryptionType uint32

// The encryption types.
const (
	NoEncryption EncryptionType = C.TDB_NO_ENCRYPTION // Not encrypted.
	AES256GCM    EncryptionType = C.TDB_AES_256_GCM   // AES-256-GCM with a 32-byte key.
)

// String returns "none" or "aes_256_gcm".
func (e EncryptionType) String() string {
	switch e {
	case NoEncryption:
		return "none"
	case AES256GCM:
		return "aes_256_gcm"
	}
	return fmt.Sprintf("EncryptionType(%d)", uint32(e))
}

// GenericTileHeaderBaseSize is the size of the fixed part of a generic-tile header, before
// the serialized pipeline.
const GenericTileHeaderBaseSize = C.TDB_GENERIC_TILE_HEADER_BASE_SIZE

// GenericTileHeader is the header of a TileDB generic tile (schemas, fragment and array
// metadata): every stored field plus the derived sizes.
type GenericTileHeader struct {
	Version            uint32         // Format version of the header and its pipeline (22 for TileDB 2.30).
	PersistedSize      uint64         // Bytes of the filtered tile that follows the pipeline.
	TileSize           uint64         // Bytes of the unfiltered tile.
	Datatype           Datatype       // Datatype of the cells (TileDB writes Char).
	CellSize           uint64         // Bytes per cell (TileDB writes 1).
	EncryptionType     EncryptionType // NoEncryption or AES256GCM.
	FilterPipelineSize uint32         // Bytes of the serialized pipeline.
	HeaderSize         uint64         // Bytes before the filtered tile: GenericTileHeaderBaseSize + FilterPipelineSize.
	TotalSize          uint64         // Bytes of the whole generic tile: HeaderSize + PersistedSize.
}

// GenericTile is an unfiltered generic tile: its header and its payload.
type GenericTile struct {
	Header GenericTileHeader
	Data   []byte
}

func headerFromC(h *C.tdb_generic_tile_header_t) GenericTileHeader {
	return GenericTileHeader{
		Version:            uint32(h.version),
		PersistedSize:      uint64(h.persisted_size),
		TileSize:           uint64(h.tile_size),
		Datatype:           Datatype(h.datatype),
		CellSize:           uint64(h.cell_size),
		EncryptionType:     EncryptionType(h.encryption_type),
		FilterPipelineSize: uint32(h.filter_pipeline_size),
		HeaderSize:         uint64(h.header_size),
		TotalSize:          uint64(h.total_size),
	}
}

// ReadGenericTile reads the generic tile at the start of b (bytes after it are ignored) and
// returns it with the number of bytes it occupies, so that consecutive generic tiles (the
// sections of a __fragment_metadata.tdb) can be walked. key is nil for an unencrypted tile,
// or the 32-byte AES-256-GCM key of an encrypted one.
//
// Truncated or inconsistent bytes are ErrCorruptData; an encrypted tile without a key, a
// wrong key or tampered ciphertext are ErrDecryptionFailed; a key for an unencrypted tile or
// a key that is not 32 bytes is ErrInvalidArgument.
func ReadGenericTile(b, key []byte) (tile GenericTile, consumed int, err error) {
	var header C.tdb_generic_tile_header_t
	var t *C.tdb_tile_t
	var data *C.uint8_t
	var size C.size_t
	var used C.uint64_t
	var cerr *C.tdb_error_t
	st := C.tdbgo_generic_read(bytePtr(b), C.size_t(len(b)), bytePtr(key), C.size_t(len(key)),
		&header, &t, &data, &size, &used, &cerr)
	if st == C.TDB_OK {
		tile = GenericTile{Header: headerFromC(&header), Data: goBytes(data, size)}
		consumed = int(used)
	}
	C.tdb_tile_free(t)
	return tile, consumed, takeError(st, cerr)
}

// ParseGenericTileHeader parses and validates the header of the generic tile at the start of
// b without unfiltering it (no key needed). Malformed bytes are ErrCorruptData.
func ParseGenericTileHeader(b []byte) (GenericTileHeader, error) {
	var header C.tdb_generic_tile_header_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_generic_tile_header(bytePtr(b), C.size_t(len(b)), &header, &cerr), cerr); err != nil {
		return GenericTileHeader{}, err
	}
	return headerFromC(&header), nil
}

// GenericTilePipeline returns the pipeline stored in the header of the generic tile at the
// start of b. An encrypted tile's pipeline ends with FilterAES256GCM; set the key on it to
// write generic tiles with the same header.
func GenericTilePipeline(b []byte) (*Pipeline, error) {
	var c *C.tdb_pipeline_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_generic_tile_pipeline(bytePtr(b), C.size_t(len(b)), &c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newPipeline(c), nil
}

// DefaultGenericTilePipeline returns TileDB's generic-tile pipeline: GZIP level 1, 64 KiB
// chunks. Set an encryption key on it for TileDB's encrypted generic tiles.
func DefaultGenericTilePipeline() (*Pipeline, error) {
	var c *C.tdb_pipeline_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_generic_tile_default_pipeline(&c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newPipeline(c), nil
}
