package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import (
	"runtime"
	"strings"
	"sync"
	"unsafe"
)

// Layout is the order of the cells given to a Writer (tdb_layout_t values).
type Layout uint32

// The cell orders of a write.
const (
	RowMajor    Layout = C.TDB_ROW_MAJOR    // Dense: the box's cells row-major (last dimension fastest).
	ColMajor    Layout = C.TDB_COL_MAJOR    // Dense: the box's cells col-major (first dimension fastest).
	GlobalOrder Layout = C.TDB_GLOBAL_ORDER // The array's global order (dense: whole tiles of a tile-aligned box).
	Unordered   Layout = C.TDB_UNORDERED    // Sparse: coordinates in any order.
)

// cString is a C copy of s (free it with C.free); a NUL byte in s is ErrInvalidArgument.
func cString(what, s string) (*C.char, error) {
	if strings.IndexByte(s, 0) >= 0 {
		return nil, invalidArgument("%s %q contains a NUL byte", what, s)
	}
	return C.CString(s), nil
}

// cKey is a C copy of an encryption key (nil for none; free it with C.free).
func cKey(key []byte) unsafe.Pointer {
	if len(key) == 0 {
		return nil
	}
	return C.CBytes(key)
}

// Create creates the array at path from schemaJSON: the JSON `tdbf array info --json` prints
// (whole or its "schema" member), as TileDB 2.30 creates it. key: a 32-byte AES-256-GCM key
// to encrypt the array with, or nil. A schema TileDB refuses is ErrInvalidArgument with
// TileDB's reason; an existing array is refused and left untouched.
func Create(path, schemaJSON string, key []byte) error {
	cpath, err := cString("array path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	cjson, err := cString("schema JSON", schemaJSON)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cjson))
	ckey := cKey(key)
	defer C.free(ckey)
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_create(cpath, cjson, ckey, C.size_t(len(key)), &cerr), cerr)
}

// metadataArgs are the C copies of a metadata call's path, entry name and key; free them
// with the returned function.
func metadataArgs(path, name string, key []byte) (cpath, cname *C.char, ckey unsafe.Pointer, free func(), err error) {
	if cpath, err = cString("array path", path); err != nil {
		return nil, nil, nil, nil, err
	}
	if cname, err = cString("metadata key", name); err != nil {
		C.free(unsafe.Pointer(cpath))
		return nil, nil, nil, nil, err
	}
	ckey = cKey(key)
	return cpath, cname, ckey, func() {
		C.free(unsafe.Pointer(cpath))
		C.free(unsafe.Pointer(cname))
		C.free(ckey)
	}, nil
}

// MetadataPut writes one array metadata entry into the array at path: count values of
// datatype dt in value (exactly count times the type's size), as one new __meta file at
// timestamp (milliseconds; 0: now). It replaces an earlier value of name.
func MetadataPut(path string, key []byte, timestamp uint64, name string, dt Datatype, count uint32, value []byte) error {
	cpath, cname, ckey, free, err := metadataArgs(path, name, key)
	if err != nil {
		return err
	}
	defer free()
	var cvalue unsafe.Pointer
	if len(value) > 0 {
		cvalue = C.CBytes(value)
		defer C.free(cvalue)
	}
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_metadata_put(cpath, ckey, C.size_t(len(key)), C.uint64_t(timestamp), cname,
		C.tdb_datatype_t(dt), C.uint32_t(count), cvalue, C.size_t(len(value)), &cerr), cerr)
}

// MetadataDelete deletes the array metadata entry name of the array at path (one new __meta
// file at timestamp, milliseconds; 0: now). Deleting a key without a value is not an error.
func MetadataDelete(path string, key []byte, timestamp uint64, name string) error {
	cpath, cname, ckey, free, err := metadataArgs(path, name, key)
	if err != nil {
		return err
	}
	defer free()
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_metadata_delete(cpath, ckey, C.size_t(len(key)), C.uint64_t(timestamp), cname, &cerr), cerr)
}

