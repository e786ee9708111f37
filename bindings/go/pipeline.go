package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>

// Each helper below does all the C work of one Go call on one tile in a single cgo call:
// the C API takes tiles as tdb_tile_t handles, so the helpers wrap the caller's cells in a
// tile, run the pipeline and free the temporary tile. None keeps a pointer it was given.

// Filters (mode 0) or writes as a generic tile (mode 1) the cells; *out receives the
// result tile and *data, *size its bytes (borrowed from *out).
static tdb_status_t tdbgo_filter(const tdb_pipeline_t *p, int mode, tdb_datatype_t dt,
                                 uint64_t cell_size, const void *cells, size_t n,
                                 tdb_tile_t **out, const uint8_t **data, size_t *size,
                                 tdb_error_t **err) {
  tdb_tile_t *tile = NULL;
  tdb_status_t s = tdb_tile_create(dt, cell_size, cells, n, &tile, err);
  if (s != TDB_OK) return s;
  s = mode == 0 ? tdb_pipeline_filter(p, tile, out, err)
                : tdb_generic_tile_write(p, tile, out, err);
  tdb_tile_free(tile);
  if (s != TDB_OK) return s;
  return tdb_tile_data(*out, data, size, err);
}

// Filters the cells into the caller's buffer.
static tdb_status_t tdbgo_filter_into(const tdb_pipeline_t *p, tdb_datatype_t dt,
                                      uint64_t cell_size, const void *cells, size_t n,
                                      uint8_t *dst, size_t capacity, size_t *written,
                                      tdb_error_t **err) {
  tdb_tile_t *tile = NULL;
  tdb_status_t s = tdb_tile_create(dt, cell_size, cells, n, &tile, err);
  if (s != TDB_OK) return s;
  s = tdb_pipeline_filter_into(p, tile, dst, capacity, written, err);
  tdb_tile_free(tile);
  return s;
}

// The unfiltered size of a filtered tile (read from its chunk table, no decoding).
static tdb_status_t tdbgo_unfiltered_size(const tdb_pipeline_t *p, const uint8_t *filtered,
                                          size_t n, tdb_datatype_t dt, uint64_t cell_size,
                                          size_t *needed, tdb_error_t **err) {
  tdb_status_t s = tdb_pipeline_unfilter_into(p, filtered, n, dt, cell_size, NULL, 0, needed, err);
  if (s == TDB_ERR_BUFFER_TOO_SMALL) {
    tdb_error_free(*err);
    *err = NULL;
    return TDB_OK;
  }
  if (s == TDB_OK) *needed = 0;
  return s;
}

// Filters a var-size tile; *fo and *fd receive the filtered offsets and data tiles.
static tdb_status_t tdbgo_filter_var(const tdb_pipeline_t *dp, const tdb_pipeline_t *op,
                                     tdb_datatype_t dt, const uint64_t *offsets, size_t count,
                                     const void *data, size_t n, tdb_tile_t **fo,
                                     const uint8_t **fo_data, size_t *fo_size, tdb_tile_t **fd,
                                     const uint8_t **fd_data, size_t *fd_size,
                                     tdb_error_t **err) {
  tdb_tile_t *tile = NULL;
  tdb_status_t s = tdb_tile_create_var(dt, offsets, count, data, n, &tile, err);
  if (s != TDB_OK) return s;
  s = tdb_pipeline_filter_var(dp, op, tile, fo, fd, err);
  tdb_tile_free(tile);
  if (s != TDB_OK) return s;
  s = tdb_tile_data(*fo, fo_data, fo_size, err);
  if (s != TDB_OK) return s;
  return tdb_tile_data(*fd, fd_data, fd_size, err);
}

