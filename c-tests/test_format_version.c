/* Format-version datatype rules through the C API: tdb_pipeline_set_format_version /
 * tdb_pipeline_format_version, SCALE_FLOAT followed by BYTESHUFFLE under the rule of versions
 * 15-19 (every stage on the attribute's datatype) and of 20+ (chained output types), and
 * tdb_pipeline_unfilter_validity_into for dense validity tiles of versions 9-14. */
#include "helpers.h"

int main(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_SCALE_FLOAT, TDB_FILTER_BYTESHUFFLE);
  uint64_t width = 4;
  double factor = 0.5;
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_BYTEWIDTH, &width, sizeof(width), E));
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_FACTOR, &factor, sizeof(factor), E));
  uint32_t v = 0;
  CHECK_OK(tdb_pipeline_format_version(p, &v, E));
  CHECK(v == 22);
  CHECK_ERR(tdb_pipeline_set_format_version(p, 0, E), TDB_ERR_UNSUPPORTED);
  CHECK_ERR(tdb_pipeline_set_format_version(p, 24, E), TDB_ERR_UNSUPPORTED);
  CHECK_ERR(tdb_pipeline_set_format_version(NULL, 19, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_format_version(p, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  double cells[512];
  for (int i = 0; i < 512; i++) cells[i] = (double)(i % 97) - 40.5;
  size_t new_n = 0, old_n = 0, n = 0;
  uint8_t *new_tile = filter_alloc(p, TDB_FLOAT64, 8, cells, sizeof cells, &new_n);
  CHECK_OK(tdb_pipeline_set_format_version(p, 19, E));
  CHECK_OK(tdb_pipeline_format_version(p, &v, E));
  CHECK(v == 19);
  uint8_t *old_tile = filter_alloc(p, TDB_FLOAT64, 8, cells, sizeof cells, &old_n);
  /* Same sizes, different shuffles (4-byte integers as 8-byte elements before 2.17). */
  CHECK(old_n == new_n);
  CHECK(memcmp(old_tile, new_tile, new_n) != 0);
  uint8_t *back = unfilter_alloc(p, old_tile, old_n, TDB_FLOAT64, 8, &n);
  CHECK_MEM(back, n, cells, sizeof cells);
  free(back);
  /* The version-19 tile read with the version-22 rule: wrong values, no error. */
  CHECK_OK(tdb_pipeline_set_format_version(p, 22, E));
  back = unfilter_alloc(p, old_tile, old_n, TDB_FLOAT64, 8, &n);
  CHECK(n == sizeof cells && memcmp(back, cells, n) != 0);
  free(back);
  back = unfilter_alloc(p, new_tile, new_n, TDB_FLOAT64, 8, &n);
  CHECK_MEM(back, n, cells, sizeof cells);
  free(back);
  free(old_tile);
  free(new_tile);
  tdb_pipeline_free(p);

  /* A validity tile as TileDB 2.3-2.10 wrote it for a dense INT32 attribute: BYTESHUFFLE
   * with 4-byte elements (one chunk, so the cell size does not matter for the bytes). */
  uint8_t valid[1000];
  for (int i = 0; i < 1000; i++) valid[i] = (uint8_t)((i * 7 % 10) < 6);
  tdb_pipeline_t *vp = PIPE(TDB_FILTER_BYTESHUFFLE);
  size_t vn = 0;
  uint8_t *vtile = filter_alloc(vp, TDB_INT32, 4, valid, sizeof valid, &vn);
  uint8_t out[1000];
  size_t written = 0;
  CHECK_OK(tdb_pipeline_set_format_version(vp, 14, E));
  CHECK_OK(tdb_pipeline_unfilter_validity_into(vp, vtile, vn, TDB_INT32, true, out, sizeof out,
                                               &written, E));
  CHECK_MEM(out, written, valid, sizeof valid);
  /* Sparse fragments and later versions use UINT8: these bytes then read wrong. */
  CHECK_OK(tdb_pipeline_unfilter_validity_into(vp, vtile, vn, TDB_INT32, false, out, sizeof out,
                                               &written, E));
  CHECK(written == sizeof valid && memcmp(out, valid, written) != 0);
  CHECK_OK(tdb_pipeline_set_format_version(vp, 15, E));
  CHECK_OK(tdb_pipeline_unfilter_validity_into(vp, vtile, vn, TDB_INT32, true, out, sizeof out,
                                               &written, E));
  CHECK(memcmp(out, valid, written) != 0);
  /* Too small: the needed size. */
  CHECK_ERR(tdb_pipeline_unfilter_validity_into(vp, vtile, vn, TDB_INT32, true, out, 10,
                                                &written, E),
            TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(written == sizeof valid);
  free(vtile);
  tdb_pipeline_free(vp);
  CHECK_DONE("test_format_version");
}
