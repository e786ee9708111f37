package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import "unsafe"

// Vacuum removes what a consolidation made redundant in the array at path, as TileDB 2.30
// vacuums in mode ("fragments", "commits", "fragment_meta", "array_meta"; "" is
// "fragments"). Fragments mode also removes the fragment folders of killed writers unchanged
// for 10 minutes. Object stores are configured from the environment.
func Vacuum(path, mode string) error {
	cpath, err := cString("array path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	var cmode *C.char
	if mode != "" {
		if cmode, err = cString("vacuum mode", mode); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cmode))
	}
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_vacuum(cpath, cmode, nil, &cerr), cerr)
}

// DeleteFragments deletes the fragments of the array at path whose timestamp range lies
// inside [start, end] (milliseconds, inclusive). A reversed range is ErrInvalidArgument.
func DeleteFragments(path string, start, end uint64) error {
	cpath, err := cString("array path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_delete_fragments(cpath, C.uint64_t(start), C.uint64_t(end), nil, &cerr), cerr)
}

// DeleteArray removes the array at path as TileDB's delete_array does (files TileDB did not
// make stay, and with them the folder).
func DeleteArray(path string) error {
	cpath, err := cString("array path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_delete(cpath, nil, &cerr), cerr)
}

// Evolve applies a JSON list of schema changes ({"add_attribute": ATTR},
// {"drop_attribute": NAME}, {"add_enumeration": ENUM}, {"extend_enumeration": {"name": NAME,
// "values": [...]}}, {"drop_enumeration": NAME}, {"expand_current_domain": [[LO, HI], ...]})
// to the newest schema of the array at path and writes the result at timestamp
// (milliseconds, later than every schema's; 0: now). A change TileDB refuses is
// ErrInvalidArgument with TileDB's reason, and nothing is written.
func Evolve(path, changesJSON string, timestamp uint64) error {
	cpath, err := cString("array path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	cjson, err := cString("changes JSON", changesJSON)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cjson))
	var cerr *C.tdb_error_t
	return takeError(C.tdb_array_evolve(cpath, cjson, C.uint64_t(timestamp), nil, &cerr), cerr)
}
