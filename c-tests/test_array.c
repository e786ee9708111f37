/* The array reader through the C API: tests/data/c_array/{dense,sparse}, written by TileDB-Py
 * 0.36.1 with tests/data/c_array/make_c_array.py (its comments give the cell values checked
 * here): schema introspection, fragment listing, whole and subarray reads, time travel,
 * tile-level access, array metadata, enumerations and errors. */
#include "check.h"

static char root_[2048];

/* The checkout root, from this file's path (CMake compiles it by absolute path). */
static const char *array_path(const char *name) {
  static char path[4096];
  if (root_[0] == '\0') {
    strncpy(root_, __FILE__, sizeof root_ - 1);
    char *cut = strstr(root_, "c-tests/test_array.c");
    CHECK_MSG(cut != NULL, "cannot locate the checkout from %s", __FILE__);
    *cut = '\0';
  }
  int n = snprintf(path, sizeof path, "%stests/data/c_array/%s", root_, name);
  CHECK(n > 0 && (size_t)n < sizeof path);
  return path;
}

static tdb_result_t *read_field(const tdb_array_t *a, const char *field, const void *subarray,
                                size_t subarray_size) {
  tdb_result_t *r = NULL;
  CHECK_OK(tdb_array_read(a, field, subarray, subarray_size, &r, E));
  return r;
}

static uint64_t cells_of(const tdb_result_t *r) {
  uint64_t n = 0;
  CHECK_OK(tdb_result_cell_count(r, &n, E));
  return n;
}

/* The dense array's attribute a at (r, c) after both fragments, -1 where never written. */
static int32_t dense_a(int r, int c, int both) {
  if (both && r >= 3 && r <= 5 && c >= 2 && c <= 3) return -(10 * r + c);
  if (r <= 4) return 10 * r + c;
  return -1;
}

