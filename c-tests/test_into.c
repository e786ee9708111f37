/* Caller-owned buffers: tdb_pipeline_filtered_size_bound, tdb_pipeline_filter_into,
 * tdb_pipeline_filter_cells_into and tdb_pipeline_unfilter_into give the same bytes as the allocating calls, report the size
 * needed when the buffer is too small, and leave the buffer untouched on other errors. */
#include "helpers.h"

static void test_pipeline_into(tdb_pipeline_t *p, uint32_t dt, uint64_t cell, const uint8_t *data,
                               size_t n) {
  size_t want_n = 0;
  uint8_t *want = filter_alloc(p, dt, cell, data, n, &want_n);
  size_t bound = 0;
  CHECK_OK(tdb_pipeline_filtered_size_bound(p, n, &bound, E));
  CHECK(bound >= want_n);
  tdb_tile_t *tile = NULL;
  CHECK_OK(tdb_tile_create(dt, cell, data, n, &tile, E));
  uint8_t *buf = (uint8_t *)xmalloc(bound);
  size_t written = 0;
  CHECK_OK(tdb_pipeline_filter_into(p, tile, buf, bound, &written, E));
  CHECK_MEM(buf, written, want, want_n);
  /* Too small: the needed size is reported and suffices. */
  size_t needed = 0;
  CHECK_ERR(tdb_pipeline_filter_into(p, tile, buf, want_n - 1, &needed, E),
            TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(needed >= want_n);
  CHECK_ERR(tdb_pipeline_filter_into(p, tile, NULL, 0, &needed, E), TDB_ERR_BUFFER_TOO_SMALL);
  /* The same bytes straight from the caller's cells, without a tile. */
  memset(buf, 0, bound);
  written = 0;
  CHECK_OK(tdb_pipeline_filter_cells_into(p, data, n, dt, cell, buf, bound, &written, E));
  CHECK_MEM(buf, written, want, want_n);
  CHECK_ERR(tdb_pipeline_filter_cells_into(p, data, n, dt, cell, buf, want_n - 1, &needed, E),
            TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(needed >= want_n);
  if (n > 0 && cell > 1) {
    written = 777;
    CHECK_ERR(tdb_pipeline_filter_cells_into(p, data, n - 1, dt, cell, buf, bound, &written, E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK(written == 777);
  }
  CHECK_ERR(tdb_pipeline_filter_cells_into(p, NULL, 8, dt, cell, buf, bound, &written, E),
            TDB_ERR_INVALID_ARGUMENT);
  /* Unfilter into an exact and a larger buffer. */
  uint8_t *back = (uint8_t *)xmalloc(n + 16);
  CHECK_OK(tdb_pipeline_unfilter_into(p, want, want_n, dt, cell, back, n + 16, &written, E));
  CHECK(written == n);
  CHECK(n == 0 || memcmp(back, data, n) == 0);
  if (n > 0) {
    memset(back, 0xEE, n + 16);
    CHECK_ERR(tdb_pipeline_unfilter_into(p, want, want_n, dt, cell, back, n - 1, &needed, E),
              TDB_ERR_BUFFER_TOO_SMALL);
    CHECK(needed == n);
    for (size_t i = 0; i < n + 16; i++) CHECK(back[i] == 0xEE); /* nothing written */
  }
  /* Corrupt input: error, *written untouched. */
  written = 12345;
  CHECK_ERR(tdb_pipeline_unfilter_into(p, want, want_n - 1, dt, cell, back, n + 16, &written, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK(written == 12345);
  free(back);
  free(buf);
  tdb_tile_free(tile);
  free(want);
}

int main(void) {
  static uint8_t data[300000];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)((i / 13) ^ (i % 3));
  tdb_pipeline_t *pipes[] = {PIPE_EMPTY(),
                             PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_ZSTD),
                             PIPE(TDB_FILTER_BITSHUFFLE, TDB_FILTER_LZ4),
                             PIPE(TDB_FILTER_CHECKSUM_SHA256, TDB_FILTER_GZIP),
                             PIPE(TDB_FILTER_RLE),
                             PIPE(TDB_FILTER_POSITIVE_DELTA, TDB_FILTER_BIT_WIDTH_REDUCTION,
                                  TDB_FILTER_ZSTD)};
  const size_t sizes[] = {4, 1000, 65536, 65540, sizeof data};
  for (size_t p = 0; p < sizeof pipes / sizeof pipes[0]; p++) {
    for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
      if (p == 5) {
        /* POSITIVE_DELTA needs non-decreasing values: a ramp of uint32. */
        static uint32_t ramp[75000];
        for (size_t i = 0; i < 75000; i++) ramp[i] = (uint32_t)(i * 2);
        test_pipeline_into(pipes[p], TDB_UINT32, 4, (const uint8_t *)ramp, sizes[s]);
      } else {
        test_pipeline_into(pipes[p], TDB_UINT32, 4, data, sizes[s]);
      }
    }
    tdb_pipeline_free(pipes[p]);
  }
  /* NULL arguments. */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_ZSTD);
  size_t w = 0;
  uint8_t buf[64];
  CHECK_ERR(tdb_pipeline_filtered_size_bound(NULL, 10, &w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_filtered_size_bound(p, 10, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_filter_into(p, NULL, buf, 64, &w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_unfilter_into(p, buf, 8, TDB_UINT8, 1, NULL, 10, &w, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_unfilter_into(p, buf, 8, TDB_UINT8, 1, buf, 64, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  tdb_pipeline_free(p);
  CHECK_DONE("test_into");
}
