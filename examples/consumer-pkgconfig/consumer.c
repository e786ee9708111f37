/* Filters a tile of int32 cells through "byteshuffle,lz4" with an installed tdbfilter found
 * by pkg-config, unfilters it and checks the bytes. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <tdbfilter.h>

static int fail(const char *what, tdb_error_t *err) {
  fprintf(stderr, "consumer-pkgconfig: %s: %s\n", what, err ? tdb_error_message(err) : "?");
  tdb_error_free(err);
  return 1;
}

int main(void) {
  enum { N = 50000 };
  static int32_t cells[N];
  for (int i = 0; i < N; i++) cells[i] = (i % 97) * 3;

  tdb_error_t *err = NULL;
  tdb_pipeline_t *p = NULL;
  if (tdb_pipeline_from_spec("byteshuffle,lz4", &p, &err) != TDB_OK) return fail("spec", err);
  tdb_tile_t *tile = NULL, *filtered = NULL, *back = NULL;
  if (tdb_tile_create(TDB_INT32, sizeof(int32_t), (const uint8_t *)cells, sizeof cells, &tile,
                      &err) != TDB_OK)
    return fail("tile", err);
  if (tdb_pipeline_filter(p, tile, &filtered, &err) != TDB_OK) return fail("filter", err);
  const uint8_t *fd = NULL;
  size_t fn = 0;
  if (tdb_tile_data(filtered, &fd, &fn, &err) != TDB_OK) return fail("tile_data", err);
  if (tdb_pipeline_unfilter(p, fd, fn, TDB_INT32, sizeof(int32_t), &back, &err) != TDB_OK)
    return fail("unfilter", err);
  const uint8_t *bd = NULL;
  size_t bn = 0;
  if (tdb_tile_data(back, &bd, &bn, &err) != TDB_OK) return fail("tile_data", err);
  if (bn != sizeof cells || memcmp(bd, cells, bn) != 0) {
    fprintf(stderr, "consumer-pkgconfig: round trip gave different bytes\n");
    return 1;
  }
  printf("consumer-pkgconfig (tdbfilter %s): %zu bytes of int32 -> %zu filtered bytes -> same bytes back\n",
         tdb_version(), sizeof cells, fn);
  tdb_tile_free(back);
  tdb_tile_free(filtered);
  tdb_tile_free(tile);
  tdb_pipeline_free(p);
  return 0;
}
