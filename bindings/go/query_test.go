package tdbfilter_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// queryArray writes a sparse array: x in 0..19 (INT64), s = "v<x>" (var, nullable: null
// where x % 3 == 0).
func queryArray(t *testing.T) *tdbfilter.Array {
	t.Helper()
	path := filepath.Join(t.TempDir(), "q")
	schema := `{"sparse": true, "capacity": 4,
 "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile": 10}],
 "attributes": [{"name": "s", "type": "STRING_ASCII", "cell_val_num": "var", "nullable": true}]}`
	if err := tdbfilter.Create(path, schema, nil); err != nil {
		t.Fatal(err)
	}
	write(t, path, nil, 1, func(w *tdbfilter.Writer) error {
		xs := make([]int64, 20)
		var data []byte
		offs := make([]uint64, 20)
		valid := make([]uint8, 20)
		for i := range xs {
			xs[i] = int64(i)
			offs[i] = uint64(len(data))
			data = fmt.Appendf(data, "v%d", i)
			if i%3 != 0 {
				valid[i] = 1
			}
		}
		if err := tdbfilter.SetValues(w, "x", xs); err != nil {
			return err
		}
		if err := w.SetData("s", data); err != nil {
			return err
		}
		if err := w.SetOffsets("s", offs); err != nil {
			return err
		}
		return w.SetValidity("s", valid)
	})
	a, err := tdbfilter.OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func newQuery(t *testing.T, a *tdbfilter.Array) *tdbfilter.Query {
	t.Helper()
	q, err := tdbfilter.NewQuery(a)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { q.Close() })
	return q
}

func TestQuerySubmitRangesConditionAggregates(t *testing.T) {
	a := queryArray(t)
	q := newQuery(t, a)
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(q.AddRange(0, tdbfilter.Range{Lo: int64(15), Hi: int64(17)}))
	must(q.AddRange(0, tdbfilter.Range{Lo: int64(2), Hi: int64(3)}))
	must(q.AddField("x"))
	must(q.SetLayout(tdbfilter.RowMajor))
	cols, err := q.Submit()
	must(err)
	var got []int64
	for i := 0; i < int(cols[0].Cells); i++ {
		got = append(got, int64(binary.LittleEndian.Uint64(cols[0].Data[8*i:])))
	}
	if fmt.Sprint(got) != "[2 3 15 16 17]" {
		t.Fatalf("x = %v", got)
	}
	if err := q.AddRange(0, tdbfilter.Range{Lo: int32(1), Hi: int32(2)}); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("int32 bounds on an INT64 dimension: %v", err)
	}
	if err := q.SetCondition("x <"); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("bad condition: %v", err)
	}
	if err := q.AddField("nope"); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("unknown field: %v", err)
	}

	agg := newQuery(t, a)
	must(agg.AddAggregate(tdbfilter.AggCount, ""))
	must(agg.AddAggregate(tdbfilter.AggNullCount, "s"))
	must(agg.SetCondition("x >= 10"))
	cols, err = agg.Submit()
	must(err)
	if len(cols) != 0 {
		t.Fatalf("an aggregate query returned %d columns", len(cols))
	}
	vals, err := agg.Aggregates()
	must(err)
	if len(vals) != 2 || vals[0].Label != "count" || binary.LittleEndian.Uint64(vals[0].Value) != 10 ||
		binary.LittleEndian.Uint64(vals[1].Value) != 3 {
		t.Fatalf("aggregates %+v", vals)
	}
	if _, err := agg.Stats(); err != nil {
		t.Fatal(err)
	}
	if err := agg.AddAggregate(tdbfilter.AggregateOp(42), "s"); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("unknown operator: %v", err)
	}
}

func TestQueryBatchesContinueUntilComplete(t *testing.T) {
	a := queryArray(t)
	q := newQuery(t, a)
	x := make([]byte, 8*3)
	s := make([]byte, 7)
	offs := make([]uint64, 3)
	valid := make([]uint8, 3)
	if err := q.SetDataBuffer("x", x); err != nil {
		t.Fatal(err)
	}
	if err := q.SetDataBuffer("s", s); err != nil {
		t.Fatal(err)
	}
	if err := q.SubmitBatch(); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("no offsets buffer: %v", err)
	}
	if err := q.SetOffsetsBuffer("s", offs); err != nil {
		t.Fatal(err)
	}
	if err := q.SetValidityBuffer("s", valid); err != nil {
		t.Fatal(err)
	}
	next, batches := 0, 0
	for {
		if err := q.SubmitBatch(); err != nil {
			t.Fatal(err)
		}
		runtime.GC() // the pinned buffers stay put
		batches++
		xs, err := q.ResultSize("x")
		if err != nil {
			t.Fatal(err)
		}
		ss, err := q.ResultSize("s")
		if err != nil {
			t.Fatal(err)
		}
		if xs.Cells == 0 || ss.Offsets != int(xs.Cells) || ss.ValiditySize != int(xs.Cells) || ss.DataSize > len(s) {
			t.Fatalf("batch %d: sizes %+v %+v", batches, xs, ss)
		}
		for i := 0; i < int(xs.Cells); i++ {
			if v := int(binary.LittleEndian.Uint64(x[8*i:])); v != next {
				t.Fatalf("batch %d cell %d: x = %d, want %d", batches, i, v, next)
			}
			end := uint64(ss.DataSize)
			if i+1 < int(xs.Cells) {
				end = offs[i+1]
			}
			if got, want := string(s[offs[i]:end]), fmt.Sprintf("v%d", next); got != want {
				t.Fatalf("s of %d = %q, want %q", next, got, want)
			}
			if want := next%3 != 0; (valid[i] == 1) != want {
				t.Fatalf("validity of %d = %d", next, valid[i])
			}
			next++
		}
		st, err := q.Status()
		if err != nil {
			t.Fatal(err)
		}
		if st == tdbfilter.QueryCompleted {
			break
		}
		if st != tdbfilter.QueryIncomplete {
			t.Fatalf("status %d", st)
		}
	}
	if next != 20 || batches < 7 {
		t.Fatalf("%d cells in %d batches", next, batches)
	}
	// A completed read starts over; a cell over its buffer is ErrBufferTooSmall.
	if err := q.SetDataBuffer("s", s[:1]); err != nil {
		t.Fatal(err)
	}
	if err := q.SubmitBatch(); !errors.Is(err, tdbfilter.ErrBufferTooSmall) {
		t.Fatalf("1-byte buffer: %v", err)
	}
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	if err := q.SubmitBatch(); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	if _, err := q.Status(); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}
