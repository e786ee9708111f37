package tdbfilter_test

import (
	"encoding/binary"
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

const denseSchema = `{"sparse": false,
 "dimensions": [{"name": "r", "type": "INT32", "domain": [1, 6], "tile": 2},
                {"name": "c", "type": "INT32", "domain": [1, 4], "tile": 2}],
 "attributes": [{"name": "a", "type": "INT32", "filters": "byteshuffle,zstd:3"},
                {"name": "f", "type": "FLOAT64", "nullable": true}]}`

const sparseSchema = `{"sparse": true, "capacity": 3,
 "dimensions": [{"name": "x", "type": "INT64", "domain": [0, 99], "tile": 10}],
 "attributes": [{"name": "s", "type": "STRING_UTF8", "cell_val_num": "var", "filters": "zstd:1"}]}`

// write runs one writer: set, submit, finalize, close; fails the test on any error.
func write(t *testing.T, path string, key []byte, ts uint64, set func(w *tdbfilter.Writer) error) string {
	t.Helper()
	w, err := tdbfilter.OpenWriter(path, key, ts)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if err := set(w); err != nil {
		t.Fatal(err)
	}
	if err := w.Submit(); err != nil {
		t.Fatal(err)
	}
	name, err := w.Finalize()
	if err != nil {
		t.Fatal(err)
	}
	return name
}

func TestWriterDenseReadBack(t *testing.T) {
	path := filepath.Join(t.TempDir(), "dense")
	if err := tdbfilter.Create(path, denseSchema, nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "create twice", tdbfilter.Create(path, denseSchema, nil), tdbfilter.ErrInvalidArgument, "already exists")
	a := make([]int32, 12)
	f := make([]float64, 12)
	valid := make([]uint8, 12)
	for i := range a {
		a[i] = int32(100 + i)
		f[i] = float64(i) / 2
		if i%3 != 0 {
			valid[i] = 1
		}
	}
	name := write(t, path, nil, 7, func(w *tdbfilter.Writer) error {
		if err := w.SetSubarray([]tdbfilter.Range{{int32(2), int32(4)}, {int32(1), int32(4)}}); err != nil {
			return err
		}
		if err := tdbfilter.SetValues(w, "a", a); err != nil {
			return err
		}
		if err := tdbfilter.SetValues(w, "f", f); err != nil {
			return err
		}
		return w.SetValidity("f", valid)
	})
	if len(name) != 6+32+3 || name[:6] != "__7_7_" {
		t.Fatalf("fragment name %q", name)
	}
	// A col-major write of rows 5..6 at timestamp 8: the first dimension fastest.
	col := []int32{1, 2, 3, 4, 5, 6, 7, 8} // (5,1) (6,1) (5,2) (6,2) ...
	write(t, path, nil, 8, func(w *tdbfilter.Writer) error {
		if err := w.SetLayout(tdbfilter.ColMajor); err != nil {
			return err
		}
		if err := w.SetSubarray([]tdbfilter.Range{{int32(5), int32(6)}, {int32(1), int32(4)}}); err != nil {
			return err
		}
		if err := tdbfilter.SetValues(w, "a", col); err != nil {
			return err
		}
		if err := tdbfilter.SetValues(w, "f", make([]float64, 8)); err != nil {
			return err
		}
		return w.SetValidity("f", []uint8{1, 1, 1, 1, 1, 1, 1, 1})
	})
	arr, err := tdbfilter.OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Close()
	cols, err := arr.Read([]string{"a", "f"}, []tdbfilter.Range{{int32(1), int32(6)}, {int32(1), int32(4)}})
	if err != nil {
		t.Fatal(err)
	}
	got, _ := tdbfilter.Values[int32](&cols[0])
	for r := 1; r <= 6; r++ {
		for c := 1; c <= 4; c++ {
			want := int32(math.MinInt32)
			switch {
			case r >= 2 && r <= 4:
				want = int32(100 + (r-2)*4 + (c - 1))
			case r >= 5:
				want = int32((c-1)*2 + (r - 5) + 1)
			}
			if got[(r-1)*4+(c-1)] != want {
				t.Fatalf("a[%d,%d] = %d, want %d", r, c, got[(r-1)*4+(c-1)], want)
			}
		}
	}
	fv, _ := tdbfilter.Values[float64](&cols[1])
	if fv[4+5] != 2.5 || cols[1].Validity[4+5] != 1 || cols[1].Validity[4+3] != 0 || cols[1].Validity[0] != 0 {
		t.Fatalf("f %v validity %v", fv, cols[1].Validity)
	}
	frags, _ := arr.Fragments()
	if len(frags) != 2 || frags[0].Name != name || frags[1].TimestampStart != 8 {
		t.Fatalf("fragments %+v", frags)
	}
}

func TestWriterSparseVarAndMetadata(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	if err := tdbfilter.Create(path, sparseSchema, nil); err != nil {
		t.Fatal(err)
	}
	// Unordered: one batch, sorted by the writer.
	write(t, path, nil, 3, func(w *tdbfilter.Writer) error {
		if err := tdbfilter.SetValues(w, "x", []int64{42, 7, 99}); err != nil {
			return err
		}
		if err := w.SetData("s", []byte("fortysevenninety")); err != nil {
			return err
		}
		return w.SetOffsets("s", []uint64{0, 5, 10})
	})
	// Global order: two batches streamed into one fragment.
	write(t, path, nil, 4, func(w *tdbfilter.Writer) error {
		if err := w.SetLayout(tdbfilter.GlobalOrder); err != nil {
			return err
		}
		if err := tdbfilter.SetValues(w, "x", []int64{0, 1}); err != nil {
			return err
		}
		if err := w.SetData("s", []byte("zeroone")); err != nil {
			return err
		}
		if err := w.SetOffsets("s", []uint64{0, 4}); err != nil {
			return err
		}
		if err := w.Submit(); err != nil {
			return err
		}
		if err := tdbfilter.SetValues(w, "x", []int64{13}); err != nil {
			return err
		}
		if err := w.SetData("s", []byte("thirteen")); err != nil {
			return err
		}
		return w.SetOffsets("s", []uint64{0})
	})
	le := func(vs ...int32) []byte {
		var b []byte
		for _, v := range vs {
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		}
		return b
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(tdbfilter.MetadataPut(path, nil, 10, "pair", tdbfilter.Int32, 2, le(5, 6)))
	must(tdbfilter.MetadataPut(path, nil, 11, "title", tdbfilter.StringUTF8, 5, []byte("hello")))
	must(tdbfilter.MetadataDelete(path, nil, 12, "pair"))
	wantErr(t, "metadata size", tdbfilter.MetadataPut(path, nil, 13, "x", tdbfilter.Int32, 2, le(1)), tdbfilter.ErrInvalidArgument, "")

	arr, err := tdbfilter.OpenArray(path)
	must(err)
	defer arr.Close()
	cols, err := arr.Read([]string{"x", "s"}, nil)
	must(err)
	x, _ := tdbfilter.Values[int64](&cols[0])
	s, _ := cols[1].Strings()
	if !reflect.DeepEqual(x, []int64{0, 1, 7, 13, 42, 99}) ||
		!reflect.DeepEqual(s, []string{"zero", "one", "seven", "thirteen", "forty", "ninety"}) {
		t.Fatalf("x %v s %q", x, s)
	}
	if frags, _ := arr.Fragments(); len(frags) != 2 || frags[0].Cells != 3 || frags[1].Cells != 3 {
		t.Fatalf("fragments %+v", frags)
	}
	meta, err := arr.Metadata()
	must(err)
	if len(meta) != 1 || meta["title"].String() != "hello" {
		t.Fatalf("metadata %v", meta)
	}
	old, err := tdbfilter.OpenArray(path, tdbfilter.WithTimestamps(0, 11))
	must(err)
	defer old.Close()
	meta, err = old.Metadata()
	must(err)
	if p := meta["pair"]; p.Datatype != tdbfilter.Int32 || p.Count != 2 || !reflect.DeepEqual(p.Bytes, le(5, 6)) {
		t.Fatalf("metadata at 11: %v", meta)
	}
}

// Errors match their sentinels with errors.Is, carry the library's message, and commit
// nothing; a writer closed (or dropped) without Finalize leaves no fragment.
func TestWriterErrorsCommitNothing(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "dense")
	if err := tdbfilter.Create(path, denseSchema, nil); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "bad schema", tdbfilter.Create(filepath.Join(dir, "bad"), `{"sparse": true}`, nil), tdbfilter.ErrInvalidArgument, "")
	wantErr(t, "NUL path", tdbfilter.Create("a\x00b", denseSchema, nil), tdbfilter.ErrInvalidArgument, "NUL")
	_, err := tdbfilter.OpenWriter(filepath.Join(dir, "missing"), nil, 0)
	wantErr(t, "missing array", err, tdbfilter.ErrInvalidArgument, "")
	_, err = tdbfilter.OpenWriter(path, nil, math.MaxUint64)
	wantErr(t, "timestamp UINT64_MAX", err, tdbfilter.ErrInvalidArgument, "UINT64_MAX")
	// The system's refusals are ErrIO, naming the path: a parent that is a file.
	plain := filepath.Join(dir, "plain")
	if err := os.WriteFile(plain, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "parent is a file", tdbfilter.Create(filepath.Join(plain, "sub", "a"), denseSchema, nil), tdbfilter.ErrIO, "plain/sub: cannot create the folder: Not a directory")

	w, err := tdbfilter.OpenWriter(path, nil, 9)
	if err != nil {
		t.Fatal(err)
	}
	wantErr(t, "layout", w.SetLayout(tdbfilter.Layout(7)), tdbfilter.ErrInvalidArgument, "")
	wantErr(t, "subarray type", w.SetSubarray([]tdbfilter.Range{{int64(1), int64(2)}, {int32(1), int32(4)}}), tdbfilter.ErrInvalidArgument, "'r'")
	wantErr(t, "subarray outside", w.SetSubarray([]tdbfilter.Range{{int32(5), int32(7)}, {int32(1), int32(4)}}), tdbfilter.ErrInvalidArgument, "")
	wantErr(t, "dimension as data", w.SetData("r", make([]byte, 4)), tdbfilter.ErrInvalidArgument, "dimension")
	wantErr(t, "validity of non-nullable", w.SetValidity("a", []uint8{1}), tdbfilter.ErrInvalidArgument, "not nullable")
	if err := w.SetSubarray([]tdbfilter.Range{{int32(2), int32(4)}, {int32(1), int32(4)}}); err != nil {
		t.Fatal(err)
	}
	if err := tdbfilter.SetValues(w, "a", make([]int32, 11)); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "missing field", w.Submit(), tdbfilter.ErrInvalidArgument, "")
	_, err = w.Finalize()
	wantErr(t, "finalize after a failed submit", err, tdbfilter.ErrInvalidArgument, "")
	w.Close()
	w.Close()
	if err := w.Submit(); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("submit after close: %v", err)
	}

	// Submitted but never finalized: closed, or dropped and collected.
	for _, close := range []bool{true, false} {
		w, err := tdbfilter.OpenWriter(path, nil, 10)
		if err != nil {
			t.Fatal(err)
		}
		if err := tdbfilter.SetValues(w, "a", make([]int32, 24)); err != nil {
			t.Fatal(err)
		}
		if err := tdbfilter.SetValues(w, "f", make([]float64, 24)); err != nil {
			t.Fatal(err)
		}
		if err := w.SetValidity("f", make([]uint8, 24)); err != nil {
			t.Fatal(err)
		}
		if err := w.Submit(); err != nil {
			t.Fatal(err)
		}
		if close {
			w.Close()
		}
		w = nil
		runtime.GC()
		runtime.GC()
	}
	entries, err := os.ReadDir(filepath.Join(path, "__commits"))
	if err != nil || len(entries) != 0 {
		t.Fatalf("commits %v %v", entries, err)
	}
}