// Unfilters a var-size tile; *tile receives it, *offsets and *data borrow from it.
static tdb_status_t tdbgo_unfilter_var(const tdb_pipeline_t *dp, const tdb_pipeline_t *op,
                                       const uint8_t *fo, size_t fo_size, const uint8_t *fd,
                                       size_t fd_size, tdb_datatype_t dt, tdb_tile_t **tile,
                                       const uint64_t **offsets, size_t *count,
                                       const uint8_t **data, size_t *size, tdb_error_t **err) {
  tdb_status_t s = tdb_pipeline_unfilter_var(dp, op, fo, fo_size, fd, fd_size, dt, tile, err);
  if (s != TDB_OK) return s;
  s = tdb_tile_offsets(*tile, offsets, count, err);
  if (s != TDB_OK) return s;
  return tdb_tile_data(*tile, data, size, err);
}
*/
import "C"

import (
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unsafe"
)

// Pipeline is a TileDB filter pipeline: an ordered list of filters with their options, and
// the settings that apply to every tile (threads, chunk size, encryption key).
//
// A Pipeline is safe for concurrent use: any number of goroutines may filter and unfilter
// through it at once (one cgo call per tile). Methods that change it wait until running
// calls finish. Close frees the C pipeline; a cleanup frees it if a Pipeline becomes
// unreachable without Close, but Close it explicitly: the cleanup runs only when the garbage
// collector gets to it. Create pipelines with NewPipeline, ParsePipeline, Deserialize,
// GenericTilePipeline or DefaultGenericTilePipeline; the zero Pipeline is closed.
type Pipeline struct {
	mu      sync.RWMutex
	c       *C.tdb_pipeline_t // nil after Close
	id      uint64            // orders the locks of two pipelines (FilterVar, UnfilterVar)
	cleanup runtime.Cleanup
}

var pipelineIDs atomic.Uint64

func newPipeline(c *C.tdb_pipeline_t) *Pipeline {
	p := &Pipeline{c: c, id: pipelineIDs.Add(1)}
	p.cleanup = runtime.AddCleanup(p, func(c *C.tdb_pipeline_t) { C.tdb_pipeline_free(c) }, c)
	return p
}

// NewPipeline returns an empty pipeline (no filters, 64 KiB chunks, all cores).
func NewPipeline() (*Pipeline, error) {
	var c *C.tdb_pipeline_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_pipeline_create(&c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newPipeline(c), nil
}

// ParsePipeline builds a pipeline from a spec, the grammar of `tdbf --filters`: filter names
// separated by commas, each optionally followed by ":LEVEL" (or ":WINDOW") and
// ":option=value" pairs, e.g. "bitshuffle,zstd:3", "gzip:level=9",
// "scale_float:factor=0.5:offset=0:byte_width=4". "none" or "" is the empty pipeline.
// A malformed spec is an ErrInvalidArgument naming the filter or option.
func ParsePipeline(spec string) (*Pipeline, error) {
	if strings.IndexByte(spec, 0) >= 0 {
		return nil, invalidArgument("spec %q contains a NUL byte", spec)
	}
	cs := C.CString(spec)
	defer C.free(unsafe.Pointer(cs))
	var c *C.tdb_pipeline_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_pipeline_from_spec(cs, &c, &cerr), cerr); err != nil {
		return nil, err
	}
	return newPipeline(c), nil
}

// Deserialize parses a pipeline serialized as in a TileDB schema (exactly len(b) bytes) with
// the option layouts of formatVersion (FormatVersion for TileDB 2.30 schemas).
func Deserialize(b []byte, formatVersion uint32) (*Pipeline, error) {
	var c *C.tdb_pipeline_t
	var cerr *C.tdb_error_t
	st := C.tdb_pipeline_deserialize(bytePtr(b), C.size_t(len(b)), C.uint32_t(formatVersion), &c, &cerr)
	if err := takeError(st, cerr); err != nil {
		return nil, err
	}
	return newPipeline(c), nil
}

