package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"
	"runtime"
	"sync"
	"unsafe"
)

// VarNum is the cell_val_num of var-size fields.
const VarNum = math.MaxUint32

// Array is a TileDB array folder opened for reading without libtiledb (tdb_array_*): its
// schema, fragments, metadata and cells, as TileDB 2.30 reads them.
//
// An Array is safe for concurrent use. Close frees it; a cleanup frees it if it becomes
// unreachable without Close, but Close it explicitly.
type Array struct {
	mu      sync.RWMutex
	c       *C.tdb_array_t // nil after Close
	cleanup runtime.Cleanup
}

// ArrayOption configures OpenArray.
type ArrayOption func(*arrayOptions)

type arrayOptions struct {
	key        []byte
	start, end uint64
	timeTravel bool
	threads    uint32
	limit      uint64
}

// WithKey opens an encrypted array with its 32-byte AES-256-GCM key.
func WithKey(key []byte) ArrayOption { return func(o *arrayOptions) { o.key = key } }

// WithTimestamps opens the array with the fragments of [start, end] (milliseconds,
// inclusive) visible, as TileDB's time travelling does.
func WithTimestamps(start, end uint64) ArrayOption {
	return func(o *arrayOptions) { o.start, o.end, o.timeTravel = start, end, true }
}

// WithThreads sets the threads decoding tiles (0: all cores, the default).
func WithThreads(n int) ArrayOption { return func(o *arrayOptions) { o.threads = uint32(n) } }

// WithMemoryLimit refuses reads whose result for one field would take more than bytes,
// before allocating (ErrOutOfMemory). Set it for arrays from untrusted sources.
func WithMemoryLimit(bytes uint64) ArrayOption { return func(o *arrayOptions) { o.limit = bytes } }

// OpenArray opens the local array folder at path. Remote URIs are ErrUnsupported; a folder
// that is not an array is ErrInvalidArgument.
func OpenArray(path string, opts ...ArrayOption) (*Array, error) {
	var o arrayOptions
	for _, opt := range opts {
		opt(&o)
	}
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	var key unsafe.Pointer
	if len(o.key) > 0 {
		key = C.CBytes(o.key)
		defer C.free(key)
	}
	var c *C.tdb_array_t
	var cerr *C.tdb_error_t
	var s C.tdb_status_t
	if o.timeTravel {
		s = C.tdb_array_open_at(cpath, key, C.size_t(len(o.key)), C.uint64_t(o.start), C.uint64_t(o.end), &c, &cerr)
	} else {
		s = C.tdb_array_open(cpath, key, C.size_t(len(o.key)), &c, &cerr)
	}
	if err := takeError(s, cerr); err != nil {
		return nil, err
	}
	if o.threads != 0 {
		if err := takeError(C.tdb_array_set_threads(c, C.uint32_t(o.threads), &cerr), cerr); err != nil {
			C.tdb_array_free(c)
			return nil, err
		}
	}
	if o.limit != 0 {
		if err := takeError(C.tdb_array_set_memory_limit(c, C.uint64_t(o.limit), &cerr), cerr); err != nil {
			C.tdb_array_free(c)
			return nil, err
		}
	}
	a := &Array{c: c}
	a.cleanup = runtime.AddCleanup(a, func(c *C.tdb_array_t) { C.tdb_array_free(c) }, c)
	return a, nil
}

// Close frees the array. Closing twice is a no-op; every other method then returns
// ErrClosed.
func (a *Array) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.c != nil {
		a.cleanup.Stop()
		C.tdb_array_free(a.c)
		a.c = nil
	}
	return nil
}

// with runs f with the C handle under the read lock.
func (a *Array) with(f func(c *C.tdb_array_t) error) error {
	a.mu.RLock()
	defer a.mu.RUnlock()
	if a.c == nil {
		return ErrClosed
	}
	return f(a.c)
}

// Field is a dimension or attribute of the schema.
type Field struct {
	Name       string
	Datatype   Datatype
	CellValNum uint32 // VarNum: var-size
	Nullable   bool
}

// Var reports whether the field is var-size.
func (f Field) Var() bool { return f.CellValNum == VarNum }

// Sparse reports whether the array is sparse.
func (a *Array) Sparse() (bool, error) {
	var t C.uint8_t
	err := a.with(func(c *C.tdb_array_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_array_schema_info(c, &t, nil, nil, nil, nil, nil, &cerr), cerr)
	})
	return t == 1, err
}

