package tdbfilter_test

import (
	"bytes"
	"errors"
	"fmt"
	"runtime"
	"sync"
	"testing"
	"time"

	tdbfilter "github.com/tdbfilter/tdbfilter/bindings/go"
)

// One Pipeline shared by many goroutines filtering and unfiltering different tiles, while
// others read its spec and serialize it.
func TestConcurrentUse(t *testing.T) {
	p := mustParse(t, "byteshuffle,checksum_md5,zstd:1")
	offsetsP := mustParse(t, "positive_delta,lz4")
	const workers, rounds = 16, 12
	var wg sync.WaitGroup
	errs := make(chan error, workers*2)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for r := range rounds {
				cells := int64Cells(3000+w*500+r*7, uint64(w*1000+r))
				filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
				if err != nil {
					errs <- err
					return
				}
				got, err := p.Unfilter(filtered, tdbfilter.Int64, 8)
				if err != nil || !bytes.Equal(got, cells) {
					errs <- fmt.Errorf("worker %d round %d: round trip failed (%v)", w, r, err)
					return
				}
				dst := make([]byte, len(cells))
				if n, err := p.UnfilterInto(dst, filtered, tdbfilter.Int64, 8); err != nil || n != len(cells) || !bytes.Equal(dst, cells) {
					errs <- fmt.Errorf("worker %d round %d: UnfilterInto failed (%v)", w, r, err)
					return
				}
				offsets, data := stringCells(200+r, uint64(w))
				fo, fd, err := p.FilterVar(offsetsP, tdbfilter.StringASCII, offsets, data)
				if err != nil {
					errs <- err
					return
				}
				if _, d, err := p.UnfilterVar(offsetsP, fo, fd, tdbfilter.StringASCII); err != nil || !bytes.Equal(d, data) {
					errs <- fmt.Errorf("worker %d round %d: var round trip failed (%v)", w, r, err)
					return
				}
			}
		}()
	}
	wg.Add(1)
	go func() {
		defer wg.Done()
		for range workers * rounds {
			if s := p.String(); s != "byteshuffle,checksum_md5,zstd:1" {
				errs <- fmt.Errorf("spec %q", s)
				return
			}
			if _, err := p.Serialize(); err != nil {
				errs <- err
				return
			}
		}
	}()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Closing a pipeline while goroutines use it: each call either completes or sees ErrClosed.
func TestCloseWhileInUse(t *testing.T) {
	p, err := tdbfilter.ParsePipeline("bitshuffle,lz4")
	if err != nil {
		t.Fatal(err)
	}
	cells := int64Cells(50000, 31)
	var wg sync.WaitGroup
	started := make(chan struct{}, 8)
	errs := make(chan error, 8)
	for range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			started <- struct{}{}
			for {
				filtered, err := p.Filter(cells, tdbfilter.Int64, 8)
				if errors.Is(err, tdbfilter.ErrClosed) {
					return
				}
				if err != nil {
					errs <- err
					return
				}
				if _, err := p.Unfilter(filtered, tdbfilter.Int64, 8); err != nil && !errors.Is(err, tdbfilter.ErrClosed) {
					errs <- err
					return
				}
			}
		}()
	}
	for range 8 {
		<-started
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// Pipelines dropped without Close are freed by their cleanup; closed ones are not freed a
// second time. A double free or a use after free would crash the test binary.
func TestCleanupBackstop(t *testing.T) {
	cells := int64Cells(1000, 41)
	for i := range 200 {
		p, err := tdbfilter.ParsePipeline("zstd:1")
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.Filter(cells, tdbfilter.Int64, 8); err != nil {
			t.Fatal(err)
		}
		if i%2 == 0 {
			p.Close()
		}
	}
	for range 3 {
		runtime.GC()
		time.Sleep(10 * time.Millisecond)
	}
	// The library still works after the cleanups ran.
	p := mustParse(t, "zstd:1")
	if f, err := p.Filter(cells, tdbfilter.Int64, 8); err != nil {
		t.Fatal(err)
	} else if got, err := p.Unfilter(f, tdbfilter.Int64, 8); err != nil || !bytes.Equal(got, cells) {
		t.Fatalf("round trip after cleanups: %v", err)
	}
}
