/* Threading: filtering and unfiltering give identical results with
 * tdb_pipeline_set_threads 1, 2, 0 (= all cores) and others; errors are
 * reported the same way; a const pipeline can be shared by several C
 * threads at once. */
#include "helpers.h"

#if !defined(__STDC_NO_THREADS__)
#include <threads.h>
#define HAVE_C11_THREADS 1
#endif

static const uint32_t THREADS[] = {1, 2, 0, 3, 8, 64};
#define N_THREADS (sizeof THREADS / sizeof THREADS[0])

typedef struct {
  uint32_t types[5];
  size_t n;
} pipe_def_t;

static const pipe_def_t PIPES[] = {
    {{TDB_FILTER_BYTESHUFFLE, TDB_FILTER_ZSTD}, 2},
    {{TDB_FILTER_CHECKSUM_MD5, TDB_FILTER_GZIP}, 2},
    {{TDB_FILTER_BITSHUFFLE, TDB_FILTER_LZ4, TDB_FILTER_CHECKSUM_SHA256}, 3},
    {{TDB_FILTER_BZIP2}, 1},
    {{TDB_FILTER_NONE}, 1},
    {{0}, 0},
};
#define N_PIPES (sizeof PIPES / sizeof PIPES[0])

/* The tile: 33 chunks of int32 (2 MiB + 12 bytes), or 5 chunks (256 KiB + 12 bytes) with
 * TDB_TEST_LIGHT; set by main. */
static size_t TILE = 0;
static size_t TILE_CHUNKS = 0;

static uint8_t *make_tile(void) {
  uint8_t *d = (uint8_t *)xmalloc(TILE);
  int32_t *v = (int32_t *)(void *)d;
  for (size_t i = 0; i < TILE / 4; i++) v[i] = (int32_t)((i * 2654435761u) >> 20) % 5000;
  return d;
}

static void test_same_bytes(const uint8_t *data) {
  for (size_t pi = 0; pi < N_PIPES; pi++) {
    tdb_pipeline_t *p = make_pipeline(PIPES[pi].types, PIPES[pi].n);
    CHECK_OK(tdb_pipeline_set_threads(p, 1, E));
    size_t ref_n = 0;
    uint8_t *ref = roundtrip(p, TDB_INT32, 4, data, TILE, &ref_n);
    chunk_t *c = (chunk_t *)xmalloc(64 * sizeof(chunk_t));
    CHECK(parse_chunks(ref, ref_n, c, 64) == TILE_CHUNKS);
    free(c);

    for (size_t ti = 0; ti < N_THREADS; ti++) {
      CHECK_OK(tdb_pipeline_set_threads(p, THREADS[ti], E));
      for (int rep = 0; rep < 2; rep++) {
        size_t fn = 0;
        uint8_t *f = filter_alloc(p, TDB_INT32, 4, data, TILE, &fn);
        CHECK_MSG(fn == ref_n && memcmp(f, ref, fn) == 0,
                  "pipeline %zu: threads=%u output differs from threads=1", pi,
                  THREADS[ti]);
        free(f);
        size_t un = 0;
        uint8_t *u = unfilter_alloc(p, ref, ref_n, TDB_INT32, 4, &un);
        CHECK_MEM(u, un, data, TILE);
        free(u);
      }
    }
    /* small tiles (one chunk, empty) with many threads */
    CHECK_OK(tdb_pipeline_set_threads(p, 0, E));
    for (size_t sz = 0; sz <= 4096; sz += 1024) {
      size_t fn = 0;
      uint8_t *f = roundtrip(p, TDB_INT32, 4, data, sz, &fn);
      free(f);
    }
    free(ref);
    tdb_pipeline_free(p);
  }
}

