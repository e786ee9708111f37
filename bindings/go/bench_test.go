package tdbfilter_test

import (
	"bytes"
	"os"
	"runtime"
	"strconv"
	"sync"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// The benchmarks filter and unfilter the int64 cells of the file named by
// TDBFILTER_BENCH_FILE (default: 8 MiB of generated cells), cut into tiles of
// TDBFILTER_BENCH_TILE bytes (default 1 MiB, as `tdbf bench`). Each iteration processes every
// tile; the MB/s figures count unfiltered bytes.
//
//	tiles-parallel:  GOMAXPROCS goroutines take whole tiles, pipeline threads 1 (as
//	                 `tdbf bench` with several tiles per thread)
//	chunks-parallel: tiles one after another, each split across all cores by the library
//	                 (`tdbf bench --chunk-parallel`)
//	alloc:           Filter and Unfilter return new slices (`tdbf bench` streamed outputs)
//	into:            FilterInto and UnfilterInto write into buffers allocated once
//	                 (`tdbf bench --outputs into`)
var benchSpecs = []string{"bitshuffle,lz4", "byteshuffle,zstd"}

func benchData(b *testing.B) (tiles [][]byte, total int) {
	b.Helper()
	var data []byte
	if path := os.Getenv("TDBFILTER_BENCH_FILE"); path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			b.Fatal(err)
		}
	} else {
		data = int64Cells(1<<20, 99)
	}
	tileBytes := 1 << 20
	if s := os.Getenv("TDBFILTER_BENCH_TILE"); s != "" {
		var err error
		if tileBytes, err = strconv.Atoi(s); err != nil || tileBytes < 8 {
			b.Fatalf("TDBFILTER_BENCH_TILE=%q", s)
		}
	}
	tileBytes -= tileBytes % 8
	data = data[:len(data)-len(data)%8]
	for off := 0; off < len(data); off += tileBytes {
		tiles = append(tiles, data[off:min(off+tileBytes, len(data))])
	}
	return tiles, len(data)
}

// forTiles runs f on every tile, from one goroutine or from GOMAXPROCS goroutines.
func forTiles(n int, parallel bool, f func(i int)) {
	if !parallel {
		for i := range n {
			f(i)
		}
		return
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	next := 0
	for range runtime.GOMAXPROCS(0) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				mu.Lock()
				i := next
				next++
				mu.Unlock()
				if i >= n {
					return
				}
				f(i)
			}
		}()
	}
	wg.Wait()
}

func benchmark(b *testing.B, unfilter bool) {
	tiles, total := benchData(b)
	for _, spec := range benchSpecs {
		for _, mode := range []string{"tiles-parallel", "chunks-parallel"} {
			for _, outputs := range []string{"alloc", "into"} {
				b.Run(spec+"/"+mode+"/"+outputs, func(b *testing.B) {
					run := prepare(b, spec, mode == "tiles-parallel", outputs == "into", unfilter, tiles)
					b.SetBytes(int64(total))
					b.ResetTimer()
					for range b.N {
						run()
					}
				})
			}
		}
	}
}

// prepare checks every tile's round trip and returns a function that filters (or
// unfilters) all tiles once, into fresh slices (Filter, Unfilter) or into buffers allocated
// here once (FilterInto, UnfilterInto; as `tdbf bench --outputs into`).
func prepare(b *testing.B, spec string, parallel, into, unfilter bool, tiles [][]byte) func() {
	p := mustParse(b, spec)
	if parallel {
		if err := p.SetThreads(1); err != nil {
			b.Fatal(err)
		}
	}
	filtered := make([][]byte, len(tiles))
	buffers := make([][]byte, len(tiles))
	size, total := 0, 0
	for i, tile := range tiles {
		f, err := p.Filter(tile, tdbfilter.Int64, 8)
		if err != nil {
			b.Fatal(err)
		}
		if got, err := p.Unfilter(f, tdbfilter.Int64, 8); err != nil || !bytes.Equal(got, tile) {
			b.Fatalf("tile %d does not round-trip (%v)", i, err)
		}
		filtered[i] = f
		size += len(f)
		total += len(tile)
		n := len(tile)
		if !unfilter {
			if n, err = p.FilteredSizeBound(len(tile)); err != nil {
				b.Fatal(err)
			}
		}
		buffers[i] = make([]byte, n)
	}
	b.ReportMetric(float64(total)/float64(size), "ratio")
	return func() {
		forTiles(len(tiles), parallel, func(i int) {
			var err error
			switch {
			case unfilter && into:
				_, err = p.UnfilterInto(buffers[i], filtered[i], tdbfilter.Int64, 8)
			case unfilter:
				_, err = p.Unfilter(filtered[i], tdbfilter.Int64, 8)
			case into:
				_, err = p.FilterInto(buffers[i], tiles[i], tdbfilter.Int64, 8)
			default:
				_, err = p.Filter(tiles[i], tdbfilter.Int64, 8)
			}
			if err != nil {
				b.Error(err)
			}
		})
	}
}

func BenchmarkFilter(b *testing.B)   { benchmark(b, false) }
func BenchmarkUnfilter(b *testing.B) { benchmark(b, true) }
