/* The filters beyond compressors, shuffles and checksums, through the public header: exact
 * TileDB 2.30 bytes (docs/FORMAT.md §9.2), their options, round trips on every datatype they accept,
 * and the cases where TileDB writes unreadable tiles (tdbfilter writes readable ones or refuses). */
#include "helpers.h"

static void check_exact(tdb_pipeline_t *p, uint32_t dt, uint64_t cs, const void *data, size_t n,
                        const char *hex) {
  size_t fn = 0;
  uint8_t *f = roundtrip(p, dt, cs, data, n, &fn);
  CHECK_BYTES_HEX(f, fn, hex);
  free(f);
}

static void set_u32(tdb_pipeline_t *p, uint32_t i, uint32_t option, uint32_t v) {
  CHECK_OK(tdb_pipeline_set_option(p, i, option, &v, sizeof(v), E));
  uint32_t got = 0;
  CHECK_OK(tdb_pipeline_option(p, i, option, &got, sizeof(got), E));
  CHECK(got == v);
}

static void test_tiledb_vectors(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_DOUBLE_DELTA);
  const int64_t dd[] = {10, 13, 16, 20, 25, 31, 30};
  check_exact(p, TDB_INT64, 8, dd, sizeof dd,
              "0100000000000000 38000000 21000000 10000000 | 00000000 01000000 38000000 21000000 "
              "| 03 0700000000000000 0a00000000000000 0d00000000000000 0000000000f01101");
  tdb_pipeline_free(p);

  p = PIPE(TDB_FILTER_BIT_WIDTH_REDUCTION);
  set_u32(p, 0, TDB_BIT_WIDTH_MAX_WINDOW, 16);
  const int32_t bwr[] = {1000, 1001, 1005, 1010, 70000, 70001};
  check_exact(p, TDB_INT32, 4, bwr, sizeof bwr,
              "0100000000000000 18000000 06000000 1a000000 | 18000000 02000000 e8030000 08 "
              "10000000 70110100 08 08000000 | 0001050a 0001");
  tdb_pipeline_free(p);

  p = PIPE(TDB_FILTER_POSITIVE_DELTA);
  set_u32(p, 0, TDB_POSITIVE_DELTA_MAX_WINDOW, 4);
  const uint16_t pd[] = {5, 7, 7, 9, 20};
  check_exact(p, TDB_UINT16, 2, pd, sizeof pd,
              "0100000000000000 0a000000 0a000000 16000000 | 03000000 0500 04000000 0700 04000000 "
              "1400 02000000 | 0000 0200 0000 0200 0000");
  tdb_pipeline_free(p);

  p = PIPE(TDB_FILTER_DELTA);
  const int16_t delta[] = {5, 3, 300, -2};
  check_exact(p, TDB_INT16, 2, delta, sizeof delta,
              "0100000000000000 08000000 10000000 10000000 | 00000000 01000000 08000000 10000000 "
              "| 0400000000000000 0500 feff 2901 d2fe");
  tdb_pipeline_free(p);

  p = PIPE(TDB_FILTER_RLE);
  const int16_t rle[] = {7, 7, 7, 9, 9, 7};
  check_exact(p, TDB_INT16, 2, rle, sizeof rle,
              "0100000000000000 0c000000 0c000000 10000000 | 00000000 01000000 0c000000 0c000000 "
              "| 0700 0003 0900 0002 0700 0001");
  tdb_pipeline_free(p);

  p = PIPE(TDB_FILTER_XOR);
  const int16_t x[] = {1, 3, 7, 15};
  check_exact(p, TDB_INT16, 2, x, sizeof x,
              "0100000000000000 08000000 08000000 08000000 | 01000000 08000000 | 0100 0200 0400 0800");
  tdb_pipeline_free(p);

  p = PIPE(TDB_FILTER_SCALE_FLOAT);
  double factor = 0.5, offset = 1.0;
  uint64_t width = 1;
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_FACTOR, &factor, sizeof(factor), E));
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_OFFSET, &offset, sizeof(offset), E));
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_BYTEWIDTH, &width, sizeof(width), E));
  const float sf[] = {1.0f, 1.5f, 2.2f, 0.0f};
  size_t fn = 0;
  uint8_t *f = filter_alloc(p, TDB_FLOAT32, 4, sf, sizeof sf, &fn);
  CHECK_BYTES_HEX(f, fn, "0100000000000000 10000000 04000000 08000000 | 01000000 04000000 | 00 01 02 fe");
  /* Lossy: the read-back is the scaled value. */
  size_t bn = 0;
  uint8_t *b = unfilter_alloc(p, f, fn, TDB_FLOAT32, 4, &bn);
  CHECK(bn == sizeof sf);
  float back[4];
  memcpy(back, b, sizeof back);
  CHECK(back[0] == 1.0f && back[1] == 1.5f && back[2] == 2.0f && back[3] == 0.0f);
  free(b);
  free(f);
  tdb_pipeline_free(p);
}

