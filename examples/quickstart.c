/* Quickstart: filter a tile of int64 timestamps through [BYTESHUFFLE, ZSTD(3)], read it back,
 * and serialize the pipeline as TileDB stores it in an array schema.
 * Build: see CMakeLists.txt (target `quickstart`), or
 *   cc -Iinclude examples/quickstart.c target/release/libtdbfilter.a -lpthread -ldl -lm */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdbfilter.h"

static int fail(const char *what, tdb_error_t *err) {
  fprintf(stderr, "%s failed (status %d): %s\n", what, (int)tdb_error_status(err),
          tdb_error_message(err));
  tdb_error_free(err);
  return 1;
}

int main(void) {
  tdb_error_t *err = NULL;
  tdb_pipeline_t *pipeline = NULL;
  if (tdb_pipeline_create(&pipeline, &err) != TDB_OK) return fail("create", err);
  if (tdb_pipeline_add_filter(pipeline, TDB_FILTER_BYTESHUFFLE, &err) != TDB_OK ||
      tdb_pipeline_add_filter(pipeline, TDB_FILTER_ZSTD, &err) != TDB_OK)
    return fail("add_filter", err);
  int32_t level = 3;
  if (tdb_pipeline_set_option(pipeline, 1, TDB_COMPRESSION_LEVEL, &level, sizeof level, &err) !=
      TDB_OK)
    return fail("set_option", err);

  enum { N = 100000 };
  int64_t *cells = malloc(N * sizeof(int64_t));
  for (int64_t i = 0; i < N; i++) cells[i] = 1700000000000 + i * 1000 + (i % 7);

  tdb_tile_t *tile = NULL, *filtered = NULL, *back = NULL;
  if (tdb_tile_create(TDB_INT64, sizeof(int64_t), cells, N * sizeof(int64_t), &tile, &err) != TDB_OK)
    return fail("tile_create", err);
  if (tdb_pipeline_filter(pipeline, tile, &filtered, &err) != TDB_OK) return fail("filter", err);

  const uint8_t *bytes;
  size_t size;
  if (tdb_tile_data(filtered, &bytes, &size, &err) != TDB_OK) return fail("tile_data", err);
  printf("%zu bytes of cells -> %zu bytes in TileDB's filtered tile format\n",
         (size_t)(N * sizeof(int64_t)), size);

  if (tdb_pipeline_unfilter(pipeline, bytes, size, TDB_INT64, sizeof(int64_t), &back, &err) != TDB_OK)
    return fail("unfilter", err);
  const uint8_t *out;
  size_t out_size;
  if (tdb_tile_data(back, &out, &out_size, &err) != TDB_OK) return fail("tile_data", err);
  int same = out_size == N * sizeof(int64_t) && memcmp(out, cells, out_size) == 0;
  printf("round trip: %s\n", same ? "identical" : "DIFFERENT");

  uint8_t schema_bytes[64];
  size_t schema_size = 0;
  if (tdb_pipeline_serialize(pipeline, schema_bytes, sizeof schema_bytes, &schema_size, &err) != TDB_OK)
    return fail("serialize", err);
  printf("serialized pipeline (%zu bytes):", schema_size);
  for (size_t i = 0; i < schema_size; i++) printf(" %02x", schema_bytes[i]);
  printf("\n");

  tdb_tile_free(back);
  tdb_tile_free(filtered);
  tdb_tile_free(tile);
  tdb_pipeline_free(pipeline);
  free(cells);
  return same ? 0 : 1;
}
