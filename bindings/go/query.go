package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import (
	"encoding/binary"
	"reflect"
	"runtime"
	"sync"
	"unsafe"
)

// AggregateOp is an aggregate operator (tdb_aggregate_op_t values).
type AggregateOp uint32

// The aggregate operators.
const (
	AggSum       AggregateOp = C.TDB_AGG_SUM        // The sum of a field's valid values.
	AggMin       AggregateOp = C.TDB_AGG_MIN        // The smallest valid value.
	AggMax       AggregateOp = C.TDB_AGG_MAX        // The largest valid value.
	AggMean      AggregateOp = C.TDB_AGG_MEAN       // The mean of the valid values.
	AggNullCount AggregateOp = C.TDB_AGG_NULL_COUNT // The number of null cells.
	AggCount     AggregateOp = C.TDB_AGG_COUNT      // The number of cells (no field).
)

// QueryStatus is the status of a query read in batches (tdb_query_status_t values).
type QueryStatus uint32

// The statuses of a batch read.
const (
	QueryCompleted     QueryStatus = C.TDB_QUERY_COMPLETED     // Every cell was handed out.
	QueryIncomplete    QueryStatus = C.TDB_QUERY_INCOMPLETE    // Cells remain: SubmitBatch again.
	QueryUninitialized QueryStatus = C.TDB_QUERY_UNINITIALIZED // No batch read yet (or restarted).
)

// AggregateValue is one aggregate computed by Submit: its label ("sum(a)", "count"), the
// value's datatype and little-endian bytes, and Valid false when there is no value.
type AggregateValue struct {
	Label    string
	Datatype Datatype
	Value    []byte
	Valid    bool
}

// QueryStats is what the last Submit did.
type QueryStats struct {
	TilesFromMetadata, TilesDecoded, TilesPruned, BytesDecoded uint64
}

// BatchSize is what the last SubmitBatch wrote for one field: cells, bytes of data, offsets
// (one per cell of a var-size field) and validity bytes (one per cell of a nullable field).
type BatchSize struct {
	Cells                           uint64
	DataSize, Offsets, ValiditySize int
}

// Query is a query over an open Array (tdb_query_t): ranges (several per dimension), a
// layout, a condition in TileDB-Py's syntax, fields or aggregates; Submit returns the cells
// whole, SubmitBatch reads them in bounded batches into the caller's buffers (set with
// SetDataBuffer, SetOffsetsBuffer, SetValidityBuffer), each continuing where the last
// stopped until Status says QueryCompleted.
//
// Batch buffers are not copied: the library writes them during each SubmitBatch. They are
// pinned (runtime.Pinner) from the Set call until Close, so the garbage collector neither
// moves nor frees them while C holds their address; read them after SubmitBatch returns.
// The Array must stay open while the query is used (calls after its Close are ErrClosed).
// A Query is not for concurrent use; its methods lock it, so misuse is safe but serial.
type Query struct {
	mu      sync.Mutex
	s       *queryState // nil after Close
	a       *Array
	fields  []string
	aggs    int
	cleanup runtime.Cleanup
}

// queryState is what the cleanup of a Query dropped without Close releases.
type queryState struct {
	c      *C.tdb_query_t
	pinner runtime.Pinner
}

func (s *queryState) release() {
	C.tdb_query_free(s.c)
	s.pinner.Unpin()
	s.c = nil
}

// NewQuery creates a query over a: every field, the whole array, row-major, no condition.
func NewQuery(a *Array) (*Query, error) {
	var q *Query
	err := a.with(func(c *C.tdb_array_t) error {
		var cq *C.tdb_query_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_create(c, &cq, &cerr), cerr); err != nil {
			return err
		}
		s := &queryState{c: cq}
		q = &Query{s: s, a: a}
		q.cleanup = runtime.AddCleanup(q, func(s *queryState) { s.release() }, s)
		return nil
	})
	return q, err
}

// with runs f with the C handle under the query's lock and the array's read lock.
func (q *Query) with(f func(s *queryState) error) error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.s == nil {
		return ErrClosed
	}
	return q.a.with(func(*C.tdb_array_t) error { return f(q.s) })
}

// Close frees the query and unpins its buffers. Closing twice is a no-op; other methods then
// return ErrClosed.
func (q *Query) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.s != nil {
		q.cleanup.Stop()
		q.s.release()
		q.s = nil
	}
	return nil
}

// SetLayout sets the result layout (RowMajor, ColMajor, GlobalOrder, Unordered); what the
// array refuses fails at submit.
func (q *Query) SetLayout(layout Layout) error {
	return q.with(func(s *queryState) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_set_layout(s.c, C.tdb_layout_t(layout), &cerr), cerr)
	})
}

