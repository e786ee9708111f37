package tdbfilter

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const lifecycleSchema = `{"sparse": true,
  "dimensions": [{"name": "d", "type": "INT32", "domain": [0, 99], "tile": 10}],
  "attributes": [{"name": "a", "type": "INT32"}]}`

// lifecycleArray makes a sparse array with one one-cell fragment per timestamp 1..n.
func lifecycleArray(t *testing.T, n int) string {
	t.Helper()
	path := filepath.Join(t.TempDir(), "arr")
	if err := Create(path, lifecycleSchema, nil); err != nil {
		t.Fatal(err)
	}
	for ts := 1; ts <= n; ts++ {
		w, err := OpenWriter(path, nil, uint64(ts))
		if err != nil {
			t.Fatal(err)
		}
		cell := binary.LittleEndian.AppendUint32(nil, uint32(ts))
		if err := w.SetLayout(Unordered); err != nil {
			t.Fatal(err)
		}
		for _, f := range []string{"d", "a"} {
			if err := w.SetData(f, cell); err != nil {
				t.Fatal(err)
			}
		}
		if err := w.Submit(); err != nil {
			t.Fatal(err)
		}
		if _, err := w.Finalize(); err != nil {
			t.Fatal(err)
		}
		if err := w.Close(); err != nil {
			t.Fatal(err)
		}
	}
	return path
}

func fragmentCount(t *testing.T, path string) int {
	t.Helper()
	a, err := OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	frs, err := a.Fragments()
	if err != nil {
		t.Fatal(err)
	}
	return len(frs)
}

func TestArrayLifecycle(t *testing.T) {
	path := lifecycleArray(t, 3)
	if err := DeleteFragments(path, 3, 1); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("reversed range: %v", err)
	}
	if err := DeleteFragments(path, 2, 2); err != nil {
		t.Fatal(err)
	}
	if n := fragmentCount(t, path); n != 2 {
		t.Fatalf("%d fragments after deleting one of 3", n)
	}
	if err := Vacuum(path, ""); err != nil {
		t.Fatal(err)
	}
	if err := Vacuum(path, "everything"); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("bad mode: %v", err)
	}
	if err := Evolve(path, `[{"add_attribute": {"name": "b", "type": "INT64", "fill": 7}}]`, 0); err != nil {
		t.Fatal(err)
	}
	a, err := OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	_, attrs, err := a.Fields()
	a.Close()
	if err != nil || len(attrs) != 2 || attrs[1].Name != "b" {
		t.Fatalf("attributes after evolving: %v %v", attrs, err)
	}
	err = Evolve(path, `[{"drop_attribute": "nope"}]`, 0)
	if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "does not exist") {
		t.Fatalf("dropping a missing attribute: %v", err)
	}
	if err := DeleteArray(path); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("array folder left: %v", err)
	}
}

func TestGroup(t *testing.T) {
	arr := lifecycleArray(t, 1)
	dir := t.TempDir()
	g := filepath.Join(dir, "g")
	if err := CreateGroup(g); err != nil {
		t.Fatal(err)
	}
	if err := CreateGroup(filepath.Join(g, "sub")); err != nil {
		t.Fatal(err)
	}
	if err := CreateGroup(g); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("creating twice: %v", err)
	}
	if _, err := OpenGroup(arr, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("opening an array as a group: %v", err)
	}
	grp, err := OpenGroup(g, 0)
	if err != nil {
		t.Fatal(err)
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(grp.AddMember(arr, false, "arr"))
	must(grp.AddMember("sub", true, ""))
	must(grp.MetadataPut("answer", Int64, 1, binary.LittleEndian.AppendUint64(nil, 42)))
	must(grp.Commit())
	members, err := grp.Members()
	must(err)
	if len(members) != 2 || members[0].Name != "arr" || members[0].Type != ObjectArray ||
		members[1].HasName || members[1].Type != ObjectGroup || !members[1].Relative {
		t.Fatalf("members: %+v", members)
	}
	meta, err := grp.Metadata()
	must(err)
	if v := meta["answer"]; v.Datatype != Int64 || binary.LittleEndian.Uint64(v.Bytes) != 42 {
		t.Fatalf("metadata: %+v", meta)
	}
	must(grp.RemoveMember("nothing"))
	if err := grp.Commit(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("removing a missing member: %v", err)
	}
	must(grp.Close())
	must(grp.Close())
	if _, err := grp.Members(); !errors.Is(err, ErrClosed) {
		t.Fatalf("after Close: %v", err)
	}
	grp, err = OpenGroup(g, 0)
	must(err)
	defer grp.Close()
	must(grp.RemoveMember("arr"))
	must(grp.Commit())
	members, err = grp.Members()
	must(err)
	if len(members) != 1 {
		t.Fatalf("members after removing one: %+v", members)
	}
}

