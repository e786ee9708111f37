/* The library names its own types (ABI 0.2): tdb_datatype_size / _name / _from_name,
 * tdb_filter_type_name / _from_name and tdb_status_name, for every value of the header's
 * enums, TileDB's own spellings, and unknown values and names. */
#include "check.h"

#include <ctype.h>

typedef struct {
  tdb_datatype_t value;
  const char *name;  /* the library's lower-case name */
  const char *tiledb; /* TileDB's spelling (tiledb_datatype_t without the TILEDB_ prefix) */
  uint64_t size;     /* TileDB's tiledb_datatype_size */
} datatype_case_t;

static const datatype_case_t DATATYPES[] = {
    {TDB_INT32, "int32", "INT32", 4},
    {TDB_INT64, "int64", "INT64", 8},
    {TDB_FLOAT32, "float32", "FLOAT32", 4},
    {TDB_FLOAT64, "float64", "FLOAT64", 8},
    {TDB_CHAR, "char", "CHAR", 1},
    {TDB_INT8, "int8", "INT8", 1},
    {TDB_UINT8, "uint8", "UINT8", 1},
    {TDB_INT16, "int16", "INT16", 2},
    {TDB_UINT16, "uint16", "UINT16", 2},
    {TDB_UINT32, "uint32", "UINT32", 4},
    {TDB_UINT64, "uint64", "UINT64", 8},
    {TDB_STRING_ASCII, "string_ascii", "STRING_ASCII", 1},
    {TDB_STRING_UTF8, "string_utf8", "STRING_UTF8", 1},
    {TDB_STRING_UTF16, "string_utf16", "STRING_UTF16", 2},
    {TDB_STRING_UTF32, "string_utf32", "STRING_UTF32", 4},
    {TDB_STRING_UCS2, "string_ucs2", "STRING_UCS2", 2},
    {TDB_STRING_UCS4, "string_ucs4", "STRING_UCS4", 4},
    {TDB_ANY, "any", "ANY", 1},
    {TDB_DATETIME_YEAR, "datetime_year", "DATETIME_YEAR", 8},
    {TDB_DATETIME_MONTH, "datetime_month", "DATETIME_MONTH", 8},
    {TDB_DATETIME_WEEK, "datetime_week", "DATETIME_WEEK", 8},
    {TDB_DATETIME_DAY, "datetime_day", "DATETIME_DAY", 8},
    {TDB_DATETIME_HR, "datetime_hr", "DATETIME_HR", 8},
    {TDB_DATETIME_MIN, "datetime_min", "DATETIME_MIN", 8},
    {TDB_DATETIME_SEC, "datetime_sec", "DATETIME_SEC", 8},
    {TDB_DATETIME_MS, "datetime_ms", "DATETIME_MS", 8},
    {TDB_DATETIME_US, "datetime_us", "DATETIME_US", 8},
    {TDB_DATETIME_NS, "datetime_ns", "DATETIME_NS", 8},
    {TDB_DATETIME_PS, "datetime_ps", "DATETIME_PS", 8},
    {TDB_DATETIME_FS, "datetime_fs", "DATETIME_FS", 8},
    {TDB_DATETIME_AS, "datetime_as", "DATETIME_AS", 8},
    {TDB_TIME_HR, "time_hr", "TIME_HR", 8},
    {TDB_TIME_MIN, "time_min", "TIME_MIN", 8},
    {TDB_TIME_SEC, "time_sec", "TIME_SEC", 8},
    {TDB_TIME_MS, "time_ms", "TIME_MS", 8},
    {TDB_TIME_US, "time_us", "TIME_US", 8},
    {TDB_TIME_NS, "time_ns", "TIME_NS", 8},
    {TDB_TIME_PS, "time_ps", "TIME_PS", 8},
    {TDB_TIME_FS, "time_fs", "TIME_FS", 8},
    {TDB_TIME_AS, "time_as", "TIME_AS", 8},
    {TDB_BLOB, "blob", "BLOB", 1},
    {TDB_BOOL, "bool", "BOOL", 1},
    {TDB_GEOM_WKB, "geom_wkb", "GEOM_WKB", 1},
    {TDB_GEOM_WKT, "geom_wkt", "GEOM_WKT", 1},
};
#define N_DATATYPES (sizeof DATATYPES / sizeof DATATYPES[0])

