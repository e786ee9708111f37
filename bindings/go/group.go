package tdbfilter

/*
#include <stdlib.h>
#include <tdbfilter.h>
*/
import "C"

import (
	"runtime"
	"sync"
	"unsafe"
)

// ObjectType is what a group member is (tdb_object_type_t values).
type ObjectType uint32

// The member types.
const (
	ObjectInvalid ObjectType = C.TDB_OBJECT_INVALID // Neither an array nor a group.
	ObjectGroup   ObjectType = C.TDB_OBJECT_GROUP   // A group.
	ObjectArray   ObjectType = C.TDB_OBJECT_ARRAY   // An array.
)

// GroupMember is one member of a group.
type GroupMember struct {
	URI      string     // its location (a relative URI joined to the group's)
	Name     string     // its name ("" when it has none)
	HasName  bool       // whether it has a name
	Type     ObjectType // array or group
	Relative bool       // stored relative to the group
}

// Group is an opened TileDB group: its members and metadata as opened (or last committed),
// and the changes staged for the next Commit. Safe for use from several goroutines.
type Group struct {
	mu      sync.Mutex
	c       *C.tdb_group_t // nil after Close
	cleanup runtime.Cleanup
}

// CreateGroup creates an empty group at path (the folder and missing parents). An existing
// array or group there is ErrInvalidArgument.
func CreateGroup(path string) error {
	cpath, err := cString("group path", path)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cpath))
	var cerr *C.tdb_error_t
	return takeError(C.tdb_group_create(cpath, nil, &cerr), cerr)
}

// OpenGroup opens the group at path with what was written up to timestamp (milliseconds; 0:
// now) visible; Commit writes at timestamp (0: the time of the commit).
func OpenGroup(path string, timestamp uint64) (*Group, error) {
	cpath, err := cString("group path", path)
	if err != nil {
		return nil, err
	}
	defer C.free(unsafe.Pointer(cpath))
	var c *C.tdb_group_t
	var cerr *C.tdb_error_t
	if err := takeError(C.tdb_group_open(cpath, C.uint64_t(timestamp), nil, &c, &cerr), cerr); err != nil {
		return nil, err
	}
	g := &Group{c: c}
	g.cleanup = runtime.AddCleanup(g, func(c *C.tdb_group_t) { C.tdb_group_free(c) }, c)
	return g, nil
}

// Close frees the group; staged changes not committed are dropped. Closing twice is a no-op;
// every other method then returns ErrClosed.
func (g *Group) Close() error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c != nil {
		g.cleanup.Stop()
		C.tdb_group_free(g.c)
		g.c = nil
	}
	return nil
}

func (g *Group) with(f func(c *C.tdb_group_t) error) error {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.c == nil {
		return ErrClosed
	}
	return f(g.c)
}

// Members returns the members, sorted by name (or URI when unnamed).
func (g *Group) Members() ([]GroupMember, error) {
	var out []GroupMember
	err := g.with(func(c *C.tdb_group_t) error {
		var n C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_group_member_count(c, &n, &cerr), cerr); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < n; i++ {
			var uri, name *C.char
			var t C.tdb_object_type_t
			var rel C.bool
			if err := takeError(C.tdb_group_member(c, i, &uri, &name, &t, &rel, &cerr), cerr); err != nil {
				return err
			}
			m := GroupMember{URI: C.GoString(uri), Type: ObjectType(t), Relative: bool(rel)}
			if name != nil {
				m.Name, m.HasName = C.GoString(name), true
			}
			out = append(out, m)
		}
		return nil
	})
	return out, err
}

// AddMember stages adding the array or group at uri (relative to the group's folder when
// relative) under name ("" for none); Commit checks and writes it.
func (g *Group) AddMember(uri string, relative bool, name string) error {
	curi, err := cString("member URI", uri)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(curi))
	var cname *C.char
	if name != "" {
		if cname, err = cString("member name", name); err != nil {
			return err
		}
		defer C.free(unsafe.Pointer(cname))
	}
	return g.with(func(c *C.tdb_group_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_group_add_member(c, curi, C.bool(relative), cname, &cerr), cerr)
	})
}

// RemoveMember stages removing the member named nameOrURI (or the one member with that URI).
func (g *Group) RemoveMember(nameOrURI string) error {
	cs, err := cString("member", nameOrURI)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(cs))
	return g.with(func(c *C.tdb_group_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_group_remove_member(c, cs, &cerr), cerr)
	})
}

// MetadataPut stages writing metadata key: count values of dt in value.
func (g *Group) MetadataPut(key string, dt Datatype, count uint32, value []byte) error {
	ckey, err := cString("metadata key", key)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(ckey))
	var cvalue unsafe.Pointer
	if len(value) > 0 {
		cvalue = C.CBytes(value)
		defer C.free(cvalue)
	}
	return g.with(func(c *C.tdb_group_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_group_metadata_put(c, ckey, C.tdb_datatype_t(dt), C.uint32_t(count),
			cvalue, C.size_t(len(value)), &cerr), cerr)
	})
}

// MetadataDelete stages deleting metadata key.
func (g *Group) MetadataDelete(key string) error {
	ckey, err := cString("metadata key", key)
	if err != nil {
		return err
	}
	defer C.free(unsafe.Pointer(ckey))
	return g.with(func(c *C.tdb_group_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_group_metadata_delete(c, ckey, &cerr), cerr)
	})
}

// Commit writes the staged changes as one write session and reads the group again. On
// failure the staged changes are kept and nothing of a refused member change is written.
func (g *Group) Commit() error {
	return g.with(func(c *C.tdb_group_t) error {
		var cerr *C.tdb_error_t
		return takeError(C.tdb_group_commit(c, &cerr), cerr)
	})
}

// Metadata returns the group metadata by key.
func (g *Group) Metadata() (map[string]MetadataValue, error) {
	out := map[string]MetadataValue{}
	err := g.with(func(c *C.tdb_group_t) error {
		var n C.uint32_t
		var cerr *C.tdb_error_t
		if err := takeError(C.tdb_group_metadata_count(c, &n, &cerr), cerr); err != nil {
			return err
		}
		for i := C.uint32_t(0); i < n; i++ {
			var key *C.char
			var dt C.tdb_datatype_t
			var count C.uint32_t
			var value unsafe.Pointer
			if err := takeError(C.tdb_group_metadata_entry(c, i, &key, &dt, &count, &value, &cerr), cerr); err != nil {
				return err
			}
			size := int(count) * int(Datatype(dt).Size())
			out[C.GoString(key)] = MetadataValue{Datatype(dt), uint32(count), C.GoBytes(value, C.int(size))}
		}
		return nil
	})
	return out, err
}
