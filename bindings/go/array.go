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
	"reflect"
	"runtime"
	"strings"
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
	dims    []Field        // the schema's dimensions, read at open (subarray checks)
	cleanup runtime.Cleanup
}

// ArrayOption configures OpenArray.
type ArrayOption func(*arrayOptions)

type arrayOptions struct {
	key        []byte
	start, end uint64
	timeTravel bool
	threads    int
	limit      uint64
}

// WithKey opens an encrypted array with its 32-byte AES-256-GCM key.
func WithKey(key []byte) ArrayOption { return func(o *arrayOptions) { o.key = key } }

// WithTimestamps opens the array with the fragments of [start, end] (milliseconds,
// inclusive) visible, as TileDB's time travelling does.
func WithTimestamps(start, end uint64) ArrayOption {
	return func(o *arrayOptions) { o.start, o.end, o.timeTravel = start, end, true }
}

// WithThreads sets the threads decoding tiles (0: all cores, the default; at most 256, more
// or a negative count is ErrInvalidArgument from OpenArray).
func WithThreads(n int) ArrayOption { return func(o *arrayOptions) { o.threads = n } }

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
	if strings.IndexByte(path, 0) >= 0 {
		return nil, invalidArgument("array path %q contains a NUL byte", path)
	}
	if o.threads < 0 || o.threads > math.MaxUint32 {
		return nil, invalidArgument("thread count %d out of range", o.threads)
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
	dims, err := dimensions(c)
	if err != nil {
		C.tdb_array_free(c)
		return nil, err
	}
	a := &Array{c: c, dims: dims}
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

// dimensions reads the dimensions of an open array's schema.
func dimensions(c *C.tdb_array_t) ([]Field, error) {
	var n C.uint32_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_array_dimension_count(c, &n, &cerr), cerr); err != nil {
		return nil, err
	}
	dims := make([]Field, 0, int(n))
	for i := C.uint32_t(0); i < n; i++ {
		var name *C.char
		var dt C.tdb_datatype_t
		var cvn C.uint32_t
		if err := takeError(C.tdb_array_dimension(c, i, &name, &dt, &cvn, &cerr), cerr); err != nil {
			return nil, err
		}
		dims = append(dims, Field{Name: C.GoString(name), Datatype: Datatype(dt), CellValNum: uint32(cvn)})
	}
	return dims, nil
}