static void test_dense_schema(const tdb_array_t *a) {
  uint8_t type = 9, tile_order = 9, cell_order = 9;
  uint32_t dims = 0, attrs = 0, version = 0;
  CHECK_OK(tdb_array_schema_info(a, &type, &tile_order, &cell_order, NULL, NULL, &version, E));
  CHECK(type == 0 && tile_order == 0 && cell_order == 0 && version == 22);
  CHECK_OK(tdb_array_dimension_count(a, &dims, E));
  CHECK_OK(tdb_array_attribute_count(a, &attrs, E));
  CHECK(dims == 2 && attrs == 3);
  /* One output each, required; outputs untouched on failure. */
  CHECK_ERR(tdb_array_dimension_count(a, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("count is NULL");
  CHECK_ERR(tdb_array_attribute_count(NULL, &attrs, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("array is NULL");
  CHECK(attrs == 3);
  const char *name = NULL;
  tdb_datatype_t dt = 99;
  uint32_t cvn = 0;
  bool nullable = true;
  CHECK_OK(tdb_array_dimension(a, 1, &name, &dt, &cvn, E));
  CHECK(strcmp(name, "c") == 0 && dt == TDB_INT32 && cvn == 1);
  const void *lo = NULL, *hi = NULL, *ext = NULL;
  size_t size = 0;
  CHECK_OK(tdb_array_dimension_domain(a, 0, &lo, &hi, &size, &ext, E));
  CHECK(size == 4 && *(const int32_t *)lo == 1 && *(const int32_t *)hi == 6 &&
        *(const int32_t *)ext == 2);
  CHECK_OK(tdb_array_attribute(a, 1, &name, &dt, &cvn, &nullable, E));
  CHECK(strcmp(name, "s") == 0 && dt == TDB_STRING_UTF8 && cvn == UINT32_MAX && !nullable);
  CHECK_OK(tdb_array_attribute(a, 2, &name, &dt, NULL, &nullable, E));
  CHECK(strcmp(name, "f") == 0 && dt == TDB_FLOAT64 && nullable);
  const void *fill = NULL;
  uint8_t fill_validity = 9;
  CHECK_OK(tdb_array_attribute_fill_value(a, 0, &fill, &size, &fill_validity, E));
  CHECK(size == 4 && *(const int32_t *)fill == -1);
  CHECK_ERR(tdb_array_attribute(a, 3, &name, NULL, NULL, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  tdb_pipeline_t *p = NULL;
  char spec[128];
  CHECK_OK(tdb_array_pipeline(a, "a", TDB_ARRAY_PIPELINE_FIELD, &p, E));
  CHECK_OK(tdb_pipeline_to_spec(p, spec, sizeof spec, &size, E));
  CHECK_MSG(strncmp(spec, "byteshuffle,zstd", 16) == 0, "spec %s", spec);
  tdb_pipeline_free(p);
  CHECK_OK(tdb_array_pipeline(a, NULL, TDB_ARRAY_PIPELINE_VALIDITY, &p, E));
  CHECK_OK(tdb_pipeline_to_spec(p, spec, sizeof spec, &size, E));
  CHECK_MSG(strncmp(spec, "rle", 3) == 0, "spec %s", spec);
  tdb_pipeline_free(p);
  CHECK_ERR(tdb_array_pipeline(a, "nope", TDB_ARRAY_PIPELINE_FIELD, &p, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_dense_fragments(const tdb_array_t *a) {
  uint32_t n = 0;
  CHECK_OK(tdb_array_fragment_count(a, &n, E));
  CHECK(n == 2);
  for (uint32_t k = 0; k < n; k++) {
    const char *name = NULL;
    uint64_t t1 = 0, t2 = 0, cells = 0, tiles = 0;
    uint32_t version = 0;
    bool dense = false;
    CHECK_OK(tdb_array_fragment(a, k, &name, &t1, &t2, &version, &dense, &cells, &tiles, E));
    CHECK(t1 == k + 1 && t2 == k + 1 && version == 22 && dense);
    CHECK(strncmp(name, k == 0 ? "__1_1_" : "__2_2_", 6) == 0);
    const char *schema_name = NULL;
    CHECK_OK(tdb_array_fragment_schema_name(a, k, &schema_name, E));
    /* One schema, written at creation (timestamp 1): "__1_1_<uuid>" under __schema/. */
    CHECK(schema_name != NULL && strncmp(schema_name, "__", 2) == 0 && strlen(schema_name) > 6);
    /* Fragment 1: rows 1-4 x cols 1-4 = 2x2 tiles of 2x3; fragment 2: rows 3-5 x cols 2-3. */
    CHECK(tiles == (k == 0 ? 4 : 2) && cells == tiles * 6);
    const void *lo = NULL, *hi = NULL;
    size_t lo_size = 0, hi_size = 0;
    CHECK_OK(tdb_array_fragment_non_empty_domain(a, k, 0, &lo, &lo_size, &hi, &hi_size, E));
    CHECK(lo_size == 4 && *(const int32_t *)lo == (k == 0 ? 1 : 3) &&
          *(const int32_t *)hi == (k == 0 ? 4 : 5));
  }
  CHECK_ERR(tdb_array_fragment(a, 2, NULL, NULL, NULL, NULL, NULL, NULL, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_fragment_schema_name(a, 2, &(const char *){NULL}, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_fragment_schema_name(a, 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_dense_reads(const tdb_array_t *a) {
  /* Whole non-empty domain: rows 1-5, cols 1-4, row-major. */
  tdb_result_t *r = read_field(a, "a", NULL, 0);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK(cells_of(r) == 20);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == 80);
  const int32_t *v = (const int32_t *)(const void *)data;
  for (int i = 0; i < 20; i++) {
    int row = 1 + i / 4, col = 1 + i % 4;
    CHECK_MSG(v[i] == dense_a(row, col, 1), "a(%d,%d) = %d", row, col, v[i]);
  }
  const uint64_t *offsets = (const uint64_t *)1;
  size_t count = 7;
  CHECK_OK(tdb_result_offsets(r, &offsets, &count, E));
  CHECK(offsets == NULL && count == 0);
  tdb_result_free(r);

  /* s over rows 3-4, all columns: "31" "new" "new" "34" "4141" "new" "new" "4444". */
  const int32_t sub[4] = {3, 4, 1, 4};
  r = read_field(a, "s", sub, sizeof sub);
  CHECK(cells_of(r) == 8);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK_OK(tdb_result_offsets(r, &offsets, &count, E));
  static const char *want[8] = {"31", "new", "new", "34", "4141", "new", "new", "4444"};
  CHECK(count == 8);
  for (size_t i = 0; i < 8; i++) {
    size_t end = i + 1 < count ? offsets[i + 1] : size;
    CHECK_MSG(end - offsets[i] == strlen(want[i]) &&
                  memcmp(data + offsets[i], want[i], strlen(want[i])) == 0,
              "s cell %zu", i);
  }
  tdb_result_free(r);

  /* f: null in column 2 of fragment 1 (not overwritten), valid in fragment 2, null where
   * nothing was written (row 5, cols 1 and 4). */
  const int32_t sub_f[4] = {2, 5, 1, 4};
  r = read_field(a, "f", sub_f, sizeof sub_f);
  const uint8_t *validity = NULL;
  CHECK_OK(tdb_result_validity(r, &validity, &count, E));
  CHECK(count == 16);
  static const uint8_t want_v[16] = {1, 0, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 0, 1, 1, 0};
  CHECK(memcmp(validity, want_v, 16) == 0);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(((const double *)(const void *)data)[4] == 3.1 && ((const double *)(const void *)data)[5] == 0.5);
  tdb_result_free(r);

  /* Dimension coordinates of a box. */
  const int32_t sub_c[4] = {2, 3, 3, 4};
  r = read_field(a, "c", sub_c, sizeof sub_c);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  const int32_t *cs = (const int32_t *)(const void *)data;
  CHECK(size == 16 && cs[0] == 3 && cs[1] == 4 && cs[2] == 3 && cs[3] == 4);
  tdb_result_free(r);

  /* Several fields at once. */
  const char *fields[2] = {"r", "a"};
  tdb_result_t *two[2] = {NULL, NULL};
  CHECK_OK(tdb_array_read_fields(a, fields, 2, sub_c, sizeof sub_c, two, E));
  CHECK(cells_of(two[0]) == 4 && cells_of(two[1]) == 4);
  CHECK_OK(tdb_result_data(two[1], &data, &size, E));
  CHECK(((const int32_t *)(const void *)data)[2] == dense_a(3, 3, 1));
  tdb_result_free(two[0]);
  tdb_result_free(two[1]);

  /* Errors. */
  CHECK_ERR(tdb_array_read(a, "nope", NULL, 0, &r, E), TDB_ERR_INVALID_ARGUMENT);
  const int32_t outside[4] = {0, 3, 1, 4};
  CHECK_ERR(tdb_array_read(a, "a", outside, sizeof outside, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_read(NULL, "a", NULL, 0, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_read(a, "a", NULL, 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_dense_tiles(const tdb_array_t *a) {
  uint64_t tiles = 0, cells = 0;
  CHECK_OK(tdb_array_tile_count(a, 0, &tiles, E));
  CHECK_OK(tdb_array_tile_cell_count(a, 0, 3, &cells, E));
  CHECK(tiles == 4 && cells == 6);
  CHECK_OK(tdb_array_tile_count(a, 1, &tiles, E));
  CHECK(tiles == 2);
  cells = 77;
  CHECK_ERR(tdb_array_tile_cell_count(a, 0, 4, &cells, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("tile 4 of fragment 0 out of range (4 tiles)");
  CHECK(cells == 77);
  CHECK_ERR(tdb_array_tile_count(a, 2, &tiles, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("fragment index 2 out of range");
  CHECK(tiles == 2);
  CHECK_ERR(tdb_array_tile_cell_count(a, 0, 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  char path[4096];
  size_t path_size = 0;
  uint64_t offset = 1, size = 0;
  CHECK_ERR(tdb_array_tile_location(a, 0, "a", 0, TDB_TILE_FIXED, NULL, 0, &path_size, &offset,
                                    &size, E),
            TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(path_size > 7);
  CHECK_OK(tdb_array_tile_location(a, 0, "a", 0, TDB_TILE_FIXED, path, sizeof path, &path_size,
                                   &offset, &size, E));
  CHECK(strlen(path) + 1 == path_size && strstr(path, "/a0.tdb") != NULL);
  CHECK(offset == 0 && size > 8);
  CHECK_OK(tdb_array_tile_location(a, 1, "s", 1, TDB_TILE_VAR, path, sizeof path, &path_size,
                                   &offset, &size, E));
  CHECK(strstr(path, "/a1_var.tdb") != NULL && offset > 0);
  CHECK_ERR(tdb_array_tile_location(a, 0, "a", 0, TDB_TILE_VAR, path, sizeof path, &path_size,
                                    &offset, &size, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_tile_location(a, 0, "r", 0, TDB_TILE_FIXED, path, sizeof path, &path_size,
                                    &offset, &size, E),
            TDB_ERR_INVALID_ARGUMENT);

  /* Tile 1 of fragment 1 (tile order row-major over its 2x2 tiles): rows 1-2, cols 4-6,
   * cell order row-major; columns 5 and 6 are padding beyond the written box. */
  tdb_result_t *r = NULL;
  CHECK_OK(tdb_array_tile_read(a, 0, "a", 1, &r, E));
  const uint8_t *data = NULL;
  size_t n = 0;
  CHECK_OK(tdb_result_data(r, &data, &n, E));
  const int32_t *v = (const int32_t *)(const void *)data;
  CHECK(cells_of(r) == 6 && n == 24 && v[0] == 14 && v[3] == 24);
  tdb_result_free(r);
  CHECK_ERR(tdb_array_tile_read(a, 0, "a", 4, &r, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_dense(void) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(array_path("dense"), NULL, 0, &a, E));
  test_dense_schema(a);
  test_dense_fragments(a);
  test_dense_reads(a);
  test_dense_tiles(a);
  CHECK_OK(tdb_array_set_threads(a, 1, E));
  tdb_result_t *r = read_field(a, "a", NULL, 0);
  CHECK(cells_of(r) == 20);
  tdb_result_free(r);
  tdb_array_free(a);

  /* Time travel to timestamp 1: only the first fragment. */
  CHECK_OK(tdb_array_open_at(array_path("dense"), NULL, 0, 0, 1, &a, E));
  uint32_t frags = 0;
  CHECK_OK(tdb_array_fragment_count(a, &frags, E));
  CHECK(frags == 1);
  r = read_field(a, "a", NULL, 0);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(cells_of(r) == 16);
  for (int i = 0; i < 16; i++)
    CHECK(((const int32_t *)(const void *)data)[i] == dense_a(1 + i / 4, 1 + i % 4, 0));
  tdb_result_free(r);
  tdb_array_free(a);
}

static void expect_strings(const tdb_result_t *r, const char *const *want, size_t n) {
  const uint8_t *data = NULL;
  size_t size = 0, count = 0;
  const uint64_t *offsets = NULL;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK_OK(tdb_result_offsets(r, &offsets, &count, E));
  CHECK(count == n);
  for (size_t i = 0; i < n && i < count; i++) {
    size_t end = i + 1 < count ? offsets[i + 1] : size;
    CHECK_MSG(end - offsets[i] == strlen(want[i]) &&
                  memcmp(data + offsets[i], want[i], strlen(want[i])) == 0,
              "cell %zu: want '%s'", i, want[i]);
  }
}

static void test_sparse(void) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(array_path("sparse"), NULL, 0, &a, E));
  uint8_t type = 9;
  uint64_t capacity = 0;
  bool dups = true;
  CHECK_OK(tdb_array_schema_info(a, &type, NULL, NULL, &capacity, &dups, NULL, E));
  CHECK(type == 1 && capacity == 2 && !dups);
  /* Global order after de-duplication: (5, "a") holds the newer fragment's values. */
  tdb_result_t *r = read_field(a, "x", NULL, 0);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  static const int64_t want_x[5] = {1, 5, 5, 7, 42};
  CHECK(cells_of(r) == 5 && size == 40 && memcmp(data, want_x, 40) == 0);
  tdb_result_free(r);
  r = read_field(a, "name", NULL, 0);
  static const char *const want_name[5] = {"m", "a", "b", "zz", "q"};
  expect_strings(r, want_name, 5);
  tdb_result_free(r);
  r = read_field(a, "v", NULL, 0);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  static const uint16_t want_v[5] = {30, 20, 1, 4, 3};
  CHECK(size == 10 && memcmp(data, want_v, 10) == 0);
  tdb_result_free(r);
  r = read_field(a, "t", NULL, 0);
  static const char *const want_t[5] = {"m", "two", "one", "four", ""};
  expect_strings(r, want_t, 5);
  const uint8_t *validity = NULL;
  size_t count = 0;
  CHECK_OK(tdb_result_validity(r, &validity, &count, E));
  CHECK(count == 5 && validity[0] == 1 && validity[1] == 1 && validity[4] == 1);
  tdb_result_free(r);
  /* Subarrays are numeric only through tdb_array_read. */
  const int64_t sub[2] = {0, 9};
  CHECK_ERR(tdb_array_read(a, "v", sub, sizeof sub, &r, E), TDB_ERR_UNSUPPORTED);
  CHECK_MSG_HAS("string dimension 'name'");
  tdb_array_free(a);

  /* At timestamp 2 only the first fragment: (5, "a") is null. */
  CHECK_OK(tdb_array_open_at(array_path("sparse"), NULL, 0, 0, 2, &a, E));
  r = read_field(a, "t", NULL, 0);
  static const char *const want_t1[4] = {"", "one", "four", ""};
  expect_strings(r, want_t1, 4);
  CHECK_OK(tdb_result_validity(r, &validity, &count, E));
  CHECK(count == 4 && validity[0] == 0 && validity[1] == 1);
  tdb_result_free(r);
  tdb_array_free(a);
}

/* meta/: metadata after two writes (version replaced, gone deleted) and an enumeration. */
static void test_metadata_and_enumeration(void) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(array_path("meta"), NULL, 0, &a, E));
  uint32_t n = 0;
  CHECK_OK(tdb_array_metadata_count(a, &n, E));
  CHECK(n == 3);
  const char *key = NULL;
  tdb_datatype_t dt = 0;
  uint32_t value_count = 0;
  const void *value = NULL;
  /* Sorted by key: name, scale, version. */
  CHECK_OK(tdb_array_metadata_entry(a, 0, &key, &dt, &value_count, &value, E));
  CHECK(strcmp(key, "name") == 0 && value_count == 10 && memcmp(value, "meta array", 10) == 0);
  CHECK_OK(tdb_array_metadata_entry(a, 1, &key, &dt, &value_count, &value, E));
  double scale[2];
  memcpy(scale, value, sizeof scale);
  CHECK(strcmp(key, "scale") == 0 && dt == TDB_FLOAT64 && value_count == 2);
  CHECK(scale[0] == 0.5 && scale[1] == 2.0);
  CHECK_OK(tdb_array_metadata_entry(a, 2, &key, NULL, &value_count, &value, E));
  int64_t version = 0;
  memcpy(&version, value, sizeof version);
  CHECK(strcmp(key, "version") == 0 && value_count == 1 && version == 2);
  CHECK_ERR(tdb_array_metadata_entry(a, 3, &key, NULL, NULL, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  /* The attribute holds indices; the enumeration holds the strings. */
  tdb_result_t *r = read_field(a, "color", NULL, 0);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == 4 && data[0] == 2 && data[1] == 0 && data[2] == 1 && data[3] == 2);
  tdb_result_free(r);
  CHECK_OK(tdb_array_enumeration(a, "colors", &r, E));
  static const char *const colors[3] = {"red", "green", "blue"};
  expect_strings(r, colors, 3);
  tdb_result_free(r);
  r = NULL;
  CHECK_ERR(tdb_array_enumeration(a, "shapes", &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(r == NULL);
  tdb_array_free(a);

  /* At timestamp 1: the first metadata write only. */
  CHECK_OK(tdb_array_open_at(array_path("meta"), NULL, 0, 0, 1, &a, E));
  CHECK_OK(tdb_array_metadata_count(a, &n, E));
  CHECK(n == 3);
  CHECK_OK(tdb_array_metadata_entry(a, 0, &key, NULL, NULL, NULL, E));
  CHECK(strcmp(key, "gone") == 0);
  tdb_array_free(a);
}

/* A read over the memory limit fails before allocating and names both sizes. */
static void test_memory_limit(void) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(array_path("dense"), NULL, 0, &a, E));
  CHECK_OK(tdb_array_set_memory_limit(a, 64, E)); /* 20 int32 cells need 80 bytes */
  tdb_result_t *r = NULL;
  tdb_error_t *err = NULL;
  CHECK(tdb_array_read(a, "a", NULL, 0, &r, &err) == TDB_ERR_OUT_OF_MEMORY);
  CHECK(r == NULL && err != NULL);
  CHECK_MSG(strstr(tdb_error_message(err), "80 bytes") != NULL &&
                strstr(tdb_error_message(err), "64 bytes") != NULL,
            "%s", tdb_error_message(err));
  tdb_error_free(err);
  CHECK_OK(tdb_array_set_memory_limit(a, 80, E));
  r = read_field(a, "a", NULL, 0);
  CHECK(cells_of(r) == 20);
  tdb_result_free(r);
  CHECK_OK(tdb_array_set_memory_limit(a, 0, E)); /* 0: no limit */
  tdb_array_free(a);
}

/* The subarray's size is checked against the dimensions: tests/data/arrays/2.17.5/plain_sparse
 * has two INT64 dimensions x and y, so a subarray is 4 int64 values, 32 bytes. */
static void test_subarray_size(void) {
  char path[4096];
  const char *dense = array_path("dense");
  int n = snprintf(path, sizeof path, "%.*s/arrays/2.17.5/plain_sparse",
                   (int)(strlen(dense) - strlen("/c_array/dense")), dense);
  CHECK(n > 0 && (size_t)n < sizeof path);
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  uint32_t dims = 0;
  CHECK_OK(tdb_array_dimension_count(a, &dims, E));
  CHECK(dims == 2);
  tdb_result_t *whole = read_field(a, "x", NULL, 0);
  uint64_t cells = 0;
  CHECK_OK(tdb_result_cell_count(whole, &cells, E));
  CHECK(cells > 0);
  tdb_result_free(whole);

  /* The right size: the domains of both dimensions read every cell. */
  int64_t wide[4];
  for (uint32_t d = 0; d < 2; d++) {
    const void *lo = NULL, *hi = NULL, *ext = NULL;
    size_t size = 0;
    CHECK_OK(tdb_array_dimension_domain(a, d, &lo, &hi, &size, &ext, E));
    CHECK(size == 8);
    memcpy(&wide[2 * d], lo, 8);
    memcpy(&wide[2 * d + 1], hi, 8);
  }
  tdb_result_t *r = read_field(a, "x", wide, sizeof wide);
  uint64_t got = 0;
  CHECK_OK(tdb_result_cell_count(r, &got, E));
  CHECK(got == cells);
  tdb_result_free(r);

  /* int32 bounds for int64 dimensions: 16 bytes where 32 are needed. */
  const int32_t narrow[4] = {0, 100, 0, 100};
  r = (tdb_result_t *)(void *)&n; /* a sentinel: outputs are written only on success */
  tdb_result_t *const sentinel = r;
  CHECK_ERR(tdb_array_read(a, "x", narrow, sizeof narrow, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("subarray is 16 bytes; the array's 2 dimensions need 32: [low, high] of 'x' "
                "(INT64, 8 bytes each), [low, high] of 'y' (INT64, 8 bytes each)");
  CHECK(r == sentinel);
  /* Too long as well. */
  int64_t longer[5] = {0, 100, 0, 100, 7};
  CHECK_ERR(tdb_array_read(a, "x", longer, sizeof longer, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("subarray is 40 bytes; the array's 2 dimensions need 32");
  /* NULL with a size, non-NULL with size 0. */
  CHECK_ERR(tdb_array_read(a, "x", NULL, 32, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("subarray is NULL but subarray_size is 32");
  CHECK_MSG_HAS("[low, high] of 'y' (INT64, 8 bytes each)");
  CHECK_ERR(tdb_array_read(a, "x", wide, 0, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("subarray_size is 0 but subarray is not NULL");
  CHECK_MSG_HAS("[low, high] of 'x' (INT64, 8 bytes each)");
  CHECK(r == sentinel);
  /* tdb_array_read_fields checks the same way and leaves every result slot untouched. */
  const char *fields[2] = {"x", "y"};
  tdb_result_t *two[2] = {sentinel, sentinel};
  CHECK_ERR(tdb_array_read_fields(a, fields, 2, narrow, sizeof narrow, two, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("subarray is 16 bytes; the array's 2 dimensions need 32");
  CHECK(two[0] == sentinel && two[1] == sentinel);
  CHECK_ERR(tdb_array_read_fields(a, fields, 2, NULL, 8, two, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_read_fields(a, fields, 2, wide, 0, two, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(two[0] == sentinel && two[1] == sentinel);
  CHECK_ERR(tdb_array_read_fields(a, fields, 2, wide, sizeof wide, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("results is NULL but its count is 2");
  CHECK_OK(tdb_array_read_fields(a, fields, 2, wide, sizeof wide, two, E));
  tdb_result_free(two[0]);
  tdb_result_free(two[1]);
  tdb_array_free(a);

  /* A 1-D UINT8 dimension: 2 bytes. */
  CHECK_OK(tdb_array_open(array_path("meta"), NULL, 0, &a, E));
  const uint8_t box[2] = {1, 2};
  r = read_field(a, "color", box, sizeof box);
  CHECK_OK(tdb_result_cell_count(r, &got, E));
  CHECK(got == 2);
  tdb_result_free(r);
  r = sentinel;
  const uint16_t box16[2] = {1, 2};
  CHECK_ERR(tdb_array_read(a, "color", box16, sizeof box16, &r, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("subarray is 4 bytes; the array's 1 dimension needs 2: [low, high] of 'd' "
                "(UINT8, 1 byte each)");
  CHECK(r == sentinel);
  tdb_array_free(a);
}

/* Thread counts: 0 (all cores) and 1..=256, more refused and the setting kept. */
static void test_threads(void) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(array_path("dense"), NULL, 0, &a, E));
  CHECK_OK(tdb_array_set_threads(a, 0, E));
  CHECK_OK(tdb_array_set_threads(a, 256, E));
  CHECK_ERR(tdb_array_set_threads(a, 257, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("threads 257 exceeds 256");
  CHECK_ERR(tdb_array_set_threads(a, UINT32_MAX, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_set_threads(NULL, 1, E), TDB_ERR_INVALID_ARGUMENT);
  for (uint32_t t = 0; t <= 4; t++) {
    CHECK_OK(tdb_array_set_threads(a, t, E));
    tdb_result_t *r = read_field(a, "a", NULL, 0);
    CHECK(cells_of(r) == 20);
    tdb_result_free(r);
  }
  tdb_array_free(a);
}

static void test_errors(void) {
  tdb_array_t *a = NULL;
  CHECK_ERR(tdb_array_open(array_path("missing"), NULL, 0, &a, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_open("tiledb://namespace/array", NULL, 0, &a, E), TDB_ERR_UNSUPPORTED);
  CHECK_ERR(tdb_array_open(NULL, NULL, 0, &a, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_open(array_path("dense"), "short", 5, &a, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_open_at(array_path("dense"), NULL, 0, 5, 1, &a, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  tdb_array_free(NULL);
  tdb_result_free(NULL);
}

int main(void) {
  test_dense();
  test_sparse();
  test_metadata_and_enumeration();
  test_memory_limit();
  test_subarray_size();
  test_threads();
  test_errors();
  CHECK_DONE("test_array");
}
