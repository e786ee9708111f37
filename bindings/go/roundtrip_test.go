package tdbfilter_test

import (
	"bytes"
	"errors"
	"slices"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

type fixedCase struct {
	spec     string
	dt       tdbfilter.Datatype
	cellSize uint64
	cells    []byte
}

// fixedCases cover every filter that applies to fixed-size tiles (DICTIONARY, for var-size
// strings, is in TestVarRoundTrip), with one tile of several 64 KiB chunks.
func fixedCases() []fixedCase {
	ints := int64Cells(20000, 1) // 160 000 bytes: three chunks
	floats := float64Cells(5000, 2)
	small := int64Cells(100, 3)
	pixels := make([]byte, 16*16*3) // a 16×16 RGB image
	for i := range pixels {
		pixels[i] = byte(i * 7 / 5)
	}
	c := func(spec string, dt tdbfilter.Datatype, cells []byte) fixedCase {
		return fixedCase{spec, dt, dt.Size(), cells}
	}
	return []fixedCase{
		c("none", tdbfilter.Int64, ints),
		c("gzip:1", tdbfilter.Int64, ints),
		c("gzip:9", tdbfilter.Int64, ints),
		c("zstd", tdbfilter.Int64, ints),
		c("zstd:19", tdbfilter.Int64, small),
		c("lz4", tdbfilter.Int64, ints),
		c("rle", tdbfilter.Int64, ints),
		c("bzip2:9", tdbfilter.Int64, ints),
		c("double_delta", tdbfilter.Int64, ints),
		c("double_delta:reinterpret=uint32", tdbfilter.Int64, ints),
		c("bit_width_reduction:256", tdbfilter.Int64, ints),
		c("bitshuffle", tdbfilter.Int64, ints),
		c("byteshuffle", tdbfilter.Int64, ints),
		c("positive_delta:128", tdbfilter.Int64, ints),
		c("checksum_md5", tdbfilter.Int64, ints),
		c("checksum_sha256", tdbfilter.Int64, ints),
		c("scale_float:factor=0.5:offset=0:byte_width=4", tdbfilter.Float64, floats),
		c("xor", tdbfilter.Float64, floats),
		c("delta", tdbfilter.Int64, ints),
		c("delta:reinterpret=int32", tdbfilter.Int64, ints),
		c("webp:quality=100:format=rgb:lossless=1:y_extent=16:x_extent=48", tdbfilter.Uint8, pixels),
		c("bitshuffle,lz4", tdbfilter.Int64, ints),
		c("byteshuffle,zstd:3", tdbfilter.Int64, ints),
		c("byteshuffle,bitshuffle,checksum_sha256,zstd", tdbfilter.Int64, ints),
		c("bitshuffle,zstd", tdbfilter.Int64, nil),         // empty tile
		{"zstd", tdbfilter.Int32, 12, int64Cells(4500, 4)}, // cells of three int32 values
	}
}

func TestRoundTripEveryFilter(t *testing.T) {
	for _, tc := range fixedCases() {
		t.Run(tc.spec, func(t *testing.T) {
			p := mustParse(t, tc.spec)
			filtered, err := p.Filter(tc.cells, tc.dt, tc.cellSize)
			if err != nil {
				t.Fatalf("Filter: %v", err)
			}
			size, err := tdbfilter.FilteredTileSize(filtered)
			if err != nil || size != len(filtered) {
				t.Fatalf("FilteredTileSize = %d, %v; want %d", size, err, len(filtered))
			}
			got, err := p.Unfilter(filtered, tc.dt, tc.cellSize)
			if err != nil {
				t.Fatalf("Unfilter: %v", err)
			}
			if !bytes.Equal(got, tc.cells) {
				t.Fatalf("Unfilter returned %d bytes differing from the %d cells", len(got), len(tc.cells))
			}

			// The _into variants give the same bytes.
			bound, err := p.FilteredSizeBound(len(tc.cells))
			if err != nil || bound < len(filtered) {
				t.Fatalf("FilteredSizeBound = %d, %v; filtered is %d", bound, err, len(filtered))
			}
			dst := make([]byte, bound)
			n, err := p.FilterInto(dst, tc.cells, tc.dt, tc.cellSize)
			if err != nil || !bytes.Equal(dst[:n], filtered) {
				t.Fatalf("FilterInto = %d, %v; differs from Filter", n, err)
			}
			out := make([]byte, len(tc.cells))
			n, err = p.UnfilterInto(out, filtered, tc.dt, tc.cellSize)
			if err != nil || n != len(tc.cells) || !bytes.Equal(out, tc.cells) {
				t.Fatalf("UnfilterInto = %d, %v", n, err)
			}

			// The spec and the serialized form rebuild the same pipeline.
			spec, err := p.Spec()
			if err != nil {
				t.Fatal(err)
			}
			again := mustParse(t, spec)
			if again.String() != spec {
				t.Fatalf("spec %q parses back as %q", spec, again.String())
			}
			ser, err := p.Serialize()
			if err != nil {
				t.Fatal(err)
			}
			de, err := tdbfilter.Deserialize(ser, tdbfilter.FormatVersion)
			if err != nil {
				t.Fatalf("Deserialize: %v", err)
			}
			defer de.Close()
			if de.String() != spec {
				t.Fatalf("deserialized pipeline is %q, want %q", de.String(), spec)
			}
			ser2, _ := de.Serialize()
			if !bytes.Equal(ser, ser2) {
				t.Fatal("serialization does not round-trip")
			}
			viaDe, err := de.Filter(tc.cells, tc.dt, tc.cellSize)
			if err != nil || !bytes.Equal(viaDe, filtered) {
				t.Fatalf("deserialized pipeline filters differently (%v)", err)
			}
		})
	}
}

func TestBuildPipelineFromFilters(t *testing.T) {
	p, err := tdbfilter.NewPipeline()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.String() != "none" {
		t.Fatalf("empty pipeline spec %q", p.String())
	}
	for _, f := range []tdbfilter.FilterType{tdbfilter.FilterBitWidthReduction, tdbfilter.FilterBitshuffle,
		tdbfilter.FilterZstd, tdbfilter.FilterScaleFloat, tdbfilter.FilterWebP} {
		if err := p.AddFilter(f); err != nil {
			t.Fatalf("AddFilter(%v): %v", f, err)
		}
	}
	check := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	check(p.SetBitWidthMaxWindow(0, 512))
	check(p.SetCompressionLevel(2, 7))
	check(p.SetScaleFloatFactor(3, 0.25))
	check(p.SetScaleFloatOffset(3, 10))
	check(p.SetScaleFloatByteWidth(3, 2))
	check(p.SetWebPQuality(4, 80))
	check(p.SetWebPInputFormat(4, tdbfilter.WebPBGRA))
	check(p.SetWebPLossless(4, true))
	check(p.SetWebPExtents(4, 8, 32))

	if w, err := p.BitWidthMaxWindow(0); err != nil || w != 512 {
		t.Errorf("BitWidthMaxWindow = %d, %v", w, err)
	}
	if l, err := p.CompressionLevel(2); err != nil || l != 7 {
		t.Errorf("CompressionLevel = %d, %v", l, err)
	}
	if f, err := p.ScaleFloatFactor(3); err != nil || f != 0.25 {
		t.Errorf("ScaleFloatFactor = %v, %v", f, err)
	}
	if o, err := p.ScaleFloatOffset(3); err != nil || o != 10 {
		t.Errorf("ScaleFloatOffset = %v, %v", o, err)
	}
	if w, err := p.ScaleFloatByteWidth(3); err != nil || w != 2 {
		t.Errorf("ScaleFloatByteWidth = %v, %v", w, err)
	}
	if q, err := p.WebPQuality(4); err != nil || q != 80 {
		t.Errorf("WebPQuality = %v, %v", q, err)
	}
	if f, err := p.WebPInputFormat(4); err != nil || f != tdbfilter.WebPBGRA {
		t.Errorf("WebPInputFormat = %v, %v", f, err)
	}
	if l, err := p.WebPLossless(4); err != nil || !l {
		t.Errorf("WebPLossless = %v, %v", l, err)
	}
	types, err := p.Filters()
	check(err)
	want := []tdbfilter.FilterType{tdbfilter.FilterBitWidthReduction, tdbfilter.FilterBitshuffle,
		tdbfilter.FilterZstd, tdbfilter.FilterScaleFloat, tdbfilter.FilterWebP}
	if !slices.Equal(types, want) {
		t.Fatalf("Filters = %v, want %v", types, want)
	}
	if n, err := p.Len(); err != nil || n != 5 {
		t.Fatalf("Len = %d, %v", n, err)
	}
	const spec = "bit_width_reduction:512,bitshuffle,zstd:7,scale_float:factor=0.25:offset=10:byte_width=2," +
		"webp:quality=80:format=4:lossless=1:y_extent=8:x_extent=32"
	if p.String() != spec {
		t.Fatalf("spec\n %q, want\n %q", p.String(), spec)
	}

	// Built by hand or parsed, a pipeline filters to the same bytes.
	q, err := tdbfilter.NewPipeline()
	check(err)
	defer q.Close()
	check(q.AddFilter(tdbfilter.FilterDelta))
	check(q.SetReinterpretDatatype(0, tdbfilter.Uint32))
	check(q.AddFilter(tdbfilter.FilterGzip))
	check(q.SetCompressionLevel(1, 9))
	if dt, err := q.ReinterpretDatatype(0); err != nil || dt != tdbfilter.Uint32 {
		t.Fatalf("ReinterpretDatatype = %v, %v", dt, err)
	}
	parsed := mustParse(t, "delta:reinterpret=uint32,gzip:9")
	cells := int64Cells(10000, 5)
	a, err := q.Filter(cells, tdbfilter.Int64, 8)
	check(err)
	b, err := parsed.Filter(cells, tdbfilter.Int64, 8)
	check(err)
	if !bytes.Equal(a, b) || q.String() != parsed.String() {
		t.Fatalf("hand-built %q and parsed %q pipelines differ", q.String(), parsed.String())
	}
}

func TestSettings(t *testing.T) {
	cells := int64Cells(50000, 6)
	p := mustParse(t, "bitshuffle,lz4")
	ref, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	// The thread count changes the speed, never the bytes.
	for _, threads := range []int{1, 2, 0} {
		if err := p.SetThreads(threads); err != nil {
			t.Fatal(err)
		}
		got, err := p.Filter(cells, tdbfilter.Int64, 8)
		if err != nil || !bytes.Equal(got, ref) {
			t.Fatalf("threads %d: different bytes (%v)", threads, err)
		}
	}
	if err := p.SetThreads(100000); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("SetThreads(100000) = %v", err)
	}
	// Max chunk size 0: the whole tile is one chunk, so the bytes change and still unfilter.
	if err := p.SetMaxChunkSize(0); err != nil {
		t.Fatal(err)
	}
	one, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil || bytes.Equal(one, ref) {
		t.Fatalf("max chunk size 0 changed nothing (%v)", err)
	}
	if got, err := p.Unfilter(one, tdbfilter.Int64, 8); err != nil || !bytes.Equal(got, cells) {
		t.Fatalf("single-chunk tile does not round-trip (%v)", err)
	}
	// libdeflate's GZIP is a valid TileDB GZIP stream.
	g := mustParse(t, "gzip:6")
	if err := g.SetGzipIdentical(false); err != nil {
		t.Fatal(err)
	}
	fast, err := g.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	if got, err := g.Unfilter(fast, tdbfilter.Int64, 8); err != nil || !bytes.Equal(got, cells) {
		t.Fatalf("libdeflate tile does not round-trip (%v)", err)
	}
}