// AddRange adds the inclusive range r to dimension dim (bounds of the dimension's Go type,
// as Array.Read takes them); several ranges per dimension may be added.
func (q *Query) AddRange(dim int, r Range) error {
	if dim < 0 || dim >= len(q.a.dims) {
		return invalidArgument("dimension index %d is out of range (the array has %d)", dim, len(q.a.dims))
	}
	d := q.a.dims[dim]
	want := boundType(d.Datatype)
	if want == nil || d.Var() {
		return unsupported("AddRange on dimension '%s' (%s): use AddRangeBytes", d.Name, d.Datatype)
	}
	var lo, hi []byte
	for _, b := range [...]struct {
		name  string
		value any
		out   *[]byte
	}{{"Lo", r.Lo, &lo}, {"Hi", r.Hi, &hi}} {
		if got := reflect.TypeOf(b.value); got != want {
			return invalidArgument("range %s is %v; dimension '%s' (%s) takes %s", b.name, typeName(got), d.Name, d.Datatype, want)
		}
		var err error
		if *b.out, err = binary.Append(nil, binary.LittleEndian, b.value); err != nil {
			return invalidArgument("range %s on dimension '%s': %v", b.name, d.Name, err)
		}
	}
	return q.AddRangeBytes(dim, lo, hi)
}

// AddRangeBytes adds the inclusive range [lo, hi] to dimension dim, bounds as little-endian
// bytes of its type (any bytes for string dimensions).
func (q *Query) AddRangeBytes(dim int, lo, hi []byte) error {
	if dim < 0 || dim > 1<<31 {
		return invalidArgument("dimension index %d is out of range", dim)
	}
	return q.with(func(s *queryState) error {
		clo, chi := C.CBytes(lo), C.CBytes(hi)
		defer C.free(clo)
		defer C.free(chi)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_add_range(s.c, C.uint32_t(dim), clo, C.size_t(len(lo)), chi, C.size_t(len(hi)), &cerr), cerr)
	})
}

// SetCondition sets the condition (TileDB-Py's syntax, e.g. "a < 5 and s == 'x'"); "" removes
// it. Dense reads give failing cells the fill value, sparse reads drop them.
func (q *Query) SetCondition(text string) error {
	var ctext *C.char
	if text != "" {
		var err error
		if ctext, err = cString("condition", text); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(ctext))
	}
	return q.with(func(s *queryState) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_set_condition(s.c, ctext, &cerr), cerr)
	})
}

// AddField adds a field (attribute or dimension) for Submit, which returns one Column per
// field in this order (none added: every dimension, then every attribute).
func (q *Query) AddField(name string) error {
	cname, err := cString("field name", name)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cname))
	return q.with(func(s *queryState) error {
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_add_field(s.c, cname, &cerr), cerr); err != nil {
			return err
		}
		q.fields = append(q.fields, name)
		return nil
	})
}

// AddAggregate asks for an aggregate of field ("" for AggCount) instead of cells; Submit
// then returns no columns and Aggregates the values.
func (q *Query) AddAggregate(op AggregateOp, field string) error {
	var cfield *C.char
	if field != "" {
		var err error
		if cfield, err = cString("field name", field); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cfield))
	}
	return q.with(func(s *queryState) error {
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_add_aggregate(s.c, C.tdb_aggregate_op_t(op), cfield, &cerr), cerr); err != nil {
			return err
		}
		q.aggs++
		return nil
	})
}

// Submit runs the query: the fields' cells as Columns (aggregate queries: none; see
// Aggregates).
func (q *Query) Submit() ([]Column, error) {
	dims, attrs, err := q.a.Fields()
	if err != nil {
		return nil, err
	}
	var cols []Column
	err = q.with(func(s *queryState) error {
		names := q.fields
		if q.aggs > 0 {
			names = nil
		} else if len(names) == 0 {
			for _, f := range append(dims, attrs...) {
				names = append(names, f.Name)
			}
		}
		n := len(names)
		var cres **C.tdb_result_t
		if n > 0 {
			cres = (**C.tdb_result_t)(C.malloc(C.size_t(n) * C.size_t(unsafe.Sizeof((*C.tdb_result_t)(nil)))))
			defer C.free(unsafe.Pointer(cres))
		}
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_submit(s.c, cres, C.size_t(n), &cerr), cerr); err != nil {
			return err
		}
		results := append([]*C.tdb_result_t(nil), unsafe.Slice(cres, n)...)
		defer func() {
			for _, r := range results {
				C.tdb_result_free(r)
			}
		}()
		for i, r := range results {
			col, err := takeColumn(names[i], r)
			if err != nil {
				return err
			}
			cols = append(cols, col)
		}
		return nil
	})
	return cols, err
}

