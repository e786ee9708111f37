/*
 * The HDF5 plugin through HDF5 itself: chunked datasets of several types written and read back
 * with several pipelines, the plugin found only through HDF5_PLUGIN_PATH. Checks that a chunk
 * on disk is exactly a TileDB filtered tile, and that a corrupt or truncated chunk makes the
 * read fail with the plugin's message on HDF5's error stack instead of crashing.
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

enum { N = 200000, CHUNK = 50000 };

/* The cd_values of a pipeline spec, datatype and cell size taken from the dataset. */
static size_t cd_of(const char *spec, unsigned *cd, size_t cap) {
  tdb_pipeline_t *p = NULL;
  tdb_error_t *err = NULL;
  if (tdb_pipeline_from_spec(spec, &p, &err) != TDB_OK) {
    fprintf(stderr, "spec %s: %s\n", spec, tdb_error_message(err));
    exit(2);
  }
  size_t n = cap;
  tdb_status_t st = h5tdbfilter_cd_values(p, H5TDBF_FROM_DATASET, 0, cd, &n);
  tdb_pipeline_free(p);
  if (st != TDB_OK) {
    fprintf(stderr, "cd_values of %s: status %d\n", spec, (int)st);
    exit(2);
  }
  return n;
}

/* Cells of `size` bytes: smooth values with some noise, as integers or floats; ascending
 * when `sorted` (POSITIVE_DELTA refuses anything else). */
static void make_cells(void *buf, hid_t type, int sorted) {
  H5T_class_t cls = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  for (size_t i = 0; i < N; i++) {
    double v = sorted ? (double)(i * 3 + (i * 7919) % 3)
                      : (double)(i % 1000) * 0.5 + (double)((i * 7919) % 13);
    if (cls == H5T_FLOAT) {
      if (size == 4) ((float *)buf)[i] = (float)v;
      else ((double *)buf)[i] = v;
    } else {
      uint64_t u = (uint64_t)v;
      memcpy((uint8_t *)buf + i * size, &u, size);
    }
  }
}

/* Writes dataset `name` of `type` with `spec`, reads it back and compares. */
static void roundtrip(hid_t file, const char *name, hid_t type, const char *spec) {
  size_t size = H5Tget_size(type);
  uint8_t *cells = malloc(N * size), *back = malloc(N * size);
  make_cells(cells, type, strstr(spec, "positive_delta") != NULL);
  unsigned cd[256];
  size_t ncd = cd_of(spec, cd, 256);
  hsize_t dims[1] = {N}, chunk[1] = {CHUNK};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  H5Pset_chunk(dcpl, 1, chunk);
  CHECK(H5Pset_filter(dcpl, H5Z_FILTER_TDBFILTER, H5Z_FLAG_MANDATORY, ncd, cd) >= 0,
        "%s: H5Pset_filter", name);
  hid_t ds = H5Dcreate2(file, name, type, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  CHECK(ds >= 0, "%s (%s): H5Dcreate2", name, spec);
  if (ds >= 0) {
    CHECK(H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, cells) >= 0, "%s: H5Dwrite", name);
    H5Dclose(ds);
    ds = H5Dopen2(file, name, H5P_DEFAULT);
    memset(back, 0xAB, N * size);
    CHECK(H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, back) >= 0, "%s: H5Dread", name);
    CHECK(memcmp(back, cells, N * size) == 0, "%s (%s): values differ after the round trip",
          name, spec);

    /* The chunk on disk is a TileDB filtered tile: tdbfilter alone unfilters it. */
    hsize_t offset[1] = {0}, nbytes = 0;
    uint32_t filter_mask = 0;
    H5Dget_chunk_storage_size(ds, offset, &nbytes);
    uint8_t *raw = malloc(nbytes);
    CHECK(H5Dread_chunk(ds, H5P_DEFAULT, offset, &filter_mask, raw) >= 0, "%s: H5Dread_chunk",
          name);
    CHECK(nbytes < (hsize_t)CHUNK * size || strstr(spec, "checksum") || !strchr(spec, ','),
          "%s (%s): chunk 0 did not shrink (%llu bytes)", name, spec, (unsigned long long)nbytes);
    tdb_pipeline_t *p = NULL;
    tdb_pipeline_from_spec(spec, &p, NULL);
    tdb_tile_t *tile = NULL;
    tdb_error_t *err = NULL;
    hid_t dcpl2 = H5Dget_create_plist(ds);
    unsigned flags = 0, cd2[256];
    size_t n2 = 256;
    H5Pget_filter_by_id2(dcpl2, H5Z_FILTER_TDBFILTER, &flags, &n2, cd2, 0, NULL, NULL);
    CHECK(cd2[1] != H5TDBF_FROM_DATASET && cd2[2] == size,
          "%s: set_local did not fill in the datatype (%u) and cell size (%u)", name, cd2[1], cd2[2]);
    H5Pclose(dcpl2);
    tdb_status_t st = tdb_pipeline_unfilter(p, raw, nbytes, cd2[1], cd2[2], &tile, &err);
    CHECK(st == TDB_OK, "%s: tdbfilter cannot unfilter the raw chunk: %s", name,
          err ? tdb_error_message(err) : "");
    if (st == TDB_OK) {
      const uint8_t *d = NULL;
      size_t dn = 0;
      tdb_tile_data(tile, &d, &dn, NULL);
      CHECK(dn == (size_t)CHUNK * size && memcmp(d, cells, dn) == 0,
            "%s: the raw chunk holds other cells", name);
    }
    tdb_error_free(err);
    tdb_tile_free(tile);
    tdb_pipeline_free(p);
    free(raw);
    H5Dclose(ds);
  }
  H5Pclose(dcpl);
  H5Sclose(space);
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
  hid_t ds = H5Dopen2(file, name, H5P_DEFAULT);
  hsize_t offset[1] = {0};
  CHECK(H5Dwrite_chunk(ds, H5P_DEFAULT, 0, offset, n, bytes) >= 0, "%s: H5Dwrite_chunk", name);
  size_t size = H5Tget_size(H5Dget_type(ds));
  uint8_t *back = malloc((size_t)N * size);
  herr_t r;
  H5E_BEGIN_TRY { r = H5Dread(ds, H5Dget_type(ds), H5S_ALL, H5S_ALL, H5P_DEFAULT, back); }
  H5E_END_TRY;
  CHECK(r < 0, "%s: reading a damaged chunk succeeded", name);
  /* Read again with the stack kept, to inspect the plugin's message. */
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  r = H5Dread(ds, H5Dget_type(ds), H5S_ALL, H5S_ALL, H5P_DEFAULT, back);
  char all[4096] = "";
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_DOWNWARD, collect, all);
  H5Eclear2(H5E_DEFAULT);
  CHECK(r < 0 && strstr(all, "h5tdbfilter: reading a") && strstr(all, expect),
        "%s: the error stack lacks the plugin's message about '%s':\n%s", name, expect, all);
  printf("damaged chunk of %s: %s", name, strstr(all, "h5tdbfilter") ? strstr(all, "h5tdbfilter") : all);
  free(back);
  H5Dclose(ds);
}

