"""Several Python threads filtering at once (the GIL is released in C), and no leak."""

import resource
import threading

import numpy as np

from tdbfilter import Pipeline


def test_threads_give_identical_results():
    p = Pipeline.from_spec("bitshuffle,zstd:3")
    p.set_threads(1)
    cells = [np.arange(i, i + 200000, dtype=np.int64) * 3 for i in range(8)]
    want = [p.filter(c) for c in cells]
    got = [None] * len(cells)
    errors = []

    def work(k):
        try:
            for _ in range(5):
                tile = p.filter(cells[k])
                assert tile == want[k]
                np.testing.assert_array_equal(p.unfilter(tile, np.int64), cells[k])
            got[k] = tile
        except Exception as e:  # surfaced below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(len(cells))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors and got == want


def test_ctypes_releases_the_gil():
    """Two threads filtering overlap in time: each spends less than the serial total."""
    import time
    p = Pipeline.from_spec("zstd:9")
    p.set_threads(1)
    cells = np.random.default_rng(1).integers(0, 1000, 2_000_000).astype(np.int64)
    t0 = time.perf_counter()
    p.filter(cells)
    one = time.perf_counter() - t0
    spans = []

    def work():
        a = time.perf_counter()
        p.filter(cells)
        spans.append((a, time.perf_counter()))

    threads = [threading.Thread(target=work) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    (a0, a1), (b0, b1) = sorted(spans)
    # With the GIL held during the call, the second would start only after the first ended.
    assert b0 < a1, f"the calls did not overlap (one call takes {one:.3f} s)"


def rss_kib():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * resource.getpagesize() // 1024


def test_no_leak_over_10000_calls():
    p = Pipeline.from_spec("byteshuffle,lz4,checksum_md5")
    cells = np.arange(4096, dtype=np.int64)
    for _ in range(500):  # warm up allocator pools
        p.unfilter(p.filter(cells), np.int64)
    before = rss_kib()
    for _ in range(10000):
        tile = p.filter(cells)
        p.unfilter(tile, np.int64)
        q = Pipeline.from_spec("zstd")
        q.close()
    grown = rss_kib() - before
    assert grown < 8 * 1024, f"resident memory grew by {grown} KiB over 10000 calls"
