package tdbfilter_test

import (
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"reflect"
	"sync"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// The arrays TileDB-Py 0.36.1 wrote with tests/data/c_array/make_c_array.py (its comments
// give the values checked here).
func fixture(name string) string {
	return filepath.Join("..", "..", "tests", "data", "c_array", name)
}

// denseA is attribute a of the dense fixture at (r, c): -1 where nothing was written.
func denseA(r, c int32, both bool) int32 {
	if both && r >= 3 && r <= 5 && c >= 2 && c <= 3 {
		return -(10*r + c)
	}
	if r <= 4 {
		return 10*r + c
	}
	return -1
}

func openArray(t *testing.T, name string, opts ...tdbfilter.ArrayOption) *tdbfilter.Array {
	t.Helper()
	a, err := tdbfilter.OpenArray(fixture(name), opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Close() })
	return a
}

func TestArrayDenseSchemaAndFragments(t *testing.T) {
	a := openArray(t, "dense")
	sparse, err := a.Sparse()
	if err != nil || sparse {
		t.Fatalf("sparse = %v, %v", sparse, err)
	}
	dims, attrs, err := a.Fields()
	if err != nil {
		t.Fatal(err)
	}
	if len(dims) != 2 || dims[0].Name != "r" || dims[1].Datatype != tdbfilter.Int32 {
		t.Fatalf("dims %+v", dims)
	}
	want := []tdbfilter.Field{
		{Name: "a", Datatype: tdbfilter.Int32, CellValNum: 1},
		{Name: "s", Datatype: tdbfilter.StringUTF8, CellValNum: tdbfilter.VarNum},
		{Name: "f", Datatype: tdbfilter.Float64, CellValNum: 1, Nullable: true},
	}
	if !reflect.DeepEqual(attrs, want) {
		t.Fatalf("attributes %+v, want %+v", attrs, want)
	}
	frags, err := a.Fragments()
	if err != nil || len(frags) != 2 || frags[0].TimestampStart != 1 || frags[1].TimestampEnd != 2 || !frags[1].Dense || frags[0].Version != 22 {
		t.Fatalf("fragments %+v, %v", frags, err)
	}
}

func TestArrayDenseReads(t *testing.T) {
	a := openArray(t, "dense", tdbfilter.WithThreads(2))
	cols, err := a.Read([]string{"a", "f"}, []tdbfilter.Range{{int32(1), int32(6)}, {int32(1), int32(4)}})
	if err != nil {
		t.Fatal(err)
	}
	values, err := tdbfilter.Values[int32](&cols[0])
	if err != nil {
		t.Fatal(err)
	}
	k := 0
	for r := int32(1); r <= 6; r++ {
		for c := int32(1); c <= 4; c++ {
			if values[k] != denseA(r, c, true) {
				t.Fatalf("a(%d,%d) = %d, want %d", r, c, values[k], denseA(r, c, true))
			}
			k++
		}
	}
	// f is nullable: column 2 of fragment 1 is null; rows 3..5 x cols 2..3 are 0.5.
	f, err := tdbfilter.Values[float64](&cols[1])
	if err != nil || len(cols[1].Validity) != 24 {
		t.Fatalf("f: %v, validity %d", err, len(cols[1].Validity))
	}
	if cols[1].Validity[1] != 0 || cols[1].Validity[0] != 1 || f[0] != 1.1 || f[2*4+1] != 0.5 {
		t.Fatalf("f = %v, validity %v", f, cols[1].Validity)
	}
	if _, err := tdbfilter.Values[int64](&cols[0]); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("Values[int64] of int32 cells: %v", err)
	}
	// s = str(10r+c) repeated (10r+c) % 3 times, "new" where fragment 2 wrote.
	s, err := a.Read([]string{"s"}, []tdbfilter.Range{{int32(3), int32(3)}, {int32(1), int32(4)}})
	if err != nil {
		t.Fatal(err)
	}
	strs, err := s[0].Strings()
	if err != nil || !reflect.DeepEqual(strs, []string{"31", "new", "new", "34"}) {
		t.Fatalf("s = %q, %v", strs, err)
	}
}

