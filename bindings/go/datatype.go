package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import (
	"fmt"
	"strings"
	"unsafe"
)

// Datatype is a TileDB datatype (tiledb_datatype_t values). It tells filters how to read the
// cells of a tile.
type Datatype uint32

// The TileDB datatypes, with TileDB's numbers.
const (
	Int32         Datatype = C.TDB_INT32          // 32-bit signed integer.
	Int64         Datatype = C.TDB_INT64          // 64-bit signed integer.
	Float32       Datatype = C.TDB_FLOAT32        // 32-bit float.
	Float64       Datatype = C.TDB_FLOAT64        // 64-bit float.
	Char          Datatype = C.TDB_CHAR           // Character.
	Int8          Datatype = C.TDB_INT8           // 8-bit signed integer.
	Uint8         Datatype = C.TDB_UINT8          // 8-bit unsigned integer.
	Int16         Datatype = C.TDB_INT16          // 16-bit signed integer.
	Uint16        Datatype = C.TDB_UINT16         // 16-bit unsigned integer.
	Uint32        Datatype = C.TDB_UINT32         // 32-bit unsigned integer.
	Uint64        Datatype = C.TDB_UINT64         // 64-bit unsigned integer.
	StringASCII   Datatype = C.TDB_STRING_ASCII   // ASCII string.
	StringUTF8    Datatype = C.TDB_STRING_UTF8    // UTF-8 string.
	StringUTF16   Datatype = C.TDB_STRING_UTF16   // UTF-16 string.
	StringUTF32   Datatype = C.TDB_STRING_UTF32   // UTF-32 string.
	StringUCS2    Datatype = C.TDB_STRING_UCS2    // UCS-2 string.
	StringUCS4    Datatype = C.TDB_STRING_UCS4    // UCS-4 string.
	Any           Datatype = C.TDB_ANY            // Untyped.
	DatetimeYear  Datatype = C.TDB_DATETIME_YEAR  // Datetime, years.
	DatetimeMonth Datatype = C.TDB_DATETIME_MONTH // Datetime, months.
	DatetimeWeek  Datatype = C.TDB_DATETIME_WEEK  // Datetime, weeks.
	DatetimeDay   Datatype = C.TDB_DATETIME_DAY   // Datetime, days.
	DatetimeHR    Datatype = C.TDB_DATETIME_HR    // Datetime, hours.
	DatetimeMin   Datatype = C.TDB_DATETIME_MIN   // Datetime, minutes.
	DatetimeSec   Datatype = C.TDB_DATETIME_SEC   // Datetime, seconds.
	DatetimeMS    Datatype = C.TDB_DATETIME_MS    // Datetime, milliseconds.
	DatetimeUS    Datatype = C.TDB_DATETIME_US    // Datetime, microseconds.
	DatetimeNS    Datatype = C.TDB_DATETIME_NS    // Datetime, nanoseconds.
	DatetimePS    Datatype = C.TDB_DATETIME_PS    // Datetime, picoseconds.
	DatetimeFS    Datatype = C.TDB_DATETIME_FS    // Datetime, femtoseconds.
	DatetimeAS    Datatype = C.TDB_DATETIME_AS    // Datetime, attoseconds.
	TimeHR        Datatype = C.TDB_TIME_HR        // Time, hours.
	TimeMin       Datatype = C.TDB_TIME_MIN       // Time, minutes.
	TimeSec       Datatype = C.TDB_TIME_SEC       // Time, seconds.
	TimeMS        Datatype = C.TDB_TIME_MS        // Time, milliseconds.
	TimeUS        Datatype = C.TDB_TIME_US        // Time, microseconds.
	TimeNS        Datatype = C.TDB_TIME_NS        // Time, nanoseconds.
	TimePS        Datatype = C.TDB_TIME_PS        // Time, picoseconds.
	TimeFS        Datatype = C.TDB_TIME_FS        // Time, femtoseconds.
	TimeAS        Datatype = C.TDB_TIME_AS        // Time, attoseconds.
	Blob          Datatype = C.TDB_BLOB           // Binary blob.
	Bool          Datatype = C.TDB_BOOL           // Boolean (one byte).
	GeomWKB       Datatype = C.TDB_GEOM_WKB       // Geometry, well-known binary.
	GeomWKT       Datatype = C.TDB_GEOM_WKT       // Geometry, well-known text.
)

// String returns the datatype's name in lower case, e.g. "int64", as in pipeline specs (the
// library's tdb_datatype_name), or "Datatype(N)" for a number the library does not know.
func (d Datatype) String() string {
	return libraryName("Datatype", uint32(d), func(name **C.char, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_datatype_name(C.tdb_datatype_t(d), name, cerr)
	})
}

// Size returns the bytes of one value of the datatype (8 for Int64, 1 for StringASCII, 2 for
// StringUTF16; the library's tdb_datatype_size), or 0 for an unknown datatype. A cell of n
// values has n × Size() bytes.
func (d Datatype) Size() uint64 {
	var size C.uint64_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_datatype_size(C.tdb_datatype_t(d), &size, &cerr), cerr); err != nil {
		return 0
	}
	return uint64(size)
}

// ParseDatatype returns the datatype named name, case-insensitively: the names String
// returns ("int64") and TileDB's spellings ("STRING_UTF8", "TILEDB_INT64"). An unknown name
// is an ErrInvalidArgument naming it.
func ParseDatatype(name string) (Datatype, error) {
	var d C.tdb_datatype_t
	err := fromLibraryName("datatype", name, func(cname *C.char, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_datatype_from_name(cname, &d, cerr)
	})
	return Datatype(d), err
}

// libraryName returns the name a tdb_*_name function gives, or "<kind>(N)" where it fails.
func libraryName(kind string, value uint32, name func(name **C.char, cerr **C.tdb_error_t) C.tdb_status_t) string {
	var cname *C.char
	var cerr *C.tdb_error_t
	if err := takeError(name(&cname, &cerr), cerr); err != nil {
		return fmt.Sprintf("%s(%d)", kind, value)
	}
	return C.GoString(cname)
}

// fromLibraryName calls a tdb_*_from_name function with name as a C string.
func fromLibraryName(what, name string, lookup func(cname *C.char, cerr **C.tdb_error_t) C.tdb_status_t) error {
	if strings.IndexByte(name, 0) >= 0 {
		return invalidArgument("%s name %q contains a NUL byte", what, name)
	}
	cname := C.CString(name)
	defer C.free(unsafe.Pointer(cname))
	var cerr *C.tdb_error_t
	return takeError(lookup(cname, &cerr), cerr)
}
