package tdbfilter_test

import (
	"errors"
	"strings"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// wantErr checks that err is an *Error of the sentinel's status whose message contains text.
func wantErr(t *testing.T, what string, err, sentinel error, text string) {
	t.Helper()
	if !errors.Is(err, sentinel) {
		t.Fatalf("%s: got %v, want %v", what, err, sentinel)
	}
	var e *tdbfilter.Error
	if !errors.As(err, &e) {
		t.Fatalf("%s: %T is not an *Error", what, err)
	}
	if !strings.Contains(e.Message, text) || !strings.HasPrefix(e.Error(), "tdbfilter: ") {
		t.Fatalf("%s: message %q does not contain %q", what, e.Error(), text)
	}
	for _, other := range []error{tdbfilter.ErrInvalidArgument, tdbfilter.ErrCorruptData,
		tdbfilter.ErrChecksumMismatch, tdbfilter.ErrDecryptionFailed, tdbfilter.ErrUnsupported,
		tdbfilter.ErrBufferTooSmall, tdbfilter.ErrOutOfMemory, tdbfilter.ErrInternal, tdbfilter.ErrIO} {
		if other != sentinel && errors.Is(err, other) {
			t.Fatalf("%s: %v also matches %v", what, err, other)
		}
	}
}

func TestInvalidArguments(t *testing.T) {
	_, err := tdbfilter.ParsePipeline("zstd,foo")
	wantErr(t, "unknown filter", err, tdbfilter.ErrInvalidArgument, "unknown filter 'foo'")
	_, err = tdbfilter.ParsePipeline("gzip:12")
	wantErr(t, "bad level", err, tdbfilter.ErrInvalidArgument, "level")
	_, err = tdbfilter.ParsePipeline("byteshuffle:3")
	wantErr(t, "positional value", err, tdbfilter.ErrInvalidArgument, "byteshuffle")

	_, err = tdbfilter.ParsePipeline("zstd\x00,foo")
	wantErr(t, "NUL in spec", err, tdbfilter.ErrInvalidArgument, "NUL")

	p, err := tdbfilter.NewPipeline()
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	wantErr(t, "unknown filter type", p.AddFilter(99), tdbfilter.ErrInvalidArgument, "99")
	wantErr(t, "AES filter", p.AddFilter(tdbfilter.FilterAES256GCM), tdbfilter.ErrInvalidArgument, "")
	if err := p.AddFilter(tdbfilter.FilterBitshuffle); err != nil {
		t.Fatal(err)
	}
	wantErr(t, "level on bitshuffle", p.SetCompressionLevel(0, 3), tdbfilter.ErrInvalidArgument, "")
	wantErr(t, "filter index", p.SetCompressionLevel(4, 3), tdbfilter.ErrInvalidArgument, "4")
	wantErr(t, "negative index", p.SetCompressionLevel(-1, 3), tdbfilter.ErrInvalidArgument, "-1")
	wantErr(t, "short key", p.SetEncryptionKey([]byte("short")), tdbfilter.ErrInvalidArgument, "")
	_, err = p.Filter(make([]byte, 16), tdbfilter.Datatype(99), 8)
	wantErr(t, "unknown datatype", err, tdbfilter.ErrInvalidArgument, "99")
	_, _, err = p.FilterVar(p, tdbfilter.StringASCII, []uint64{0, 5, 3}, make([]byte, 10))
	wantErr(t, "decreasing offsets", err, tdbfilter.ErrInvalidArgument, "")
	_, err = tdbfilter.ParseDatatype("int65")
	wantErr(t, "ParseDatatype", err, tdbfilter.ErrInvalidArgument, "int65")

	var nilPipeline *tdbfilter.Pipeline
	_, err = nilPipeline.Filter(nil, tdbfilter.Int64, 8)
	wantErr(t, "nil pipeline", err, tdbfilter.ErrInvalidArgument, "nil pipeline")
}

func TestCorruptData(t *testing.T) {
	cells := int64Cells(20000, 11)
	p := mustParse(t, "bitshuffle,zstd")
	filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.Unfilter(filtered[:len(filtered)-10], tdbfilter.Int64, 8)
	wantErr(t, "truncated tile", err, tdbfilter.ErrCorruptData, "")
	_, err = p.Unfilter(filtered[:5], tdbfilter.Int64, 8)
	wantErr(t, "five bytes", err, tdbfilter.ErrCorruptData, "")
	_, err = tdbfilter.FilteredTileSize(filtered[:len(filtered)-1])
	wantErr(t, "FilteredTileSize", err, tdbfilter.ErrCorruptData, "")
	garbled := append([]byte(nil), filtered...)
	for i := len(garbled) - 64; i < len(garbled); i++ {
		garbled[i] ^= 0x5a
	}
	_, err = p.Unfilter(garbled, tdbfilter.Int64, 8)
	wantErr(t, "garbled zstd frame", err, tdbfilter.ErrCorruptData, "")
	_, err = tdbfilter.Deserialize([]byte{1, 2, 3}, tdbfilter.FormatVersion)
	wantErr(t, "Deserialize", err, tdbfilter.ErrCorruptData, "")
	_, _, err = tdbfilter.ReadGenericTile(filtered[:20], nil)
	wantErr(t, "ReadGenericTile", err, tdbfilter.ErrCorruptData, "")
	_, err = tdbfilter.ParseGenericTileHeader([]byte("not a generic tile at all, not even close to one"))
	wantErr(t, "ParseGenericTileHeader", err, tdbfilter.ErrCorruptData, "")
}

func TestChecksumMismatch(t *testing.T) {
	cells := int64Cells(1000, 12)
	for _, spec := range []string{"checksum_md5", "checksum_sha256"} {
		p := mustParse(t, spec)
		filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
		if err != nil {
			t.Fatal(err)
		}
		// The cells are the tail of the filtered tile: flip one of them.
		flipped := append([]byte(nil), filtered...)
		flipped[len(flipped)-100] ^= 1
		_, err = p.Unfilter(flipped, tdbfilter.Int64, 8)
		wantErr(t, spec, err, tdbfilter.ErrChecksumMismatch, "")
		_, err = p.UnfilterInto(make([]byte, len(cells)), flipped, tdbfilter.Int64, 8)
		wantErr(t, spec+" into", err, tdbfilter.ErrChecksumMismatch, "")

		// Skipping validation returns the flipped cells.
		if err := p.SetSkipChecksumValidation(true); err != nil {
			t.Fatal(err)
		}
		got, err := p.Unfilter(flipped, tdbfilter.Int64, 8)
		if err != nil || len(got) != len(cells) || got[len(got)-100] != cells[len(cells)-100]^1 {
			t.Fatalf("%s with validation skipped: %v", spec, err)
		}
	}
}

func TestDecryptionFailed(t *testing.T) {
	cells := int64Cells(5000, 13)
	p := mustParse(t, "zstd")
	if err := p.SetEncryptionKey([]byte("0123456789abcdeF0123456789abcdeF")); err != nil {
		t.Fatal(err)
	}
	filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	other := mustParse(t, "zstd")
	if err := other.SetEncryptionKey([]byte("0123456789abcdeF0123456789abcdeG")); err != nil {
		t.Fatal(err)
	}
	_, err = other.Unfilter(filtered, tdbfilter.Int64, 8)
	wantErr(t, "wrong key", err, tdbfilter.ErrDecryptionFailed, "")
	tampered := append([]byte(nil), filtered...)
	tampered[len(tampered)-1] ^= 0x80
	_, err = p.Unfilter(tampered, tdbfilter.Int64, 8)
	wantErr(t, "tampered ciphertext", err, tdbfilter.ErrDecryptionFailed, "")
	if msg := err.Error(); strings.Contains(msg, "0123456789abcdeF") {
		t.Fatalf("the key appears in the message %q", msg)
	}
}

func TestUnsupported(t *testing.T) {
	p := mustParse(t, "delta:reinterpret=char")
	_, err := p.Filter(int64Cells(100, 14), tdbfilter.Int64, 8)
	wantErr(t, "reinterpret as char", err, tdbfilter.ErrUnsupported, "")
}

func TestBufferTooSmall(t *testing.T) {
	cells := int64Cells(20000, 15)
	p := mustParse(t, "byteshuffle,lz4")
	filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
	if err != nil {
		t.Fatal(err)
	}
	bound, err := p.FilteredSizeBound(len(cells))
	if err != nil {
		t.Fatal(err)
	}

	_, err = p.FilterInto(make([]byte, 10), cells, tdbfilter.Int64, 8)
	wantErr(t, "FilterInto", err, tdbfilter.ErrBufferTooSmall, "")
	var e *tdbfilter.Error
	errors.As(err, &e)
	if e.Needed < len(filtered) || e.Needed > bound {
		t.Fatalf("FilterInto reports %d needed; filtered %d, bound %d", e.Needed, len(filtered), bound)
	}
	dst := make([]byte, e.Needed)
	if n, err := p.FilterInto(dst, cells, tdbfilter.Int64, 8); err != nil || n != len(filtered) {
		t.Fatalf("FilterInto with the needed size: %d, %v", n, err)
	}

	_, err = p.UnfilterInto(make([]byte, len(cells)-1), filtered, tdbfilter.Int64, 8)
	wantErr(t, "UnfilterInto", err, tdbfilter.ErrBufferTooSmall, "")
	errors.As(err, &e)
	if e.Needed != len(cells) {
		t.Fatalf("UnfilterInto reports %d needed, want exactly %d", e.Needed, len(cells))
	}
	if n, err := p.UnfilterInto(nil, filtered, tdbfilter.Int64, 8); n != 0 || !errors.Is(err, tdbfilter.ErrBufferTooSmall) {
		t.Fatalf("UnfilterInto(nil) = %d, %v", n, err)
	}
}

func TestClosed(t *testing.T) {
	p, err := tdbfilter.ParsePipeline("zstd")
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := p.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	if _, err := p.Filter(nil, tdbfilter.Int64, 8); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("Filter after Close: %v", err)
	}
	if err := p.SetThreads(1); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("SetThreads after Close: %v", err)
	}
	if _, _, err := p.FilterVar(p, tdbfilter.StringASCII, nil, nil); !errors.Is(err, tdbfilter.ErrClosed) {
		t.Fatalf("FilterVar after Close: %v", err)
	}
	if s := p.String(); !strings.Contains(s, "closed") {
		t.Fatalf("String after Close: %q", s)
	}
}

