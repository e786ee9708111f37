package tdbfilter_test

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// testdata/tiledb holds tiles TileDB 2.30 wrote (testdata/gen_tiledb.py made them).
// TDBFILTER_TILEDB_TILES names another directory of the same layout, e.g. one the test
// command has just written with TileDB.
type tiledbCase struct {
	Name        string `json:"name"`
	Spec        string `json:"spec"`
	Datatype    string `json:"datatype"`
	CellSize    uint64 `json:"cell_size"`
	Tile        string `json:"tile"`
	Cells       string `json:"cells"`
	OffsetsSpec string `json:"offsets_spec"`
	OffsetsTile string `json:"offsets_tile"`
	Offsets     string `json:"offsets"`
	Data        string `json:"data"`
}

func readFile(t *testing.T, dir, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestTileDBTiles(t *testing.T) {
	dir := filepath.Join("testdata", "tiledb")
	if d := os.Getenv("TDBFILTER_TILEDB_TILES"); d != "" {
		dir = d
	}
	t.Logf("TileDB tiles from %s", dir)
	var manifest struct {
		TileDB []int        `json:"tiledb"`
		Cases  []tiledbCase `json:"cases"`
	}
	if err := json.Unmarshal(readFile(t, dir, "manifest.json"), &manifest); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(manifest.TileDB, []int{2, 30, 0}) || len(manifest.Cases) < 19 {
		t.Fatalf("manifest: TileDB %v, %d cases", manifest.TileDB, len(manifest.Cases))
	}
	for _, c := range manifest.Cases {
		t.Run(c.Name, func(t *testing.T) {
			dt, err := tdbfilter.ParseDatatype(c.Datatype)
			if err != nil {
				t.Fatal(err)
			}
			p := mustParse(t, c.Spec)
			theirs := readFile(t, dir, c.Tile)
			if c.OffsetsTile == "" {
				cells := readFile(t, dir, c.Cells)
				got, err := p.Unfilter(theirs, dt, c.CellSize)
				if err != nil {
					t.Fatalf("unfiltering TileDB's tile: %v", err)
				}
				if !bytes.Equal(got, cells) {
					t.Fatal("TileDB's tile unfilters to different cells")
				}
				ours, err := p.Filter(cells, dt, c.CellSize)
				if err != nil {
					t.Fatal(err)
				}
				if !bytes.Equal(ours, theirs) {
					t.Fatalf("filtered tile differs from TileDB's (%d vs %d bytes)", len(ours), len(theirs))
				}
				return
			}
			op := mustParse(t, c.OffsetsSpec)
			theirOffsets := readFile(t, dir, c.OffsetsTile)
			raw := readFile(t, dir, c.Offsets)
			offsets := make([]uint64, len(raw)/8)
			for i := range offsets {
				offsets[i] = binary.LittleEndian.Uint64(raw[8*i:])
			}
			data := readFile(t, dir, c.Data)
			gotOffsets, gotData, err := p.UnfilterVar(op, theirOffsets, theirs, dt)
			if err != nil {
				t.Fatalf("unfiltering TileDB's var tile: %v", err)
			}
			if !slices.Equal(gotOffsets, offsets) || !bytes.Equal(gotData, data) {
				t.Fatal("TileDB's var tile unfilters to different cells")
			}
			fo, fd, err := p.FilterVar(op, dt, offsets, data)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(fo, theirOffsets) || !bytes.Equal(fd, theirs) {
				t.Fatalf("filtered var tile differs from TileDB's (offsets %d vs %d, data %d vs %d bytes)",
					len(fo), len(theirOffsets), len(fd), len(theirs))
			}
		})
	}
}

// genericDir holds generic tiles (schemas, fragment and array metadata) TileDB 2.30 wrote,
// plain and AES-256-GCM encrypted, with manifest.txt computed independently of tdbfilter.
var genericDir = filepath.Join("..", "..", "tests", "data", "generic")

var genericKey = []byte("0123456789abcdeF0123456789abcdeF")

func TestTileDBGenericTiles(t *testing.T) {
	f, err := os.Open(filepath.Join(genericDir, "manifest.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	files := map[string][]byte{}
	tiles := 0
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		fields := strings.Fields(sc.Text())
		if len(fields) == 0 || fields[0] != "tile" {
			continue
		}
		name := fields[1]
		if files[name] == nil {
			files[name] = readFile(t, genericDir, name)
		}
		num := func(i int) uint64 {
			v, err := strconv.ParseUint(fields[i], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return v
		}
		offset, consumed := int(num(3)), int(num(4))
		b := files[name][offset:]
		var key []byte
		if strings.Contains(name, "_aes") {
			key = genericKey
		}
		tile, used, err := tdbfilter.ReadGenericTile(b, key)
		if err != nil {
			t.Fatalf("%s tile %s: %v", name, fields[2], err)
		}
		h := tile.Header
		want := tdbfilter.GenericTileHeader{
			Version: uint32(num(5)), PersistedSize: num(6), TileSize: num(7),
			Datatype: tdbfilter.Datatype(num(8)), CellSize: num(9),
			EncryptionType:     tdbfilter.EncryptionType(num(10)),
			FilterPipelineSize: uint32(len(fields[11]) / 2),
		}
		want.HeaderSize = tdbfilter.GenericTileHeaderBaseSize + uint64(want.FilterPipelineSize)
		want.TotalSize = want.HeaderSize + want.PersistedSize
		if h != want || used != consumed || int(h.TotalSize) != consumed {
			t.Fatalf("%s tile %s: header %+v, consumed %d; want %+v, %d", name, fields[2], h, used, want, consumed)
		}
		sum := sha256.Sum256(tile.Data)
		if hex.EncodeToString(sum[:]) != fields[13] {
			t.Fatalf("%s tile %s: payload differs from TileDB's", name, fields[2])
		}
		if parsed, err := tdbfilter.ParseGenericTileHeader(b); err != nil || parsed != h {
			t.Fatalf("%s: ParseGenericTileHeader = %+v, %v", name, parsed, err)
		}

		p, err := tdbfilter.GenericTilePipeline(b)
		if err != nil {
			t.Fatal(err)
		}
		ser, err := p.Serialize()
		if err != nil || hex.EncodeToString(ser) != fields[11] {
			t.Fatalf("%s: stored pipeline serializes as %x (%v)", name, ser, err)
		}
		if key == nil {
			// Our writer reproduces TileDB's bytes exactly.
			again, err := p.WriteGenericTile(tile.Data, h.Datatype, h.CellSize)
			if err != nil || !bytes.Equal(again, b[:consumed]) {
				t.Fatalf("%s tile %s: rewritten generic tile differs from TileDB's (%v)", name, fields[2], err)
			}
		} else {
			if _, _, err := tdbfilter.ReadGenericTile(b, nil); !errors.Is(err, tdbfilter.ErrDecryptionFailed) {
				t.Fatalf("%s without a key: %v", name, err)
			}
			wrong := append([]byte(nil), genericKey...)
			wrong[0] ^= 1
			if _, _, err := tdbfilter.ReadGenericTile(b, wrong); !errors.Is(err, tdbfilter.ErrDecryptionFailed) {
				t.Fatalf("%s with a wrong key: %v", name, err)
			}
		}
		p.Close()
		tiles++
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	if tiles < 50 {
		t.Fatalf("only %d generic tiles in the manifest", tiles)
	}
	// A key for an unencrypted tile is an invalid argument.
	if _, _, err := tdbfilter.ReadGenericTile(files["schema_plain.tdb"], genericKey); !errors.Is(err, tdbfilter.ErrInvalidArgument) {
		t.Fatalf("key for a plain tile: %v", err)
	}
}

func TestGenericTileWriteRead(t *testing.T) {
	payload := int64Cells(20000, 21) // 160 000 bytes: three chunks
	p, err := tdbfilter.DefaultGenericTilePipeline()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	if p.String() != "gzip:1" {
		t.Fatalf("default generic pipeline %q", p.String())
	}
	plain, err := p.WriteGenericTile(payload, tdbfilter.Char, 1)
	if err != nil {
		t.Fatal(err)
	}
	if err := p.SetEncryptionKey(genericKey); err != nil {
		t.Fatal(err)
	}
	enc, err := p.WriteGenericTile(payload, tdbfilter.Char, 1)
	if err != nil {
		t.Fatal(err)
	}
	// Two tiles back to back are walked by the consumed counts.
	both := append(append([]byte(nil), plain...), enc...)
	first, used, err := tdbfilter.ReadGenericTile(both, nil)
	if err != nil || used != len(plain) || !bytes.Equal(first.Data, payload) {
		t.Fatalf("plain generic tile: %d bytes used, %v", used, err)
	}
	second, used2, err := tdbfilter.ReadGenericTile(both[used:], genericKey)
	if err != nil || used2 != len(enc) || !bytes.Equal(second.Data, payload) {
		t.Fatalf("encrypted generic tile: %d bytes used, %v", used2, err)
	}
	if second.Header.EncryptionType != tdbfilter.AES256GCM || first.Header.EncryptionType != tdbfilter.NoEncryption {
		t.Fatalf("encryption types %v, %v", first.Header.EncryptionType, second.Header.EncryptionType)
	}
	stored, err := tdbfilter.GenericTilePipeline(enc)
	if err != nil {
		t.Fatal(err)
	}
	defer stored.Close()
	if types, _ := stored.Filters(); !slices.Equal(types, []tdbfilter.FilterType{tdbfilter.FilterGzip, tdbfilter.FilterAES256GCM}) {
		t.Fatalf("encrypted tile's stored pipeline: %v", types)
	}
}
