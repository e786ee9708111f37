// Package tdbfilter binds tdbfilter, a library implementing TileDB 2.30's tile format and
// filter pipeline byte for byte: it filters tiles of cells into the bytes TileDB writes
// (compression, shuffles, deltas, checksums, AES-256-GCM) and unfilters TileDB's tiles.
//
// A Pipeline is built from a spec ("bitshuffle,zstd:3", the grammar of the tdbf command
// line tool) with ParsePipeline, or filter by filter with NewPipeline, AddFilter and the
// option setters. Filter and Unfilter work on one tile at a time; FilterInto and
// UnfilterInto write into caller buffers; FilterVar and UnfilterVar handle var-size tiles
// (offsets and data); ReadGenericTile and Pipeline.WriteGenericTile handle the generic
// tiles of schemas and metadata.
//
// Every failure is an *Error carrying the C library's Status and message; compare with the
// sentinels: errors.Is(err, tdbfilter.ErrChecksumMismatch).
//
// The package uses cgo and finds the library with pkg-config (tdbfilter.pc). Build with
// -tags tdbfilter_nopkgconfig to pass the flags in CGO_CFLAGS and CGO_LDFLAGS instead.
package tdbfilter