int main(int argc, char **argv) {
  const char *dir = argc > 1 ? argv[1] : ".";
  char path[4096];
  snprintf(path, sizeof path, "%s/h5tdbfilter_test.h5", dir);
  CHECK(H5Zfilter_avail(H5Z_FILTER_TDBFILTER) > 0,
        "the plugin is not available: is HDF5_PLUGIN_PATH set to its directory?");

  hid_t file = H5Fcreate(path, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  struct {
    const char *name;
    hid_t type;
    const char *spec;
  } cases[] = {
      {"int32_byteshuffle_zstd", H5T_NATIVE_INT32, "byteshuffle,zstd:3"},
      {"int64_bitshuffle_lz4", H5T_NATIVE_INT64, "bitshuffle,lz4"},
      {"float32_byteshuffle_gzip", H5T_NATIVE_FLOAT, "byteshuffle,gzip:6"},
      {"float64_xor_zstd", H5T_NATIVE_DOUBLE, "xor,zstd"},
      {"uint8_rle", H5T_NATIVE_UINT8, "rle"},
      {"uint16_delta_zstd", H5T_NATIVE_UINT16, "delta,zstd"},
      {"int64_double_delta", H5T_NATIVE_INT64, "double_delta"},
      {"uint32_positive_delta_bwr_zstd", H5T_NATIVE_UINT32, "positive_delta,bit_width_reduction,zstd"},
      {"int64_zstd_md5", H5T_NATIVE_INT64, "zstd,checksum_md5"},
      {"float64_sha256", H5T_NATIVE_DOUBLE, "bitshuffle,bzip2,checksum_sha256"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    roundtrip(file, cases[i].name, cases[i].type, cases[i].spec);
  }

  /* Keep one raw chunk for `tdbf inspect`. */
  {
    hid_t ds = H5Dopen2(file, "int64_zstd_md5", H5P_DEFAULT);
    hsize_t offset[1] = {0}, nbytes = 0;
    uint32_t mask = 0;
    H5Dget_chunk_storage_size(ds, offset, &nbytes);
    uint8_t *raw = malloc(nbytes);
    H5Dread_chunk(ds, H5P_DEFAULT, offset, &mask, raw);
    char chunk_path[4200];
    snprintf(chunk_path, sizeof chunk_path, "%s/chunk0.tdb", dir);
    FILE *f = fopen(chunk_path, "wb");
    CHECK(f && fwrite(raw, 1, nbytes, f) == nbytes, "cannot write %s", chunk_path);
    if (f) fclose(f);

    /* A flipped byte in the checksummed chunk, then a truncated one. */
    uint8_t *bad = malloc(nbytes);
    memcpy(bad, raw, nbytes);
    bad[nbytes / 2] ^= 0x10;
    H5Dclose(ds);
    damaged(file, "int64_zstd_md5", bad, nbytes, "chunk ");
    damaged(file, "int64_zstd_md5", raw, nbytes / 3, "chunk");
    free(bad);
    free(raw);
  }
  H5Fclose(file);

  /* A dataset for h5dump, left intact in the file. */
  file = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  roundtrip(file, "small_int32", H5T_NATIVE_INT32, "byteshuffle,zstd:3");
  H5Fclose(file);

  if (failures) {
    printf("test_h5tdbfilter: %d of %d checks failed\n", failures, checks);
    return 1;
  }
  printf("test_h5tdbfilter: %d checks passed\n", checks);
  return 0;
}