func TestVarRoundTrip(t *testing.T) {
	offsets, data := stringCells(5000, 7)
	for _, tc := range []struct {
		data, offsets string
		dt            tdbfilter.Datatype
		emptyOffsets  bool // the offsets travel in the data tile
	}{
		{"zstd", "positive_delta,zstd", tdbfilter.StringASCII, false},
		{"dictionary", "zstd", tdbfilter.StringASCII, true},
		{"rle", "zstd", tdbfilter.StringUTF8, true},
		{"rle", "zstd", tdbfilter.Char, false},
		{"gzip", "double_delta", tdbfilter.StringUTF8, false},
		{"none", "none", tdbfilter.StringASCII, false},
	} {
		t.Run(tc.data+"|"+tc.offsets+"|"+tc.dt.String(), func(t *testing.T) {
			dp := mustParse(t, tc.data)
			op := mustParse(t, tc.offsets)
			fo, fd, err := dp.FilterVar(op, tc.dt, offsets, data)
			if err != nil {
				t.Fatalf("FilterVar: %v", err)
			}
			if tc.emptyOffsets != (len(fo) == 8) {
				t.Fatalf("filtered offsets tile has %d bytes", len(fo))
			}
			gotOffsets, gotData, err := dp.UnfilterVar(op, fo, fd, tc.dt)
			if err != nil {
				t.Fatalf("UnfilterVar: %v", err)
			}
			if !slices.Equal(gotOffsets, offsets) || !bytes.Equal(gotData, data) {
				t.Fatalf("var tile does not round-trip: %d offsets, %d bytes", len(gotOffsets), len(gotData))
			}
		})
	}
	// One pipeline for both tiles.
	p := mustParse(t, "zstd")
	fo, fd, err := p.FilterVar(p, tdbfilter.StringASCII, offsets, data)
	if err != nil {
		t.Fatal(err)
	}
	if o, d, err := p.UnfilterVar(p, fo, fd, tdbfilter.StringASCII); err != nil ||
		!slices.Equal(o, offsets) || !bytes.Equal(d, data) {
		t.Fatalf("same-pipeline var round trip failed (%v)", err)
	}
	// An empty var tile.
	fo, fd, err = p.FilterVar(p, tdbfilter.StringASCII, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	if o, d, err := p.UnfilterVar(p, fo, fd, tdbfilter.StringASCII); err != nil || len(o) != 0 || len(d) != 0 {
		t.Fatalf("empty var tile: %v %v %v", o, d, err)
	}
}

func TestEncryptionRoundTrip(t *testing.T) {
	key := []byte("0123456789abcdeF0123456789abcdeF")
	cells := int64Cells(30000, 8)
	p := mustParse(t, "byteshuffle,zstd")
	if err := p.SetEncryptionKey(key); err != nil {
		t.Fatal(err)
	}
	a, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	b, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(a, b) {
		t.Fatal("two encryptions gave the same bytes: IVs are not fresh")
	}
	for _, f := range [][]byte{a, b} {
		if got, err := p.Unfilter(f, tdbfilter.Int64, 8); err != nil || !bytes.Equal(got, cells) {
			t.Fatalf("encrypted tile does not round-trip (%v)", err)
		}
	}
	if s, _ := p.Serialize(); bytes.Contains(s, key) {
		t.Fatal("the key appears in the serialized pipeline")
	}
	if p.String() != "byteshuffle,zstd:-1" {
		t.Fatalf("spec %q", p.String())
	}
}

func TestVersion(t *testing.T) {
	if v := tdbfilter.Version(); v == "" || v[0] < '0' || v[0] > '9' {
		t.Fatalf("Version() = %q", v)
	}
}
