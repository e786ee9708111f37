package tdbfilter_test

import (
	"encoding/binary"
	"math"
	"math/rand/v2"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// int64Cells returns n little-endian int64 cells of slowly rising noisy values (compressible,
// increasing as POSITIVE_DELTA needs).
func int64Cells(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 1))
	b := make([]byte, 8*n)
	v := int64(1 << 20)
	for i := range n {
		v += int64(r.IntN(16))
		binary.LittleEndian.PutUint64(b[8*i:], uint64(v))
	}
	return b
}

// float64Cells returns n float64 cells that are multiples of 0.5 (exact through SCALE_FLOAT
// with factor 0.5).
func float64Cells(n int, seed uint64) []byte {
	r := rand.New(rand.NewPCG(seed, 2))
	b := make([]byte, 8*n)
	for i := range n {
		binary.LittleEndian.PutUint64(b[8*i:], math.Float64bits(float64(r.IntN(2000)-1000)*0.5))
	}
	return b
}

// stringCells returns the offsets and data of n var-size ASCII cells drawn from few words.
func stringCells(n int, seed uint64) ([]uint64, []byte) {
	r := rand.New(rand.NewPCG(seed, 3))
	words := []string{"red", "green", "blue", "", "cyan", "magenta", "yellow", "black"}
	offsets := make([]uint64, n)
	var data []byte
	for i := range n {
		offsets[i] = uint64(len(data))
		data = append(data, words[r.IntN(len(words))]...)
	}
	return offsets, data
}

func mustParse(t testing.TB, spec string) *tdbfilter.Pipeline {
	t.Helper()
	p, err := tdbfilter.ParsePipeline(spec)
	if err != nil {
		t.Fatalf("ParsePipeline(%q): %v", spec, err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}
