/*
 * The HDF5 plugin through HDF5 itself: chunked datasets of several types written and read back
 * with several pipelines, the plugin found only through HDF5_PLUGIN_PATH. Checks that a chunk
 * on disk is exactly a TileDB filtered tile, that a dataset created without cd_values gets the
 * documented default pipeline for its type, and that a corrupt or truncated chunk makes the
 * read fail with the plugin's message on HDF5's error stack instead of crashing.
 *
 * Every HDF5 and tdbfilter call is checked: a call that fails where it must succeed stops the
 * test at once, naming the call (no later step runs on an invalid id or an empty buffer).
 *
 * Usage: test_h5tdbfilter DIR   (writes DIR/h5tdbfilter_test.h5, keeps it for h5dump/h5ls,
 *                                and DIR/chunk0.tdb, one raw chunk, for tdbf inspect)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "h5tdbfilter.h"

static int failures = 0;
static int checks = 0;

/* A check that may fail without invalidating the next steps: counted, reported, and the test
 * goes on. */
#define CHECK(cond, ...)                                  \
  do {                                                    \
    checks++;                                             \
    if (!(cond)) {                                        \
      failures++;                                         \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                       \
      fputc('\n', stderr);                                \
    }                                                     \
  } while (0)

/* A condition later steps depend on: on failure, report and stop. */
#define REQUIRE(cond, ...)                                \
  do {                                                    \
    checks++;                                             \
    if (!(cond)) {                                        \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);     \
      fprintf(stderr, __VA_ARGS__);                       \
      fputc('\n', stderr);                                \
      fprintf(stderr, "test_h5tdbfilter: stopped\n");     \
      exit(1);                                            \
    }                                                     \
  } while (0)

/* An HDF5 call returning hid_t, herr_t, htri_t or an enum, that must succeed (HDF5 returns a
 * negative value on failure): its value, or the test stops naming the call (HDF5 has printed
 * its error stack just before: automatic printing stays on). */
#define H5OK(call) h5ok_((int64_t)(call), #call, __LINE__)
static int64_t h5ok_(int64_t r, const char *call, int line) {
  checks++;
  if (r < 0) {
    fprintf(stderr, "%s:%d: %s failed (returned %lld)\ntest_h5tdbfilter: stopped\n", __FILE__,
            line, call, (long long)r);
    exit(1);
  }
  return r;
}

/* H5Tget_size, which returns 0 on failure. */
#define H5SIZE(type) h5size_((type), #type, __LINE__)
static size_t h5size_(hid_t type, const char *what, int line) {
  checks++;
  size_t size = H5Tget_size(type);
  if (size == 0) {
    fprintf(stderr, "%s:%d: H5Tget_size(%s) failed\ntest_h5tdbfilter: stopped\n", __FILE__,
            line, what);
    exit(1);
  }
  return size;
}

/* A tdbfilter call that must succeed. */
#define TDBOK(call) tdbok_((call), #call, __LINE__)
static tdb_error_t *err_ = NULL;
static void tdbok_(tdb_status_t st, const char *call, int line) {
  checks++;
  if (st != TDB_OK) {
    fprintf(stderr, "%s:%d: %s failed: status %d: %s\n", __FILE__, line, call, (int)st,
            err_ ? tdb_error_message(err_) : "(no message)");
    exit(1);
  }
}

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  REQUIRE(p != NULL, "cannot allocate %zu bytes", n);
  return p;
}

enum { N = 200000, CHUNK = 50000 };

/* The cd_values of a pipeline spec for cells of `datatype` and `cell_size` (or
 * H5TDBF_FROM_DATASET and 0: taken from the dataset). */
static size_t cd_of(const char *spec, uint32_t datatype, uint32_t cell_size, unsigned *cd,
                    size_t cap) {
  tdb_pipeline_t *p = NULL;
  TDBOK(tdb_pipeline_from_spec(spec, &p, &err_));
  size_t n = cap;
  tdb_status_t st = h5tdbfilter_cd_values(p, datatype, cell_size, cd, &n);
  tdb_pipeline_free(p);
  REQUIRE(st == TDB_OK, "h5tdbfilter_cd_values of %s: status %d", spec, (int)st);
  return n;
}

/* N cells of `type`: smooth values with some noise, as integers or floats; ascending when
 * `sorted` (POSITIVE_DELTA refuses anything else); text-like bytes for any other class. */
