package tdbfilter

// #include <tdbfilter.h>
import "C"

import (
	"errors"
	"fmt"
	"math"
)

// Status is the status code of a failed call (tdb_status_t values).
type Status uint32

// The status codes of the C API.
const (
	StatusOK               Status = C.TDB_OK                    // Success.
	StatusInvalidArgument  Status = C.TDB_ERR_INVALID_ARGUMENT  // A caller-supplied argument is invalid.
	StatusCorruptData      Status = C.TDB_ERR_CORRUPT_DATA      // Filtered bytes are truncated, inconsistent or not a valid encoding.
	StatusChecksumMismatch Status = C.TDB_ERR_CHECKSUM_MISMATCH // A checksum filter found a digest mismatch.
	StatusDecryptionFailed Status = C.TDB_ERR_DECRYPTION_FAILED // Wrong key or tampered bytes.
	StatusUnsupported      Status = C.TDB_ERR_UNSUPPORTED       // Valid TileDB input this version does not support.
	StatusBufferTooSmall   Status = C.TDB_ERR_BUFFER_TOO_SMALL  // The caller's buffer is too small.
	StatusOutOfMemory      Status = C.TDB_ERR_OUT_OF_MEMORY     // An allocation failed.
	StatusInternal         Status = C.TDB_ERR_INTERNAL          // A bug in tdbfilter.
	StatusIO               Status = C.TDB_ERR_IO                // The system refused a read or write (disk full, read-only, permission, not a folder...).
)

// Sentinel errors, one per status: errors.Is(err, ErrChecksumMismatch) reports whether err
// (or an error it wraps) is an *Error with that status.
var (
	ErrInvalidArgument  = errors.New("tdbfilter: invalid argument")
	ErrCorruptData      = errors.New("tdbfilter: corrupt data")
	ErrChecksumMismatch = errors.New("tdbfilter: checksum mismatch")
	ErrDecryptionFailed = errors.New("tdbfilter: decryption failed")
	ErrUnsupported      = errors.New("tdbfilter: unsupported")
	ErrBufferTooSmall   = errors.New("tdbfilter: buffer too small")
	ErrOutOfMemory      = errors.New("tdbfilter: out of memory")
	ErrInternal         = errors.New("tdbfilter: internal error")
	// ErrIO: the operating system or object store refused a read or write; the message
	// names the path and the system's error.
	ErrIO = errors.New("tdbfilter: I/O error")
)

// ErrClosed is returned by every method of a Pipeline or an Array after Close.
var ErrClosed = errors.New("tdbfilter: closed")

var sentinels = map[Status]error{
	StatusInvalidArgument:  ErrInvalidArgument,
	StatusCorruptData:      ErrCorruptData,
	StatusChecksumMismatch: ErrChecksumMismatch,
	StatusDecryptionFailed: ErrDecryptionFailed,
	StatusUnsupported:      ErrUnsupported,
	StatusBufferTooSmall:   ErrBufferTooSmall,
	StatusOutOfMemory:      ErrOutOfMemory,
	StatusInternal:         ErrInternal,
	StatusIO:               ErrIO,
}

// String returns the C name of the status, e.g. "TDB_ERR_CHECKSUM_MISMATCH" (the library's
// tdb_status_name); a value the library does not know is "TDB_ERR_UNKNOWN(N)".
func (s Status) String() string {
	// Values past int32 are unknown too: keep them from wrapping onto a known status.
	if s > math.MaxInt32 {
		return fmt.Sprintf("TDB_ERR_UNKNOWN(%d)", uint32(s))
	}
	name := C.GoString(C.tdb_status_name(C.int32_t(s)))
	if name == "TDB_ERR_UNKNOWN" {
		return fmt.Sprintf("%s(%d)", name, uint32(s))
	}
	return name
}

// Error is the error every failed call returns: the C API's status and message.
type Error struct {
	// Status says what kind of failure it is; errors.Is matches it against the sentinels.
	Status Status
	// Message is the library's message; it names what failed (filter, chunk, tile...).
	Message string
	// Needed is set with StatusBufferTooSmall: a buffer size that suffices.
	Needed int
}

// Error returns "tdbfilter: <status>: <message>", e.g.
// "tdbfilter: TDB_ERR_CHECKSUM_MISMATCH: checksum of chunk 3 ...".
func (e *Error) Error() string {
	if e.Message == "" {
		return "tdbfilter: " + e.Status.String()
	}
	return "tdbfilter: " + e.Status.String() + ": " + e.Message
}

// Is reports whether target is the sentinel error of e's status.
func (e *Error) Is(target error) bool {
	sentinel, ok := sentinels[e.Status]
	return ok && target == sentinel
}

// takeError turns a failed status and its C error into an *Error and frees the C error.
func takeError(status C.tdb_status_t, cerr *C.tdb_error_t) error {
	if status == C.TDB_OK {
		C.tdb_error_free(cerr)
		return nil
	}
	e := &Error{Status: Status(status)}
	if cerr != nil {
		e.Message = C.GoString(C.tdb_error_message(cerr))
		C.tdb_error_free(cerr)
	}
	return e
}

func invalidArgument(format string, args ...any) error {
	return &Error{Status: StatusInvalidArgument, Message: fmt.Sprintf(format, args...)}
}

func unsupported(format string, args ...any) error {
	return &Error{Status: StatusUnsupported, Message: fmt.Sprintf(format, args...)}
}