typedef struct {
  tdb_filter_type_t value;
  const char *name;   /* the spec name */
  const char *tiledb; /* TileDB's filter type string */
  const char *c_name; /* TileDB's C enum name */
} filter_case_t;

static const filter_case_t FILTERS[] = {
    {TDB_FILTER_NONE, "none", "NONE", "TILEDB_FILTER_NONE"},
    {TDB_FILTER_GZIP, "gzip", "GZIP", "TILEDB_FILTER_GZIP"},
    {TDB_FILTER_ZSTD, "zstd", "ZSTD", "TILEDB_FILTER_ZSTD"},
    {TDB_FILTER_LZ4, "lz4", "LZ4", "TILEDB_FILTER_LZ4"},
    {TDB_FILTER_RLE, "rle", "RLE", "TILEDB_FILTER_RLE"},
    {TDB_FILTER_BZIP2, "bzip2", "BZIP2", "TILEDB_FILTER_BZIP2"},
    {TDB_FILTER_DOUBLE_DELTA, "double_delta", "DOUBLE_DELTA", "TILEDB_FILTER_DOUBLE_DELTA"},
    {TDB_FILTER_BIT_WIDTH_REDUCTION, "bit_width_reduction", "BIT_WIDTH_REDUCTION",
     "TILEDB_FILTER_BIT_WIDTH_REDUCTION"},
    {TDB_FILTER_BITSHUFFLE, "bitshuffle", "BITSHUFFLE", "TILEDB_FILTER_BITSHUFFLE"},
    {TDB_FILTER_BYTESHUFFLE, "byteshuffle", "BYTESHUFFLE", "TILEDB_FILTER_BYTESHUFFLE"},
    {TDB_FILTER_POSITIVE_DELTA, "positive_delta", "POSITIVE_DELTA",
     "TILEDB_FILTER_POSITIVE_DELTA"},
    {TDB_FILTER_AES_256_GCM, "aes_256_gcm", "AES_256_GCM", "TILEDB_FILTER_AES_256_GCM"},
    {TDB_FILTER_CHECKSUM_MD5, "checksum_md5", "CHECKSUM_MD5", "TILEDB_FILTER_CHECKSUM_MD5"},
    {TDB_FILTER_CHECKSUM_SHA256, "checksum_sha256", "CHECKSUM_SHA256",
     "TILEDB_FILTER_CHECKSUM_SHA256"},
    {TDB_FILTER_DICTIONARY, "dictionary", "DICTIONARY_ENCODING", "TILEDB_FILTER_DICTIONARY"},
    {TDB_FILTER_SCALE_FLOAT, "scale_float", "SCALE_FLOAT", "TILEDB_FILTER_SCALE_FLOAT"},
    {TDB_FILTER_XOR, "xor", "XOR", "TILEDB_FILTER_XOR"},
    {TDB_FILTER_WEBP, "webp", "WEBP", "TILEDB_FILTER_WEBP"},
    {TDB_FILTER_DELTA, "delta", "DELTA", "TILEDB_FILTER_DELTA"},
};
#define N_FILTERS (sizeof FILTERS / sizeof FILTERS[0])

static void upper(const char *in, char *out, size_t cap) {
  size_t i = 0;
  for (; in[i] && i + 1 < cap; i++) out[i] = (char)toupper((unsigned char)in[i]);
  out[i] = '\0';
}