static void make_cells(void *buf, hid_t type, int sorted) {
  H5T_class_t cls = (H5T_class_t)H5OK(H5Tget_class(type));
  size_t size = H5SIZE(type);
  for (size_t i = 0; i < N; i++) {
    double v = sorted ? (double)(i * 3 + (i * 7919) % 3)
                      : (double)(i % 1000) * 0.5 + (double)((i * 7919) % 13);
    uint8_t *cell = (uint8_t *)buf + i * size;
    if (cls == H5T_FLOAT && size == 4) {
      ((float *)buf)[i] = (float)v;
    } else if (cls == H5T_FLOAT && size == 8) {
      ((double *)buf)[i] = v;
    } else if (cls == H5T_INTEGER && size <= 8) {
      uint64_t u = (uint64_t)v;
      memcpy(cell, &u, size);
    } else {
      for (size_t j = 0; j < size; j++) cell[j] = (uint8_t)('a' + (i / 16 + j * 3) % 26);
    }
  }
}

/* Writes dataset `name` of `type` with the cd_values of `spec` (datatype and cell size from
 * the dataset), or with `no_cd` no cd_values at all, reads it back and compares. The stored
 * cd_values must be those of `spec` over cells of `tdb_type` and `cell_size`; chunk 0 on disk
 * must unfilter with that pipeline alone. */
static void roundtrip(hid_t file, const char *name, hid_t type, const char *spec, int no_cd,
                      uint32_t tdb_type, uint32_t cell_size) {
  size_t size = H5SIZE(type);
  uint8_t *cells = xmalloc(N * size), *back = xmalloc(N * size);
  make_cells(cells, type, strstr(spec, "positive_delta") != NULL);
  unsigned cd[256];
  size_t ncd = no_cd ? 0 : cd_of(spec, H5TDBF_FROM_DATASET, 0, cd, 256);
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  hid_t space = H5OK(H5Screate_simple(1, dims, NULL));
  hid_t dcpl = H5OK(H5Pcreate(H5P_DATASET_CREATE));
  H5OK(H5Pset_chunk(dcpl, 1, chunk));
  H5OK(H5Pset_filter(dcpl, H5Z_FILTER_TDBFILTER, H5Z_FLAG_MANDATORY, ncd, no_cd ? NULL : cd));
  hid_t ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  REQUIRE(ds >= 0, "%s (%s%s): H5Dcreate2 failed", name, no_cd ? "no cd_values, default " : "",
          spec);
  H5OK(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, cells));
  H5OK(H5Dclose(ds));
  ds = H5OK(H5Dopen2(file, name, H5P_DEFAULT));
  memset(back, 0xAB, N * size);
  H5OK(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back));
  CHECK(memcmp(back, cells, N * size) == 0, "%s (%s): values differ after the round trip", name,
        spec);

  /* set_local stored the cd_values of `spec` for the expected datatype and cell size. */
  unsigned want[256];
  size_t nwant = cd_of(spec, tdb_type, cell_size, want, 256);
  hid_t dcpl2 = H5OK(H5Dget_create_plist(ds));
  unsigned flags = 0, cd2[256];
  size_t n2 = 256;
  H5OK(H5Pget_filter_by_id2(dcpl2, H5Z_FILTER_TDBFILTER, &flags, &n2, cd2, 0, NULL, NULL));
  H5OK(H5Pclose(dcpl2));
  CHECK(n2 == nwant && memcmp(cd2, want, nwant * sizeof want[0]) == 0,
        "%s: stored cd_values (%zu values, datatype %u, cell size %u) are not those of %s for "
        "datatype %u and cell size %u (%zu values)",
        name, n2, n2 > 1 ? cd2[1] : 0u, n2 > 2 ? cd2[2] : 0u, spec, tdb_type, cell_size, nwant);

  /* The chunk on disk is a TileDB filtered tile: tdbfilter alone unfilters it. */
  hsize_t offset[1] = {0}, nbytes = 0;
  uint32_t filter_mask = 0;
  H5OK(H5Dget_chunk_storage_size(ds, offset, &nbytes));
  REQUIRE(nbytes > 0, "%s: chunk 0 has no storage", name);
  uint8_t *raw = xmalloc(nbytes);
  H5OK(H5Dread_chunk(ds, H5P_DEFAULT, offset, &filter_mask, raw));
  CHECK(filter_mask == 0, "%s: chunk 0 was stored without the filter (mask %u)", name,
        filter_mask);
  CHECK(nbytes < (hsize_t)CHUNK * size || strstr(spec, "checksum") || !strchr(spec, ','),
        "%s (%s): chunk 0 did not shrink (%llu bytes)", name, spec, (unsigned long long)nbytes);
  tdb_pipeline_t *p = NULL;
  TDBOK(tdb_pipeline_from_spec(spec, &p, &err_));
  tdb_tile_t *tile = NULL;
  tdb_error_t *err = NULL;
  tdb_status_t st = tdb_pipeline_unfilter(p, raw, nbytes, tdb_type, cell_size, &tile, &err);
  CHECK(st == TDB_OK, "%s: tdbfilter cannot unfilter the raw chunk: %s", name,
        err ? tdb_error_message(err) : "");
  if (st == TDB_OK) {
    const uint8_t *d = NULL;
    size_t dn = 0;
    TDBOK(tdb_tile_data(tile, &d, &dn, &err_));
    CHECK(dn == (size_t)CHUNK * size && memcmp(d, cells, dn) == 0,
          "%s: the raw chunk holds other cells", name);
  }
  tdb_error_free(err);
  tdb_tile_free(tile);
  tdb_pipeline_free(p);
  free(raw);
  H5OK(H5Dclose(ds));
  H5OK(H5Pclose(dcpl));
  H5OK(H5Sclose(space));
  free(cells);
  free(back);
}

