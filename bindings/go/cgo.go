//go:build !tdbfilter_nopkgconfig

package tdbfilter

// The library and header are found through pkg-config (tdbfilter.pc, installed into
// <prefix>/lib/pkgconfig by the CMake install). Build with -tags tdbfilter_nopkgconfig to
// drop this directive and pass the flags yourself in CGO_CFLAGS and CGO_LDFLAGS.

// #cgo pkg-config: tdbfilter
import "C"
