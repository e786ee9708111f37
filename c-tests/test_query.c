/* Queries through the C API (ABI 0.3): tdb_options_t and tdb_array_open_with_options,
 * tdb_query_t with several ranges per dimension, layouts, a condition (dense: failing cells
 * as fill values; sparse: dropped; tiles pruned), aggregates and their values, stats, and the
 * errors (bad layout, range, condition, field, operator, result count); reads in bounded
 * batches into caller buffers (tdb_query_set_*_buffer, tdb_query_submit_batch,
 * tdb_query_status, tdb_query_result_size). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <stdint.h>
#include <unistd.h>

#include "check.h"

static char tmp_[256];

static const char *scratch(const char *name) {
  static char path[512];
  if (tmp_[0] == '\0') {
    strcpy(tmp_, "/tmp/tdbf_c_query_XXXXXX");
    CHECK(mkdtemp(tmp_) != NULL);
  }
  int n = snprintf(path, sizeof path, "%s/%s", tmp_, name);
  CHECK(n > 0 && (size_t)n < sizeof path);
  return path;
}

/* Sparse 1-D: x in 1..8 (capacity 2: four tiles), a = 10 x, s nullable ("s<x>", null for odd
 * x). */
static const char *SPARSE =
    "{\"sparse\": true, \"capacity\": 2,"
    " \"dimensions\": [{\"name\": \"x\", \"type\": \"INT32\", \"domain\": [1, 8], \"tile\": 8}],"
    " \"attributes\": [{\"name\": \"a\", \"type\": \"INT32\"},"
    "                  {\"name\": \"s\", \"type\": \"STRING_ASCII\", \"cell_val_num\": \"var\","
    "                   \"nullable\": true}]}";

/* Dense 4x4, tiles 2x2, a = 10 r + c. */
static const char *DENSE =
    "{\"sparse\": false,"
    " \"dimensions\": [{\"name\": \"r\", \"type\": \"INT32\", \"domain\": [1, 4], \"tile\": 2},"
    "                  {\"name\": \"c\", \"type\": \"INT32\", \"domain\": [1, 4], \"tile\": 2}],"
    " \"attributes\": [{\"name\": \"a\", \"type\": \"INT32\"}]}";