// Writer writes one fragment of an array (tdb_writer_t): set a batch of buffers per field,
// Submit it (dense row- and col-major writes: one batch, the whole box; global-order and
// sparse writes: any number), then Finalize commits the fragment. Close frees it and never
// commits: a writer closed (or collected) without Finalize leaves no fragment.
//
// The buffers given to SetData, SetOffsets and SetValidity are not copied: the library reads
// them during the next Submit. Go's cgo rules forbid C from keeping a Go pointer after the
// call that received it, so each buffer is pinned (runtime.Pinner) from the Set call until
// that Submit returns (or Close): no copy of the cells, and the garbage collector cannot
// move or free them while C holds their address. Do not modify them before Submit returns.
//
// A Writer is not for concurrent use; its methods lock it, so misuse is safe but serial.
type Writer struct {
	mu      sync.Mutex
	s       *writerState // nil after Close
	path    string
	key     []byte
	ts      uint64
	dims    []Field // read on the first SetSubarray
	cleanup runtime.Cleanup
}

// writerState is what the cleanup of a Writer dropped without Close releases.
type writerState struct {
	c      *C.tdb_writer_t
	pinner runtime.Pinner
}

func (s *writerState) release() {
	s.pinner.Unpin()
	C.tdb_writer_free(s.c)
	s.c = nil
}

// OpenWriter opens the array at path for writing one fragment at timestamp (milliseconds;
// 0: now), with its latest schema at that time. key: the array's 32-byte AES-256-GCM key,
// or nil. The default layout is RowMajor for dense arrays, Unordered for sparse ones.
func OpenWriter(path string, key []byte, timestamp uint64) (*Writer, error) {
	cpath, err := cString("array path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	ckey := cKey(key)
	defer C.free(ckey)
	var c *C.tdb_writer_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_writer_open(cpath, ckey, C.size_t(len(key)), C.uint64_t(timestamp), &c, &cerr), cerr); err != nil {
		return nil, err
	}
	s := &writerState{c: c}
	w := &Writer{s: s, path: path, key: append([]byte(nil), key...), ts: timestamp}
	w.cleanup = runtime.AddCleanup(w, func(s *writerState) { s.release() }, s)
	return w, nil
}

// with runs f with the C handle under the lock.
func (w *Writer) with(f func(s *writerState) error) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.s == nil {
		return ErrClosed
	}
	return f(w.s)
}

// Close frees the writer; without a successful Finalize nothing is committed (the partial
// fragment folder is removed). Closing twice is a no-op; other methods then return ErrClosed.
func (w *Writer) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.s != nil {
		w.cleanup.Stop()
		w.s.release()
		w.s = nil
	}
	return nil
}

// SetLayout sets the order of the cells given, before the first Submit.
func (w *Writer) SetLayout(layout Layout) error {
	return w.with(func(s *writerState) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_set_layout(s.c, C.tdb_layout_t(layout), &cerr), cerr)
	})
}

// SetThreads sets how many threads filter the tiles: 0 = all cores (the default), else 1 to
// 256.
func (w *Writer) SetThreads(n int) error {
	if n < 0 || n > 1<<20 {
		return invalidArgument("thread count %d out of range", n)
	}
	return w.with(func(s *writerState) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_set_threads(s.c, C.uint32_t(n), &cerr), cerr)
	})
}

// SetSubarray sets the box of a dense write: one inclusive Range per dimension, each bound of
// the dimension's Go type (as Array.Read takes them: int32 for INT32, int64 for INT64 and
// datetimes, ...). Without it the box is the whole domain.
func (w *Writer) SetSubarray(box []Range) error {
	w.mu.Lock()
	if w.dims == nil && w.s != nil {
		a, err := OpenArray(w.path, WithKey(w.key))
		if err != nil {
			w.mu.Unlock()
			return err
		}
		w.dims = a.dims
		a.Close()
	}
	dims := w.dims
	w.mu.Unlock()
	packed, err := packSubarray(dims, box)
	if err != nil {
		return err
	}
	return w.SetSubarrayBytes(packed)
}