// Fields returns the dimensions and the attributes of the array's schema.
func (a *Array) Fields() (dims, attrs []Field, err error) {
	err = a.with(func(c *C.tdb_array_t) error {
		var nd, na C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_array_field_num(c, &nd, &na, &cerr), cerr); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < nd; i++ {
			var name *C.char
			var dt C.tdb_datatype_t
			var cvn C.uint32_t
			if err := takeError(C.tdb_array_dimension(c, i, &name, &dt, &cvn, &cerr), cerr); err != nil {
				return err
			}
			dims = append(dims, Field{Name: C.GoString(name), Datatype: Datatype(dt), CellValNum: uint32(cvn)})
		}
		for i := C.uint32_t(0); i < na; i++ {
			var name *C.char
			var dt C.tdb_datatype_t
			var cvn C.uint32_t
			var nullable C.bool
			if err := takeError(C.tdb_array_attribute(c, i, &name, &dt, &cvn, &nullable, &cerr), cerr); err != nil {
				return err
			}
			attrs = append(attrs, Field{Name: C.GoString(name), Datatype: Datatype(dt),
				CellValNum: uint32(cvn), Nullable: bool(nullable)})
		}
		return nil
	})
	return dims, attrs, err
}

// Fragment describes a visible fragment (oldest first; later ones win in merges).
type Fragment struct {
	Name                         string
	TimestampStart, TimestampEnd uint64
	Version                      uint32
	Dense                        bool
	Cells, Tiles                 uint64
}

// Fragments returns the visible fragments.
func (a *Array) Fragments() ([]Fragment, error) {
	var out []Fragment
	err := a.with(func(c *C.tdb_array_t) error {
		var n C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_array_fragment_num(c, &n, &cerr), cerr); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < n; i++ {
			var name *C.char
			var t1, t2, cells, tiles C.uint64_t
			var v C.uint32_t
			var dense C.bool
			if err := takeError(C.tdb_array_fragment(c, i, &name, &t1, &t2, &v, &dense, &cells, &tiles, &cerr), cerr); err != nil {
				return err
			}
			out = append(out, Fragment{C.GoString(name), uint64(t1), uint64(t2), uint32(v), bool(dense), uint64(cells), uint64(tiles)})
		}
		return nil
	})
	return out, err
}

// MetadataValue is an array metadata entry: its datatype, number of values and their bytes
// (little-endian).
type MetadataValue struct {
	Datatype Datatype
	Count    uint32
	Bytes    []byte
}

// String returns the value of a string entry.
func (m MetadataValue) String() string { return string(m.Bytes) }

// Metadata returns the array metadata visible at the open timestamps.
func (a *Array) Metadata() (map[string]MetadataValue, error) {
	out := map[string]MetadataValue{}
	err := a.with(func(c *C.tdb_array_t) error {
		var n C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_array_metadata_num(c, &n, &cerr), cerr); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < n; i++ {
			var key *C.char
			var dt C.tdb_datatype_t
			var num C.uint32_t
			var value unsafe.Pointer
			if err := takeError(C.tdb_array_metadata(c, i, &key, &dt, &num, &value, &cerr), cerr); err != nil {
				return err
			}
			size := int(num) * int(Datatype(dt).Size())
			out[C.GoString(key)] = MetadataValue{Datatype(dt), uint32(num), C.GoBytes(value, C.int(size))}
		}
		return nil
	})
	return out, err
}

// Column is the result of reading one field: its cells, copied into Go memory.
type Column struct {
	Name       string
	Datatype   Datatype
	CellValNum uint32   // VarNum: var-size
	Cells      uint64   // number of cells
	Data       []byte   // the cells' values, concatenated
	Offsets    []uint64 // var-size fields: byte offset of each cell in Data
	Validity   []uint8  // nullable fields: 1 valid, 0 null, one per cell
}

// Strings returns the cells of a var-size field as strings.
func (c *Column) Strings() ([]string, error) {
	if c.Offsets == nil {
		return nil, &Error{Status: StatusInvalidArgument, Message: "field " + c.Name + " is not var-size"}
	}
	out := make([]string, len(c.Offsets))
	for i, o := range c.Offsets {
		end := uint64(len(c.Data))
		if i+1 < len(c.Offsets) {
			end = c.Offsets[i+1]
		}
		out[i] = string(c.Data[o:end])
	}
	return out, nil
}

