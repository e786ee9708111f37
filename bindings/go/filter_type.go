package tdbfilter

// #include <tdbfilter.h>
import "C"

// FilterType is a TileDB filter type (tiledb_filter_type_t values).
type FilterType uint32

// The TileDB filter types, with TileDB's numbers.
const (
	FilterNone              FilterType = C.TDB_FILTER_NONE                // No-op filter.
	FilterGzip              FilterType = C.TDB_FILTER_GZIP                // GZIP (zlib stream per part).
	FilterZstd              FilterType = C.TDB_FILTER_ZSTD                // ZSTD (zstd frame per part).
	FilterLZ4               FilterType = C.TDB_FILTER_LZ4                 // LZ4 (raw block per part).
	FilterRLE               FilterType = C.TDB_FILTER_RLE                 // Run-length encoding.
	FilterBzip2             FilterType = C.TDB_FILTER_BZIP2               // BZIP2.
	FilterDoubleDelta       FilterType = C.TDB_FILTER_DOUBLE_DELTA        // Double-delta encoding.
	FilterBitWidthReduction FilterType = C.TDB_FILTER_BIT_WIDTH_REDUCTION // Bit-width reduction.
	FilterBitshuffle        FilterType = C.TDB_FILTER_BITSHUFFLE          // Bit shuffle.
	FilterByteshuffle       FilterType = C.TDB_FILTER_BYTESHUFFLE         // Byte shuffle.
	FilterPositiveDelta     FilterType = C.TDB_FILTER_POSITIVE_DELTA      // Positive delta encoding.
	FilterChecksumMD5       FilterType = C.TDB_FILTER_CHECKSUM_MD5        // MD5 checksum.
	FilterChecksumSHA256    FilterType = C.TDB_FILTER_CHECKSUM_SHA256     // SHA-256 checksum.
	FilterDictionary        FilterType = C.TDB_FILTER_DICTIONARY          // Dictionary encoding of var-size strings.
	FilterScaleFloat        FilterType = C.TDB_FILTER_SCALE_FLOAT         // Float scaling.
	FilterXOR               FilterType = C.TDB_FILTER_XOR                 // XOR.
	FilterWebP              FilterType = C.TDB_FILTER_WEBP                // WebP.
	FilterDelta             FilterType = C.TDB_FILTER_DELTA               // Delta encoding.
	// FilterAES256GCM is TileDB's internal encryption filter. It cannot be added to a
	// pipeline (use Pipeline.SetEncryptionKey), but it ends the pipeline of an encrypted
	// generic tile (GenericTilePipeline).
	FilterAES256GCM FilterType = C.TDB_FILTER_AES_256_GCM
)

// String returns the filter's spec name, e.g. "bitshuffle" (the library's
// tdb_filter_type_name), or "FilterType(N)" for a number the library does not know.
func (t FilterType) String() string {
	return libraryName("FilterType", uint32(t), func(name **C.char, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_filter_type_name(C.tdb_filter_type_t(t), name, cerr)
	})
}

// ParseFilterType returns the filter type named name, case-insensitively: the spec names
// String returns ("double_delta") and TileDB's spellings ("DICTIONARY_ENCODING",
// "FILTER_GZIP"). An unknown name is an ErrInvalidArgument naming it.
func ParseFilterType(name string) (FilterType, error) {
	var t C.tdb_filter_type_t
	err := fromLibraryName("filter type", name, func(cname *C.char, cerr **C.tdb_error_t) C.tdb_status_t {
		return C.tdb_filter_type_from_name(cname, &t, cerr)
	})
	return FilterType(t), err
}

// FilterOption is a filter option (tiledb_filter_option_t values). Pipeline has a typed
// setter and getter for each.
type FilterOption uint32

// The filter options, with TileDB's numbers; the comment gives the Go type of the value.
const (
	OptionCompressionLevel       FilterOption = C.TDB_COMPRESSION_LEVEL                // int32: level of GZIP, ZSTD, LZ4, RLE, BZIP2, DOUBLE_DELTA, DICTIONARY, DELTA.
	OptionBitWidthMaxWindow      FilterOption = C.TDB_BIT_WIDTH_MAX_WINDOW             // uint32: BIT_WIDTH_REDUCTION window in bytes.
	OptionPositiveDeltaMaxWindow FilterOption = C.TDB_POSITIVE_DELTA_MAX_WINDOW        // uint32: POSITIVE_DELTA window in bytes.
	OptionScaleFloatByteWidth    FilterOption = C.TDB_SCALE_FLOAT_BYTEWIDTH            // uint64: SCALE_FLOAT byte width (1, 2, 4, 8).
	OptionScaleFloatFactor       FilterOption = C.TDB_SCALE_FLOAT_FACTOR               // float64: SCALE_FLOAT factor.
	OptionScaleFloatOffset       FilterOption = C.TDB_SCALE_FLOAT_OFFSET               // float64: SCALE_FLOAT offset.
	OptionWebPQuality            FilterOption = C.TDB_WEBP_QUALITY                     // float32: WEBP quality, 0 to 100.
	OptionWebPInputFormat        FilterOption = C.TDB_WEBP_INPUT_FORMAT                // uint8: WEBP input format, 0 to 4.
	OptionWebPLossless           FilterOption = C.TDB_WEBP_LOSSLESS                    // uint8: WEBP lossless flag, 0 or 1.
	OptionReinterpretDatatype    FilterOption = C.TDB_COMPRESSION_REINTERPRET_DATATYPE // uint8: datatype DELTA / DOUBLE_DELTA reinterpret their input as.
)

// WebPFormat is the pixel layout a WEBP filter reads (OptionWebPInputFormat).
type WebPFormat uint8

// The WebP input formats.
const (
	WebPNone WebPFormat = iota // No format set (the filter rejects tiles).
	WebPRGB                    // 3 bytes per pixel: red, green, blue.
	WebPBGR                    // 3 bytes per pixel: blue, green, red.
	WebPRGBA                   // 4 bytes per pixel: red, green, blue, alpha.
	WebPBGRA                   // 4 bytes per pixel: blue, green, red, alpha.
)

// FormatVersion is the format version TileDB 2.30 writes; pass it to Deserialize for the
// pipelines of TileDB 2.30 schemas.
const FormatVersion = C.TDB_FORMAT_VERSION

// Version returns the version of the tdbfilter C library the program is linked with,
// e.g. "0.3.0".
func Version() string {
	return C.GoString(C.tdb_version())
}