// Close frees the pipeline. It waits for running calls; later calls return ErrClosed.
// Closing twice is a no-op.
func (p *Pipeline) Close() error {
	if p == nil {
		return nil
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c != nil {
		p.cleanup.Stop()
		C.tdb_pipeline_free(p.c)
		p.c = nil
	}
	return nil
}

// read runs f with the C pipeline under the read lock (calls that do not modify it).
func (p *Pipeline) read(f func(c *C.tdb_pipeline_t) error) error {
	if p == nil {
		return invalidArgument("nil pipeline")
	}
	p.mu.RLock()
	defer p.mu.RUnlock()
	if p.c == nil {
		return ErrClosed
	}
	err := f(p.c)
	runtime.KeepAlive(p)
	return err
}

// write runs f with the C pipeline under the write lock (calls that modify it).
func (p *Pipeline) write(f func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t) error {
	if p == nil {
		return invalidArgument("nil pipeline")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.c == nil {
		return ErrClosed
	}
	var cerr *C.tdb_error_t
	err := takeError(f(p.c, &cerr), cerr)
	runtime.KeepAlive(p)
	return err
}

// readPair runs f with both C pipelines under their read locks, taken in a fixed order so
// that two goroutines locking the same pair never deadlock with a waiting writer.
func readPair(a, b *Pipeline, f func(ca, cb *C.tdb_pipeline_t) error) error {
	if a == nil || b == nil {
		return invalidArgument("nil pipeline")
	}
	if a == b {
		return a.read(func(c *C.tdb_pipeline_t) error { return f(c, c) })
	}
	first, second := a, b
	if second.id < first.id {
		first, second = second, first
	}
	return first.read(func(*C.tdb_pipeline_t) error {
		return second.read(func(*C.tdb_pipeline_t) error { return f(a.c, b.c) })
	})
}

// bytePtr is the C view of a slice's first byte, nil for an empty slice.
func bytePtr(b []byte) *C.uint8_t {
	if len(b) == 0 {
		return nil
	}
	return (*C.uint8_t)(unsafe.Pointer(&b[0]))
}

// goBytes copies n bytes of C memory into a new Go slice.
func goBytes(data *C.uint8_t, n C.size_t) []byte {
	out := make([]byte, int(n))
	if n > 0 {
		copy(out, unsafe.Slice((*byte)(unsafe.Pointer(data)), int(n)))
	}
	return out
}

// index converts a filter index for the C API.
func index(i int) (C.uint32_t, error) {
	if i < 0 || i > math.MaxUint32 {
		return 0, invalidArgument("filter index %d out of range", i)
	}
	return C.uint32_t(i), nil
}

// Filter filters a fixed-size tile of cells of datatype dt, cellSize bytes each, and returns
// TileDB's filtered tile bytes.
func (p *Pipeline) Filter(cells []byte, dt Datatype, cellSize uint64) ([]byte, error) {
	return p.filterTile(0, cells, dt, cellSize)
}

// WriteGenericTile writes data as a TileDB generic tile (header, serialized pipeline,
// filtered tile) through p, with datatype dt and cell size cellSize in the header (TileDB
// writes Char and 1). With an encryption key set the tile is encrypted. For TileDB's own
// generic tiles use DefaultGenericTilePipeline.
func (p *Pipeline) WriteGenericTile(data []byte, dt Datatype, cellSize uint64) ([]byte, error) {
	return p.filterTile(1, data, dt, cellSize)
}

func (p *Pipeline) filterTile(mode C.int, cells []byte, dt Datatype, cellSize uint64) ([]byte, error) {
	var out []byte
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var tile *C.tdb_tile_t
		var data *C.uint8_t
		var size C.size_t
		var cerr *C.tdb_error_t
		st := C.tdbgo_filter(c, mode, C.tdb_datatype_t(dt), C.uint64_t(cellSize),
			unsafe.Pointer(bytePtr(cells)), C.size_t(len(cells)), &tile, &data, &size, &cerr)
		if st != C.TDB_OK {
			C.tdb_tile_free(tile)
			return takeError(st, cerr)
		}
		out = goBytes(data, size)
		C.tdb_tile_free(tile)
		return nil
	})
	return out, err
}