static void write_sparse(const char *path) {
  CHECK_OK(tdb_array_create(path, SPARSE, NULL, 0, E));
  tdb_writer_t *w = NULL;
  CHECK_OK(tdb_writer_open(path, NULL, 0, 5, &w, E));
  CHECK_OK(tdb_writer_set_layout(w, TDB_UNORDERED, E));
  int32_t x[8], a[8];
  char s[32];
  uint64_t off[8];
  uint8_t valid[8];
  size_t n = 0;
  for (int i = 0; i < 8; i++) {
    x[i] = i + 1;
    a[i] = 10 * (i + 1);
    off[i] = n;
    n += (size_t)sprintf(s + n, "s%d", i + 1);
    valid[i] = (uint8_t)((i + 1) % 2 == 0);
  }
  CHECK_OK(tdb_writer_set_data(w, "x", x, sizeof x, E));
  CHECK_OK(tdb_writer_set_data(w, "a", a, sizeof a, E));
  CHECK_OK(tdb_writer_set_data(w, "s", s, n, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", off, 8, E));
  CHECK_OK(tdb_writer_set_validity(w, "s", valid, sizeof valid, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
}

static void write_dense(const char *path) {
  CHECK_OK(tdb_array_create(path, DENSE, NULL, 0, E));
  tdb_writer_t *w = NULL;
  CHECK_OK(tdb_writer_open(path, NULL, 0, 5, &w, E));
  int32_t box[4] = {1, 4, 1, 4};
  CHECK_OK(tdb_writer_set_subarray(w, box, sizeof box, E));
  int32_t a[16];
  for (int r = 0; r < 4; r++)
    for (int c = 0; c < 4; c++) a[r * 4 + c] = 10 * (r + 1) + c + 1;
  CHECK_OK(tdb_writer_set_data(w, "a", a, sizeof a, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
}

static const int32_t *ints(tdb_result_t *r, size_t *count) {
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  *count = size / 4;
  return (const int32_t *)(const void *)data;
}

static void test_options(const char *path) {
  tdb_options_t *o = NULL;
  CHECK_ERR(tdb_options_create(NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_options_create(&o, E));
  uint8_t short_key[5] = {0};
  CHECK_ERR(tdb_options_set_key(o, short_key, sizeof short_key, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("32 bytes");
  CHECK_ERR(tdb_options_set_timestamps(o, 9, 3, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_options_set_threads(o, 100000, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_options_set_threads(o, 2, E));
  tdb_config_t *config = NULL;
  CHECK_OK(tdb_config_alloc(&config, E));
  CHECK_OK(tdb_options_set_config(o, config, E));
  tdb_config_free(config); /* the options keep a copy */
  CHECK_OK(tdb_options_set_config(o, NULL, E));
  /* Before the fragment's timestamp (5): nothing visible. */
  CHECK_OK(tdb_options_set_timestamps(o, 0, 4, E));
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open_with_options(path, o, &a, E));
  uint32_t frags = 99;
  CHECK_OK(tdb_array_fragment_count(a, &frags, E));
  CHECK(frags == 0);
  tdb_array_free(a);
  CHECK_OK(tdb_options_set_timestamps(o, 0, 5, E));
  CHECK_OK(tdb_options_set_memory_limit(o, 8, E));
  CHECK_OK(tdb_array_open_with_options(path, o, &a, E));
  CHECK_OK(tdb_array_fragment_count(a, &frags, E));
  CHECK(frags == 1);
  tdb_result_t *r = NULL;
  CHECK_ERR(tdb_array_read(a, "a", NULL, 0, &r, E), TDB_ERR_OUT_OF_MEMORY);
  CHECK(r == NULL);
  tdb_array_free(a);
  a = NULL;
  CHECK_ERR(tdb_array_open_with_options(NULL, o, &a, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(a == NULL);
  CHECK_OK(tdb_array_open_with_options(path, NULL, &a, E));
  tdb_array_free(a);
  tdb_options_free(o);
  tdb_options_free(NULL);
}

static void test_sparse(const char *path) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  tdb_query_t *q = NULL;
  CHECK_ERR(tdb_query_create(NULL, &q, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_create(a, &q, E));
  CHECK_ERR(tdb_query_set_layout(q, 7, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_set_layout(q, TDB_GLOBAL_ORDER, E));
  CHECK_ERR(tdb_query_add_field(q, "nope", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_add_field(q, "x", E));
  CHECK_OK(tdb_query_add_field(q, "s", E));
  CHECK_ERR(tdb_query_set_condition(q, "a <", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("column");
  CHECK_OK(tdb_query_set_condition(q, "a >= 50 or x == 2", E));
  tdb_result_t *res[2] = {NULL, NULL};
  CHECK_ERR(tdb_query_submit(q, res, 1, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(res[0] == NULL);
  CHECK_OK(tdb_query_submit(q, res, 2, E));
  size_t n = 0;
  const int32_t *x = ints(res[0], &n);
  CHECK(n == 5 && x[0] == 2 && x[1] == 5 && x[4] == 8);
  const uint8_t *v = NULL;
  CHECK_OK(tdb_result_validity(res[1], &v, &n, E));
  CHECK(n == 5 && v[0] == 1 && v[1] == 0 && v[2] == 1);
  uint64_t pruned = 0, decoded = 0, bytes = 0;
  CHECK_OK(tdb_query_stats(q, NULL, &decoded, &pruned, &bytes, E));
  CHECK(pruned == 1 && decoded == 3 && bytes > 0);
  tdb_result_free(res[0]);
  tdb_result_free(res[1]);
  tdb_query_free(q);

  /* Two ranges on x, no condition, col-major; then a condition removed again. */
  CHECK_OK(tdb_query_create(a, &q, E));
  int32_t lo = 2, hi = 3, lo2 = 7, hi2 = 7, bad = 99;
  CHECK_ERR(tdb_query_add_range(q, 1, &lo, 4, &hi, 4, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_query_add_range(q, 0, &lo, 2, &hi, 4, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_query_add_range(q, 0, &lo, 4, &bad, 4, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_add_range(q, 0, &lo2, 4, &hi2, 4, E));
  CHECK_OK(tdb_query_add_range(q, 0, &lo, 4, &hi, 4, E));
  CHECK_OK(tdb_query_set_layout(q, TDB_COL_MAJOR, E));
  CHECK_OK(tdb_query_add_field(q, "a", E));
  CHECK_OK(tdb_query_set_condition(q, "a > 1000", E));
  CHECK_OK(tdb_query_set_condition(q, NULL, E));
  tdb_result_t *one = NULL;
  CHECK_OK(tdb_query_submit(q, &one, 1, E));
  const int32_t *av = ints(one, &n);
  CHECK(n == 3 && av[0] == 20 && av[1] == 30 && av[2] == 70);
  tdb_result_free(one);
  tdb_query_free(q);

  /* Aggregates under a condition. */
  CHECK_OK(tdb_query_create(a, &q, E));
  CHECK_ERR(tdb_query_add_aggregate(q, 9, "a", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_query_add_aggregate(q, TDB_AGG_COUNT, "a", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_COUNT, NULL, E));
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_SUM, "a", E));
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_MIN, "s", E));
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_NULL_COUNT, "s", E));
  CHECK_OK(tdb_query_set_condition(q, "a > 45", E));
  CHECK_ERR(tdb_query_submit(q, res, 2, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_submit(q, NULL, 0, E));
  size_t count = 0;
  CHECK_OK(tdb_query_aggregate_count(q, &count, E));
  CHECK(count == 4);
  const char *label = NULL;
  tdb_datatype_t dt = 0;
  const uint8_t *value = NULL;
  size_t size = 0;
  uint8_t ok = 9;
  CHECK_OK(tdb_query_aggregate(q, 0, &label, &dt, &value, &size, &ok, E));
  uint64_t u = 0;
  CHECK(strcmp(label, "count") == 0 && dt == TDB_UINT64 && size == 8 && ok == 1);
  memcpy(&u, value, 8);
  CHECK(u == 4);
  CHECK_OK(tdb_query_aggregate(q, 1, &label, &dt, &value, &size, &ok, E));
  int64_t sum = 0;
  memcpy(&sum, value, 8);
  CHECK(strcmp(label, "sum(a)") == 0 && dt == TDB_INT64 && sum == 260);
  CHECK_OK(tdb_query_aggregate(q, 2, &label, &dt, &value, &size, &ok, E));
  CHECK(strcmp(label, "min(s)") == 0 && dt == TDB_STRING_ASCII && size == 2 &&
        memcmp(value, "s6", 2) == 0);
  CHECK_OK(tdb_query_aggregate(q, 3, NULL, NULL, &value, &size, NULL, E));
  memcpy(&u, value, 8);
  CHECK(u == 2);
  CHECK_ERR(tdb_query_aggregate(q, 4, &label, &dt, &value, &size, &ok, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_stats(q, NULL, NULL, &pruned, NULL, E));
  CHECK(pruned == 2);
  tdb_query_free(q);
  tdb_query_free(NULL);
  tdb_array_free(a);
}

static void test_dense(const char *path) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  tdb_query_t *q = NULL;
  CHECK_OK(tdb_query_create(a, &q, E));
  CHECK_OK(tdb_query_set_layout(q, TDB_UNORDERED, E));
  tdb_result_t *res[3] = {NULL, NULL, NULL};
  CHECK_ERR(tdb_query_submit(q, res, 3, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("dense");
  CHECK_OK(tdb_query_set_layout(q, TDB_ROW_MAJOR, E));
  int32_t r_lo = 2, r_hi = 3, c_lo = 4, c_hi = 4, c_lo2 = 1, c_hi2 = 1;
  CHECK_OK(tdb_query_add_range(q, 0, &r_lo, 4, &r_hi, 4, E));
  CHECK_OK(tdb_query_add_range(q, 1, &c_lo, 4, &c_hi, 4, E));
  CHECK_OK(tdb_query_add_range(q, 1, &c_lo2, 4, &c_hi2, 4, E));
  CHECK_OK(tdb_query_set_condition(q, "a > 30", E));
  CHECK_OK(tdb_query_submit(q, res, 3, E));
  size_t n = 0;
  const int32_t *r = ints(res[0], &n);
  const int32_t *c = ints(res[1], &n);
  const int32_t *v = ints(res[2], &n);
  CHECK(n == 4);
  CHECK(r[0] == 2 && c[0] == 4 && r[3] == 3 && c[3] == 1);
  CHECK(v[0] == INT32_MIN && v[1] == INT32_MIN && v[2] == 34 && v[3] == 31);
  for (int i = 0; i < 3; i++) tdb_result_free(res[i]);
  tdb_query_free(q);
  /* Dense aggregates: count counts every cell; rows 1-2 (a <= 24) are pruned. */
  CHECK_OK(tdb_query_create(a, &q, E));
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_COUNT, NULL, E));
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_MAX, "a", E));
  CHECK_OK(tdb_query_set_condition(q, "a > 30", E));
  CHECK_OK(tdb_query_submit(q, NULL, 0, E));
  const uint8_t *value = NULL;
  size_t size = 0;
  uint64_t cnt = 0, pruned = 0;
  int32_t max = 0;
  CHECK_OK(tdb_query_aggregate(q, 0, NULL, NULL, &value, &size, NULL, E));
  memcpy(&cnt, value, 8);
  CHECK(cnt == 16);
  CHECK_OK(tdb_query_aggregate(q, 1, NULL, NULL, &value, &size, NULL, E));
  memcpy(&max, value, 4);
  CHECK(size == 4 && max == 44);
  CHECK_OK(tdb_query_stats(q, NULL, NULL, &pruned, NULL, E));
  CHECK(pruned == 2);
  tdb_query_free(q);
  tdb_array_free(a);
}

/* Sparse: x, s (var, nullable) and a through buffers of two cells (s: 5 bytes of text), in
 * four batches, every cell checked; the errors; a restart after completion. */
static void test_sparse_batches(const char *path) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  tdb_query_t *q = NULL;
  CHECK_OK(tdb_query_create(a, &q, E));
  tdb_query_status_t st = 99;
  CHECK_OK(tdb_query_status(q, &st, E));
  CHECK(st == TDB_QUERY_UNINITIALIZED);
  CHECK_ERR(tdb_query_submit_batch(q, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("no buffers");
  int32_t x[2], av[8];
  char s[5];
  uint64_t off[2];
  uint8_t valid[2];
  CHECK_ERR(tdb_query_set_data_buffer(q, "nope", x, sizeof x, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_query_set_data_buffer(q, "x", NULL, 8, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_query_set_data_buffer(q, "x", x, sizeof x, E));
  CHECK_OK(tdb_query_set_data_buffer(q, "s", s, sizeof s, E));
  CHECK_OK(tdb_query_set_data_buffer(q, "a", av, sizeof av, E));
  /* s is var-sized and nullable: offsets and validity are required. */
  CHECK_ERR(tdb_query_submit_batch(q, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("offsets");
  CHECK_OK(tdb_query_set_offsets_buffer(q, "s", off, 2, E));
  CHECK_ERR(tdb_query_submit_batch(q, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("validity");
  CHECK_OK(tdb_query_set_validity_buffer(q, "s", valid, sizeof valid, E));
  uint64_t cells = 0;
  CHECK_ERR(tdb_query_result_size(q, "x", &cells, NULL, NULL, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  int32_t seen = 0;
  int rounds = 0;
  do {
    CHECK_OK(tdb_query_submit_batch(q, E));
    rounds++;
    size_t xs = 0, ss = 0, so = 0, sv = 0, as = 0, ao = 9, avs = 9;
    CHECK_OK(tdb_query_result_size(q, "x", &cells, &xs, NULL, NULL, E));
    CHECK_OK(tdb_query_result_size(q, "s", NULL, &ss, &so, &sv, E));
    CHECK_OK(tdb_query_result_size(q, "a", NULL, &as, &ao, &avs, E));
    CHECK(cells == 2 && xs == 8 && so == 2 && sv == 2 && as == 8 && ao == 0 && avs == 0);
    for (size_t i = 0; i < cells; i++) {
      int32_t want = ++seen;
      CHECK(x[i] == want && av[i] == 10 * want);
      CHECK(valid[i] == (uint8_t)(want % 2 == 0));
      size_t end = i + 1 < cells ? (size_t)off[i + 1] : ss;
      char text[8];
      int n = snprintf(text, sizeof text, "s%d", want);
      CHECK(end - (size_t)off[i] == (size_t)n && memcmp(s + off[i], text, (size_t)n) == 0);
    }
    CHECK(off[0] == 0);
    CHECK_OK(tdb_query_status(q, &st, E));
  } while (st == TDB_QUERY_INCOMPLETE);
  CHECK(st == TDB_QUERY_COMPLETED && seen == 8 && rounds == 4);
  CHECK_ERR(tdb_query_result_size(q, "nope", &cells, NULL, NULL, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  /* A completed read submitted again starts over; a cell over its buffer consumes nothing. */
  CHECK_OK(tdb_query_set_data_buffer(q, "s", s, 1, E));
  CHECK_ERR(tdb_query_submit_batch(q, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK_MSG_HAS("'s'");
  CHECK_OK(tdb_query_set_data_buffer(q, "s", s, sizeof s, E));
  CHECK_OK(tdb_query_submit_batch(q, E));
  CHECK(x[0] == 1 && x[1] == 2);
  CHECK_OK(tdb_query_status(q, &st, E));
  CHECK(st == TDB_QUERY_INCOMPLETE);
  /* A condition restarts the read: x >= 6 leaves 6, 7, 8. */
  CHECK_OK(tdb_query_set_condition(q, "x >= 6", E));
  CHECK_OK(tdb_query_status(q, &st, E));
  CHECK(st == TDB_QUERY_UNINITIALIZED);
  CHECK_OK(tdb_query_submit_batch(q, E));
  CHECK(x[0] == 6 && x[1] == 7);
  uint64_t decoded = 0, pruned = 0;
  CHECK_OK(tdb_query_stats(q, NULL, &decoded, &pruned, NULL, E));
  CHECK(pruned == 2 && decoded == 2); /* x 1-4 pruned, 5-8 decoded */
  CHECK_OK(tdb_query_submit_batch(q, E));
  CHECK_OK(tdb_query_result_size(q, "x", &cells, NULL, NULL, NULL, E));
  CHECK_OK(tdb_query_status(q, &st, E));
  CHECK(cells == 1 && x[0] == 8 && st == TDB_QUERY_COMPLETED);
  /* Aggregates come whole. */
  CHECK_OK(tdb_query_add_aggregate(q, TDB_AGG_COUNT, NULL, E));
  CHECK_ERR(tdb_query_submit_batch(q, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("aggregates");
  CHECK_ERR(tdb_query_status(NULL, &st, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_query_status(q, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_query_free(q);
  tdb_array_free(a);
}

/* Dense col-major over rows 2-4 with buffers of 5 cells: 12 cells in 3 batches. */
static void test_dense_batches(const char *path) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  tdb_query_t *q = NULL;
  CHECK_OK(tdb_query_create(a, &q, E));
  CHECK_OK(tdb_query_set_layout(q, TDB_COL_MAJOR, E));
  int32_t lo = 2, hi = 4;
  CHECK_OK(tdb_query_add_range(q, 0, &lo, 4, &hi, 4, E));
  int32_t r[5], v[5];
  CHECK_OK(tdb_query_set_data_buffer(q, "a", v, sizeof v, E));
  CHECK_OK(tdb_query_set_data_buffer(q, "r", r, sizeof r, E));
  int k = 0, rounds = 0;
  tdb_query_status_t st = 0;
  do {
    CHECK_OK(tdb_query_submit_batch(q, E));
    rounds++;
    uint64_t cells = 0;
    CHECK_OK(tdb_query_result_size(q, "a", &cells, NULL, NULL, NULL, E));
    for (uint64_t i = 0; i < cells; i++, k++) {
      int32_t row = 2 + k % 3, col = 1 + k / 3;
      CHECK(r[i] == row && v[i] == 10 * row + col);
    }
    CHECK_OK(tdb_query_status(q, &st, E));
  } while (st == TDB_QUERY_INCOMPLETE);
  CHECK(k == 12 && rounds == 3);
  tdb_query_free(q);
  tdb_array_free(a);
}

int main(void) {
  char sparse[512], dense[512];
  strcpy(sparse, scratch("sparse"));
  strcpy(dense, scratch("dense"));
  write_sparse(sparse);
  write_dense(dense);
  test_options(sparse);
  test_sparse(sparse);
  test_dense(dense);
  test_sparse_batches(sparse);
  test_dense_batches(dense);
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_);
  CHECK(system(cmd) == 0);
  CHECK_DONE("test_query");
}
