package tdbfilter_test

import (
	"encoding/binary"
	"errors"
	"fmt"
	"log"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

func Example() {
	p, err := tdbfilter.ParsePipeline("bitshuffle,zstd:3")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	cells := make([]byte, 8*1000) // 1000 int64 cells
	for i := range 1000 {
		binary.LittleEndian.PutUint64(cells[8*i:], uint64(i*i))
	}
	filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		log.Fatal(err)
	}
	back, err := p.Unfilter(filtered, tdbfilter.Int64, 8)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(p, len(back) == len(cells))
	// Output: bitshuffle,zstd:3 true
}

func ExampleError() {
	p, err := tdbfilter.ParsePipeline("checksum_sha256")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()
	filtered, _ := p.Filter([]byte("some cells"), tdbfilter.Char, 1)
	filtered[len(filtered)-1] ^= 1 // damage the tile

	_, err = p.Unfilter(filtered, tdbfilter.Char, 1)
	var e *tdbfilter.Error
	fmt.Println(errors.Is(err, tdbfilter.ErrChecksumMismatch), errors.As(err, &e) && e.Status == tdbfilter.StatusChecksumMismatch)
	// Output: true true
}