// FilterInto filters a fixed-size tile into dst (its length is the capacity) and returns the
// bytes written. If dst is too small it returns an *Error with status StatusBufferTooSmall
// whose Needed field is a size that suffices (FilteredSizeBound).
func (p *Pipeline) FilterInto(dst, cells []byte, dt Datatype, cellSize uint64) (int, error) {
	var n int
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var written C.size_t
		var cerr *C.tdb_error_t
		st := C.tdbgo_filter_into(c, C.tdb_datatype_t(dt), C.uint64_t(cellSize),
			unsafe.Pointer(bytePtr(cells)), C.size_t(len(cells)), bytePtr(dst), C.size_t(len(dst)),
			&written, &cerr)
		n = int(written)
		return intoError(st, cerr, n)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// intoError is takeError for the _into calls: a too-small buffer reports the size needed.
func intoError(st C.tdb_status_t, cerr *C.tdb_error_t, needed int) error {
	err := takeError(st, cerr)
	if e, ok := err.(*Error); ok && e.Status == StatusBufferTooSmall {
		e.Needed = needed
	}
	return err
}

// FilteredSizeBound returns an upper bound on the filtered size of a fixed-size tile of n
// bytes through p: a FilterInto destination of this size always suffices.
func (p *Pipeline) FilteredSizeBound(n int) (int, error) {
	var bound C.size_t
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_pipeline_filtered_size_bound(c, C.size_t(n), &bound, &cerr), cerr)
	})
	return int(bound), err
}

// Unfilter unfilters one filtered tile into a new slice of cells of datatype dt, cellSize
// bytes each.
func (p *Pipeline) Unfilter(filtered []byte, dt Datatype, cellSize uint64) ([]byte, error) {
	var out []byte
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var needed, written C.size_t
		var cerr *C.tdb_error_t
		st := C.tdbgo_unfiltered_size(c, bytePtr(filtered), C.size_t(len(filtered)),
			C.tdb_datatype_t(dt), C.uint64_t(cellSize), &needed, &cerr)
		if st != C.TDB_OK {
			return takeError(st, cerr)
		}
		out = make([]byte, int(needed))
		st = C.tdb_pipeline_unfilter_into(c, bytePtr(filtered), C.size_t(len(filtered)),
			C.tdb_datatype_t(dt), C.uint64_t(cellSize), unsafe.Pointer(bytePtr(out)),
			C.size_t(len(out)), &written, &cerr)
		if st != C.TDB_OK {
			return takeError(st, cerr)
		}
		out = out[:int(written)]
		return nil
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// UnfilterInto unfilters one filtered tile into dst (its length is the capacity) and returns
// the bytes written. If dst is too small it returns an *Error with status
// StatusBufferTooSmall whose Needed field is the exact size, before decoding anything.
func (p *Pipeline) UnfilterInto(dst, filtered []byte, dt Datatype, cellSize uint64) (int, error) {
	var n int
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var written C.size_t
		var cerr *C.tdb_error_t
		st := C.tdb_pipeline_unfilter_into(c, bytePtr(filtered), C.size_t(len(filtered)),
			C.tdb_datatype_t(dt), C.uint64_t(cellSize), unsafe.Pointer(bytePtr(dst)),
			C.size_t(len(dst)), &written, &cerr)
		n = int(written)
		return intoError(st, cerr, n)
	})
	if err != nil {
		return 0, err
	}
	return n, nil
}

// FilterVar filters a var-size tile of datatype dt: cell i holds
// data[offsets[i]:offsets[i+1]] (the last cell runs to the end of data; offsets[0] is 0).
// p filters the data tile and offsetsPipeline (TileDB's schema offsets filters) the offsets
// tile. With RLE or DICTIONARY on StringASCII/StringUTF8 the offsets travel inside the data
// tile and filteredOffsets is TileDB's 8-byte empty marker. p and offsetsPipeline may be
// the same pipeline.
func (p *Pipeline) FilterVar(offsetsPipeline *Pipeline, dt Datatype, offsets []uint64, data []byte) (filteredOffsets, filteredData []byte, err error) {
	err = readPair(p, offsetsPipeline, func(dp, op *C.tdb_pipeline_t) error {
		var fo, fd *C.tdb_tile_t
		var foData, fdData *C.uint8_t
		var foSize, fdSize C.size_t
		var offPtr *C.uint64_t
		if len(offsets) > 0 {
			offPtr = (*C.uint64_t)(unsafe.Pointer(&offsets[0]))
		}
		var cerr *C.tdb_error_t
		st := C.tdbgo_filter_var(dp, op, C.tdb_datatype_t(dt), offPtr, C.size_t(len(offsets)),
			unsafe.Pointer(bytePtr(data)), C.size_t(len(data)), &fo, &foData, &foSize, &fd,
			&fdData, &fdSize, &cerr)
		if st == C.TDB_OK {
			filteredOffsets = goBytes(foData, foSize)
			filteredData = goBytes(fdData, fdSize)
		}
		C.tdb_tile_free(fo)
		C.tdb_tile_free(fd)
		return takeError(st, cerr)
	})
	return filteredOffsets, filteredData, err
}

