package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import (
	"encoding/json"
	"math"
	"unsafe"
)

// ConsolidationPlan returns TileDB 2.30's consolidation plan for the fragments the array sees
// and a desired fragment size in bytes (TileDB-Py's ConsolidationPlan): groups of fragment
// names to consolidate together (overlapping fragments, small fragments whose union overlaps
// no other), then single fragments of at least 1.5 × fragmentSize, to be split. Merge a group
// with Consolidate(path, ConsolidationFragments(group...)).
func (a *Array) ConsolidationPlan(fragmentSize uint64) ([][]string, error) {
	var plan [][]string
	err := a.with(func(c *C.tdb_array_t) error {
		var size C.size_t
		var cerr *C.tdb_error_t
		st := C.tdb_array_consolidation_plan(c, C.uint64_t(fragmentSize), nil, 0, &size, &cerr)
		if st != C.TDB_ERR_BUFFER_TOO_SMALL {
			if err := takeError(st, cerr); err != nil {
				return err
			}
		}
		C.tdb_error_free(cerr)
		cerr = nil
		buf := make([]byte, size)
		st = C.tdb_array_consolidation_plan(c, C.uint64_t(fragmentSize),
			(*C.char)(unsafe.Pointer(&buf[0])), size, &size, &cerr)
		if err := takeError(st, cerr); err != nil {
			return err
		}
		return json.Unmarshal(buf[:size-1], &plan)
	})
	return plan, err
}

// ConsolidateOption configures Consolidate.
type ConsolidateOption func(*consolidateOptions)

type consolidateOptions struct {
	mode       string
	settings   [][2]string
	key        []byte
	start, end uint64
	fragments  []string
}

// ConsolidationMode sets what Consolidate merges (TileDB's sm.consolidation.mode):
// "fragments", "commits", "fragment_meta" or "array_meta". Without it: the
// sm.consolidation.mode setting, else "fragments".
func ConsolidationMode(mode string) ConsolidateOption {
	return func(o *consolidateOptions) { o.mode = mode }
}

// ConsolidationSetting sets one of TileDB's sm.consolidation.* settings (amplification,
// steps, step_min_frags, step_max_frags, step_size_ratio, buffer_size, timestamp_start,
// timestamp_end, purge_deleted_cells, mode) or an object-store option (vfs.s3.*, …). An
// unknown key or a malformed value is ErrInvalidArgument from Consolidate.
func ConsolidationSetting(key, value string) ConsolidateOption {
	return func(o *consolidateOptions) { o.settings = append(o.settings, [2]string{key, value}) }
}

// ConsolidationKey consolidates an encrypted array with its 32-byte AES-256-GCM key.
func ConsolidationKey(key []byte) ConsolidateOption {
	return func(o *consolidateOptions) { o.key = key }
}

// ConsolidationTimestamps merges only the fragments (array_meta mode: metadata files) inside
// [start, end] (milliseconds, inclusive); it narrows the timestamp settings.
func ConsolidationTimestamps(start, end uint64) ConsolidateOption {
	return func(o *consolidateOptions) { o.start, o.end = start, end }
}

// ConsolidationFragments merges exactly these fragments (names or __fragments/ paths) in
// fragments mode instead of following TileDB's plan; with another mode it is
// ErrInvalidArgument.
func ConsolidationFragments(names ...string) ConsolidateOption {
	return func(o *consolidateOptions) { o.fragments = append(o.fragments, names...) }
}

// Consolidate consolidates the array at path as TileDB 2.30 does (one mode per call; see
// the options): fragments by TileDB's plan or a list, commits, fragment metadata or array
// metadata. The merged fragment is committed last, so a failure leaves the array reading as
// before; Vacuum afterwards removes what was merged. Object stores are configured from the
// environment and ConsolidationSetting.
func Consolidate(path string, opts ...ConsolidateOption) error {
	o := consolidateOptions{end: math.MaxUint64}
	for _, opt := range opts {
		opt(&o)
	}
	cpath, err := cString("array path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	var cmode *C.char
	if o.mode != "" {
		if cmode, err = cString("consolidation mode", o.mode); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cmode))
	}
	var cerr *C.tdb_error_t
	var cfg *C.tdb_config_t
	if len(o.settings) > 0 {
		if err := takeError(C.tdb_config_alloc(&cfg, &cerr), cerr); err != nil {
			return err
		}
		defer C.tdb_config_free(cfg)
		for _, kv := range o.settings {
			ck, err := cString("setting", kv[0])
			if err != nil {
				return err
			}
			cv, err := cString("setting value", kv[1])
			if err != nil {
				C.free(unsafe.Pointer(ck))
				return err
			}
			err = takeError(C.tdb_config_set(cfg, ck, cv, &cerr), cerr)
			C.free(unsafe.Pointer(ck))
			C.free(unsafe.Pointer(cv))
			if err != nil {
				return err
			}
		}
	}
	var names **C.char
	if len(o.fragments) > 0 {
		var free func()
		if names, free, err = cStrings("fragment name", o.fragments); err != nil {
			return err
		}
		defer free()
	}
	key := cKey(o.key)
	if key != nil {
		defer C.free(key)
	}
	return takeError(C.tdb_array_consolidate(cpath, cmode, cfg, key, C.size_t(len(o.key)),
		C.uint64_t(o.start), C.uint64_t(o.end), names, C.size_t(len(o.fragments)), &cerr), cerr)
}

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
// (milliseconds, taken as given, an earlier one too, as TileDB does; 0: now, later than every
// schema's). A change TileDB refuses is ErrInvalidArgument with TileDB's reason, and nothing
// is written.
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