static void test_same_errors(const uint8_t *data) {
  /* checksum mismatch in a middle chunk and truncation: same status for
   * every thread count, output untouched */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_CHECKSUM_SHA256);
  size_t fn = 0;
  uint8_t *f = filter_alloc(p, TDB_INT32, 4, data, TILE, &fn);
  chunk_t *c = (chunk_t *)xmalloc(64 * sizeof(chunk_t));
  CHECK(parse_chunks(f, fn, c, 64) == TILE_CHUNKS);
  f[c[TILE_CHUNKS / 2].data_off + 5] ^= 0x20;
  for (size_t ti = 0; ti < N_THREADS; ti++) {
    CHECK_OK(tdb_pipeline_set_threads(p, THREADS[ti], E));
    tdb_tile_t *t = NULL;
    CHECK_ERR(tdb_pipeline_unfilter(p, f, fn, TDB_INT32, 4, &t, E),
              TDB_ERR_CHECKSUM_MISMATCH);
    CHECK_MSG_HAS("chunk");
    CHECK(t == NULL);
    CHECK_ERR(tdb_pipeline_unfilter(p, f, fn - 1, TDB_INT32, 4, &t, E),
              TDB_ERR_CORRUPT_DATA);
    CHECK(t == NULL);
  }
  /* corrupt several chunks: still one error, of the same kind */
  f[c[1].data_off] ^= 0x01;
  f[c[TILE_CHUNKS - 3].data_off + 9] ^= 0x01;
  for (size_t ti = 0; ti < N_THREADS; ti++) {
    CHECK_OK(tdb_pipeline_set_threads(p, THREADS[ti], E));
    tdb_tile_t *t = NULL;
    CHECK_ERR(tdb_pipeline_unfilter(p, f, fn, TDB_INT32, 4, &t, E),
              TDB_ERR_CHECKSUM_MISMATCH);
    CHECK(t == NULL);
  }
  free(c);
  free(f);
  tdb_pipeline_free(p);
}

#ifdef HAVE_C11_THREADS
typedef struct {
  const tdb_pipeline_t *p;
  const uint8_t *data;
  const uint8_t *ref;
  size_t ref_n;
  int ok;
} worker_t;

/* Worker threads must not use CHECK (exit from a thread); they report. */
static int worker(void *arg) {
  worker_t *w = (worker_t *)arg;
  w->ok = 1;
  for (int rep = 0; rep < 3 && w->ok; rep++) {
    tdb_tile_t *t = NULL, *f = NULL, *u = NULL;
    if (tdb_tile_create(TDB_INT32, 4, w->data, TILE, &t, NULL) != TDB_OK) w->ok = 0;
    if (w->ok && tdb_pipeline_filter(w->p, t, &f, NULL) != TDB_OK) w->ok = 0;
    const uint8_t *fd = NULL;
    size_t fn = 0;
    if (w->ok && tdb_tile_data(f, &fd, &fn, NULL) != TDB_OK) w->ok = 0;
    if (w->ok && (fn != w->ref_n || memcmp(fd, w->ref, fn) != 0)) w->ok = 0;
    if (w->ok && tdb_pipeline_unfilter(w->p, fd, fn, TDB_INT32, 4, &u, NULL) != TDB_OK)
      w->ok = 0;
    const uint8_t *ud = NULL;
    size_t un = 0;
    if (w->ok && tdb_tile_data(u, &ud, &un, NULL) != TDB_OK) w->ok = 0;
    if (w->ok && (un != TILE || memcmp(ud, w->data, un) != 0)) w->ok = 0;
    tdb_tile_free(u);
    tdb_tile_free(f);
    tdb_tile_free(t);
  }
  return 0;
}

static void test_shared_pipeline(const uint8_t *data) {
  const uint32_t inner[] = {1, 2, 0};
  for (size_t k = 0; k < 3; k++) {
    tdb_pipeline_t *p = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_CHECKSUM_MD5,
                             TDB_FILTER_ZSTD);
    CHECK_OK(tdb_pipeline_set_threads(p, inner[k], E));
    size_t ref_n = 0;
    uint8_t *ref = filter_alloc(p, TDB_INT32, 4, data, TILE, &ref_n);
    enum { W = 4 };
    thrd_t th[W];
    worker_t w[W];
    for (int i = 0; i < W; i++) {
      w[i].p = p;
      w[i].data = data;
      w[i].ref = ref;
      w[i].ref_n = ref_n;
      w[i].ok = 0;
      CHECK(thrd_create(&th[i], worker, &w[i]) == thrd_success);
    }
    for (int i = 0; i < W; i++) {
      CHECK(thrd_join(th[i], NULL) == thrd_success);
      CHECK_MSG(w[i].ok, "worker %d (inner threads %u) failed", i, inner[k]);
    }
    free(ref);
    tdb_pipeline_free(p);
  }
}
#endif

int main(void) {
  TILE_CHUNKS = check_light_() ? 5 : 33;
  TILE = (size_t)(TILE_CHUNKS - 1) * 65536 + 12;
  if (check_light_()) printf("test_threads: light workload (TDB_TEST_LIGHT): 5-chunk tiles\n");
  uint8_t *data = make_tile();
  test_same_bytes(data);
  test_same_errors(data);
#ifdef HAVE_C11_THREADS
  test_shared_pipeline(data);
#endif
  free(data);
  CHECK_DONE("test_threads");
}