// Values decodes a fixed-size column's data as values of T (its size must match the
// datatype's, e.g. int64 for Int64 or DatetimeNS).
func Values[T int8 | uint8 | int16 | uint16 | int32 | uint32 | int64 | uint64 | float32 | float64](c *Column) ([]T, error) {
	var zero T
	size := int(unsafe.Sizeof(zero))
	if c.Offsets != nil || uint64(size) != c.Datatype.Size() {
		return nil, &Error{Status: StatusInvalidArgument,
			Message: fmt.Sprintf("field %s holds %s cells, not %T", c.Name, c.Datatype, zero)}
	}
	out := make([]T, len(c.Data)/size)
	if err := binary.Read(bytes.NewReader(c.Data), binary.LittleEndian, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Range is an inclusive [Lo, Hi] range of one numeric dimension, in the dimension's Go type
// (int32 for an Int32 dimension, and so on).
type Range struct{ Lo, Hi any }

// Read reads fields in one pass over subarray (nil: the non-empty domain; else one Range per
// dimension). Dense arrays give the box's cells in row-major order with fill values where
// nothing was written; sparse arrays the visible cells in global order.
func (a *Array) Read(fields []string, subarray []Range) ([]Column, error) {
	var sub []byte
	if subarray != nil {
		var buf bytes.Buffer
		for i, r := range subarray {
			if err := binary.Write(&buf, binary.LittleEndian, r.Lo); err != nil {
				return nil, &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf("subarray range %d: %v", i, err)}
			}
			if err := binary.Write(&buf, binary.LittleEndian, r.Hi); err != nil {
				return nil, &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf("subarray range %d: %v", i, err)}
			}
		}
		sub = buf.Bytes()
	}
	if len(fields) == 0 {
		return nil, nil
	}
	var cols []Column
	err := a.with(func(c *C.tdb_array_t) error {
		names := C.malloc(C.size_t(len(fields)) * C.size_t(unsafe.Sizeof((*C.char)(nil))))
		defer C.free(names)
		nameSlice := unsafe.Slice((**C.char)(names), len(fields))
		for i, f := range fields {
			nameSlice[i] = C.CString(f)
			defer C.free(unsafe.Pointer(nameSlice[i]))
		}
		var csub unsafe.Pointer
		if sub != nil {
			csub = C.CBytes(sub)
			defer C.free(csub)
		}
		results := make([]*C.tdb_result_t, len(fields))
		cresults := (**C.tdb_result_t)(C.malloc(C.size_t(len(fields)) * C.size_t(unsafe.Sizeof((*C.tdb_result_t)(nil)))))
		defer C.free(unsafe.Pointer(cresults))
		var cerr *C.tdb_error_t
		s := C.tdb_array_read_fields(c, (**C.char)(names), C.size_t(len(fields)), csub, cresults, &cerr)
		if err := takeError(s, cerr); err != nil {
			return err
		}
		copy(results, unsafe.Slice(cresults, len(fields)))
		defer func() {
			for _, r := range results {
				C.tdb_result_free(r)
			}
		}()
		for i, r := range results {
			col, err := takeColumn(fields[i], r)
			if err != nil {
				return err
			}
			cols = append(cols, col)
		}
		return nil
	})
	return cols, err
}

// Enumeration returns the values of enumeration name as a column (attribute cells of an
// attribute with this enumeration are indices into it).
func (a *Array) Enumeration(name string) (Column, error) {
	var col Column
	err := a.with(func(c *C.tdb_array_t) error {
		cname := C.CString(name)
		defer C.free(unsafe.Pointer(cname))
		var r *C.tdb_result_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_array_enumeration(c, cname, &r, &cerr), cerr); err != nil {
			return err
		}
		defer C.tdb_result_free(r)
		var err error
		col, err = takeColumn(name, r)
		return err
	})
	return col, err
}

// takeColumn copies a C result into Go memory (the caller frees the result).
func takeColumn(name string, r *C.tdb_result_t) (Column, error) {
	var cerr *C.tdb_error_t
	col := Column{Name: name}
	var dt C.tdb_datatype_t
	var cvn C.uint32_t
	if err := takeError(C.tdb_result_type(r, &dt, &cvn, &cerr), cerr); err != nil {
		return col, err
	}
	col.Datatype, col.CellValNum = Datatype(dt), uint32(cvn)
	var n C.uint64_t
	if err := takeError(C.tdb_result_cell_count(r, &n, &cerr), cerr); err != nil {
		return col, err
	}
	col.Cells = uint64(n)
	var data *C.uint8_t
	var size C.size_t
	if err := takeError(C.tdb_result_data(r, &data, &size, &cerr), cerr); err != nil {
		return col, err
	}
	col.Data = make([]byte, int(size))
	if size > 0 {
		copy(col.Data, unsafe.Slice((*byte)(unsafe.Pointer(data)), int(size)))
	}
	var offs *C.uint64_t
	var count C.size_t
	if err := takeError(C.tdb_result_offsets(r, &offs, &count, &cerr), cerr); err != nil {
		return col, err
	}
	if col.CellValNum == VarNum {
		col.Offsets = make([]uint64, int(count))
		if count > 0 {
			copy(col.Offsets, unsafe.Slice((*uint64)(unsafe.Pointer(offs)), int(count)))
		}
	}
	var val *C.uint8_t
	if err := takeError(C.tdb_result_validity(r, &val, &count, &cerr), cerr); err != nil {
		return col, err
	}
	if val != nil {
		col.Validity = make([]uint8, int(count))
		copy(col.Validity, unsafe.Slice((*uint8)(unsafe.Pointer(val)), int(count)))
	}
	return col, nil
}