static void test_datatypes(void) {
  CHECK(N_DATATYPES == 44);
  for (size_t i = 0; i < N_DATATYPES; i++) {
    const datatype_case_t *c = &DATATYPES[i];
    CHECK(c->value == i); /* TileDB numbers them 0..43 */
    const char *name = NULL;
    CHECK_OK(tdb_datatype_name(c->value, &name, E));
    CHECK_MSG(name != NULL && strcmp(name, c->name) == 0, "datatype %u: '%s', want '%s'",
              c->value, name ? name : "(null)", c->name);
    const char *again = NULL;
    CHECK_OK(tdb_datatype_name(c->value, &again, E));
    CHECK(again == name); /* a static string */
    uint64_t size = 0;
    CHECK_OK(tdb_datatype_size(c->value, &size, E));
    CHECK_MSG(size == c->size, "%s: size %llu, want %llu", c->name, (unsigned long long)size,
              (unsigned long long)c->size);
    /* Round trip, and TileDB's spellings in any case. */
    char spelled[64];
    const char *spellings[4] = {c->name, c->tiledb, spelled, NULL};
    snprintf(spelled, sizeof spelled, "TILEDB_%s", c->tiledb);
    char lower_prefixed[64];
    snprintf(lower_prefixed, sizeof lower_prefixed, "tiledb_%s", c->name);
    spellings[3] = lower_prefixed;
    for (size_t k = 0; k < 4; k++) {
      tdb_datatype_t back = 999;
      CHECK_OK(tdb_datatype_from_name(spellings[k], &back, E));
      CHECK_MSG(back == c->value, "'%s' -> %u, want %u", spellings[k], back, c->value);
    }
  }

  /* Unknown values: INVALID_ARGUMENT naming the value, outputs untouched. */
  const tdb_datatype_t unknown[] = {44, 45, 99, 255, 256, UINT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char *name = "untouched";
    uint64_t size = 777;
    char want[64];
    snprintf(want, sizeof want, "unknown datatype %u", unknown[i]);
    CHECK_ERR(tdb_datatype_name(unknown[i], &name, E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS(want);
    CHECK_ERR(tdb_datatype_size(unknown[i], &size, E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS(want);
    CHECK(strcmp(name, "untouched") == 0 && size == 777);
  }

  /* Unknown names: INVALID_ARGUMENT naming the name. */
  const char *bad_names[] = {"", "int", "int128", "TILEDB_", "tiledb", "string", "gzip",
                             "FILTER_GZIP", " int32", "int32 "};
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
    tdb_datatype_t d = 999;
    char want[64];
    snprintf(want, sizeof want, "unknown datatype name '%s'", bad_names[i]);
    CHECK_ERR(tdb_datatype_from_name(bad_names[i], &d, E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS(want);
    CHECK(d == 999);
  }

  /* NULL arguments. */
  tdb_datatype_t d = 999;
  CHECK_ERR(tdb_datatype_from_name(NULL, &d, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("name is NULL");
  CHECK(d == 999);
  CHECK_ERR(tdb_datatype_from_name("int32", NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_datatype_name(TDB_INT32, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_datatype_size(TDB_INT32, NULL, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_filter_types(void) {
  CHECK(N_FILTERS == 19);
  for (size_t i = 0; i < N_FILTERS; i++) {
    const filter_case_t *c = &FILTERS[i];
    const char *name = NULL;
    CHECK_OK(tdb_filter_type_name(c->value, &name, E));
    CHECK_MSG(name != NULL && strcmp(name, c->name) == 0, "filter %u: '%s', want '%s'",
              c->value, name ? name : "(null)", c->name);
    const char *again = NULL;
    CHECK_OK(tdb_filter_type_name(c->value, &again, E));
    CHECK(again == name);
    char up[64], prefixed[80];
    upper(c->name, up, sizeof up);
    snprintf(prefixed, sizeof prefixed, "FILTER_%s", c->tiledb);
    const char *spellings[] = {c->name, up, c->tiledb, c->c_name, prefixed};
    for (size_t k = 0; k < sizeof spellings / sizeof spellings[0]; k++) {
      tdb_filter_type_t back = 999;
      CHECK_OK(tdb_filter_type_from_name(spellings[k], &back, E));
      CHECK_MSG(back == c->value, "'%s' -> %u, want %u", spellings[k], back, c->value);
    }
  }

  /* Every value the header does not define is unknown (17 was TileDB's removed BITSORT). */
  unsigned named = 0;
  for (uint32_t v = 0; v < 64; v++) {
    const char *name = "untouched";
    tdb_status_t st = tdb_filter_type_name(v, &name, NULL);
    if (st == TDB_OK) {
      named++;
      tdb_filter_type_t back = 999;
      CHECK_OK(tdb_filter_type_from_name(name, &back, E));
      CHECK(back == v);
    } else {
      CHECK(st == TDB_ERR_INVALID_ARGUMENT && strcmp(name, "untouched") == 0);
      char want[64];
      snprintf(want, sizeof want, "unknown filter type %u", v);
      CHECK_ERR(tdb_filter_type_name(v, &name, E), TDB_ERR_INVALID_ARGUMENT);
      CHECK_MSG_HAS(want);
    }
  }
  CHECK(named == N_FILTERS);
  const char *name = "untouched";
  CHECK_ERR(tdb_filter_type_name(UINT32_MAX, &name, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(name, "untouched") == 0);

  const char *bad_names[] = {"", "bitsort", "gzip2", "FILTER_", "TILEDB_FILTER_", "int32",
                             "zstd:3", "checksum"};
  for (size_t i = 0; i < sizeof bad_names / sizeof bad_names[0]; i++) {
    tdb_filter_type_t t = 999;
    char want[64];
    snprintf(want, sizeof want, "unknown filter type name '%s'", bad_names[i]);
    CHECK_ERR(tdb_filter_type_from_name(bad_names[i], &t, E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS(want);
    CHECK(t == 999);
  }
  tdb_filter_type_t t = 999;
  CHECK_ERR(tdb_filter_type_from_name(NULL, &t, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("name is NULL");
  CHECK(t == 999);
  CHECK_ERR(tdb_filter_type_from_name("gzip", NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_filter_type_name(TDB_FILTER_GZIP, NULL, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_status_names(void) {
  static const struct {
    tdb_status_t status;
    const char *name;
  } statuses[] = {
      {TDB_OK, "TDB_OK"},
      {TDB_ERR_INVALID_ARGUMENT, "TDB_ERR_INVALID_ARGUMENT"},
      {TDB_ERR_CORRUPT_DATA, "TDB_ERR_CORRUPT_DATA"},
      {TDB_ERR_CHECKSUM_MISMATCH, "TDB_ERR_CHECKSUM_MISMATCH"},
      {TDB_ERR_DECRYPTION_FAILED, "TDB_ERR_DECRYPTION_FAILED"},
      {TDB_ERR_UNSUPPORTED, "TDB_ERR_UNSUPPORTED"},
      {TDB_ERR_BUFFER_TOO_SMALL, "TDB_ERR_BUFFER_TOO_SMALL"},
      {TDB_ERR_OUT_OF_MEMORY, "TDB_ERR_OUT_OF_MEMORY"},
      {TDB_ERR_INTERNAL, "TDB_ERR_INTERNAL"},
      {TDB_ERR_IO, "TDB_ERR_IO"},
  };
  const size_t n = sizeof statuses / sizeof statuses[0];
  CHECK(n == 10);
  for (size_t i = 0; i < n; i++) {
    CHECK((int32_t)statuses[i].status == (int32_t)i);
    const char *name = tdb_status_name((int32_t)statuses[i].status);
    CHECK_MSG(name != NULL && strcmp(name, statuses[i].name) == 0, "status %zu: '%s'", i,
              name ? name : "(null)");
    CHECK(tdb_status_name((int32_t)statuses[i].status) == name);
  }
  const int32_t unknown[] = {-1, 10, 11, 100, INT32_MIN, INT32_MAX};
  for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
    const char *name = tdb_status_name(unknown[i]);
    CHECK_MSG(name != NULL && strcmp(name, "TDB_ERR_UNKNOWN") == 0, "status %d: '%s'",
              unknown[i], name ? name : "(null)");
  }
  /* An error's status names itself. */
  tdb_error_t *err = NULL;
  CHECK(tdb_datatype_size(99, &(uint64_t){0}, &err) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(tdb_status_name((int32_t)tdb_error_status(err)), "TDB_ERR_INVALID_ARGUMENT") == 0);
  tdb_error_free(err);
}

int main(void) {
  test_datatypes();
  test_filter_types();
  test_status_names();
  CHECK_DONE("test_types");
}