// Damaged tiles, every byte in turn: each unfilter fails cleanly with a status or, where the
// damage is in bytes no check covers, returns cells of the right size; a cut tile always
// fails; nothing crashes. (GZIP is left out: a flipped byte in a GZIP part header can claim a
// part of gigabytes, which the library allocates before decoding.)
func TestDamagedTiles(t *testing.T) {
	cells := int64Cells(300, 16)
	for _, spec := range []string{"bitshuffle,lz4", "byteshuffle,checksum_md5,zstd", "double_delta", "checksum_sha256,bzip2"} {
		p := mustParse(t, spec)
		filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
		if err != nil {
			t.Fatal(err)
		}
		detected := 0
		for i := range filtered {
			damaged := append([]byte(nil), filtered...)
			damaged[i] ^= 0xa5
			got, err := p.Unfilter(damaged, tdbfilter.Int64, 8)
			var e *tdbfilter.Error
			switch {
			case err == nil:
				if len(got)%8 != 0 {
					t.Fatalf("%s, byte %d: %d bytes of int64 cells", spec, i, len(got))
				}
			case errors.As(err, &e) && e.Status != tdbfilter.StatusInternal && e.Message != "":
				detected++
			default:
				t.Fatalf("%s, byte %d: %v", spec, i, err)
			}
			if i > 0 {
				if _, err := p.Unfilter(filtered[:i], tdbfilter.Int64, 8); err == nil {
					t.Fatalf("%s: the tile cut to %d bytes unfilters", spec, i)
				}
			}
		}
		if detected == 0 {
			t.Fatalf("%s: no damaged byte was detected", spec)
		}
	}
}
