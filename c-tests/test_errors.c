/* Error paths: NULL arguments, outputs untouched on failure, bad options,
 * unknown filters, every filter accepted, corrupt / truncated input,
 * checksum mismatches, buffer-too-small, *_free(NULL). */
#include "helpers.h"

#define FORMAT_VERSION 22u

typedef struct {
  uint32_t type;
  const char *name;       /* must appear in the error message */
  const char *serialized; /* a pipeline holding only this filter (§9.1) */
} filter_vector_t;

/* Filters with options or datatype rules, each with TileDB's serialized bytes of a pipeline
 * holding only it (§9.1) and the name its error messages use. */
static const filter_vector_t FILTER_VECTORS[] = {
    {TDB_FILTER_RLE, "RLE", "00000100 01000000 04 05000000 04 ffffffff"},
    {TDB_FILTER_DOUBLE_DELTA, "DOUBLE_DELTA",
     "00000100 01000000 06 06000000 06 ffffffff 00"},
    {TDB_FILTER_BIT_WIDTH_REDUCTION, "BIT_WIDTH_REDUCTION",
     "00000100 01000000 07 04000000 80000000"},
    {TDB_FILTER_POSITIVE_DELTA, "POSITIVE_DELTA", "00000100 01000000 0a 04000000 00040000"},
    {TDB_FILTER_DICTIONARY, "DICTIONARY", "00000100 01000000 0e 05000000 07 ffffffff"},
    {TDB_FILTER_SCALE_FLOAT, "SCALE_FLOAT",
     "00000100 01000000 0f 18000000 000000000000e03f 0000000000002440 0200000000000000"},
    {TDB_FILTER_XOR, "XOR", "00000100 01000000 10 00000000"},
    {TDB_FILTER_WEBP, "WEBP", "00000100 01000000 12 0c000000 0000c842 01 01 2000 2001 0000"},
    {TDB_FILTER_DELTA, "DELTA", "00000100 01000000 13 06000000 08 ffffffff 11"},
};
#define N_FILTER_VECTORS (sizeof FILTER_VECTORS / sizeof FILTER_VECTORS[0])

/* Sentinels used to check that outputs are left untouched on failure. */
static uint8_t sentinel_obj;
#define SENTINEL ((void *)&sentinel_obj)
#define SENT_PIPE ((tdb_pipeline_t *)SENTINEL)
#define SENT_TILE ((tdb_tile_t *)SENTINEL)

static uint32_t count_of(const tdb_pipeline_t *p) {
  uint32_t c = 0;
  CHECK_OK(tdb_pipeline_filter_count(p, &c, E));
  return c;
}

/* ---------------------------------------------------------------------- */