// Buffers set but never submitted stay pinned until Close; the garbage collector runs in
// between and the cells arrive intact.
func TestWriterPinnedBuffersSurviveGC(t *testing.T) {
	path := filepath.Join(t.TempDir(), "sparse")
	key := []byte("0123456789abcdef0123456789abcdef")
	if err := tdbfilter.Create(path, sparseSchema, key); err != nil {
		t.Fatal(err)
	}
	_, err := tdbfilter.OpenWriter(path, nil, 0)
	wantErr(t, "no key", err, tdbfilter.ErrDecryptionFailed, "")
	n := 100
	write(t, path, key, 0, func(w *tdbfilter.Writer) error {
		x := make([]int64, n)
		offs := make([]uint64, n)
		data := make([]byte, 0, n)
		for i := range x {
			x[i] = int64(n - 1 - i)
			offs[i] = uint64(len(data))
			data = append(data, byte('a'+i%26))
		}
		if err := tdbfilter.SetValues(w, "x", x); err != nil {
			return err
		}
		if err := w.SetData("s", data); err != nil {
			return err
		}
		if err := w.SetOffsets("s", offs); err != nil {
			return err
		}
		for range 3 {
			runtime.GC()
			_ = make([]byte, 1<<20)
		}
		return nil
	})
	wantErr(t, "metadata with a wrong key", tdbfilter.MetadataPut(path, make([]byte, 32), 0, "k", tdbfilter.Int32, 1, []byte{1, 0, 0, 0}), tdbfilter.ErrDecryptionFailed, "")
	arr, err := tdbfilter.OpenArray(path, tdbfilter.WithKey(key))
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Close()
	cols, err := arr.Read([]string{"x", "s"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	x, _ := tdbfilter.Values[int64](&cols[0])
	s, _ := cols[1].Strings()
	for i := range n {
		if x[i] != int64(i) || s[i] != string(rune('a'+(n-1-i)%26)) {
			t.Fatalf("cell %d: x %d s %q", i, x[i], s[i])
		}
	}
}