static void test_options(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_SCALE_FLOAT, TDB_FILTER_BIT_WIDTH_REDUCTION,
                           TDB_FILTER_POSITIVE_DELTA, TDB_FILTER_WEBP, TDB_FILTER_DELTA);
  uint64_t bad_width = 3;
  CHECK_ERR(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_BYTEWIDTH, &bad_width, sizeof(bad_width), E),
            TDB_ERR_INVALID_ARGUMENT);
  double zero = 0.0, inf = 1.0 / 0.0;
  CHECK_ERR(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_FACTOR, &zero, sizeof(zero), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_OFFSET, &inf, sizeof(inf), E),
            TDB_ERR_INVALID_ARGUMENT);
  uint32_t w0 = 0;
  CHECK_ERR(tdb_pipeline_set_option(p, 1, TDB_BIT_WIDTH_MAX_WINDOW, &w0, sizeof(w0), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_option(p, 2, TDB_BIT_WIDTH_MAX_WINDOW, &w0, sizeof(w0), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("POSITIVE_DELTA");
  float q = 101.0f;
  CHECK_ERR(tdb_pipeline_set_option(p, 3, TDB_WEBP_QUALITY, &q, sizeof(q), E), TDB_ERR_INVALID_ARGUMENT);
  uint8_t fmt = 5, lossless = 2, dt = 200;
  CHECK_ERR(tdb_pipeline_set_option(p, 3, TDB_WEBP_INPUT_FORMAT, &fmt, sizeof(fmt), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_option(p, 3, TDB_WEBP_LOSSLESS, &lossless, sizeof(lossless), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_option(p, 4, TDB_COMPRESSION_REINTERPRET_DATATYPE, &dt, sizeof(dt), E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_set_webp_extents(p, 0, 32, 96, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_pipeline_set_webp_extents(p, 3, 32, 96, E));
  /* Defaults and serialization: SCALE_FLOAT(1,0,8), BWR 256, PD 1024, WEBP(100, 0, 0, 32, 96),
   * DELTA with reinterpret ANY. */
  size_t n = 0;
  uint8_t *s = serialize_alloc(p, &n);
  CHECK_BYTES_HEX(s, n,
                  "00000100 05000000 0f 18000000 000000000000f03f 0000000000000000 0800000000000000 "
                  "07 04000000 00010000 0a 04000000 00040000 12 0c000000 0000c842 00 00 2000 6000 "
                  "0000 13 06000000 08 ffffffff 11");
  free(s);
  tdb_pipeline_free(p);
}

static void test_webp(void) {
  /* 16 rows x 48 bytes (16 RGB pixels), lossless: exact round trip. */
  enum { Y = 16, X = 48 };
  uint8_t img[Y * X];
  for (size_t i = 0; i < sizeof img; i++) img[i] = (uint8_t)((i * 37) ^ (i / 48));
  tdb_pipeline_t *p = PIPE(TDB_FILTER_WEBP);
  uint8_t fmt = 1, lossless = 1;
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_WEBP_INPUT_FORMAT, &fmt, sizeof(fmt), E));
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_WEBP_LOSSLESS, &lossless, sizeof(lossless), E));
  CHECK_OK(tdb_pipeline_set_webp_extents(p, 0, Y, X, E));
  size_t fn = 0;
  uint8_t *f = roundtrip(p, TDB_UINT8, 1, img, sizeof img, &fn);
  chunk_t c[2];
  CHECK(parse_chunks(f, fn, c, 2) == 1);
  CHECK(memcmp(f + c[0].data_off, "RIFF", 4) == 0);
  free(f);
  /* WEBP on another type, or not first, is refused. */
  tdb_tile_t *t = NULL, *out = NULL;
  CHECK_OK(tdb_tile_create(TDB_INT16, 2, img, sizeof img, &t, E));
  CHECK_ERR(tdb_pipeline_filter(p, t, &out, E), TDB_ERR_UNSUPPORTED);
  CHECK_MSG_HAS("UINT8");
  tdb_tile_free(t);
  tdb_pipeline_t *q = PIPE(TDB_FILTER_NONE, TDB_FILTER_WEBP);
  CHECK_OK(tdb_tile_create(TDB_UINT8, 1, img, sizeof img, &t, E));
  CHECK_ERR(tdb_pipeline_filter(q, t, &out, E), TDB_ERR_UNSUPPORTED);
  CHECK_MSG_HAS("first");
  tdb_tile_free(t);
  tdb_pipeline_free(q);
  tdb_pipeline_free(p);
}

static void test_roundtrips(void) {
  static const uint32_t ints[] = {TDB_INT8,  TDB_UINT8,  TDB_INT16, TDB_UINT16,
                                  TDB_INT32, TDB_UINT32, TDB_INT64, TDB_UINT64,
                                  TDB_DATETIME_NS, TDB_TIME_MS, TDB_BOOL, TDB_BLOB};
  static const uint32_t filters[] = {TDB_FILTER_RLE, TDB_FILTER_DOUBLE_DELTA,
                                     TDB_FILTER_DELTA, TDB_FILTER_BIT_WIDTH_REDUCTION,
                                     TDB_FILTER_POSITIVE_DELTA, TDB_FILTER_XOR};
  static uint8_t data[200000];
  const size_t sizes[] = {8, 64, 1000, 65536, 65544, 200000};
  for (size_t f = 0; f < sizeof filters / sizeof filters[0]; f++) {
    tdb_pipeline_t *p = make_pipeline(&filters[f], 1);
    for (size_t t = 0; t < sizeof ints / sizeof ints[0]; t++) {
      uint32_t size = ints[t] == TDB_INT8 || ints[t] == TDB_UINT8 || ints[t] == TDB_BOOL ||
                              ints[t] == TDB_BLOB
                          ? 1
                          : ints[t] == TDB_INT16 || ints[t] == TDB_UINT16 ? 2
                          : ints[t] == TDB_INT32 || ints[t] == TDB_UINT32 ? 4
                                                                           : 8;
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        /* Sorted values (POSITIVE_DELTA requires non-decreasing data). */
        for (size_t i = 0; i < sizes[s]; i += size) {
          uint64_t v = (uint64_t)(i / size) * 3 + ((i / size) % 4 == 0);
          /* Small types: slow enough growth to stay non-decreasing within range. */
          if (filters[f] == TDB_FILTER_POSITIVE_DELTA && size <= 2) v = (uint64_t)i / 1600;
          memcpy(data + i, &v, size);
        }
        size_t fn = 0;
        uint8_t *out = roundtrip(p, ints[t], size, data, sizes[s], &fn);
        free(out);
      }
    }
    tdb_pipeline_free(p);
  }
  /* Combinations users write. */
  int64_t ts[20000];
  for (size_t i = 0; i < 20000; i++) ts[i] = 1700000000000 + (int64_t)(i * 1000 + i % 7);
  tdb_pipeline_t *combos[] = {
      PIPE(TDB_FILTER_POSITIVE_DELTA, TDB_FILTER_BIT_WIDTH_REDUCTION, TDB_FILTER_ZSTD),
      PIPE(TDB_FILTER_DOUBLE_DELTA, TDB_FILTER_GZIP),
      PIPE(TDB_FILTER_DELTA, TDB_FILTER_BYTESHUFFLE, TDB_FILTER_ZSTD),
      PIPE(TDB_FILTER_XOR, TDB_FILTER_BZIP2),
      PIPE(TDB_FILTER_CHECKSUM_SHA256, TDB_FILTER_RLE, TDB_FILTER_LZ4, TDB_FILTER_CHECKSUM_MD5)};
  for (size_t c = 0; c < sizeof combos / sizeof combos[0]; c++) {
    size_t fn = 0;
    uint8_t *out = roundtrip(combos[c], TDB_INT64, 8, ts, sizeof ts, &fn);
    CHECK(fn < sizeof ts);
    free(out);
    tdb_pipeline_free(combos[c]);
  }
  /* SCALE_FLOAT, XOR, ZSTD on float64. */
  double sensor[10000];
  for (size_t i = 0; i < 10000; i++) sensor[i] = 20.0 + (double)(i % 100) * 0.01;
  tdb_pipeline_t *p = PIPE(TDB_FILTER_SCALE_FLOAT, TDB_FILTER_XOR, TDB_FILTER_ZSTD);
  double factor = 0.01;
  uint64_t width = 4;
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_FACTOR, &factor, sizeof(factor), E));
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_SCALE_FLOAT_BYTEWIDTH, &width, sizeof(width), E));
  size_t fn = 0;
  uint8_t *f = filter_alloc(p, TDB_FLOAT64, 8, sensor, sizeof sensor, &fn);
  size_t bn = 0;
  uint8_t *b = unfilter_alloc(p, f, fn, TDB_FLOAT64, 8, &bn);
  CHECK(bn == sizeof sensor);
  for (size_t i = 0; i < 10000; i++) {
    double v;
    memcpy(&v, b + 8 * i, 8);
    CHECK(v - sensor[i] < 0.006 && sensor[i] - v < 0.006);
  }
  free(b);
  free(f);
  tdb_pipeline_free(p);
}