// SetSubarrayBytes sets the box of a dense write from its packed bytes: [low, high] of each
// dimension in order, each bound little-endian of the dimension's type.
func (w *Writer) SetSubarrayBytes(packed []byte) error {
	return w.with(func(s *writerState) error {
		var p unsafe.Pointer
		if len(packed) > 0 {
			p = C.CBytes(packed) // read during the call only; a copy keeps it simple
			defer C.free(p)
		}
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_set_subarray(s.c, p, C.size_t(len(packed)), &cerr), cerr)
	})
}

// emptyBuffer is the address given for empty buffers (the library refuses NULL data).
var emptyBuffer = C.malloc(1)

// pinned pins the first element of a non-empty buffer until the next Submit (or Close) and
// returns its address; an empty buffer gets a static C address.
func pinned[T any](s *writerState, buf []T) unsafe.Pointer {
	if len(buf) == 0 {
		return emptyBuffer
	}
	s.pinner.Pin(&buf[0])
	return unsafe.Pointer(&buf[0])
}

// setField runs f with the C handle and a C copy of field's name, under the lock.
func (w *Writer) setField(field string, f func(s *writerState, cfield *C.char) error) error {
	return w.with(func(s *writerState) error {
		cfield, err := cString("field name", field)
		if err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cfield))
		return f(s, cfield)
	})
}

// SetData sets the cell values of field (an attribute, or a dimension of a sparse array) for
// the next Submit: fixed-size cells as little-endian bytes, or the concatenated values of
// var-size cells. data is pinned, not copied, until that Submit returns. SetValues takes
// typed slices.
func (w *Writer) SetData(field string, data []byte) error {
	return w.setField(field, func(s *writerState, cfield *C.char) error {
		p := pinned(s, data)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_set_data(s.c, cfield, p, C.size_t(len(data)), &cerr), cerr)
	})
}

// SetValues is SetData for a typed slice (its memory as it is, pinned, not copied).
func SetValues[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float32 | float64](w *Writer, field string, values []T) error {
	var zero T
	if len(values) == 0 {
		return w.SetData(field, nil)
	}
	return w.SetData(field, unsafe.Slice((*byte)(unsafe.Pointer(&values[0])), len(values)*int(unsafe.Sizeof(zero))))
}

// SetOffsets sets the start of each var-size cell of field in its data, in bytes (one
// offset per cell, no extra element), for the next Submit; pinned, not copied.
func (w *Writer) SetOffsets(field string, offsets []uint64) error {
	return w.setField(field, func(s *writerState, cfield *C.char) error {
		p := pinned(s, offsets)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_set_offsets(s.c, cfield, (*C.uint64_t)(p), C.size_t(len(offsets)), &cerr), cerr)
	})
}

// SetValidity sets the validity of nullable field (one byte per cell, 0 for null) for the
// next Submit; pinned, not copied.
func (w *Writer) SetValidity(field string, validity []uint8) error {
	return w.setField(field, func(s *writerState, cfield *C.char) error {
		p := pinned(s, validity)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_set_validity(s.c, cfield, (*C.uint8_t)(p), C.size_t(len(validity)), &cerr), cerr)
	})
}

// Submit writes the batch set since the last Submit, then unpins its buffers. A failed
// Submit (wrong sizes or cell counts, coordinates outside the domain, duplicates the schema
// does not allow, a missing field) fails the writer: nothing is committed.
func (w *Writer) Submit() error {
	return w.with(func(s *writerState) error {
		defer s.pinner.Unpin()
		var cerr *C.tdb_error_t
		return takeError(C.tdb_writer_submit(s.c, &cerr), cerr)
	})
}

// Finalize writes what is left and the fragment metadata, then commits the fragment and
// returns its name (__<t>_<t>_<label>_22). On error nothing is committed. Either way the
// writer is done: Close it.
func (w *Writer) Finalize() (string, error) {
	var name string
	err := w.with(func(s *writerState) error {
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_writer_finalize(s.c, &cerr), cerr); err != nil {
			return err
		}
		var cname *C.char
		if err := takeError(C.tdb_writer_fragment_name(s.c, &cname, &cerr), cerr); err != nil {
			return err
		}
		name = C.GoString(cname)
		return nil
	})
	return name, err
}
