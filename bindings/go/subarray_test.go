package tdbfilter

import (
	"bytes"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"testing"
)

// myInt64 is a named type: a bound of it is not an int64.
type myInt64 int64

// Every numeric dimension datatype packs bounds of exactly its Go type, little-endian, and
// rejects every other Go type with an error naming the dimension and the type it takes.
func TestPackSubarray(t *testing.T) {
	cases := []struct {
		dt     Datatype
		lo, hi any
		want   []byte
	}{
		{Int8, int8(-1), int8(2), []byte{0xff, 2}},
		{Uint8, uint8(1), uint8(200), []byte{1, 200}},
		{Int16, int16(-2), int16(3), []byte{0xfe, 0xff, 3, 0}},
		{Uint16, uint16(1), uint16(0x1234), []byte{1, 0, 0x34, 0x12}},
		{Int32, int32(-3), int32(0x01020304), []byte{0xfd, 0xff, 0xff, 0xff, 4, 3, 2, 1}},
		{Uint32, uint32(7), uint32(0xfffffffe), []byte{7, 0, 0, 0, 0xfe, 0xff, 0xff, 0xff}},
		{Int64, int64(-1), int64(0x0102030405060708), []byte{0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 8, 7, 6, 5, 4, 3, 2, 1}},
		{Uint64, uint64(1), uint64(1 << 63), []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0x80}},
		{Float32, float32(1.5), float32(-2), []byte{0, 0, 0xc0, 0x3f, 0, 0, 0, 0xc0}},
		{Float64, float64(0.5), float64(-1), []byte{0, 0, 0, 0, 0, 0, 0xe0, 0x3f, 0, 0, 0, 0, 0, 0, 0xf0, 0xbf}},
		{DatetimeYear, int64(2), int64(3), []byte{2, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0}},
		{DatetimeNS, int64(-2), int64(3), []byte{0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 3, 0, 0, 0, 0, 0, 0, 0}},
		{DatetimeAS, int64(4), int64(5), []byte{4, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 0, 0, 0, 0}},
		{TimeHR, int64(6), int64(7), []byte{6, 0, 0, 0, 0, 0, 0, 0, 7, 0, 0, 0, 0, 0, 0, 0}},
		{TimeAS, int64(8), int64(9), []byte{8, 0, 0, 0, 0, 0, 0, 0, 9, 0, 0, 0, 0, 0, 0, 0}},
	}
	others := []any{int8(0), uint8(0), int16(0), uint16(0), int32(0), uint32(0), int64(0), uint64(0),
		float32(0), float64(0), int(0), uint(0), "0", nil, myInt64(0), []int64{0}}
	for _, c := range cases {
		dims := []Field{{Name: "d", Datatype: c.dt, CellValNum: 1}}
		got, err := packSubarray(dims, []Range{{c.lo, c.hi}})
		if err != nil || !bytes.Equal(got, c.want) {
			t.Fatalf("%s: packed %v, %v; want %v", c.dt, got, err, c.want)
		}
		// The size the C API checks: 2 × the library's size of the datatype.
		if uint64(len(got)) != 2*c.dt.Size() {
			t.Fatalf("%s: %d bytes, the library's size is %d", c.dt, len(got), c.dt.Size())
		}
		want := reflect.TypeOf(c.lo)
		for _, other := range others {
			if reflect.TypeOf(other) == want {
				continue
			}
			for _, bound := range []string{"Lo", "Hi"} {
				r := Range{c.lo, c.hi}
				if bound == "Lo" {
					r.Lo = other
				} else {
					r.Hi = other
				}
				_, err := packSubarray(dims, []Range{r})
				text := fmt.Sprintf("subarray range 0: %s is %s; dimension 'd' (%s) takes %s", bound, typeName(reflect.TypeOf(other)), c.dt, want)
				wantError(t, err, ErrInvalidArgument, text)
			}
		}
	}
}

func TestPackSubarrayDimensions(t *testing.T) {
	dims := []Field{{Name: "rows", Datatype: Int64, CellValNum: 1}, {Name: "level", Datatype: Uint8, CellValNum: 1}}
	got, err := packSubarray(dims, []Range{{int64(1), int64(2)}, {uint8(3), uint8(4)}})
	want := []byte{1, 0, 0, 0, 0, 0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 0, 3, 4}
	if err != nil || !bytes.Equal(got, want) {
		t.Fatalf("packed %v, %v; want %v", got, err, want)
	}
	// Each range is checked against its own dimension: swapped ranges name the first.
	_, err = packSubarray(dims, []Range{{uint8(3), uint8(4)}, {int64(1), int64(2)}})
	wantError(t, err, ErrInvalidArgument, "subarray range 0: Lo is uint8; dimension 'rows' (int64) takes int64")
	_, err = packSubarray(dims, []Range{{int64(1), int64(2)}, {int64(3), int64(4)}})
	wantError(t, err, ErrInvalidArgument, "subarray range 1: Lo is int64; dimension 'level' (uint8) takes uint8")

	need := "the array's 2 dimensions need one Range each: 'rows' (int64, Go int64), 'level' (uint8, Go uint8)"
	for _, ranges := range [][]Range{{}, {{int64(1), int64(2)}}, {{int64(1), int64(2)}, {uint8(3), uint8(4)}, {uint8(3), uint8(4)}}} {
		_, err := packSubarray(dims, ranges)
		wantError(t, err, ErrInvalidArgument, fmt.Sprintf("subarray has %d ranges; %s", len(ranges), need))
	}

	// String dimensions take no subarray (as in the C API), whatever the ranges; so do
	// datatypes that are no dimension's.
	str := []Field{{Name: "x", Datatype: Int64, CellValNum: 1}, {Name: "name", Datatype: StringASCII, CellValNum: VarNum}}
	for _, ranges := range [][]Range{{{int64(0), int64(9)}, {"a", "z"}}, {{int64(0), int64(9)}}} {
		_, err := packSubarray(str, ranges)
		wantError(t, err, ErrUnsupported, "subarray on dimension 'name' (string_ascii): only numeric dimensions take a subarray")
	}
	_, err = packSubarray([]Field{{Name: "b", Datatype: Blob, CellValNum: 1}}, []Range{{uint8(0), uint8(1)}})
	wantError(t, err, ErrUnsupported, "dimension 'b' (blob)")
}

// wantError checks that err is an *Error matching sentinel whose message contains text.
func wantError(t *testing.T, err, sentinel error, text string) {
	t.Helper()
	var e *Error
	if !errors.Is(err, sentinel) || !errors.As(err, &e) || !strings.Contains(e.Message, text) {
		t.Fatalf("got %v; want %v with %q", err, sentinel, text)
	}
}
