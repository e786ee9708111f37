/* tdb_pipeline_set_memory_limit: unfiltering a tile larger than the limit fails with
 * TDB_ERR_OUT_OF_MEMORY naming the sizes, outputs untouched; 0 lifts the limit; damaged
 * chunk lengths are refused as corrupt before anything is allocated. */
#include "helpers.h"

static void test_limit(void) {
  const size_t n = 1u << 20;
  int64_t *cells = (int64_t *)xmalloc(n);
  for (size_t i = 0; i < n / 8; i++) cells[i] = (int64_t)(i * 5);
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("byteshuffle,zstd", &p, E));
  size_t fn = 0;
  uint8_t *filtered = filter_alloc(p, TDB_INT64, 8, cells, n, &fn);

  CHECK_OK(tdb_pipeline_set_memory_limit(p, 512 * 1024, E));
  tdb_tile_t *out = (tdb_tile_t *)&out;
  tdb_tile_t *const untouched = out;
  CHECK_ERR(tdb_pipeline_unfilter(p, filtered, fn, TDB_INT64, 8, &out, E), TDB_ERR_OUT_OF_MEMORY);
  CHECK_MSG_HAS("memory limit");
  CHECK_MSG_HAS("1048576");
  CHECK_MSG_HAS("524288");
  CHECK(out == untouched);

  /* Writing into the caller's buffer allocates no output: not limited. */
  int64_t *back = (int64_t *)xmalloc(n);
  size_t written = 0;
  CHECK_OK(tdb_pipeline_unfilter_into(p, filtered, fn, TDB_INT64, 8, back, n, &written, E));
  CHECK_MEM(back, written, cells, n);

  CHECK_OK(tdb_pipeline_set_memory_limit(p, 0, E));
  tdb_tile_t *tile = NULL;
  CHECK_OK(tdb_pipeline_unfilter(p, filtered, fn, TDB_INT64, 8, &tile, E));
  tdb_tile_free(tile);
  CHECK_ERR(tdb_pipeline_set_memory_limit(NULL, 1, E), TDB_ERR_INVALID_ARGUMENT);

  free(back);
  free(filtered);
  free(cells);
  tdb_pipeline_free(p);
}

static void test_damaged_length(void) {
  const size_t n = 256 * 1024;
  uint8_t *cells = (uint8_t *)xmalloc(n);
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (size_t i = 0; i < n; i++) {
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    cells[i] = (uint8_t)(x >> 24);
  }
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("zstd", &p, E));
  size_t fn = 0;
  uint8_t *filtered = filter_alloc(p, TDB_UINT8, 1, cells, n, &fn);
  filtered[8 + 3] = 0x7f; /* chunk 0 now claims about 2 GiB */
  tdb_tile_t *out = NULL;
  CHECK_ERR(tdb_pipeline_unfilter(p, filtered, fn, TDB_UINT8, 1, &out, E), TDB_ERR_CORRUPT_DATA);
  CHECK_MSG_HAS("chunk 0");
  CHECK(out == NULL);
  free(filtered);
  free(cells);
  tdb_pipeline_free(p);
}

int main(void) {
  test_limit();
  test_damaged_length();
  CHECK_DONE("test_memory_limit");
}
