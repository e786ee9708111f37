// Command example filters a tile of int64 cells the way TileDB 2.30 stores it, unfilters it
// back, and shows buffer reuse, var-size strings, an encrypted generic tile and error
// handling with the tdbfilter Go binding.
package main

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"log"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

func main() {
	log.SetFlags(0)
	fmt.Println("tdbfilter", tdbfilter.Version())

	// A pipeline from a spec, as in a TileDB schema: bit shuffle, then zstd level 3.
	p, err := tdbfilter.ParsePipeline("bitshuffle,zstd:3")
	if err != nil {
		log.Fatal(err)
	}
	defer p.Close()

	// 100 000 int64 cells (800 000 bytes: a tile of 13 chunks).
	cells := make([]byte, 8*100_000)
	for i := range 100_000 {
		binary.LittleEndian.PutUint64(cells[8*i:], uint64(1_000_000+3*i+i%7))
	}
	filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		log.Fatal(err)
	}
	back, err := p.Unfilter(filtered, tdbfilter.Int64, 8)
	if err != nil {
		log.Fatal(err)
	}
	if !bytes.Equal(back, cells) {
		log.Fatal("round trip changed the cells")
	}
	fmt.Printf("%s: %d bytes -> %d bytes -> %d bytes, identical\n", p, len(cells), len(filtered), len(back))

	// Reusing buffers: FilterInto and UnfilterInto write into caller slices.
	bound, err := p.FilteredSizeBound(len(cells))
	if err != nil {
		log.Fatal(err)
	}
	dst, out := make([]byte, bound), make([]byte, len(cells))
	n, err := p.FilterInto(dst, cells, tdbfilter.Int64, 8)
	if err != nil {
		log.Fatal(err)
	}
	m, err := p.UnfilterInto(out, dst[:n], tdbfilter.Int64, 8)
	if err != nil || !bytes.Equal(out[:m], cells) {
		log.Fatalf("into round trip: %v", err)
	}
	fmt.Printf("FilterInto: %d bytes into a %d-byte buffer\n", n, bound)

	// Var-size strings: dictionary encoding keeps the offsets inside the data tile.
	words := []string{"red", "green", "blue", "green", "red", "red"}
	offsets := make([]uint64, len(words))
	var data []byte
	for i, w := range words {
		offsets[i] = uint64(len(data))
		data = append(data, w...)
	}
	dict, err := tdbfilter.ParsePipeline("dictionary")
	if err != nil {
		log.Fatal(err)
	}
	defer dict.Close()
	offsetsPipeline, err := tdbfilter.ParsePipeline("positive_delta,zstd")
	if err != nil {
		log.Fatal(err)
	}
	defer offsetsPipeline.Close()
	fo, fd, err := dict.FilterVar(offsetsPipeline, tdbfilter.StringASCII, offsets, data)
	if err != nil {
		log.Fatal(err)
	}
	gotOffsets, gotData, err := dict.UnfilterVar(offsetsPipeline, fo, fd, tdbfilter.StringASCII)
	if err != nil || len(gotOffsets) != len(words) || !bytes.Equal(gotData, data) {
		log.Fatalf("var round trip: %v", err)
	}
	fmt.Printf("var tile: %d strings, offsets tile %d bytes, data tile %d bytes\n", len(words), len(fo), len(fd))

	// An encrypted generic tile, as TileDB writes schemas with sm.encryption_key set.
	key := []byte("0123456789abcdeF0123456789abcdeF")
	gp, err := tdbfilter.DefaultGenericTilePipeline()
	if err != nil {
		log.Fatal(err)
	}
	defer gp.Close()
	if err := gp.SetEncryptionKey(key); err != nil {
		log.Fatal(err)
	}
	generic, err := gp.WriteGenericTile([]byte("a schema, say"), tdbfilter.Char, 1)
	if err != nil {
		log.Fatal(err)
	}
	tile, used, err := tdbfilter.ReadGenericTile(generic, key)
	if err != nil {
		log.Fatal(err)
	}
	fmt.Printf("generic tile: %d bytes, encryption %s, payload %q\n", used, tile.Header.EncryptionType, tile.Data)

	// Errors carry the library's status; compare them with the sentinels.
	_, _, err = tdbfilter.ReadGenericTile(generic, bytes.Repeat([]byte("k"), 32))
	var e *tdbfilter.Error
	if !errors.Is(err, tdbfilter.ErrDecryptionFailed) || !errors.As(err, &e) {
		log.Fatalf("wrong key gave %v", err)
	}
	fmt.Printf("wrong key: status %q\n", e.Status)
}