// Aggregates returns the aggregates computed by the last Submit, in the order asked for.
func (q *Query) Aggregates() ([]AggregateValue, error) {
	var out []AggregateValue
	err := q.with(func(s *queryState) error {
		var n C.size_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_aggregate_count(s.c, &n, &cerr), cerr); err != nil {
			return err
		}
		for i := 0; i < int(n); i++ {
			var label *C.char
			var dt C.tdb_datatype_t
			var value *C.uint8_t
			var size C.size_t
			var valid C.uint8_t
			if err := takeError(C.tdb_query_aggregate(s.c, C.size_t(i), &label, &dt, &value, &size, &valid, &cerr), cerr); err != nil {
				return err
			}
			v := AggregateValue{Label: C.GoString(label), Datatype: Datatype(dt), Valid: valid != 0}
			if size > 0 {
				v.Value = C.GoBytes(unsafe.Pointer(value), C.int(size))
			}
			out = append(out, v)
		}
		return nil
	})
	return out, err
}

// Stats returns what the last Submit did.
func (q *Query) Stats() (QueryStats, error) {
	var st QueryStats
	err := q.with(func(s *queryState) error {
		var m, d, p, b C.uint64_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_stats(s.c, &m, &d, &p, &b, &cerr), cerr); err != nil {
			return err
		}
		st = QueryStats{uint64(m), uint64(d), uint64(p), uint64(b)}
		return nil
	})
	return st, err
}

// pinnedBuf pins the first element of a non-empty buffer until Close and returns its
// address and length; an empty buffer gets a static C address.
func pinnedBuf[T any](s *queryState, buf []T) (unsafe.Pointer, int) {
	if len(buf) == 0 {
		return emptyBuffer, 0
	}
	s.pinner.Pin(&buf[0])
	return unsafe.Pointer(&buf[0]), len(buf)
}

// setBuffer runs f with the C handle and a C copy of field's name.
func (q *Query) setBuffer(field string, f func(s *queryState, cfield *C.char) error) error {
	cfield, err := cString("field name", field)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cfield))
	return q.with(func(s *queryState) error { return f(s, cfield) })
}

// SetDataBuffer sets the buffer receiving field's values in the next SubmitBatch (batches
// read the fields given buffers, in the order first set). Setting it again (another slice)
// continues the read into it.
func (q *Query) SetDataBuffer(field string, data []byte) error {
	return q.setBuffer(field, func(s *queryState, cf *C.char) error {
		p, n := pinnedBuf(s, data)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_set_data_buffer(s.c, cf, p, C.size_t(n), &cerr), cerr)
	})
}

// SetOffsetsBuffer sets the buffer receiving the start of each var-size cell of field in its
// data buffer (the first cell of each batch at 0).
func (q *Query) SetOffsetsBuffer(field string, offsets []uint64) error {
	return q.setBuffer(field, func(s *queryState, cf *C.char) error {
		p, n := pinnedBuf(s, offsets)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_set_offsets_buffer(s.c, cf, (*C.uint64_t)(p), C.size_t(n), &cerr), cerr)
	})
}

// SetValidityBuffer sets the buffer receiving the validity of nullable field (1 byte a cell,
// 0 null).
func (q *Query) SetValidityBuffer(field string, validity []uint8) error {
	return q.setBuffer(field, func(s *queryState, cf *C.char) error {
		p, n := pinnedBuf(s, validity)
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_set_validity_buffer(s.c, cf, (*C.uint8_t)(p), C.size_t(n), &cerr), cerr)
	})
}

// SubmitBatch reads the next batch into the buffers: as many whole cells as every buffer
// holds (a var-size cell is never split), after the previous batch. Status then says
// QueryIncomplete (call again) or QueryCompleted; ResultSize what each field received. A next
// cell larger than its buffer is ErrBufferTooSmall, with nothing consumed. Submitting a
// completed read starts it again.
func (q *Query) SubmitBatch() error {
	return q.with(func(s *queryState) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_query_submit_batch(s.c, &cerr), cerr)
	})
}

// Status returns the status of the batch read.
func (q *Query) Status() (QueryStatus, error) {
	var st QueryStatus
	err := q.with(func(s *queryState) error {
		var cst C.tdb_query_status_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_status(s.c, &cst, &cerr), cerr); err != nil {
			return err
		}
		st = QueryStatus(cst)
		return nil
	})
	return st, err
}

// ResultSize returns what the last SubmitBatch wrote for field.
func (q *Query) ResultSize(field string) (BatchSize, error) {
	var bs BatchSize
	err := q.setBuffer(field, func(s *queryState, cf *C.char) error {
		var cells C.uint64_t
		var d, o, v C.size_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_query_result_size(s.c, cf, &cells, &d, &o, &v, &cerr), cerr); err != nil {
			return err
		}
		bs = BatchSize{uint64(cells), int(d), int(o), int(v)}
		return nil
	})
	return bs, err
}