// UnfilterVar unfilters a var-size tile from its filtered offsets and data tiles (see
// FilterVar) and returns the cells' offsets and concatenated values. Offsets that decrease
// or point past the data are ErrCorruptData.
func (p *Pipeline) UnfilterVar(offsetsPipeline *Pipeline, filteredOffsets, filteredData []byte, dt Datatype) (offsets []uint64, data []byte, err error) {
	err = readPair(p, offsetsPipeline, func(dp, op *C.tdb_pipeline_t) error {
		var tile *C.tdb_tile_t
		var offPtr *C.uint64_t
		var count, size C.size_t
		var dataPtr *C.uint8_t
		var cerr *C.tdb_error_t
		st := C.tdbgo_unfilter_var(dp, op, bytePtr(filteredOffsets), C.size_t(len(filteredOffsets)),
			bytePtr(filteredData), C.size_t(len(filteredData)), C.tdb_datatype_t(dt), &tile,
			&offPtr, &count, &dataPtr, &size, &cerr)
		if st == C.TDB_OK {
			offsets = make([]uint64, int(count))
			if count > 0 {
				copy(offsets, unsafe.Slice((*uint64)(unsafe.Pointer(offPtr)), int(count)))
			}
			data = goBytes(dataPtr, size)
		}
		C.tdb_tile_free(tile)
		return takeError(st, cerr)
	})
	return offsets, data, err
}

// AddFilter appends a filter with TileDB's default options; its index is Len()-1.
// FilterAES256GCM cannot be added (use SetEncryptionKey).
func (p *Pipeline) AddFilter(t FilterType) error {
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_add_filter(c, C.tdb_filter_type_t(t), cerr)
	})
}

// Len returns the number of filters.
func (p *Pipeline) Len() (int, error) {
	var n C.uint32_t
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_pipeline_filter_count(c, &n, &cerr), cerr)
	})
	return int(n), err
}

// Filters returns the types of the filters, in order.
func (p *Pipeline) Filters() ([]FilterType, error) {
	var types []FilterType
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var n C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_pipeline_filter_count(c, &n, &cerr), cerr); err != nil {
			return err
		}
		types = make([]FilterType, int(n))
		for i := range types {
			var t C.tdb_filter_type_t
			st := C.tdb_pipeline_filter_type(c, C.uint32_t(i), &t, &cerr)
			if err := takeError(st, cerr); err != nil {
				return err
			}
			types[i] = FilterType(t)
		}
		return nil
	})
	return types, err
}

// Spec returns the pipeline as a spec that ParsePipeline turns back into the same filters
// and options, e.g. "bitshuffle,zstd:3" ("none" for no filters).
func (p *Pipeline) Spec() (string, error) {
	var spec string
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var size C.size_t
		var cerr *C.tdb_error_t
		st := C.tdb_pipeline_to_spec(c, nil, 0, &size, &cerr)
		if err := sizeQuery(st, cerr); err != nil {
			return err
		}
		buf := make([]byte, int(size))
		st = C.tdb_pipeline_to_spec(c, (*C.char)(unsafe.Pointer(&buf[0])), size, &size, &cerr)
		if err := takeError(st, cerr); err != nil {
			return err
		}
		spec = string(buf[:int(size)-1])
		return nil
	})
	return spec, err
}

// String returns the pipeline's spec (see Spec), or a description of the error.
func (p *Pipeline) String() string {
	spec, err := p.Spec()
	if err != nil {
		return "tdbfilter.Pipeline(" + err.Error() + ")"
	}
	return spec
}

