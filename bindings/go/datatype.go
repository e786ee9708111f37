package tdbfilter

// #include <tdbfilter.h>
import "C"

import (
	"fmt"
	"strings"
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

var datatypeInfo = [...]struct {
	name string
	size uint64
}{
	Int32:         {"int32", 4},
	Int64:         {"int64", 8},
	Float32:       {"float32", 4},
	Float64:       {"float64", 8},
	Char:          {"char", 1},
	Int8:          {"int8", 1},
	Uint8:         {"uint8", 1},
	Int16:         {"int16", 2},
	Uint16:        {"uint16", 2},
	Uint32:        {"uint32", 4},
	Uint64:        {"uint64", 8},
	StringASCII:   {"string_ascii", 1},
	StringUTF8:    {"string_utf8", 1},
	StringUTF16:   {"string_utf16", 2},
	StringUTF32:   {"string_utf32", 4},
	StringUCS2:    {"string_ucs2", 2},
	StringUCS4:    {"string_ucs4", 4},
	Any:           {"any", 1},
	DatetimeYear:  {"datetime_year", 8},
	DatetimeMonth: {"datetime_month", 8},
	DatetimeWeek:  {"datetime_week", 8},
	DatetimeDay:   {"datetime_day", 8},
	DatetimeHR:    {"datetime_hr", 8},
	DatetimeMin:   {"datetime_min", 8},
	DatetimeSec:   {"datetime_sec", 8},
	DatetimeMS:    {"datetime_ms", 8},
	DatetimeUS:    {"datetime_us", 8},
	DatetimeNS:    {"datetime_ns", 8},
	DatetimePS:    {"datetime_ps", 8},
	DatetimeFS:    {"datetime_fs", 8},
	DatetimeAS:    {"datetime_as", 8},
	TimeHR:        {"time_hr", 8},
	TimeMin:       {"time_min", 8},
	TimeSec:       {"time_sec", 8},
	TimeMS:        {"time_ms", 8},
	TimeUS:        {"time_us", 8},
	TimeNS:        {"time_ns", 8},
	TimePS:        {"time_ps", 8},
	TimeFS:        {"time_fs", 8},
	TimeAS:        {"time_as", 8},
	Blob:          {"blob", 1},
	Bool:          {"bool", 1},
	GeomWKB:       {"geom_wkb", 1},
	GeomWKT:       {"geom_wkt", 1},
}

// String returns the datatype's name in lower case, e.g. "int64", as in pipeline specs.
func (d Datatype) String() string {
	if int(d) < len(datatypeInfo) {
		return datatypeInfo[d].name
	}
	return fmt.Sprintf("Datatype(%d)", uint32(d))
}

// Size returns the bytes of one value of the datatype (8 for Int64, 1 for StringASCII, 2 for
// StringUTF16), or 0 for an unknown datatype. A cell of n values has n × Size() bytes.
func (d Datatype) Size() uint64 {
	if int(d) < len(datatypeInfo) {
		return datatypeInfo[d].size
	}
	return 0
}

// ParseDatatype returns the datatype named name, case-insensitively ("int64", "STRING_UTF8").
func ParseDatatype(name string) (Datatype, error) {
	for d, info := range datatypeInfo {
		if strings.EqualFold(info.name, name) {
			return Datatype(d), nil
		}
	}
	return 0, &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf("unknown datatype %q", name)}
}
