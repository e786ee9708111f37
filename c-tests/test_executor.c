/* Host executors (tdb_pipeline_set_executor): chunk jobs run on the host's threads give the
 * same bytes as the built-in pool, for filtering and unfiltering; a faulty executor is an
 * error, never wrong bytes. */
#include <stdatomic.h>
#include <threads.h>

#include "helpers.h"

/* A serial executor: runs every job in order on the calling thread. */
typedef struct {
  atomic_size_t calls;
  atomic_size_t jobs;
} serial_ctx;

static void serial_run(void *ctx, size_t n, tdb_job_fn job, void *job_ctx) {
  serial_ctx *s = (serial_ctx *)ctx;
  atomic_fetch_add(&s->calls, 1);
  for (size_t i = 0; i < n; i++) {
    atomic_fetch_add(&s->jobs, 1);
    job(job_ctx, i);
  }
}

/* A thread executor: W C11 threads take jobs from a shared counter. */
#define W 3
typedef struct {
  atomic_size_t next;
  size_t n;
  tdb_job_fn job;
  void *job_ctx;
  atomic_size_t done_by_helpers;
} batch;

typedef struct {
  atomic_size_t calls;
  atomic_size_t jobs;
} threads_ctx;

static int worker(void *arg) {
  batch *b = (batch *)arg;
  for (size_t i; (i = atomic_fetch_add(&b->next, 1)) < b->n;) {
    b->job(b->job_ctx, i);
    atomic_fetch_add(&b->done_by_helpers, 1);
  }
  return 0;
}

static void threads_run(void *ctx, size_t n, tdb_job_fn job, void *job_ctx) {
  threads_ctx *t = (threads_ctx *)ctx;
  atomic_fetch_add(&t->calls, 1);
  batch b = {.n = n, .job = job, .job_ctx = job_ctx};
  atomic_init(&b.next, 0);
  atomic_init(&b.done_by_helpers, 0);
  thrd_t th[W];
  for (int i = 0; i < W; i++) CHECK(thrd_create(&th[i], worker, &b) == thrd_success);
  for (int i = 0; i < W; i++) CHECK(thrd_join(th[i], NULL) == thrd_success);
  atomic_fetch_add(&t->jobs, atomic_load(&b.done_by_helpers));
}

/* An executor that forgets the last job. */
static void forgetful_run(void *ctx, size_t n, tdb_job_fn job, void *job_ctx) {
  (void)ctx;
  for (size_t i = 0; i + 1 < n; i++) job(job_ctx, i);
}

static uint8_t *cells(size_t n) {
  uint8_t *d = (uint8_t *)xmalloc(n);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i += 8) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    uint64_t v = i * 3 + (x & 0xFF); /* compressible, not trivial */
    memcpy(d + i, &v, 8);
  }
  return d;
}

/* Filters and unfilters through `p` with and without the executor; the bytes must match. */
static void check_same(const char *spec, tdb_executor_fn run, void *ctx) {
  const size_t n = 1u << 20; /* 16 chunks of 64 KiB */
  uint8_t *data = cells(n);
  tdb_pipeline_t *pool = NULL, *host = NULL;
  CHECK_OK(tdb_pipeline_from_spec(spec, &pool, E));
  CHECK_OK(tdb_pipeline_from_spec(spec, &host, E));
  CHECK_OK(tdb_pipeline_set_threads(pool, 4, E));
  CHECK_OK(tdb_pipeline_set_threads(host, 4, E));
  CHECK_OK(tdb_pipeline_set_executor(host, run, ctx, E));

  size_t a = 0, b = 0;
  uint8_t *fa = filter_alloc(pool, TDB_INT64, 8, data, n, &a);
  uint8_t *fb = filter_alloc(host, TDB_INT64, 8, data, n, &b);
  CHECK_MSG(a == b && memcmp(fa, fb, a) == 0, "%s: filtered bytes differ with the executor",
            spec);

  tdb_tile_t *back = NULL;
  CHECK_OK(tdb_pipeline_unfilter(host, fa, a, TDB_INT64, 8, &back, E));
  const uint8_t *bd = NULL;
  size_t bn = 0;
  CHECK_OK(tdb_tile_data(back, &bd, &bn, E));
  CHECK_MEM(bd, bn, data, n);
  tdb_tile_free(back);

  free(fa);
  free(fb);
  free(data);
  tdb_pipeline_free(pool);
  tdb_pipeline_free(host);
}

static const char *const SPECS[] = {"byteshuffle,zstd:3", "bitshuffle,lz4", "delta,gzip:6",
                                    "zstd:1,checksum_md5", "checksum_sha256"};
#define N_SPECS (sizeof SPECS / sizeof SPECS[0])

static void test_serial_executor(void) {
  serial_ctx s;
  atomic_init(&s.calls, 0);
  atomic_init(&s.jobs, 0);
  for (size_t i = 0; i < N_SPECS; i++) check_same(SPECS[i], serial_run, &s);
  CHECK(atomic_load(&s.calls) >= N_SPECS * 2); /* filter and unfilter both used it */
  CHECK(atomic_load(&s.jobs) >= atomic_load(&s.calls) * 2);
}

static void test_thread_executor(void) {
  threads_ctx t;
  atomic_init(&t.calls, 0);
  atomic_init(&t.jobs, 0);
  for (size_t i = 0; i < N_SPECS; i++) check_same(SPECS[i], threads_run, &t);
  CHECK(atomic_load(&t.calls) >= N_SPECS * 2);
  CHECK(atomic_load(&t.jobs) >= atomic_load(&t.calls) * 2);
}

static void test_faulty_executor_and_reset(void) {
  const size_t n = 1u << 20;
  uint8_t *data = cells(n);
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("byteshuffle,zstd:3", &p, E));
  CHECK_OK(tdb_pipeline_set_threads(p, 4, E));
  size_t fn = 0;
  uint8_t *good = filter_alloc(p, TDB_INT64, 8, data, n, &fn);

  CHECK_OK(tdb_pipeline_set_executor(p, forgetful_run, NULL, E));
  tdb_tile_t *tile = NULL, *out = (tdb_tile_t *)&out;
  tdb_tile_t *const untouched = out;
  CHECK_OK(tdb_tile_create(TDB_INT64, 8, data, n, &tile, E));
  CHECK_ERR(tdb_pipeline_filter(p, tile, &out, E), TDB_ERR_INTERNAL);
  CHECK_MSG_HAS("did not run job");
  CHECK(out == untouched);
  CHECK_ERR(tdb_pipeline_unfilter(p, good, fn, TDB_INT64, 8, &out, E), TDB_ERR_INTERNAL);
  CHECK_MSG_HAS("did not run job");
  CHECK(out == untouched);

  /* NULL goes back to the built-in pool. */
  CHECK_OK(tdb_pipeline_set_executor(p, NULL, NULL, E));
  tdb_tile_t *back = NULL;
  CHECK_OK(tdb_pipeline_unfilter(p, good, fn, TDB_INT64, 8, &back, E));
  const uint8_t *bd = NULL;
  size_t bn = 0;
  CHECK_OK(tdb_tile_data(back, &bd, &bn, E));
  CHECK_MEM(bd, bn, data, n);
  tdb_tile_free(back);

  CHECK_ERR(tdb_pipeline_set_executor(NULL, serial_run, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_tile_free(tile);
  free(good);
  free(data);
  tdb_pipeline_free(p);
}

int main(void) {
  test_serial_executor();
  test_thread_executor();
  test_faulty_executor_and_reset();
  CHECK_DONE("test_executor");
}