/* Collects the messages of HDF5's error stack. */
static herr_t collect(unsigned n, const H5E_error2_t *e, void *data) {
  (void)n;
  char *all = data;
  if (e->desc && strlen(all) + strlen(e->desc) + 2 < 4096) {
    strcat(all, e->desc);
    strcat(all, "\n");
  }
  return 0;
}

/* Overwrites chunk 0 of `name` with `bytes` (raw, filters already applied) and checks that
 * reading fails with the plugin's message naming `expect`. */
static void damaged(hid_t file, const char *name, const uint8_t *bytes, size_t n,
                    const char *expect) {
  hid_t ds = H5OK(H5Dopen2(file, name, H5P_DEFAULT));
  hid_t type = H5OK(H5Dget_type(ds));
  hsize_t offset[1] = {0};
  H5OK(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset, n, bytes));
  size_t size = H5SIZE(type);
  uint8_t *back = xmalloc((size_t)N * size);
  /* Reads with HDF5's automatic error printing off, then restores it. */
  H5E_auto2_t print = NULL;
  void *print_data = NULL;
  H5OK(H5Eget_auto2(H5E_DEFAULT, &print, &print_data));
  H5OK(H5Eset_auto2(H5E_DEFAULT, NULL, NULL));
  herr_t r = H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back);
  char all[4096] = "";
  H5OK(H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, all));
  H5OK(H5Eclear2(H5E_DEFAULT));
  H5OK(H5Eset_auto2(H5E_DEFAULT, print, print_data));
  CHECK(r < 0, "%s: reading a damaged chunk succeeded", name);
  CHECK(strstr(all, "h5tdbfilter: reading a") && strstr(all, expect),
        "%s: the error stack lacks the plugin's message about '%s':\n%s", name, expect, all);
  printf("damaged chunk of %s: %s", name, strstr(all, "h5tdbfilter") ? strstr(all, "h5tdbfilter") : all);
  free(back);
  H5OK(H5Tclose(type));
  H5OK(H5Dclose(ds));
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[4096];
  snprintf(path, sizeof path, "%s/h5tdbfilter_test.h5", dir);
  REQUIRE(H5OK(H5Zfilter_avail(H5Z_FILTER_TDBFILTER)) > 0,
          "the plugin is not available: is HDF5_PLUGIN_PATH set to its directory?");

  hid_t file = H5OK(H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT));
  struct {
    const char *name;
    hid_t type;
    const char *spec;
    uint32_t tdb_type;
  } cases[] = {
      {"int32_byteshuffle_zstd", H5T_NATIVE_INT32, "byteshuffle,zstd:3", TDB_INT32},
      {"int64_bitshuffle_lz4", H5T_NATIVE_INT64, "bitshuffle,lz4", TDB_INT64},
      {"float32_byteshuffle_gzip", H5T_NATIVE_FLOAT, "byteshuffle,gzip:6", TDB_FLOAT32},
      {"float64_xor_zstd", H5T_NATIVE_DOUBLE, "xor,zstd", TDB_FLOAT64},
      {"uint8_rle", H5T_NATIVE_UINT8, "rle", TDB_UINT8},
      {"uint16_delta_zstd", H5T_NATIVE_UINT16, "delta,zstd", TDB_UINT16},
      {"int64_double_delta", H5T_NATIVE_INT64, "double_delta", TDB_INT64},
      {"uint32_positive_delta_bwr_zstd", H5T_NATIVE_UINT32,
       "positive_delta,bit_width_reduction,zstd", TDB_UINT32},
      {"int64_zstd_md5", H5T_NATIVE_INT64, "zstd,checksum_md5", TDB_INT64},
      {"float64_sha256", H5T_NATIVE_DOUBLE, "bitshuffle,bzip2,checksum_sha256", TDB_FLOAT64},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    roundtrip(file, cases[i].name, cases[i].type, cases[i].spec, 0, cases[i].tdb_type,
              (uint32_t)H5SIZE(cases[i].type));
  }

  /* No cd_values (H5Pset_filter(dcpl, 333, flags, 0, NULL)): the default pipeline of the
   * dataset's type, as h5tdbfilter.h documents. */
  hid_t str10 = H5OK(H5Tcopy(H5T_C_S1));
  H5OK(H5Tset_size(str10, 10));
  hid_t pair = H5OK(H5Tcreate(H5T_COMPOUND, 12));
  H5OK(H5Tinsert(pair, "a", 0, H5T_NATIVE_INT32));
  H5OK(H5Tinsert(pair, "b", 4, H5T_NATIVE_DOUBLE));
  struct {
    const char *name;
    hid_t type;
    const char *spec;
    uint32_t tdb_type;
    uint32_t cell_size;
  } defaults[] = {
      {"default_int32", H5T_NATIVE_INT32, H5TDBF_DEFAULT_SPEC_NUMERIC, TDB_INT32, 4},
      {"default_uint16", H5T_NATIVE_UINT16, H5TDBF_DEFAULT_SPEC_NUMERIC, TDB_UINT16, 2},
      {"default_int64", H5T_NATIVE_INT64, H5TDBF_DEFAULT_SPEC_NUMERIC, TDB_INT64, 8},
      {"default_float32", H5T_NATIVE_FLOAT, H5TDBF_DEFAULT_SPEC_NUMERIC, TDB_FLOAT32, 4},
      {"default_float64", H5T_NATIVE_DOUBLE, H5TDBF_DEFAULT_SPEC_NUMERIC, TDB_FLOAT64, 8},
      {"default_int8", H5T_NATIVE_INT8, H5TDBF_DEFAULT_SPEC_OTHER, TDB_INT8, 1},
      {"default_uint8", H5T_NATIVE_UINT8, H5TDBF_DEFAULT_SPEC_OTHER, TDB_UINT8, 1},
      {"default_string10", str10, H5TDBF_DEFAULT_SPEC_OTHER, TDB_UINT8, 1},
      {"default_compound", pair, H5TDBF_DEFAULT_SPEC_OTHER, TDB_UINT8, 1},
  };
  for (size_t i = 0; i < sizeof defaults / sizeof defaults[0]; i++) {
    roundtrip(file, defaults[i].name, defaults[i].type, defaults[i].spec, 1,
              defaults[i].tdb_type, defaults[i].cell_size);
  }
  H5OK(H5Tclose(str10));
  H5OK(H5Tclose(pair));

  /* Keep one raw chunk for `tdbf inspect`. */
  {
    hid_t ds = H5OK(H5Dopen2(file, "int64_zstd_md5", H5P_DEFAULT));
    hsize_t offset[1] = {0}, nbytes = 0;
    uint32_t mask = 0;
    H5OK(H5Dget_chunk_storage_size(ds, offset, &nbytes));
    REQUIRE(nbytes > 0, "int64_zstd_md5: chunk 0 has no storage");
    uint8_t *raw = xmalloc(nbytes);
    H5OK(H5Dread_chunk(ds, H5P_DEFAULT, offset, &mask, raw));
    H5OK(H5Dclose(ds));
    char chunk_path[4200];
    snprintf(chunk_path, sizeof chunk_path, "%s/chunk0.tdb", dir);
    FILE *f = fopen(chunk_path, "wb");
    REQUIRE(f != NULL, "cannot create %s", chunk_path);
    REQUIRE(fwrite(raw, 1, nbytes, f) == nbytes && fclose(f) == 0, "cannot write %s",
            chunk_path);

    /* A flipped byte in the checksummed chunk, then a truncated one. */
    uint8_t *bad = xmalloc(nbytes);
    memcpy(bad, raw, nbytes);
    bad[nbytes / 2] ^= 0x10;
    damaged(file, "int64_zstd_md5", bad, nbytes, "chunk ");
    damaged(file, "int64_zstd_md5", raw, nbytes / 3, "chunk");
    free(bad);
    free(raw);
  }
  H5OK(H5Fclose(file));

  /* Datasets for h5dump, left intact in the file. */
  file = H5OK(H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT));
  roundtrip(file, "small_int32", H5T_NATIVE_INT32, "byteshuffle,zstd:3", 0, TDB_INT32, 4);
  H5OK(H5Fclose(file));

  if (failures) {
    printf("test_h5tdbfilter: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_h5tdbfilter: %d checks passed\n", checks);
  return 0;
}
