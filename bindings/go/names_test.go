package tdbfilter_test

import (
	"math"
	"strings"
	"testing"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// Names and sizes come from the library (tdb_datatype_name/_size/_from_name).
func TestDatatypeNames(t *testing.T) {
	for d := tdbfilter.Int32; d <= tdbfilter.GeomWKT; d++ {
		back, err := tdbfilter.ParseDatatype(d.String())
		if err != nil || back != d || d.Size() == 0 {
			t.Fatalf("datatype %d: %q, %v, size %d", d, d.String(), err, d.Size())
		}
	}
	for _, c := range []struct {
		d    tdbfilter.Datatype
		name string
		size uint64
	}{
		{tdbfilter.Int64, "int64", 8}, {tdbfilter.Float32, "float32", 4}, {tdbfilter.Char, "char", 1},
		{tdbfilter.StringUTF8, "string_utf8", 1}, {tdbfilter.StringUTF16, "string_utf16", 2},
		{tdbfilter.StringUCS4, "string_ucs4", 4}, {tdbfilter.DatetimeNS, "datetime_ns", 8},
		{tdbfilter.TimeAS, "time_as", 8}, {tdbfilter.Blob, "blob", 1}, {tdbfilter.Bool, "bool", 1},
		{tdbfilter.GeomWKB, "geom_wkb", 1}, {tdbfilter.Any, "any", 1},
	} {
		if c.d.String() != c.name || c.d.Size() != c.size {
			t.Errorf("%d: %q, size %d; want %q, %d", c.d, c.d.String(), c.d.Size(), c.name, c.size)
		}
	}
	for name, want := range map[string]tdbfilter.Datatype{
		"INT64": tdbfilter.Int64, "TILEDB_INT64": tdbfilter.Int64, "String_UTF8": tdbfilter.StringUTF8,
		"datetime_ns": tdbfilter.DatetimeNS, "TILEDB_GEOM_WKT": tdbfilter.GeomWKT,
	} {
		if d, err := tdbfilter.ParseDatatype(name); err != nil || d != want {
			t.Errorf("ParseDatatype(%q) = %v, %v; want %v", name, d, err, want)
		}
	}
	_, err := tdbfilter.ParseDatatype("int65")
	wantErr(t, "unknown datatype name", err, tdbfilter.ErrInvalidArgument, "int65")
	_, err = tdbfilter.ParseDatatype("int64\x00")
	wantErr(t, "NUL in a datatype name", err, tdbfilter.ErrInvalidArgument, "NUL")
	if d := tdbfilter.Datatype(200); d.String() != "Datatype(200)" || d.Size() != 0 {
		t.Fatalf("unknown datatype: %q, size %d", d.String(), d.Size())
	}
}

func TestFilterTypeNames(t *testing.T) {
	all := []tdbfilter.FilterType{tdbfilter.FilterNone, tdbfilter.FilterGzip, tdbfilter.FilterZstd,
		tdbfilter.FilterLZ4, tdbfilter.FilterRLE, tdbfilter.FilterBzip2, tdbfilter.FilterDoubleDelta,
		tdbfilter.FilterBitWidthReduction, tdbfilter.FilterBitshuffle, tdbfilter.FilterByteshuffle,
		tdbfilter.FilterPositiveDelta, tdbfilter.FilterChecksumMD5, tdbfilter.FilterChecksumSHA256,
		tdbfilter.FilterDictionary, tdbfilter.FilterScaleFloat, tdbfilter.FilterXOR, tdbfilter.FilterWebP,
		tdbfilter.FilterDelta, tdbfilter.FilterAES256GCM}
	for _, f := range all {
		back, err := tdbfilter.ParseFilterType(f.String())
		if err != nil || back != f {
			t.Fatalf("filter type %d: %q, %v", f, f.String(), err)
		}
		// The names are the spec's: a pipeline of the one filter parses back to it.
		if f == tdbfilter.FilterNone || f == tdbfilter.FilterAES256GCM {
			continue
		}
		p := mustParse(t, f.String())
		if types, err := p.Filters(); err != nil || len(types) != 1 || types[0] != f {
			t.Fatalf("spec %q: %v, %v", f.String(), types, err)
		}
	}
	for _, c := range []struct {
		f    tdbfilter.FilterType
		name string
	}{
		{tdbfilter.FilterNone, "none"}, {tdbfilter.FilterBitshuffle, "bitshuffle"},
		{tdbfilter.FilterBitWidthReduction, "bit_width_reduction"}, {tdbfilter.FilterDictionary, "dictionary"},
		{tdbfilter.FilterChecksumSHA256, "checksum_sha256"}, {tdbfilter.FilterAES256GCM, "aes_256_gcm"},
	} {
		if c.f.String() != c.name {
			t.Errorf("%d: %q, want %q", c.f, c.f.String(), c.name)
		}
	}
	for name, want := range map[string]tdbfilter.FilterType{
		"DICTIONARY_ENCODING": tdbfilter.FilterDictionary, "FILTER_GZIP": tdbfilter.FilterGzip,
		"Zstd": tdbfilter.FilterZstd, "TILEDB_FILTER_LZ4": tdbfilter.FilterLZ4,
	} {
		if f, err := tdbfilter.ParseFilterType(name); err != nil || f != want {
			t.Errorf("ParseFilterType(%q) = %v, %v; want %v", name, f, err, want)
		}
	}
	_, err := tdbfilter.ParseFilterType("foo")
	wantErr(t, "unknown filter name", err, tdbfilter.ErrInvalidArgument, "foo")
	_, err = tdbfilter.ParseFilterType("gzip\x00")
	wantErr(t, "NUL in a filter name", err, tdbfilter.ErrInvalidArgument, "NUL")
	if s := tdbfilter.FilterType(99).String(); s != "FilterType(99)" {
		t.Fatalf("unknown filter type: %q", s)
	}
}

// Status names are the library's (tdb_status_name).
func TestStatusNames(t *testing.T) {
	for s, name := range map[tdbfilter.Status]string{
		tdbfilter.StatusOK:               "TDB_OK",
		tdbfilter.StatusInvalidArgument:  "TDB_ERR_INVALID_ARGUMENT",
		tdbfilter.StatusCorruptData:      "TDB_ERR_CORRUPT_DATA",
		tdbfilter.StatusChecksumMismatch: "TDB_ERR_CHECKSUM_MISMATCH",
		tdbfilter.StatusDecryptionFailed: "TDB_ERR_DECRYPTION_FAILED",
		tdbfilter.StatusUnsupported:      "TDB_ERR_UNSUPPORTED",
		tdbfilter.StatusBufferTooSmall:   "TDB_ERR_BUFFER_TOO_SMALL",
		tdbfilter.StatusOutOfMemory:      "TDB_ERR_OUT_OF_MEMORY",
		tdbfilter.StatusInternal:         "TDB_ERR_INTERNAL",
		tdbfilter.StatusIO:               "TDB_ERR_IO",
		99:                               "TDB_ERR_UNKNOWN(99)",
		1 << 31:                          "TDB_ERR_UNKNOWN(2147483648)",
		math.MaxUint32:                   "TDB_ERR_UNKNOWN(4294967295)",
	} {
		if s.String() != name {
			t.Errorf("Status(%d) = %q, want %q", uint32(s), s.String(), name)
		}
	}
	_, err := tdbfilter.ParsePipeline("zstd,foo")
	if err == nil || !strings.HasPrefix(err.Error(), "tdbfilter: TDB_ERR_INVALID_ARGUMENT: ") || !strings.Contains(err.Error(), "unknown filter 'foo'") {
		t.Fatalf("error text %v", err)
	}
}