// sizeQuery checks the answer to a call made with a NULL buffer to learn a size: it must be
// TDB_ERR_BUFFER_TOO_SMALL, whose error is freed.
func sizeQuery(st C.tdb_status_t, cerr *C.tdb_error_t) error {
	if st == C.TDB_ERR_BUFFER_TOO_SMALL {
		C.tdb_error_free(cerr)
		return nil
	}
	if err := takeError(st, cerr); err != nil {
		return err
	}
	return &Error{Status: StatusInternal, Message: "a size query with no buffer succeeded"}
}

// Serialize returns the pipeline serialized exactly as TileDB 2.30 stores it in a schema or
// generic-tile header (the encryption key is never serialized).
func (p *Pipeline) Serialize() ([]byte, error) {
	var out []byte
	err := p.read(func(c *C.tdb_pipeline_t) error {
		var size C.size_t
		var cerr *C.tdb_error_t
		if err := sizeQuery(C.tdb_pipeline_serialize(c, nil, 0, &size, &cerr), cerr); err != nil {
			return err
		}
		out = make([]byte, int(size))
		st := C.tdb_pipeline_serialize(c, bytePtr(out), size, &size, &cerr)
		return takeError(st, cerr)
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// SetThreads sets how many threads filter and unfilter the chunks of one tile (0 = all
// cores, at most 256). Goroutines calling Filter concurrently add their own parallelism, so
// a program that filters many tiles at once may prefer 1.
func (p *Pipeline) SetThreads(n int) error {
	if n < 0 || n > math.MaxUint32 {
		return invalidArgument("thread count %d out of range", n)
	}
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_threads(c, C.uint32_t(n), cerr)
	})
}

// SetMaxChunkSize sets the stored max chunk size. As in TileDB 2.30 only 0 changes writing
// (the whole tile becomes one chunk); any other value chunks at 64 KiB.
func (p *Pipeline) SetMaxChunkSize(n uint32) error {
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_max_chunk_size(c, C.uint32_t(n), cerr)
	})
}

// SetSkipChecksumValidation skips checksum verification when unfiltering (TileDB's
// sm.skip_checksum_validation).
func (p *Pipeline) SetSkipChecksumValidation(skip bool) error {
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_skip_checksum_validation(c, C.bool(skip), cerr)
	})
}

// SetGzipIdentical chooses GZIP's writer: true (the default) writes the bytes TileDB writes;
// false uses libdeflate, faster, valid for TileDB but sometimes a few percent larger.
func (p *Pipeline) SetGzipIdentical(identical bool) error {
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_gzip_identical(c, C.bool(identical), cerr)
	})
}

// SetEncryptionKey sets the AES-256-GCM key (32 bytes; TileDB's sm.encryption_key string is
// used as raw bytes). As in TileDB, encryption then follows the filters on every filter call
// and precedes them on every unfilter call; the key is never serialized. The library copies
// the key and zeroes its copy when the pipeline is closed.
func (p *Pipeline) SetEncryptionKey(key []byte) error {
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_encryption_key(c, bytePtr(key), C.size_t(len(key)), cerr)
	})
}

// SetWebPExtents sets a WEBP filter's tile extents (TileDB fills them from the array
// schema): yExtent rows of xExtent bytes (pixels × 3 or 4).
func (p *Pipeline) SetWebPExtents(filter int, yExtent, xExtent uint16) error {
	i, err := index(filter)
	if err != nil {
		return err
	}
	return p.write(func(c *C.tdb_pipeline_t, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_pipeline_set_webp_extents(c, i, C.uint16_t(yExtent), C.uint16_t(xExtent), cerr)
	})
}

// FilteredTileSize returns the size of the filtered tile at the start of b (tiles are
// self-delimiting), checking that all of it lies within b: walks a TileDB data file, a
// concatenation of filtered tiles.
func FilteredTileSize(b []byte) (int, error) {
	var size C.uint64_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_filtered_tile_size(bytePtr(b), C.size_t(len(b)), &size, &cerr), cerr); err != nil {
		return 0, err
	}
	return int(size), nil
}