// Fields returns the dimensions and the attributes of the array's schema.
func (a *Array) Fields() (dims, attrs []Field, err error) {
	err = a.with(func(c *C.tdb_array_t) error {
		dims = append([]Field(nil), a.dims...)
		var na C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_array_attribute_count(c, &na, &cerr), cerr); err != nil {
			return err
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
		if err := takeError(C.tdb_array_fragment_count(c, &n, &cerr), cerr); err != nil {
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
		if err := takeError(C.tdb_array_metadata_count(c, &n, &cerr), cerr); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < n; i++ {
			var key *C.char
			var dt C.tdb_datatype_t
			var count C.uint32_t
			var value unsafe.Pointer
			if err := takeError(C.tdb_array_metadata_entry(c, i, &key, &dt, &count, &value, &cerr), cerr); err != nil {
				return err
			}
			size := int(count) * int(Datatype(dt).Size())
			out[C.GoString(key)] = MetadataValue{Datatype(dt), uint32(count), C.GoBytes(value, C.int(size))}
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
		return nil, invalidArgument("field '%s' is not var-size", c.Name)
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
		return nil, invalidArgument("field '%s' holds %s cells, not %T", c.Name, c.Datatype, zero)
	}
	out := make([]T, len(c.Data)/size)
	if err := binary.Read(bytes.NewReader(c.Data), binary.LittleEndian, out); err != nil {
		return nil, err
	}
	return out, nil
}

// Range is an inclusive [Lo, Hi] range of one numeric dimension. Both bounds have the Go type
// of the dimension's datatype: int8, uint8, int16, uint16, int32, uint32, int64, uint64,
// float32 or float64 for the datatypes of those names, int64 for DatetimeXxx and TimeXxx.
type Range struct{ Lo, Hi any }

// boundType is the Go type of a subarray bound on a dimension of datatype dt, nil for the
// datatypes that take no subarray (strings).
func boundType(dt Datatype) reflect.Type {
	switch {
	case dt == Int8:
		return reflect.TypeFor[int8]()
	case dt == Uint8:
		return reflect.TypeFor[uint8]()
	case dt == Int16:
		return reflect.TypeFor[int16]()
	case dt == Uint16:
		return reflect.TypeFor[uint16]()
	case dt == Int32:
		return reflect.TypeFor[int32]()
	case dt == Uint32:
		return reflect.TypeFor[uint32]()
	case dt == Int64, dt >= DatetimeYear && dt <= DatetimeAS, dt >= TimeHR && dt <= TimeAS:
		return reflect.TypeFor[int64]()
	case dt == Uint64:
		return reflect.TypeFor[uint64]()
	case dt == Float32:
		return reflect.TypeFor[float32]()
	case dt == Float64:
		return reflect.TypeFor[float64]()
	}
	return nil
}

// packSubarray checks subarray against the array's dimensions (one Range per dimension, in
// order, of the dimension's Go type) and packs it as the C API reads it: little-endian
// [low, high] per dimension. Nothing reaches C unchecked: a wrong count or type is an
// ErrInvalidArgument naming the dimension and the type it takes.
func packSubarray(dims []Field, subarray []Range) ([]byte, error) {
	for _, d := range dims {
		if d.Var() || boundType(d.Datatype) == nil {
			return nil, unsupported("subarray on dimension '%s' (%s): only numeric dimensions take a subarray", d.Name, d.Datatype)
		}
	}
	if len(subarray) != len(dims) {
		want := make([]string, len(dims))
		for i, d := range dims {
			want[i] = fmt.Sprintf("'%s' (%s, Go %s)", d.Name, d.Datatype, boundType(d.Datatype))
		}
		return nil, invalidArgument("subarray has %d ranges; the array's %d dimensions need one Range each: %s",
			len(subarray), len(dims), strings.Join(want, ", "))
	}
	var buf []byte
	for i, r := range subarray {
		d := dims[i]
		want := boundType(d.Datatype)
		for _, bound := range [...]struct {
			name  string
			value any
		}{{"Lo", r.Lo}, {"Hi", r.Hi}} {
			if got := reflect.TypeOf(bound.value); got != want {
				return nil, invalidArgument("subarray range %d: %s is %v; dimension '%s' (%s) takes %s",
					i, bound.name, typeName(got), d.Name, d.Datatype, want)
			}
			var err error
			if buf, err = binary.Append(buf, binary.LittleEndian, bound.value); err != nil {
				return nil, &Error{Status: StatusInternal, Message: fmt.Sprintf("subarray range %d on dimension '%s': %v", i, d.Name, err)}
			}
		}
	}
	return buf, nil
}

// typeName names a bound's Go type in messages ("nil" for a missing bound).
func typeName(t reflect.Type) string {
	if t == nil {
		return "nil"
	}
	return t.String()
}

// cStrings copies strings into a C array of C strings; free releases them.
func cStrings(what string, strs []string) (array **C.char, free func(), err error) {
	for _, s := range strs {
		if strings.IndexByte(s, 0) >= 0 {
			return nil, nil, invalidArgument("%s %q contains a NUL byte", what, s)
		}
	}
	mem := C.malloc(C.size_t(len(strs)) * C.size_t(unsafe.Sizeof((*C.char)(nil))))
	slice := unsafe.Slice((**C.char)(mem), len(strs))
	for i, s := range strs {
		slice[i] = C.CString(s)
	}
	return (**C.char)(mem), func() {
		for _, p := range slice {
			C.free(unsafe.Pointer(p))
		}
		C.free(mem)
	}, nil
}

// Read reads fields in one pass over subarray (nil: the non-empty domain; else one Range per
// dimension, see Range). Dense arrays give the box's cells in row-major order with fill values
// where nothing was written; sparse arrays the visible cells in global order. A subarray of
// the wrong number of ranges or of bounds of the wrong Go type is ErrInvalidArgument naming
// the dimension and its type; a subarray on an array with a string dimension is
// ErrUnsupported.
func (a *Array) Read(fields []string, subarray []Range) ([]Column, error) {
	var cols []Column
	err := a.with(func(c *C.tdb_array_t) error {
		var sub []byte
		if subarray != nil {
			var err error
			if sub, err = packSubarray(a.dims, subarray); err != nil {
				return err
			}
		}
		if len(fields) == 0 {
			return nil
		}
		names, freeNames, err := cStrings("field name", fields)
		if err != nil {
			return err
		}
		defer freeNames()
		var csub unsafe.Pointer
		if sub != nil {
			csub = C.CBytes(sub)
			defer C.free(csub)
		}
		results := make([]*C.tdb_result_t, len(fields))
		cresults := (**C.tdb_result_t)(C.malloc(C.size_t(len(fields)) * C.size_t(unsafe.Sizeof((*C.tdb_result_t)(nil)))))
		defer C.free(unsafe.Pointer(cresults))
		var cerr *C.tdb_error_t
		s := C.tdb_array_read_fields(c, names, C.size_t(len(fields)), csub, C.size_t(len(sub)), cresults, &cerr)
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
	if strings.IndexByte(name, 0) >= 0 {
		return Column{}, invalidArgument("enumeration name %q contains a NUL byte", name)
	}
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