func readA(t *testing.T, path string) []uint32 {
	t.Helper()
	a, err := OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	cols, err := a.Read([]string{"a"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	v, err := Values[uint32](&cols[0])
	if err != nil {
		t.Fatal(err)
	}
	return v
}

func TestConsolidate(t *testing.T) {
	path := lifecycleArray(t, 5)
	want := readA(t, path)
	a, err := OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	frs, err := a.Fragments()
	a.Close()
	if err != nil {
		t.Fatal(err)
	}
	entries := func() int {
		t.Helper()
		e, err := os.ReadDir(filepath.Join(path, "__fragments"))
		if err != nil {
			t.Fatal(err)
		}
		return len(e)
	}
	before := entries()
	for name, err := range map[string]error{
		"bad mode":       Consolidate(path, ConsolidationMode("everything")),
		"bad setting":    Consolidate(path, ConsolidationSetting("sm.consolidation.steps", "many")),
		"unknown key":    Consolidate(path, ConsolidationSetting("sm.consolidation.nope", "1")),
		"reversed range": Consolidate(path, ConsolidationTimestamps(4, 2)),
		"short key":      Consolidate(path, ConsolidationKey([]byte("short"))),
		"list in commits mode": Consolidate(path, ConsolidationMode("commits"),
			ConsolidationFragments(frs[0].Name, frs[1].Name)),
		"missing fragment": Consolidate(path, ConsolidationFragments(frs[0].Name, "__1_1_x_22")),
	} {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v", name, err)
		}
	}
	if n := entries(); n != before {
		t.Fatalf("refused consolidations wrote fragments: %d, was %d", n, before)
	}
	a, err = OpenArray(path)
	if err != nil {
		t.Fatal(err)
	}
	plan, err := a.ConsolidationPlan(1 << 40)
	a.Close()
	if err != nil || len(plan) != 1 || len(plan[0]) != 5 || plan[0][0] != frs[0].Name {
		t.Fatalf("plan of 5 small fragments: %v %v", plan, err)
	}
	if _, err := a.ConsolidationPlan(1); !errors.Is(err, ErrClosed) {
		t.Fatalf("plan after Close: %v", err)
	}
	if err := Consolidate(path, ConsolidationFragments(frs[0].Name, frs[1].Name)); err != nil {
		t.Fatal(err)
	}
	if n := fragmentCount(t, path); n != 4 {
		t.Fatalf("%d fragments after merging two of 5", n)
	}
	if err := Consolidate(path, ConsolidationTimestamps(3, 4)); err != nil {
		t.Fatal(err)
	}
	if n := fragmentCount(t, path); n != 3 {
		t.Fatalf("%d fragments after merging [3, 4]", n)
	}
	if err := Consolidate(path, ConsolidationSetting("sm.consolidation.steps", "1")); err != nil {
		t.Fatal(err)
	}
	if n := fragmentCount(t, path); n != 1 {
		t.Fatalf("%d fragments after merging everything", n)
	}
	if err := Consolidate(path, ConsolidationSetting("sm.consolidation.mode", "commits")); err != nil {
		t.Fatal(err)
	}
	cons, _ := filepath.Glob(filepath.Join(path, "__commits", "*.con"))
	if len(cons) != 1 {
		t.Fatalf("commits consolidation: %v", cons)
	}
	for _, mode := range []string{"fragments", "commits"} {
		if err := Vacuum(path, mode); err != nil {
			t.Fatal(err)
		}
	}
	if n := entries(); n != 1 {
		t.Fatalf("%d fragment folders after vacuuming", n)
	}
	if got := readA(t, path); !slices.Equal(got, want) {
		t.Fatalf("cells after consolidating: %v, want %v", got, want)
	}
}