func TestArrayTimeTravel(t *testing.T) {
	a := openArray(t, "dense", tdbfilter.WithTimestamps(0, 1))
	cols, err := a.Read([]string{"a"}, nil) // the non-empty domain: rows 1..4
	if err != nil {
		t.Fatal(err)
	}
	values, _ := tdbfilter.Values[int32](&cols[0])
	if len(values) != 16 || values[9] != denseA(3, 2, false) {
		t.Fatalf("a at timestamp 1 = %v", values)
	}
}

func TestArraySparse(t *testing.T) {
	a := openArray(t, "sparse")
	cols, err := a.Read([]string{"x", "name", "v", "t"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tdbfilter.Values[int64](&cols[0])
	names, _ := cols[1].Strings()
	v, _ := tdbfilter.Values[uint16](&cols[2])
	tv, _ := cols[3].Strings()
	if !reflect.DeepEqual(x, []int64{1, 5, 5, 7, 42}) ||
		!reflect.DeepEqual(names, []string{"m", "a", "b", "zz", "q"}) ||
		!reflect.DeepEqual(v, []uint16{30, 20, 1, 4, 3}) ||
		!reflect.DeepEqual(tv, []string{"m", "two", "one", "four", ""}) {
		t.Fatalf("x %v names %q v %v t %q", x, names, v, tv)
	}
	_, err = a.Read([]string{"v"}, []tdbfilter.Range{{int64(0), int64(9)}, {int64(0), int64(0)}})
	wantErr(t, "subarray on a string dimension", err, tdbfilter.ErrUnsupported, "dimension 'name' (string_ascii)")
}

// Subarrays are checked in Go before C sees them: one Range per dimension, bounds of the
// dimension's Go type. Same-size wrong types (float32 or uint32 for int32) would pass a size
// check and be read as other numbers.
func TestArraySubarrayChecks(t *testing.T) {
	a := openArray(t, "dense")
	need := "the array's 2 dimensions need one Range each: 'r' (int32, Go int32), 'c' (int32, Go int32)"
	for _, sub := range [][]tdbfilter.Range{
		{},
		{{int32(1), int32(2)}},
		{{int32(1), int32(2)}, {int32(1), int32(2)}, {int32(1), int32(2)}},
	} {
		_, err := a.Read([]string{"a"}, sub)
		wantErr(t, "wrong count", err, tdbfilter.ErrInvalidArgument, fmt.Sprintf("subarray has %d ranges; %s", len(sub), need))
	}
	for _, c := range []struct {
		sub  []tdbfilter.Range
		text string
	}{
		{[]tdbfilter.Range{{float32(1), float32(2)}, {int32(1), int32(2)}}, "subarray range 0: Lo is float32; dimension 'r' (int32) takes int32"},
		{[]tdbfilter.Range{{int32(1), int32(2)}, {int32(1), uint32(2)}}, "subarray range 1: Hi is uint32; dimension 'c' (int32) takes int32"},
		{[]tdbfilter.Range{{int64(1), int64(2)}, {int32(1), int32(2)}}, "subarray range 0: Lo is int64; dimension 'r' (int32) takes int32"},
		{[]tdbfilter.Range{{1, 2}, {int32(1), int32(2)}}, "subarray range 0: Lo is int; dimension 'r' (int32) takes int32"},
		{[]tdbfilter.Range{{int32(1), int32(2)}, {nil, int32(2)}}, "subarray range 1: Lo is nil; dimension 'c' (int32) takes int32"},
	} {
		_, err := a.Read([]string{"a"}, c.sub)
		wantErr(t, "wrong type", err, tdbfilter.ErrInvalidArgument, c.text)
	}
	// Checked even when no field is read.
	_, err := a.Read(nil, []tdbfilter.Range{{int32(1), int32(2)}})
	wantErr(t, "no fields", err, tdbfilter.ErrInvalidArgument, need)

	// Right types: rows 2..3, column 4.
	cols, err := a.Read([]string{"a", "r", "c"}, []tdbfilter.Range{{int32(2), int32(3)}, {int32(4), int32(4)}})
	if err != nil {
		t.Fatal(err)
	}
	values, _ := tdbfilter.Values[int32](&cols[0])
	rows, _ := tdbfilter.Values[int32](&cols[1])
	if !reflect.DeepEqual(values, []int32{denseA(2, 4, true), denseA(3, 4, true)}) || !reflect.DeepEqual(rows, []int32{2, 3}) {
		t.Fatalf("a = %v at rows %v", values, rows)
	}

	// A uint8 dimension takes uint8 bounds.
	m := openArray(t, "meta")
	cols, err = m.Read([]string{"color"}, []tdbfilter.Range{{uint8(1), uint8(2)}})
	if err != nil {
		t.Fatal(err)
	}
	if colors, _ := tdbfilter.Values[int8](&cols[0]); !reflect.DeepEqual(colors, []int8{0, 1}) {
		t.Fatalf("color = %v", colors)
	}
	_, err = m.Read([]string{"color"}, []tdbfilter.Range{{int8(1), int8(2)}})
	wantErr(t, "int8 on uint8", err, tdbfilter.ErrInvalidArgument, "subarray range 0: Lo is int8; dimension 'd' (uint8) takes uint8")

	// A NUL byte in a field name is refused, not cut short.
	_, err = a.Read([]string{"a\x00b"}, nil)
	wantErr(t, "NUL in a field name", err, tdbfilter.ErrInvalidArgument, "NUL")
}

func TestArrayMetadataAndEnumeration(t *testing.T) {
	a := openArray(t, "meta")
	md, err := a.Metadata()
	if err != nil {
		t.Fatal(err)
	}
	if len(md) != 3 || md["name"].String() != "meta array" || md["version"].Datatype != tdbfilter.Int64 {
		t.Fatalf("metadata %+v", md)
	}
	scale := md["scale"]
	if scale.Count != 2 || math.Float64frombits(leUint64(scale.Bytes[8:])) != 2.0 {
		t.Fatalf("scale %+v", scale)
	}
	e, err := a.Enumeration("colors")
	if err != nil {
		t.Fatal(err)
	}
	if values, _ := e.Strings(); !reflect.DeepEqual(values, []string{"red", "green", "blue"}) {
		t.Fatalf("enumeration %q", values)
	}
	if _, err := a.Enumeration("shapes"); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("missing enumeration: %v", err)
	}
}

func leUint64(b []byte) uint64 {
	var v uint64
	for i := 7; i >= 0; i-- {
		v = v<<8 | uint64(b[i])
	}
	return v
}

func TestArrayErrorsAndClose(t *testing.T) {
	if _, err := tdbfilter.OpenArray("tiledb://namespace/array"); !errors.Is(err, tdbfilter.ErrUnsupported) {
		t.Fatalf("tiledb://: %v", err)
	}
	if _, err := tdbfilter.OpenArray(fixture("missing")); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("missing: %v", err)
	}
	if _, err := tdbfilter.OpenArray(fixture("dense"), tdbfilter.WithKey([]byte("short"))); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("short key: %v", err)
	}
	a, err := tdbfilter.OpenArray(fixture("dense"))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := a.Read([]string{"nope"}, nil); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("unknown field: %v", err)
	}
	a.Close()
	a.Close()
	if _, err := a.Read([]string{"a"}, nil); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
}

func TestArrayMemoryLimit(t *testing.T) {
	a := openArray(t, "dense", tdbfilter.WithMemoryLimit(64))
	if _, err := a.Read([]string{"a"}, nil); !errors.Is(err, tdbfilter.ErrOutOfMemory) {
		t.Fatalf("20 int32 cells over a 64-byte limit: %v", err)
	}
	b := openArray(t, "dense", tdbfilter.WithMemoryLimit(80))
	if cols, err := b.Read([]string{"a"}, nil); err != nil || cols[0].Cells != 20 {
		t.Fatalf("at the limit: %v", err)
	}
}

func TestArrayConcurrentReads(t *testing.T) {
	a := openArray(t, "dense")
	var wg sync.WaitGroup
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			cols, err := a.Read([]string{"a"}, nil)
			if err != nil || cols[0].Cells != 20 {
				t.Errorf("concurrent read: %v", err)
			}
		}()
	}
	wg.Wait()
}
