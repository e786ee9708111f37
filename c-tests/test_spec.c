/* Pipeline specs through the C API: tdb_pipeline_from_spec / tdb_pipeline_to_spec, the
 * grammar every binding shares with `tdbf --filters`. */
#include "helpers.h"

static char *spec_of(const tdb_pipeline_t *p) {
  size_t n = 0;
  CHECK_ERR(tdb_pipeline_to_spec(p, NULL, 0, &n, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(n >= 1);
  char *s = malloc(n);
  CHECK(s != NULL);
  size_t m = 0;
  /* One byte short is refused and still reports the size. */
  CHECK_ERR(tdb_pipeline_to_spec(p, s, n - 1, &m, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(m == n);
  CHECK_OK(tdb_pipeline_to_spec(p, s, n, &m, E));
  CHECK(m == n);
  CHECK(s[n - 1] == '\0' && strlen(s) == n - 1);
  return s;
}

static void test_parse_and_print(void) {
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("bitshuffle,zstd:3", &p, E));
  uint32_t count = 0;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == 2);
  tdb_filter_type_t t = 0;
  CHECK_OK(tdb_pipeline_filter_type(p, 0, &t, E));
  CHECK(t == TDB_FILTER_BITSHUFFLE);
  CHECK_OK(tdb_pipeline_filter_type(p, 1, &t, E));
  CHECK(t == TDB_FILTER_ZSTD);
  int32_t level = 0;
  CHECK_OK(tdb_pipeline_option(p, 1, TDB_COMPRESSION_LEVEL, &level, sizeof(level), E));
  CHECK(level == 3);

  /* The printed spec parses back to the same serialized pipeline. */
  char *s = spec_of(p);
  tdb_pipeline_t *q = NULL;
  CHECK_OK(tdb_pipeline_from_spec(s, &q, E));
  size_t a = 0, b = 0;
  uint8_t *sa = serialize_alloc(p, &a);
  uint8_t *sb = serialize_alloc(q, &b);
  CHECK_MEM(sa, a, sb, b);
  free(sa);
  free(sb);
  free(s);
  tdb_pipeline_free(q);
  tdb_pipeline_free(p);
}

static void test_empty_and_options(void) {
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("none", &p, E));
  uint32_t count = 9;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == 0);
  tdb_pipeline_free(p);

  p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("", &p, E));
  tdb_pipeline_free(p);

  p = NULL;
  CHECK_OK(tdb_pipeline_from_spec("gzip:level=9,checksum_md5", &p, E));
  int32_t level = 0;
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_LEVEL, &level, sizeof(level), E));
  CHECK(level == 9);
  tdb_pipeline_free(p);
}

static void test_errors(void) {
  tdb_pipeline_t *p = (tdb_pipeline_t *)&p; /* must stay untouched on failure */
  tdb_pipeline_t *const sentinel = p;
  CHECK_ERR(tdb_pipeline_from_spec("bitshuffle,nosuchfilter", &p, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(p == sentinel);
  CHECK_MSG_HAS("nosuchfilter");
  CHECK_ERR(tdb_pipeline_from_spec("zstd:level=abc", &p, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(p == sentinel);
  CHECK_ERR(tdb_pipeline_from_spec(NULL, &p, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(p == sentinel);
  CHECK_ERR(tdb_pipeline_from_spec("zstd", NULL, E), TDB_ERR_INVALID_ARGUMENT);
  size_t n = 0;
  CHECK_ERR(tdb_pipeline_to_spec(NULL, NULL, 0, &n, E), TDB_ERR_INVALID_ARGUMENT);
  /* Errors without an error slot are fine too. */
  CHECK(tdb_pipeline_from_spec("nosuchfilter", &p, NULL) == TDB_ERR_INVALID_ARGUMENT);
}

int main(void) {
  test_parse_and_print();
  test_empty_and_options();
  test_errors();
  CHECK_DONE("test_spec");
}