static void test_refusals(void) {
  /* POSITIVE_DELTA on decreasing data fails at filter time, naming the filter and chunk. */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_POSITIVE_DELTA);
  const int32_t down[] = {5, 4, 3};
  tdb_tile_t *t = NULL, *out = NULL;
  CHECK_OK(tdb_tile_create(TDB_INT32, 4, down, sizeof down, &t, E));
  CHECK_ERR(tdb_pipeline_filter(p, t, &out, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("chunk 0");
  CHECK_MSG_HAS("POSITIVE_DELTA");
  tdb_tile_free(t);
  tdb_pipeline_free(p);
  /* DOUBLE_DELTA overflow of int64. */
  p = PIPE(TDB_FILTER_DOUBLE_DELTA);
  const int64_t big[] = {INT64_MIN, INT64_MAX, 0};
  CHECK_OK(tdb_tile_create(TDB_INT64, 8, big, sizeof big, &t, E));
  CHECK_ERR(tdb_pipeline_filter(p, t, &out, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("DOUBLE_DELTA");
  tdb_tile_free(t);
  tdb_pipeline_free(p);
  /* XOR on a tile that is not a whole number of elements (TileDB drops the tail). */
  p = PIPE(TDB_FILTER_XOR);
  const uint8_t five[5] = {1, 2, 3, 4, 5};
  CHECK_OK(tdb_tile_create(TDB_INT32, 4, five, sizeof five, &t, E));
  CHECK_ERR(tdb_pipeline_filter(p, t, &out, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("XOR");
  tdb_tile_free(t);
  tdb_pipeline_free(p);
  /* BIT_WIDTH_REDUCTION with a window smaller than one element: TileDB crashes; we write a
   * readable tile. */
  p = PIPE(TDB_FILTER_BIT_WIDTH_REDUCTION);
  set_u32(p, 0, TDB_BIT_WIDTH_MAX_WINDOW, 3);
  const int64_t vals[] = {1, 2, 3, 4};
  size_t fn = 0;
  uint8_t *f = roundtrip(p, TDB_INT64, 8, vals, sizeof vals, &fn);
  free(f);
  tdb_pipeline_free(p);
}

int main(void) {
  test_tiledb_vectors();
  test_options();
  test_webp();
  test_roundtrips();
  test_refusals();
  CHECK_DONE("test_filters_more");
}