static void test_null_arguments(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_GZIP);
  uint8_t bytes[64];
  size_t nser = 0;
  {
    uint8_t *s = serialize_alloc(p, &nser);
    memcpy(bytes, s, nser);
    free(s);
  }
  const uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  tdb_tile_t *tile = NULL;
  CHECK_OK(tdb_tile_create(TDB_UINT8, 1, data, sizeof data, &tile, E));
  size_t fn = 0;
  uint8_t *filtered = filter_alloc(p, TDB_UINT8, 1, data, sizeof data, &fn);
  int32_t level = 3;
  uint32_t count = 777;
  tdb_filter_type_t type = 777;
  size_t size = 777;
  uint64_t tsize = 777;
  tdb_pipeline_t *pout = SENT_PIPE;
  tdb_tile_t *tout = SENT_TILE;

  CHECK_ERR(tdb_pipeline_create(NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");

  CHECK_ERR(tdb_pipeline_add_filter(NULL, TDB_FILTER_GZIP, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");

  CHECK_ERR(tdb_pipeline_set_option(NULL, 0, TDB_COMPRESSION_LEVEL, &level, sizeof(level), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK_ERR(tdb_pipeline_set_option(p, 0, TDB_COMPRESSION_LEVEL, NULL, sizeof(int32_t), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");

  CHECK_ERR(tdb_pipeline_option(NULL, 0, TDB_COMPRESSION_LEVEL, &level, sizeof(level), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(level == 3);
  CHECK_ERR(tdb_pipeline_option(p, 0, TDB_COMPRESSION_LEVEL, NULL, sizeof(int32_t), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");

  CHECK_ERR(tdb_pipeline_filter_count(NULL, &count, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(count == 777);
  CHECK_ERR(tdb_pipeline_filter_count(p, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");

  CHECK_ERR(tdb_pipeline_filter_type(NULL, 0, &type, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(type == 777);
  CHECK_ERR(tdb_pipeline_filter_type(p, 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  CHECK_ERR(tdb_pipeline_set_max_chunk_size(NULL, 1024, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_threads(NULL, 2, E), TDB_ERR_INVALID_ARGUMENT);
  /* documented limit: at most 256 threads */
  CHECK_OK(tdb_pipeline_set_threads(p, 256, E));
  CHECK_ERR(tdb_pipeline_set_threads(p, 257, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_threads(p, 0xFFFFFFFFu, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_pipeline_set_threads(p, 0, E));
  CHECK_ERR(tdb_pipeline_set_skip_checksum_validation(NULL, true, E),
            TDB_ERR_INVALID_ARGUMENT);

  uint8_t buf[64];
  memset(buf, 0xAA, sizeof buf);
  CHECK_ERR(tdb_pipeline_serialize(NULL, buf, sizeof buf, &size, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(size == 777);
  CHECK(buf[0] == 0xAA);
  CHECK_ERR(tdb_pipeline_serialize(p, buf, sizeof buf, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(buf[0] == 0xAA);

  CHECK_ERR(tdb_pipeline_deserialize(NULL, nser, FORMAT_VERSION, &pout, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(pout == SENT_PIPE);
  CHECK_ERR(tdb_pipeline_deserialize(bytes, nser, FORMAT_VERSION, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);

  CHECK_ERR(tdb_tile_create(TDB_UINT8, 1, NULL, 8, &tout, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(tout == SENT_TILE);
  CHECK_ERR(tdb_tile_create(TDB_UINT8, 1, data, 8, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  const uint8_t *dp = (const uint8_t *)SENTINEL;
  size = 777;
  CHECK_ERR(tdb_tile_data(NULL, &dp, &size, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("tile is null");
  CHECK(dp == (const uint8_t *)SENTINEL && size == 777);
  CHECK_ERR(tdb_tile_data(tile, NULL, &size, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("data is null");
  CHECK(size == 777);
  CHECK_ERR(tdb_tile_data(tile, &dp, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("size is null");
  CHECK(dp == (const uint8_t *)SENTINEL);
  /* A NULL error slot is allowed: the status alone reports the failure. */
  CHECK(tdb_tile_data(NULL, &dp, &size, NULL) == TDB_ERR_INVALID_ARGUMENT);

  CHECK_ERR(tdb_pipeline_filter(NULL, tile, &tout, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(tout == SENT_TILE);
  CHECK_ERR(tdb_pipeline_filter(p, NULL, &tout, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(tout == SENT_TILE);
  CHECK_ERR(tdb_pipeline_filter(p, tile, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  CHECK_ERR(tdb_pipeline_unfilter(NULL, filtered, fn, TDB_UINT8, 1, &tout, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(tout == SENT_TILE);
  CHECK_ERR(tdb_pipeline_unfilter(p, NULL, fn, TDB_UINT8, 1, &tout, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(tout == SENT_TILE);
  CHECK_ERR(tdb_pipeline_unfilter(p, filtered, fn, TDB_UINT8, 1, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);

  CHECK_ERR(tdb_filtered_tile_size(NULL, fn, &tsize, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(tsize == 777);
  CHECK_ERR(tdb_filtered_tile_size(filtered, fn, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  /* documented in tdbfilter.h: no error is TDB_OK with an empty message */
  CHECK(tdb_error_status(NULL) == TDB_OK);
  const char *m = tdb_error_message(NULL);
  CHECK(m != NULL && m[0] == '\0');

  /* *_free(NULL) are no-ops */
  tdb_pipeline_free(NULL);
  tdb_tile_free(NULL);
  tdb_error_free(NULL);
  CHECK(1);

  free(filtered);
  tdb_tile_free(tile);
  tdb_pipeline_free(p);
}

static void test_null_error_outparam(void) {
  /* error == NULL is allowed on both success and failure */
  tdb_pipeline_t *p = NULL;
  CHECK(tdb_pipeline_create(&p, NULL) == TDB_OK);
  CHECK(tdb_pipeline_add_filter(p, TDB_FILTER_ZSTD, NULL) == TDB_OK);
  CHECK(tdb_pipeline_add_filter(p, 99, NULL) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(tdb_pipeline_add_filter(NULL, TDB_FILTER_ZSTD, NULL) == TDB_ERR_INVALID_ARGUMENT);
  int32_t lvl = 5;
  CHECK(tdb_pipeline_set_option(p, 0, TDB_COMPRESSION_LEVEL, &lvl, sizeof(lvl), NULL) == TDB_OK);
  CHECK(tdb_pipeline_set_option(p, 3, TDB_COMPRESSION_LEVEL, &lvl, sizeof(lvl), NULL) ==
        TDB_ERR_INVALID_ARGUMENT);
  CHECK(tdb_pipeline_option(p, 0, TDB_BIT_WIDTH_MAX_WINDOW, &lvl, sizeof(lvl), NULL) ==
        TDB_ERR_INVALID_ARGUMENT);
  CHECK(lvl == 5);
  uint32_t c = 0;
  CHECK(tdb_pipeline_filter_count(p, &c, NULL) == TDB_OK && c == 1);
  CHECK(tdb_pipeline_filter_count(NULL, &c, NULL) == TDB_ERR_INVALID_ARGUMENT);
  tdb_filter_type_t t = 0;
  CHECK(tdb_pipeline_filter_type(p, 1, &t, NULL) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(tdb_pipeline_set_max_chunk_size(NULL, 0, NULL) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(tdb_pipeline_set_threads(NULL, 0, NULL) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(tdb_pipeline_set_skip_checksum_validation(NULL, false, NULL) ==
        TDB_ERR_INVALID_ARGUMENT);
  size_t need = 0;
  CHECK(tdb_pipeline_serialize(p, NULL, 0, &need, NULL) == TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(need == 18);
  const uint8_t junk[3] = {0, 0, 1};
  tdb_pipeline_t *q = SENT_PIPE;
  CHECK(tdb_pipeline_deserialize(junk, 3, FORMAT_VERSION, &q, NULL) ==
        TDB_ERR_CORRUPT_DATA);
  CHECK(q == SENT_PIPE);
  tdb_tile_t *tile = SENT_TILE;
  CHECK(tdb_tile_create(TDB_UINT8, 1, NULL, 4, &tile, NULL) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(tdb_pipeline_unfilter(p, junk, 3, TDB_UINT8, 1, &tile, NULL) ==
        TDB_ERR_CORRUPT_DATA);
  CHECK(tile == SENT_TILE);
  uint64_t ts = 5;
  CHECK(tdb_filtered_tile_size(junk, 3, &ts, NULL) == TDB_ERR_CORRUPT_DATA);
  CHECK(ts == 5);
  CHECK(tdb_pipeline_filter(p, NULL, &tile, NULL) == TDB_ERR_INVALID_ARGUMENT);
  tdb_pipeline_free(p);
}

static void test_invalid_values(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_GZIP, TDB_FILTER_BYTESHUFFLE);
  tdb_tile_t *tile = SENT_TILE;
  const uint8_t data[16] = {0};

  /* datatype outside 0..43 */
  const uint32_t bad_dt[] = {44, 45, 255, 256, 0xFFFFFFFFu};
  for (size_t i = 0; i < sizeof bad_dt / sizeof bad_dt[0]; i++) {
    CHECK_ERR(tdb_tile_create(bad_dt[i], 1, data, sizeof data, &tile, E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("datatype");
    CHECK(tile == SENT_TILE);
  }
  /* cell size 0, or not a whole number of datatype values */
  CHECK_ERR(tdb_tile_create(TDB_UINT8, 0, data, sizeof data, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("cell");
  CHECK(tile == SENT_TILE);
  CHECK_ERR(tdb_tile_create(TDB_INT32, 6, data, sizeof data, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("cell");
  CHECK_ERR(tdb_tile_create(TDB_INT64, 4, data, sizeof data, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(tile == SENT_TILE);

  /* format versions outside what TileDB has written are refused */
  {
    const uint8_t ser[8] = {0, 0, 1, 0, 0, 0, 0, 0};
    const uint32_t bad_versions[] = {0, 24, 1000, 0xFFFFFFFFu};
    for (size_t i = 0; i < sizeof bad_versions / sizeof bad_versions[0]; i++) {
      tdb_pipeline_t *q = SENT_PIPE;
      tdb_error_t *err = NULL;
      CHECK(tdb_pipeline_deserialize(ser, 8, bad_versions[i], &q, &err) != TDB_OK);
      CHECK(err != NULL && tdb_error_message(err)[0] != '\0');
      CHECK(q == SENT_PIPE);
      tdb_error_free(err);
    }
  }

  size_t fn = 0;
  uint8_t *f = filter_alloc(p, TDB_UINT8, 1, data, sizeof data, &fn);
  CHECK_ERR(tdb_pipeline_unfilter(p, f, fn, 44, 1, &tile, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("datatype");
  CHECK_ERR(tdb_pipeline_unfilter(p, f, fn, TDB_UINT8, 0, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("cell");
  CHECK_ERR(tdb_pipeline_unfilter(p, f, fn, TDB_INT64, 12, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(tile == SENT_TILE);
  free(f);

  /* cell size above u32: "Chunk size exceeds uint32_t" (§8.1); rejected at
   * tile creation or at filtering */
  tdb_tile_t *big = NULL;
  tdb_status_t st = tdb_tile_create(TDB_UINT8, (uint64_t)1 << 32, data, sizeof data, &big, NULL);
  if (st == TDB_OK) {
    tile = SENT_TILE;
    CHECK_ERR(tdb_pipeline_filter(p, big, &tile, E), TDB_ERR_INVALID_ARGUMENT);
    CHECK(tile == SENT_TILE);
    tdb_tile_free(big);
  } else {
    CHECK(st == TDB_ERR_INVALID_ARGUMENT);
  }

  /* filter index out of range */
  int32_t lvl = 4;
  CHECK_ERR(tdb_pipeline_set_option(p, 2, TDB_COMPRESSION_LEVEL, &lvl, sizeof(lvl), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_option(p, 0xFFFFFFFFu, TDB_COMPRESSION_LEVEL, &lvl, sizeof(lvl), E),
            TDB_ERR_INVALID_ARGUMENT);
  lvl = 1234;
  CHECK_ERR(tdb_pipeline_option(p, 2, TDB_COMPRESSION_LEVEL, &lvl, sizeof(lvl), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(lvl == 1234);
  tdb_filter_type_t t = 1234;
  CHECK_ERR(tdb_pipeline_filter_type(p, 2, &t, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(t == 1234);
  tdb_pipeline_t *empty = PIPE_EMPTY();
  CHECK_ERR(tdb_pipeline_filter_type(empty, 0, &t, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_option(empty, 0, TDB_COMPRESSION_LEVEL, &lvl, sizeof(lvl), E),
            TDB_ERR_INVALID_ARGUMENT);
  tdb_pipeline_free(empty);
  tdb_pipeline_free(p);
}

/* value_size must be the option's C type's size (ABI 0.2); a mismatch names the option and
 * the type and changes nothing. */
static void test_option_value_size(void) {
  typedef struct {
    uint32_t filter;
    uint32_t option;
    const char *name; /* TileDB's option name, in the message */
    const char *type; /* the C type, in the message */
    size_t size;
  } option_case_t;
  static const option_case_t cases[] = {
      {TDB_FILTER_ZSTD, TDB_COMPRESSION_LEVEL, "COMPRESSION_LEVEL", "int32_t", 4},
      {TDB_FILTER_BIT_WIDTH_REDUCTION, TDB_BIT_WIDTH_MAX_WINDOW, "BIT_WIDTH_MAX_WINDOW",
       "uint32_t", 4},
      {TDB_FILTER_POSITIVE_DELTA, TDB_POSITIVE_DELTA_MAX_WINDOW, "POSITIVE_DELTA_MAX_WINDOW",
       "uint32_t", 4},
      {TDB_FILTER_SCALE_FLOAT, TDB_SCALE_FLOAT_BYTEWIDTH, "SCALE_FLOAT_BYTEWIDTH", "uint64_t", 8},
      {TDB_FILTER_SCALE_FLOAT, TDB_SCALE_FLOAT_FACTOR, "SCALE_FLOAT_FACTOR", "double", 8},
      {TDB_FILTER_SCALE_FLOAT, TDB_SCALE_FLOAT_OFFSET, "SCALE_FLOAT_OFFSET", "double", 8},
      {TDB_FILTER_WEBP, TDB_WEBP_QUALITY, "WEBP_QUALITY", "float", 4},
      {TDB_FILTER_WEBP, TDB_WEBP_INPUT_FORMAT, "WEBP_INPUT_FORMAT", "uint8_t", 1},
      {TDB_FILTER_WEBP, TDB_WEBP_LOSSLESS, "WEBP_LOSSLESS", "uint8_t", 1},
      {TDB_FILTER_DELTA, TDB_COMPRESSION_REINTERPRET_DATATYPE, "COMPRESSION_REINTERPRET_DATATYPE",
       "uint8_t", 1},
  };
  const size_t n_cases = sizeof cases / sizeof cases[0];
  CHECK(n_cases == 10); /* every option of the header */
  for (size_t i = 0; i < n_cases; i++) {
    const option_case_t *c = &cases[i];
    CHECK(option_size(c->option) == c->size);
    tdb_pipeline_t *p = PIPE(c->filter);
    uint8_t before[8], value[16];
    memset(before, 0, sizeof before);
    CHECK_OK(tdb_pipeline_option(p, 0, c->option, before, c->size, E));
    /* The right size round-trips the stored value. */
    CHECK_OK(tdb_pipeline_set_option(p, 0, c->option, before, c->size, E));
    const size_t wrong[] = {0, c->size - 1, c->size + 1, c->size * 2, 16};
    for (size_t w = 0; w < sizeof wrong / sizeof wrong[0]; w++) {
      if (wrong[w] == c->size) continue;
      char want[128];
      snprintf(want, sizeof want, "value_size is %zu; option %s is %s (%zu byte", wrong[w],
               c->name, c->type, c->size);
      /* set: rejected before reading the value, the stored value unchanged */
      memset(value, 0x11, sizeof value);
      CHECK_ERR(tdb_pipeline_set_option(p, 0, c->option, value, wrong[w], E),
                TDB_ERR_INVALID_ARGUMENT);
      CHECK_MSG_HAS(want);
      /* get: rejected, the caller's buffer untouched */
      memset(value, 0x5C, sizeof value);
      CHECK_ERR(tdb_pipeline_option(p, 0, c->option, value, wrong[w], E),
                TDB_ERR_INVALID_ARGUMENT);
      CHECK_MSG_HAS(want);
      for (size_t k = 0; k < sizeof value; k++) CHECK(value[k] == 0x5C);
    }
    uint8_t after[8];
    memset(after, 0, sizeof after);
    CHECK_OK(tdb_pipeline_option(p, 0, c->option, after, c->size, E));
    CHECK(memcmp(before, after, c->size) == 0);
    /* NULL values name the option and type too */
    CHECK_ERR(tdb_pipeline_set_option(p, 0, c->option, NULL, c->size, E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("value is NULL");
    CHECK_MSG_HAS(c->name);
    CHECK_ERR(tdb_pipeline_option(p, 0, c->option, NULL, 0, E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS(c->type);
    tdb_pipeline_free(p);
  }
}

static void test_bad_options(void) {
  tdb_pipeline_t *p =
      PIPE(TDB_FILTER_NONE, TDB_FILTER_GZIP, TDB_FILTER_ZSTD, TDB_FILTER_LZ4,
           TDB_FILTER_BZIP2, TDB_FILTER_BITSHUFFLE, TDB_FILTER_BYTESHUFFLE,
           TDB_FILTER_CHECKSUM_MD5, TDB_FILTER_CHECKSUM_SHA256);
  size_t n0 = 0;
  uint8_t *before = serialize_alloc(p, &n0);

  /* value storage big enough for every option type, poisoned */
  union {
    int32_t i32;
    uint32_t u32;
    uint64_t u64;
    double f64;
    float f32;
    uint8_t u8;
    uint8_t raw[8];
  } v;

  /* filters without options reject every option (docs/FORMAT.md §1.5) */
  const uint32_t no_opt[] = {0, 5, 6, 7, 8};
  for (size_t i = 0; i < sizeof no_opt / sizeof no_opt[0]; i++) {
    for (uint32_t opt = 0; opt <= 9; opt++) {
      memset(&v, 0, sizeof v);
      v.u8 = 1;
      CHECK_ERR(tdb_pipeline_set_option(p, no_opt[i], opt, &v, option_size(opt), E),
                TDB_ERR_INVALID_ARGUMENT);
      CHECK_MSG_HAS("option");
      memset(&v, 0x5C, sizeof v);
      CHECK_ERR(tdb_pipeline_option(p, no_opt[i], opt, &v, option_size(opt), E),
                TDB_ERR_INVALID_ARGUMENT);
      for (int k = 0; k < 8; k++) CHECK(v.raw[k] == 0x5C);
    }
  }
  /* compression filters accept only COMPRESSION_LEVEL and REINTERPRET_DATATYPE */
  for (uint32_t idx = 1; idx <= 4; idx++) {
    for (uint32_t opt = 1; opt <= 8; opt++) {
      memset(&v, 0, sizeof v);
      v.u8 = 1;
      CHECK_ERR(tdb_pipeline_set_option(p, idx, opt, &v, option_size(opt), E),
                TDB_ERR_INVALID_ARGUMENT);
      memset(&v, 0x5C, sizeof v);
      CHECK_ERR(tdb_pipeline_option(p, idx, opt, &v, option_size(opt), E),
                TDB_ERR_INVALID_ARGUMENT);
      for (int k = 0; k < 8; k++) CHECK(v.raw[k] == 0x5C);
    }
  }
  /* unknown option numbers */
  const uint32_t bad_opt[] = {10, 11, 99, 0x7FFFFFFFu, 0xFFFFFFFFu};
  for (size_t i = 0; i < sizeof bad_opt / sizeof bad_opt[0]; i++) {
    memset(&v, 0, sizeof v);
    CHECK_ERR(tdb_pipeline_set_option(p, 1, bad_opt[i], &v, sizeof(v), E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("unknown filter option");
    CHECK_ERR(tdb_pipeline_option(p, 1, bad_opt[i], &v, sizeof(v), E), TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("unknown filter option");
  }

  /* GZIP levels above 9 are invalid (§5.3); the old level is kept */
  set_level(p, 1, 7);
  const int32_t bad_gzip[] = {10, 11, 100, INT32_MAX};
  for (size_t i = 0; i < sizeof bad_gzip / sizeof bad_gzip[0]; i++) {
    CHECK_ERR(tdb_pipeline_set_option(p, 1, TDB_COMPRESSION_LEVEL, &bad_gzip[i], sizeof(bad_gzip[i]), E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("level");
    int32_t got = 0;
    CHECK_OK(tdb_pipeline_option(p, 1, TDB_COMPRESSION_LEVEL, &got, sizeof(got), E));
    CHECK(got == 7);
  }
  /* BZIP2 levels above 9 are invalid (§5.6) */
  const int32_t bad_bzip[] = {10, 1000};
  for (size_t i = 0; i < 2; i++) {
    CHECK_ERR(tdb_pipeline_set_option(p, 4, TDB_COMPRESSION_LEVEL, &bad_bzip[i], sizeof(bad_bzip[i]), E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("level");
  }
  set_level(p, 1, -1);
  size_t n1 = 0;
  uint8_t *after = serialize_alloc(p, &n1);
  CHECK_MEM(after, n1, before, n0);
  free(before);
  free(after);
  tdb_pipeline_free(p);
}

static void test_unknown_filter_types(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_LZ4);
  /* 11 = internal AES, 17 = deprecated bitsort, 20 = internal sentinel */
  const uint32_t bad[] = {11, 17, 20, 21, 99, 255, 256, 0xFFFFFFFFu};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    CHECK_ERR(tdb_pipeline_add_filter(p, bad[i], E), TDB_ERR_INVALID_ARGUMENT);
    CHECK(count_of(p) == 1);
  }
  CHECK_ERR(tdb_pipeline_add_filter(p, 99, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("99");
  tdb_pipeline_free(p);

  /* unknown type bytes in serialized pipelines (§3.2) */
  const char *ser[] = {
      "00000100 01000000 11 00000000",          /* 17 */
      "00000100 01000000 14 00000000",          /* 20 */
      "00000100 01000000 63 00000000",          /* 99 */
      "00000100 02000000 02 05000000 02 ffffffff ff 00000000",
  };
  for (size_t i = 0; i < sizeof ser / sizeof ser[0]; i++) {
    uint8_t b[64];
    size_t n = hex_decode(ser[i], b, sizeof b);
    tdb_pipeline_t *q = SENT_PIPE;
    CHECK_ERR(tdb_pipeline_deserialize(b, n, FORMAT_VERSION, &q, E), TDB_ERR_CORRUPT_DATA);
    CHECK(q == SENT_PIPE);
  }
  /* a compression entry with an unknown compressor byte */
  uint8_t b[64];
  size_t n = hex_decode("00000100 01000000 01 05000000 09 ffffffff", b, sizeof b);
  tdb_pipeline_t *q = SENT_PIPE;
  CHECK_ERR(tdb_pipeline_deserialize(b, n, FORMAT_VERSION, &q, E), TDB_ERR_CORRUPT_DATA);
  CHECK(q == SENT_PIPE);
}

/* Every filter is accepted by add_filter and by deserialize; TileDB's bytes round-trip. An
 * option a filter does not have is refused with the filter's name. */
static void test_all_filters_accepted(void) {
  for (size_t i = 0; i < N_FILTER_VECTORS; i++) {
    const filter_vector_t *lf = &FILTER_VECTORS[i];
    tdb_pipeline_t *p = PIPE(TDB_FILTER_ZSTD);
    CHECK_OK(tdb_pipeline_add_filter(p, lf->type, E));
    CHECK(count_of(p) == 2);
    tdb_filter_type_t t = 0;
    CHECK_OK(tdb_pipeline_filter_type(p, 1, &t, E));
    CHECK(t == lf->type);
    float q = 50.0f;
    if (lf->type != TDB_FILTER_WEBP) {
      CHECK_ERR(tdb_pipeline_set_option(p, 1, TDB_WEBP_QUALITY, &q, sizeof(q), E),
                TDB_ERR_INVALID_ARGUMENT);
      CHECK_MSG_HAS(lf->name);
    }
    tdb_pipeline_free(p);

    uint8_t b[128];
    size_t n = hex_decode(lf->serialized, b, sizeof b);
    tdb_pipeline_t *d = SENT_PIPE;
    CHECK_OK(tdb_pipeline_deserialize(b, n, FORMAT_VERSION, &d, E));
    CHECK(d != SENT_PIPE);
    uint8_t out[128];
    size_t m = 0;
    CHECK_OK(tdb_pipeline_serialize(d, out, sizeof out, &m, E));
    CHECK(m == n && memcmp(out, b, n) == 0);
    tdb_pipeline_free(d);
  }
  /* Only the internal AES filter (11) is refused by add_filter. */
  tdb_pipeline_t *p = PIPE_EMPTY();
  CHECK_ERR(tdb_pipeline_add_filter(p, 11, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("AES");
  tdb_pipeline_free(p);
  /* A filter on a datatype TileDB's schema refuses: refused at filter time. */
  tdb_pipeline_t *dd = PIPE(TDB_FILTER_DOUBLE_DELTA);
  double vals[4] = {1.0, 2.0, 3.0, 4.0};
  tdb_tile_t *tile = NULL, *out = SENT_TILE;
  CHECK_OK(tdb_tile_create(TDB_FLOAT64, 8, vals, sizeof vals, &tile, E));
  CHECK_ERR(tdb_pipeline_filter(dd, tile, &out, E), TDB_ERR_UNSUPPORTED);
  CHECK_MSG_HAS("FLOAT64");
  CHECK(out == SENT_TILE);
  uint8_t int64 = TDB_INT64;
  CHECK_OK(tdb_pipeline_set_option(dd, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, &int64, sizeof(int64), E));
  CHECK_OK(tdb_pipeline_filter(dd, tile, &out, E));
  tdb_tile_free(out);
  tdb_tile_free(tile);
  tdb_pipeline_free(dd);
}

static void test_buffer_too_small(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_GZIP, TDB_FILTER_CHECKSUM_MD5); /* 23 bytes */
  uint8_t buf[64];
  const size_t caps[] = {0, 1, 8, 22};
  for (size_t i = 0; i < sizeof caps / sizeof caps[0]; i++) {
    memset(buf, 0xAA, sizeof buf);
    size_t size = 0;
    CHECK_ERR(tdb_pipeline_serialize(p, buf, caps[i], &size, E), TDB_ERR_BUFFER_TOO_SMALL);
    CHECK(size == 23);
    for (size_t k = 0; k < sizeof buf; k++) CHECK(buf[k] == 0xAA);
  }
  size_t size = 0;
  CHECK_ERR(tdb_pipeline_serialize(p, NULL, 0, &size, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(size == 23);
  size = 0;
  CHECK_ERR(tdb_pipeline_serialize(p, NULL, 100, &size, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(size == 23);
  size = 0;
  CHECK(tdb_pipeline_serialize(p, buf, 22, &size, NULL) == TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(size == 23);
  CHECK_OK(tdb_pipeline_serialize(p, buf, 23, &size, E));
  CHECK(size == 23);
  tdb_pipeline_free(p);
}

static void test_deserialize_corrupt(void) {
  uint8_t b[128];
  size_t n = hex_decode(
      "00000100 05000000 09 00000000 02 05000000 02 ffffffff 0c 00000000"
      "01 05000000 01 09000000 0d 00000000",
      b, sizeof b);
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_deserialize(b, n, FORMAT_VERSION, &p, E));
  tdb_pipeline_free(p);
  /* every strict prefix is truncated */
  for (size_t k = 0; k < n; k++) {
    tdb_pipeline_t *q = SENT_PIPE;
    CHECK_ERR(tdb_pipeline_deserialize(b, k, FORMAT_VERSION, &q, E), TDB_ERR_CORRUPT_DATA);
    CHECK(q == SENT_PIPE);
  }
  /* a huge filter count must not allocate or read past the end */
  const char *bad[] = {
      "00000100 ffffffff",
      "00000100 ffffffff 00 00000000",
      "00000100 00000080 02 05000000 02 ffffffff",
      "00000100 01000000 02 ffffffff 02 ffffffff", /* options length past the end */
      "00000100 01000000 02 05000000 02 ffff",     /* options cut short */
      "00000100 02000000 02 05000000 02 ffffffff", /* second filter missing */
      /* options length that does not match the filter's fixed layout (TileDB
       * would mis-parse the rest of the pipeline, §3.2) */
      "00000100 01000000 00 04000000 00000000",
      "00000100 01000000 01 06000000 01 ffffffff 00",
      "00000100 01000000 09 01000000 00",
      "00000100 01000000 0c 04000000 00000000",
      /* bytes after the pipeline: deserialize takes exactly `size` bytes */
      "00000100 00000000 00",
      "00000100 01000000 02 05000000 02 ffffffff 00000000",
  };
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    size_t m = hex_decode(bad[i], b, sizeof b);
    tdb_pipeline_t *q = SENT_PIPE;
    CHECK_ERR(tdb_pipeline_deserialize(b, m, FORMAT_VERSION, &q, E), TDB_ERR_CORRUPT_DATA);
    CHECK(q == SENT_PIPE);
  }
}

/* ---- corrupt filtered tiles ---- */

static void expect_unfilter(const tdb_pipeline_t *p, const uint8_t *b, size_t n,
                            tdb_status_t want, int line) {
  tdb_tile_t *t = SENT_TILE;
  check_err_ = NULL;
  int st = (int)tdb_pipeline_unfilter(p, b, n, TDB_UINT8, 1, &t, E);
  if (st != (int)want) fprintf(stderr, "(from line %d, size %zu)\n", line, n);
  check_status_(st, (int)want, __FILE__, line, "tdb_pipeline_unfilter");
  CHECK(t == SENT_TILE);
}
#define EXPECT_UNFILTER(p, b, n, want) expect_unfilter((p), (b), (n), (want), __LINE__)

static void test_truncated_tiles(void) {
  enum { N = 50000 };
  int32_t *v = (int32_t *)xmalloc(N * 4);
  for (int i = 0; i < N; i++) v[i] = i % 1000;
  tdb_pipeline_t *pipes[4];
  pipes[0] = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_ZSTD);
  pipes[1] = PIPE_EMPTY();
  pipes[2] = PIPE(TDB_FILTER_CHECKSUM_MD5, TDB_FILTER_GZIP);
  pipes[3] = PIPE(TDB_FILTER_BITSHUFFLE, TDB_FILTER_LZ4);
  for (int pi = 0; pi < 4; pi++) {
    size_t fn = 0;
    uint8_t *f = filter_alloc(pipes[pi], TDB_INT32, 4, v, N * 4, &fn);
    for (size_t k = 0; k < fn; k += (k < 200 || fn - k < 200) ? 1 : 1009) {
      EXPECT_UNFILTER(pipes[pi], f, k, TDB_ERR_CORRUPT_DATA);
      uint64_t ts = 99;
      CHECK_ERR(tdb_filtered_tile_size(f, k, &ts, E), TDB_ERR_CORRUPT_DATA);
      CHECK(ts == 99);
    }
    free(f);
  }
  /* unfilter takes exactly one tile: trailing bytes are corrupt data */
  {
    size_t fn = 0;
    uint8_t *f = filter_alloc(pipes[0], TDB_INT32, 4, v, 1000, &fn);
    uint8_t *g = (uint8_t *)xmalloc(fn + 1);
    memcpy(g, f, fn);
    g[fn] = 0;
    EXPECT_UNFILTER(pipes[0], g, fn + 1, TDB_ERR_CORRUPT_DATA);
    uint64_t ts = 0;
    CHECK_OK(tdb_filtered_tile_size(g, fn + 1, &ts, E));
    CHECK(ts == fn);
    free(g);
    free(f);
  }
  /* huge chunk counts must not allocate or loop */
  uint8_t b[64];
  memset(b, 0, sizeof b);
  const uint64_t counts[] = {1, 2, 0xFFFFFFFFull, (uint64_t)1 << 62, ~(uint64_t)0};
  for (size_t i = 0; i < sizeof counts / sizeof counts[0]; i++) {
    wr_u64(b, counts[i]);
    EXPECT_UNFILTER(pipes[1], b, 8, TDB_ERR_CORRUPT_DATA);
    if (counts[i] == 1) {
      /* 20 zero bytes with count 1: a valid tile of one empty chunk */
      tdb_tile_t *t = NULL;
      CHECK_OK(tdb_pipeline_unfilter(pipes[1], b, 20, TDB_UINT8, 1, &t, E));
      tdb_tile_free(t);
    } else {
      EXPECT_UNFILTER(pipes[1], b, 20, TDB_ERR_CORRUPT_DATA);
    }
    uint64_t ts = 0;
    CHECK_ERR(tdb_filtered_tile_size(b, 8, &ts, E), TDB_ERR_CORRUPT_DATA);
  }
  /* one chunk whose lengths point past the end */
  size_t n = hex_decode("0100000000000000 04000000 ffffffff 00000000 01020304", b, sizeof b);
  EXPECT_UNFILTER(pipes[1], b, n, TDB_ERR_CORRUPT_DATA);
  n = hex_decode("0100000000000000 04000000 04000000 ffffffff 01020304", b, sizeof b);
  EXPECT_UNFILTER(pipes[1], b, n, TDB_ERR_CORRUPT_DATA);
  uint64_t ts = 0;
  CHECK_ERR(tdb_filtered_tile_size(b, n, &ts, E), TDB_ERR_CORRUPT_DATA);
  for (int pi = 0; pi < 4; pi++) tdb_pipeline_free(pipes[pi]);
  free(v);
}

static void test_corrupt_tiles(void) {
  uint8_t b[256];
  size_t n;
  tdb_pipeline_t *none = PIPE_EMPTY();
  tdb_pipeline_t *bys = PIPE(TDB_FILTER_BYTESHUFFLE);
  tdb_pipeline_t *bis = PIPE(TDB_FILTER_BITSHUFFLE);
  tdb_pipeline_t *gz = PIPE(TDB_FILTER_GZIP);
  tdb_pipeline_t *zs = PIPE(TDB_FILTER_ZSTD);
  tdb_pipeline_t *lz = PIPE(TDB_FILTER_LZ4);
  tdb_pipeline_t *bz = PIPE(TDB_FILTER_BZIP2);
  tdb_pipeline_t *md5 = PIPE(TDB_FILTER_CHECKSUM_MD5);

  /* chunk produces more bytes than its original_length */
  n = hex_decode("0100000000000000 04000000 08000000 00000000 0102030405060708", b, sizeof b);
  EXPECT_UNFILTER(none, b, n, TDB_ERR_CORRUPT_DATA);

  /* BYTESHUFFLE: missing metadata, wrong part count, lengths beyond the data */
  n = hex_decode("0100000000000000 08000000 08000000 00000000 0102030405060708", b, sizeof b);
  EXPECT_UNFILTER(bys, b, n, TDB_ERR_CORRUPT_DATA);
  n = hex_decode("0100000000000000 08000000 08000000 04000000 01000000 0102030405060708", b,
                 sizeof b);
  EXPECT_UNFILTER(bys, b, n, TDB_ERR_CORRUPT_DATA);
  n = hex_decode(
      "0100000000000000 08000000 08000000 08000000 01000000 64000000 0102030405060708", b,
      sizeof b);
  EXPECT_UNFILTER(bys, b, n, TDB_ERR_CORRUPT_DATA);
  n = hex_decode(
      "0100000000000000 08000000 08000000 08000000 ffffffff 08000000 0102030405060708", b,
      sizeof b);
  EXPECT_UNFILTER(bys, b, n, TDB_ERR_CORRUPT_DATA);

  /* BITSHUFFLE: sub-part lengths beyond the data */
  n = hex_decode(
      "0100000000000000 08000000 08000000 08000000 01000000 10000000 0102030405060708", b,
      sizeof b);
  EXPECT_UNFILTER(bis, b, n, TDB_ERR_CORRUPT_DATA);

  /* GZIP: valid tile of [1,2,3] (docs/FORMAT.md-style), then damaged variants */
  static const char *gz_ok =
      "0100000000000000 03000000 0b000000 10000000 00000000 01000000 03000000 0b000000 "
      "789c6364620600000d0007";
  n = hex_decode(gz_ok, b, sizeof b);
  {
    tdb_tile_t *t = NULL;
    CHECK_OK(tdb_pipeline_unfilter(gz, b, n, TDB_UINT8, 1, &t, E));
    tdb_tile_free(t);
  }
  /* flip bit 4 of each byte of the zlib stream: header check, adler32, or
   * (byte 5) a stream that no longer ends / decodes too long. Byte 6 is
   * skipped: that bit is deflate padding after the last block. */
  for (size_t k = 0; k < 11; k++) {
    if (k == 6) continue;
    b[n - 11 + k] ^= 0x10;
    EXPECT_UNFILTER(gz, b, n, TDB_ERR_CORRUPT_DATA);
    b[n - 11 + k] ^= 0x10;
  }
  /* metadata: uncompressed length disagrees, compressed length too long,
   * absurd part counts */
  const size_t md = 8 + 12;
  wr_u32(b + md + 8, 4);
  EXPECT_UNFILTER(gz, b, n, TDB_ERR_CORRUPT_DATA);
  wr_u32(b + md + 8, 3);
  wr_u32(b + md + 12, 12);
  EXPECT_UNFILTER(gz, b, n, TDB_ERR_CORRUPT_DATA);
  wr_u32(b + md + 12, 11);
  wr_u32(b + md + 4, 0xFFFFFFFFu);
  EXPECT_UNFILTER(gz, b, n, TDB_ERR_CORRUPT_DATA);
  wr_u32(b + md + 4, 1);
  wr_u32(b + md, 0x7FFFFFFFu);
  EXPECT_UNFILTER(gz, b, n, TDB_ERR_CORRUPT_DATA);
  wr_u32(b + md, 0);
  /* a GZIP tile unfiltered by the wrong compressors */
  EXPECT_UNFILTER(zs, b, n, TDB_ERR_CORRUPT_DATA);
  EXPECT_UNFILTER(bz, b, n, TDB_ERR_CORRUPT_DATA);
  EXPECT_UNFILTER(md5, b, n, TDB_ERR_CORRUPT_DATA);

  /* BZIP2: flips in the stream header, block header / block CRC and the
   * end-of-stream marker / combined CRC are caught. (Not every bit of a
   * bzip2 stream is checked: some flips in the coding tables decode to the
   * same data with libbz2 1.0.8 too.) */
  {
    uint8_t data[5000];
    for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 / 13);
    size_t fn = 0;
    uint8_t *f = filter_alloc(bz, TDB_INT32, 4, data, sizeof data, &fn);
    const size_t s0 = 8 + 12 + 16; /* the bzip2 stream starts here */
    for (size_t k = s0; k + 1 < fn; k++) {
      /* the last byte may hold unchecked padding bits */
      if (!(k < s0 + 14 || k >= fn - 10)) continue;
      f[k] ^= 0x01;
      tdb_tile_t *t = SENT_TILE;
      check_err_ = NULL;
      int st = (int)tdb_pipeline_unfilter(bz, f, fn, TDB_INT32, 4, &t, E);
      check_status_(st, TDB_ERR_CORRUPT_DATA, __FILE__, __LINE__, "bzip2 flip");
      f[k] ^= 0x01;
      CHECK(t == SENT_TILE);
    }
    /* ZSTD: bad magic number */
    free(f);
    f = filter_alloc(zs, TDB_INT32, 4, data, sizeof data, &fn);
    f[8 + 12 + 16] ^= 0xFF;
    EXPECT_UNFILTER(zs, f, fn, TDB_ERR_CORRUPT_DATA);
    free(f);
    /* LZ4: the block decodes to fewer bytes than recorded */
    f = filter_alloc(lz, TDB_INT32, 4, data, sizeof data, &fn);
    wr_u32(f + 8 + 12 + 8, 6000);
    wr_u32(f + 8, 6000);
    EXPECT_UNFILTER(lz, f, fn, TDB_ERR_CORRUPT_DATA);
    free(f);
  }

  tdb_pipeline_free(none);
  tdb_pipeline_free(bys);
  tdb_pipeline_free(bis);
  tdb_pipeline_free(gz);
  tdb_pipeline_free(zs);
  tdb_pipeline_free(lz);
  tdb_pipeline_free(bz);
  tdb_pipeline_free(md5);
}

static void test_mutations(void) {
  /* Flip every byte of small filtered tiles: unfiltering must never crash and
   * must report OK, CORRUPT_DATA or CHECKSUM_MISMATCH. With a checksum as the
   * last filter, a change anywhere but in an original_length field is never
   * accepted. */
  struct {
    uint32_t types[4];
    size_t n;
    int checksum_last;
  } pipes[] = {
      {{TDB_FILTER_BYTESHUFFLE, TDB_FILTER_GZIP}, 2, 0},
      {{TDB_FILTER_BITSHUFFLE, TDB_FILTER_ZSTD}, 2, 0},
      {{TDB_FILTER_LZ4}, 1, 0},
      {{TDB_FILTER_BZIP2, TDB_FILTER_CHECKSUM_SHA256}, 2, 1},
      {{TDB_FILTER_BYTESHUFFLE, TDB_FILTER_CHECKSUM_MD5}, 2, 1},
      {{TDB_FILTER_GZIP, TDB_FILTER_BITSHUFFLE, TDB_FILTER_CHECKSUM_MD5}, 3, 1},
  };
  int32_t v[300];
  for (int i = 0; i < 300; i++) v[i] = i * i;
  for (size_t pi = 0; pi < sizeof pipes / sizeof pipes[0]; pi++) {
    tdb_pipeline_t *p = make_pipeline(pipes[pi].types, pipes[pi].n);
    size_t fn = 0;
    uint8_t *f = filter_alloc(p, TDB_INT32, 4, v, sizeof v, &fn);
    for (size_t k = 0; k < fn; k++) {
      for (int flip = 0; flip < 2; flip++) {
        uint8_t mask = flip ? 0xFF : 0x01;
        f[k] ^= mask;
        tdb_tile_t *t = NULL;
        tdb_error_t *err = NULL;
        tdb_status_t st = tdb_pipeline_unfilter(p, f, fn, TDB_INT32, 4, &t, &err);
        CHECK_MSG(st == TDB_OK || st == TDB_ERR_CORRUPT_DATA ||
                      st == TDB_ERR_CHECKSUM_MISMATCH,
                  "pipeline %zu, byte %zu ^ %02x: status %d (%s)", pi, k, mask, (int)st,
                  err ? tdb_error_message(err) : "");
        int in_orig_field = (k >= 8 && k < 12);
        if (pipes[pi].checksum_last && !in_orig_field)
          CHECK_MSG(st != TDB_OK, "pipeline %zu: flipped byte %zu accepted", pi, k);
        CHECK((st == TDB_OK) == (err == NULL));
        CHECK((st == TDB_OK) == (t != NULL));
        tdb_tile_free(t);
        tdb_error_free(err);
        f[k] ^= mask;
      }
    }
    free(f);
    tdb_pipeline_free(p);
  }
}

static void test_checksum_mismatch(void) {
  enum { N = 50000 };
  int32_t *v = (int32_t *)xmalloc(N * 4);
  for (int i = 0; i < N; i++) v[i] = i;
  const struct {
    uint32_t type;
    const char *name;
    const char *alt; /* accepted alternative spelling */
  } sums[] = {{TDB_FILTER_CHECKSUM_MD5, "MD5", "MD5"},
              {TDB_FILTER_CHECKSUM_SHA256, "SHA256", "SHA-256"}};
  for (int s = 0; s < 2; s++) {
    tdb_pipeline_t *p = make_pipeline(&sums[s].type, 1);
    size_t fn = 0;
    uint8_t *f = filter_alloc(p, TDB_INT32, 4, v, N * 4, &fn);
    chunk_t c[8];
    CHECK(parse_chunks(f, fn, c, 8) == 4);

    /* a data byte of chunk 2 */
    size_t pos = c[2].data_off + 100;
    f[pos] ^= 0x40;
    EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
    CHECK_MSG_HAS("chunk");
    CHECK_MSG(check_contains_ci_(check_last_msg_, sums[s].name) ||
                  check_contains_ci_(check_last_msg_, sums[s].alt),
              "message \"%s\" does not name %s", check_last_msg_, sums[s].name);

    /* skip_checksum_validation: accepted, data comes back as stored */
    CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, true, E));
    size_t un = 0;
    uint8_t *u = unfilter_alloc(p, f, fn, TDB_INT32, 4, &un);
    CHECK(un == N * 4);
    CHECK(u[pos - c[2].data_off + 2 * 65536] == (((uint8_t *)v)[2 * 65536 + 100] ^ 0x40));
    free(u);
    CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, false, E));
    EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
    f[pos] ^= 0x40;

    /* a digest byte of the last chunk */
    pos = c[3].md_off + 16 + 3;
    f[pos] ^= 0x01;
    EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
    CHECK_MSG_HAS("chunk");
    CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, true, E));
    u = unfilter_alloc(p, f, fn, TDB_INT32, 4, &un);
    CHECK_MEM(u, un, v, N * 4);
    free(u);
    CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, false, E));
    f[pos] ^= 0x01;

    /* first chunk, first byte */
    f[c[0].data_off] ^= 0x80;
    EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
    f[c[0].data_off] ^= 0x80;

    /* intact again */
    size_t un2 = 0;
    u = unfilter_alloc(p, f, fn, TDB_INT32, 4, &un2);
    CHECK_MEM(u, un2, v, N * 4);
    free(u);
    free(f);
    tdb_pipeline_free(p);
  }

  /* [GZIP, MD5]: MD5 covers the compressed bytes; with validation skipped the
   * damage reaches zlib */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_GZIP, TDB_FILTER_CHECKSUM_MD5);
  size_t fn = 0;
  uint8_t *f = filter_alloc(p, TDB_INT32, 4, v, N * 4, &fn);
  chunk_t c[8];
  CHECK(parse_chunks(f, fn, c, 8) == 4);
  f[c[1].data_off + c[1].filtered / 2] ^= 0x08;
  EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
  CHECK_MSG_HAS("MD5");
  CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, true, E));
  EXPECT_UNFILTER(p, f, fn, TDB_ERR_CORRUPT_DATA);
  free(f);
  tdb_pipeline_free(p);

  /* [BYTESHUFFLE, MD5]: the forwarded BYTESHUFFLE metadata is covered too */
  p = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_CHECKSUM_MD5);
  f = filter_alloc(p, TDB_INT32, 4, v, 4000, &fn);
  CHECK(parse_chunks(f, fn, c, 8) == 1);
  CHECK(c[0].md_len == 64);
  f[c[0].md_off + 56] ^= 0x02; /* BYTESHUFFLE part count */
  EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
  f[c[0].md_off + 56] ^= 0x02;
  free(f);
  tdb_pipeline_free(p);

  /* [MD5, SHA256]: SHA256 is checked first on read */
  p = PIPE(TDB_FILTER_CHECKSUM_MD5, TDB_FILTER_CHECKSUM_SHA256);
  f = filter_alloc(p, TDB_INT32, 4, v, 4000, &fn);
  f[fn - 1] ^= 0x01;
  EXPECT_UNFILTER(p, f, fn, TDB_ERR_CHECKSUM_MISMATCH);
  CHECK_MSG(check_contains_ci_(check_last_msg_, "SHA256") ||
                check_contains_ci_(check_last_msg_, "SHA-256"),
            "message \"%s\" does not name SHA256", check_last_msg_);
  free(f);
  tdb_pipeline_free(p);
  free(v);
}

static void test_error_object(void) {
  tdb_pipeline_t *p = PIPE_EMPTY();
  tdb_error_t *err = NULL;
  CHECK(tdb_pipeline_add_filter(p, 99, &err) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(err != NULL);
  CHECK(tdb_error_status(err) == TDB_ERR_INVALID_ARGUMENT);
  const char *m1 = tdb_error_message(err);
  const char *m2 = tdb_error_message(err);
  CHECK(m1 != NULL && m1[0] != '\0');
  CHECK(strcmp(m1, m2) == 0);
  /* a second error does not disturb the first */
  tdb_error_t *err2 = NULL;
  size_t need = 0;
  CHECK(tdb_pipeline_serialize(p, NULL, 0, &need, &err2) == TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(need == 8);
  CHECK(err2 != NULL && err2 != err);
  CHECK(tdb_error_status(err2) == TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(tdb_error_status(err) == TDB_ERR_INVALID_ARGUMENT);
  CHECK(strcmp(tdb_error_message(err), m2) == 0);
  tdb_error_free(err);
  tdb_error_free(err2);
  /* success leaves a NULL error slot NULL */
  err = NULL;
  CHECK(tdb_pipeline_add_filter(p, TDB_FILTER_NONE, &err) == TDB_OK);
  CHECK(err == NULL);
  tdb_pipeline_free(p);
}

int main(void) {
  test_null_arguments();
  test_null_error_outparam();
  test_invalid_values();
  test_bad_options();
  test_option_value_size();
  test_unknown_filter_types();
  test_all_filters_accepted();
  test_buffer_too_small();
  test_deserialize_corrupt();
  test_truncated_tiles();
  test_corrupt_tiles();
  test_mutations();
  test_checksum_mismatch();
  test_error_object();
  CHECK_DONE("test_errors");
}
