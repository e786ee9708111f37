/* Var-size tiles through the public header: tdb_tile_create_var, tdb_tile_offsets,
 * tdb_pipeline_filter_var / unfilter_var, the RLE/DICTIONARY string path (offsets folded into
 * the data, 8-byte empty offsets tile, docs/FORMAT.md §5.8, §7.1), the var chunking heuristic
 * (§4.5) and every error path of the var API. */
#include "helpers.h"

/* Builds offsets for `n` strings. */
static void make_strings(const char **s, size_t n, uint64_t *offsets, char *data, size_t *size) {
  size_t pos = 0;
  for (size_t i = 0; i < n; i++) {
    offsets[i] = pos;
    size_t l = strlen(s[i]);
    memcpy(data + pos, s[i], l);
    pos += l;
  }
  *size = pos;
}

/* Filters a var tile, checks the round trip, returns the filtered tiles' sizes. */
static void var_roundtrip(tdb_pipeline_t *data_p, tdb_pipeline_t *offsets_p, uint32_t dt,
                          const uint64_t *offsets, size_t n, const void *data, size_t size,
                          size_t *off_size, size_t *data_size, uint8_t **data_copy) {
  tdb_tile_t *tile = NULL, *fo = NULL, *fd = NULL, *back = NULL;
  CHECK_OK(tdb_tile_create_var(dt, offsets, n, data, size, &tile, E));
  CHECK_OK(tdb_pipeline_filter_var(data_p, offsets_p, tile, &fo, &fd, E));
  const uint8_t *ob, *db;
  size_t on, dn;
  CHECK_OK(tdb_tile_data(fo, &ob, &on, E));
  CHECK_OK(tdb_tile_data(fd, &db, &dn, E));
  CHECK_OK(tdb_pipeline_unfilter_var(data_p, offsets_p, ob, on, db, dn, dt, &back, E));
  const uint64_t *bo;
  size_t bn;
  CHECK_OK(tdb_tile_offsets(back, &bo, &bn, E));
  CHECK(bn == n);
  CHECK(n == 0 || memcmp(bo, offsets, n * 8) == 0);
  const uint8_t *bd;
  size_t bds;
  CHECK_OK(tdb_tile_data(back, &bd, &bds, E));
  CHECK(bds == size);
  CHECK(size == 0 || memcmp(bd, data, size) == 0);
  if (off_size) *off_size = on;
  if (data_size) *data_size = dn;
  if (data_copy) {
    *data_copy = (uint8_t *)xmalloc(dn);
    memcpy(*data_copy, db, dn);
  }
  tdb_tile_free(back);
  tdb_tile_free(fd);
  tdb_tile_free(fo);
  tdb_tile_free(tile);
}

static void test_rle_strings_match_tiledb(void) {
  /* docs/FORMAT.md §9.2: RLE on var STRING_ASCII ["aa","aa","b","ccc","ccc","ccc"]. */
  const char *s[] = {"aa", "aa", "b", "ccc", "ccc", "ccc"};
  uint64_t off[6];
  char data[32];
  size_t size;
  make_strings(s, 6, off, data, &size);
  tdb_pipeline_t *rle = PIPE(TDB_FILTER_RLE), *zstd = PIPE(TDB_FILTER_ZSTD);
  size_t on, dn;
  uint8_t *d;
  var_roundtrip(rle, zstd, TDB_STRING_ASCII, off, 6, data, size, &on, &dn, &d);
  CHECK(on == 8); /* the empty offsets tile marker */
  static const uint8_t want[] = {
      1, 0, 0, 0, 0, 0, 0, 0, 14, 0, 0, 0, 12, 0, 0, 0, 22, 0, 0, 0, /* chunk header */
      0, 0, 0, 0, 1, 0, 0, 0, 14, 0, 0, 0, 12, 0, 0, 0, 48, 0, 0, 0, 1, 1, /* metadata */
      2, 2, 'a', 'a', 1, 1, 'b', 3, 3, 'c', 'c', 'c'};
  CHECK(dn == sizeof want);
  CHECK(memcmp(d, want, sizeof want) == 0);
  free(d);
  tdb_pipeline_free(rle);
  tdb_pipeline_free(zstd);
}

static void test_dictionary_strings_match_tiledb(void) {
  /* docs/FORMAT.md §9.2: DICTIONARY on var STRING_ASCII ["aa","aa","b","ccc","ccc","aa"]. */
  const char *s[] = {"aa", "aa", "b", "ccc", "ccc", "aa"};
  uint64_t off[6];
  char data[32];
  size_t size;
  make_strings(s, 6, off, data, &size);
  tdb_pipeline_t *dict = PIPE(TDB_FILTER_DICTIONARY), *zstd = PIPE(TDB_FILTER_ZSTD);
  size_t on, dn;
  uint8_t *d;
  var_roundtrip(dict, zstd, TDB_STRING_ASCII, off, 6, data, size, &on, &dn, &d);
  CHECK(on == 8);
  static const uint8_t want[] = {
      1, 0, 0, 0, 0, 0, 0, 0, 13, 0, 0, 0, 6, 0, 0, 0, 35, 0, 0, 0,
      0, 0, 0, 0, 1, 0, 0, 0, 13, 0, 0, 0, 6, 0, 0, 0, 48, 0, 0, 0, 1, 1, 9, 0, 0, 0,
      2, 'a', 'a', 1, 'b', 3, 'c', 'c', 'c', 0, 0, 1, 2, 2, 0};
  CHECK(dn == sizeof want);
  CHECK(memcmp(d, want, sizeof want) == 0);
  free(d);
  tdb_pipeline_free(dict);
  tdb_pipeline_free(zstd);
}

static void test_lz4_strings_match_tiledb(void) {
  /* docs/FORMAT.md §9.2: LZ4 on var STRING_ASCII ["ab","","cde"], offsets through [ZSTD]. */
  const char *s[] = {"ab", "", "cde"};
  uint64_t off[3];
  char data[8];
  size_t size;
  make_strings(s, 3, off, data, &size);
  tdb_pipeline_t *lz4 = PIPE(TDB_FILTER_LZ4), *zstd = PIPE(TDB_FILTER_ZSTD);
  tdb_tile_t *tile = NULL, *fo = NULL, *fd = NULL;
  CHECK_OK(tdb_tile_create_var(TDB_STRING_ASCII, off, 3, data, size, &tile, E));
  CHECK_OK(tdb_pipeline_filter_var(lz4, zstd, tile, &fo, &fd, E));
  const uint8_t *ob, *db;
  size_t on, dn;
  CHECK_OK(tdb_tile_data(fo, &ob, &on, E));
  CHECK_OK(tdb_tile_data(fd, &db, &dn, E));
  static const uint8_t want_data[] = {1, 0, 0, 0, 0, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0, 16, 0, 0, 0,
                                      0, 0, 0, 0, 1, 0, 0, 0, 5, 0, 0, 0, 6, 0, 0, 0,
                                      0x50, 'a', 'b', 'c', 'd', 'e'};
  CHECK(dn == sizeof want_data && memcmp(db, want_data, dn) == 0);
  static const uint8_t want_offsets_zstd[] = {
      0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x18, 0xa5, 0x00, 0x00, 0x60, 0x00, 0x00, 0x02, 0x00, 0x02,
      0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x60, 0xe0, 0x01, 0x60, 0x01};
  CHECK(on == 8 + 12 + 16 + sizeof want_offsets_zstd);
  CHECK(memcmp(ob + 36, want_offsets_zstd, sizeof want_offsets_zstd) == 0);
  tdb_tile_free(fd);
  tdb_tile_free(fo);
  tdb_tile_free(tile);
  tdb_pipeline_free(lz4);
  tdb_pipeline_free(zstd);
}

static void test_large_cells_chunking(void) {
  /* §4.5: two 40000-byte cells give chunks [80000, 0] (trailing empty chunk). */
  static uint8_t data[80000];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7);
  uint64_t off[2] = {0, 40000};
  tdb_pipeline_t *zstd = PIPE(TDB_FILTER_ZSTD), *none = PIPE_EMPTY();
  size_t dn;
  uint8_t *d;
  var_roundtrip(none, zstd, TDB_UINT8, off, 2, data, sizeof data, NULL, &dn, &d);
  chunk_t chunks[8];
  size_t nc = parse_chunks(d, dn, chunks, 8);
  CHECK(nc == 2);
  CHECK(chunks[0].orig == 80000);
  CHECK(chunks[1].orig == 0);
  free(d);
  tdb_pipeline_free(zstd);
  tdb_pipeline_free(none);
}

static void test_roundtrips(void) {
  const uint32_t data_filters[] = {TDB_FILTER_NONE, TDB_FILTER_ZSTD, TDB_FILTER_RLE,
                                   TDB_FILTER_DICTIONARY, TDB_FILTER_GZIP, TDB_FILTER_LZ4};
  /* Strings: empty strings, repeats, an all-empty tile, a cell over 64 KiB. */
  static char big[200000];
  static uint64_t off[3000];
  for (size_t f = 0; f < sizeof data_filters / sizeof data_filters[0]; f++) {
    for (uint32_t dt = TDB_STRING_ASCII; dt <= TDB_STRING_UTF8; dt++) {
      tdb_pipeline_t *p = make_pipeline(&data_filters[f], 1);
      tdb_pipeline_t *op = PIPE(TDB_FILTER_ZSTD);
      /* 3000 cells cycling through lengths 0..9 and 20 distinct values. */
      size_t pos = 0;
      for (size_t i = 0; i < 3000; i++) {
        off[i] = pos;
        size_t l = (i * 7) % 10;
        for (size_t k = 0; k < l; k++) big[pos++] = (char)('a' + (i % 20));
      }
      var_roundtrip(p, op, dt, off, 3000, big, pos, NULL, NULL, NULL);
      /* All-empty. */
      uint64_t zeros[5] = {0, 0, 0, 0, 0};
      var_roundtrip(p, op, dt, zeros, 5, big, 0, NULL, NULL, NULL);
      /* One cell over 64 KiB between small ones. */
      memset(big, 'x', sizeof big);
      uint64_t o3[3] = {0, 10, 100010};
      var_roundtrip(p, op, dt, o3, 3, big, 100020, NULL, NULL, NULL);
      tdb_pipeline_free(op);
      tdb_pipeline_free(p);
    }
  }
  /* Var-size numbers with integer filters and custom offsets pipelines. */
  const uint32_t num_filters[] = {TDB_FILTER_DOUBLE_DELTA, TDB_FILTER_DELTA,
                                  TDB_FILTER_BIT_WIDTH_REDUCTION, TDB_FILTER_POSITIVE_DELTA,
                                  TDB_FILTER_XOR, TDB_FILTER_BYTESHUFFLE};
  static int64_t nums[30000];
  for (size_t i = 0; i < 30000; i++) nums[i] = (int64_t)(i * 3 + (i % 2)); /* non-decreasing */
  for (size_t f = 0; f < sizeof num_filters / sizeof num_filters[0]; f++) {
    tdb_pipeline_t *p = make_pipeline(&num_filters[f], 1);
    tdb_pipeline_t *op = PIPE(TDB_FILTER_POSITIVE_DELTA, TDB_FILTER_BIT_WIDTH_REDUCTION,
                              TDB_FILTER_LZ4);
    /* Cells of 1..16 values. */
    size_t n = 0, pos = 0;
    while (pos < 30000) {
      off[n++] = pos * 8;
      pos += 1 + (n % 16);
      if (n == 3000) break;
    }
    if (pos > 30000) pos = 30000;
    var_roundtrip(p, op, TDB_INT64, off, n, nums, pos * 8, NULL, NULL, NULL);
    /* Two cells of 10000 values (80000 bytes each): the trailing chunk is empty in TileDB. */
    uint64_t o2[2] = {0, 80000};
    var_roundtrip(p, op, TDB_INT64, o2, 2, nums, 160000, NULL, NULL, NULL);
    /* All-empty var tile: one empty chunk. */
    uint64_t z[3] = {0, 0, 0};
    var_roundtrip(p, op, TDB_INT64, z, 3, nums, 0, NULL, NULL, NULL);
    tdb_pipeline_free(op);
    tdb_pipeline_free(p);
  }
}

static void test_errors(void) {
  uint64_t off[3] = {0, 2, 1};
  const char *data = "abcdef";
  tdb_tile_t *tile = (tdb_tile_t *)0x1;
  /* Decreasing offsets, offsets past the data, first offset not 0, NULL pointers. */
  CHECK_ERR(tdb_tile_create_var(TDB_STRING_ASCII, off, 3, data, 6, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("offset");
  CHECK(tile == (tdb_tile_t *)0x1);
  uint64_t past[2] = {0, 7};
  CHECK_ERR(tdb_tile_create_var(TDB_STRING_ASCII, past, 2, data, 6, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  uint64_t first[2] = {1, 2};
  CHECK_ERR(tdb_tile_create_var(TDB_STRING_ASCII, first, 2, data, 6, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_tile_create_var(TDB_STRING_ASCII, NULL, 2, data, 6, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_tile_create_var(TDB_STRING_ASCII, first, 2, NULL, 6, &tile, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_tile_create_var(99, first, 2, data, 6, &tile, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_tile_create_var(TDB_STRING_ASCII, first, 2, data, 6, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  /* Zero cells and zero bytes is a valid empty tile. */
  tile = NULL;
  CHECK_OK(tdb_tile_create_var(TDB_STRING_ASCII, NULL, 0, NULL, 0, &tile, E));
  tdb_tile_free(tile);

  /* Offsets of a fixed tile, var API on a fixed tile, fixed API on a var tile. */
  tdb_tile_t *fixed = NULL, *var = NULL;
  CHECK_OK(tdb_tile_create(TDB_UINT8, 1, data, 6, &fixed, E));
  const uint64_t *o;
  size_t n;
  o = (const uint64_t *)(const void *)data;
  n = 777;
  CHECK_ERR(tdb_tile_offsets(fixed, &o, &n, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("tile is not var-size (a fixed-size UINT8 tile has no offsets)");
  CHECK(o == (const uint64_t *)(const void *)data && n == 777); /* untouched */
  CHECK_ERR(tdb_tile_offsets(NULL, &o, &n, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("tile is null");
  CHECK_ERR(tdb_tile_offsets(fixed, NULL, &n, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("offsets is null");
  CHECK_ERR(tdb_tile_offsets(fixed, &o, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("cell_count is null");
  CHECK(o == (const uint64_t *)(const void *)data && n == 777);
  /* A NULL error slot is allowed: the status alone reports the failure. */
  CHECK(tdb_tile_offsets(fixed, &o, &n, NULL) == TDB_ERR_INVALID_ARGUMENT);
  /* tdb_tile_data works on every tile: a fixed tile's bytes, a var tile's values. */
  const uint8_t *bytes = NULL;
  size_t size = 0;
  CHECK_OK(tdb_tile_data(fixed, &bytes, &size, E));
  CHECK(size == 6 && memcmp(bytes, data, 6) == 0);
  uint64_t good[3] = {0, 2, 3};
  CHECK_OK(tdb_tile_create_var(TDB_STRING_ASCII, good, 3, data, 6, &var, E));
  CHECK_OK(tdb_tile_offsets(var, &o, &n, E));
  CHECK(n == 3 && o[2] == 3);
  tdb_pipeline_t *zstd = PIPE(TDB_FILTER_ZSTD), *rle = PIPE(TDB_FILTER_RLE);
  tdb_tile_t *fo = (tdb_tile_t *)0x1, *fd = (tdb_tile_t *)0x1;
  CHECK_ERR(tdb_pipeline_filter_var(zstd, zstd, fixed, &fo, &fd, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(fo == (tdb_tile_t *)0x1 && fd == (tdb_tile_t *)0x1);
  tdb_tile_t *ff = NULL;
  CHECK_ERR(tdb_pipeline_filter(zstd, var, &ff, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_filter_var(NULL, zstd, var, &fo, &fd, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_filter_var(zstd, NULL, var, &fo, &fd, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_filter_var(zstd, zstd, var, NULL, &fd, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_filter_var(zstd, zstd, var, &fo, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  /* RLE not first on a var string attribute is refused, as TileDB refuses the schema. */
  tdb_pipeline_t *zstd_rle = PIPE(TDB_FILTER_ZSTD, TDB_FILTER_RLE);
  CHECK_ERR(tdb_pipeline_filter_var(zstd_rle, zstd, var, &fo, &fd, E), TDB_ERR_UNSUPPORTED);
  CHECK_MSG_HAS("RLE");
  /* DICTIONARY on a fixed-size tile fails at filter time. */
  tdb_pipeline_t *dict = PIPE(TDB_FILTER_DICTIONARY);
  CHECK_ERR(tdb_pipeline_filter(dict, fixed, &ff, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("variable length strings");

  /* Filter properly, then corrupt: offsets past the data, truncated tiles. */
  CHECK_OK(tdb_pipeline_filter_var(zstd, zstd, var, &fo, &fd, E));
  const uint8_t *ob, *db;
  size_t on, dn;
  CHECK_OK(tdb_tile_data(fo, &ob, &on, E));
  CHECK_OK(tdb_tile_data(fd, &db, &dn, E));
  tdb_tile_t *back = (tdb_tile_t *)0x1;
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, ob, on - 1, db, dn, TDB_STRING_ASCII, &back, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, ob, on, db, dn - 1, TDB_STRING_ASCII, &back, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK(back == (tdb_tile_t *)0x1);
  /* An offsets tile whose offsets point past the data: filter offsets {0, 2, 9} separately. */
  uint64_t bad_offsets[3] = {0, 2, 9};
  tdb_tile_t *ot = NULL, *fot = NULL;
  CHECK_OK(tdb_tile_create(TDB_UINT64, 8, bad_offsets, sizeof bad_offsets, &ot, E));
  CHECK_OK(tdb_pipeline_filter(zstd, ot, &fot, E));
  const uint8_t *bob;
  size_t bon;
  CHECK_OK(tdb_tile_data(fot, &bob, &bon, E));
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, bob, bon, db, dn, TDB_STRING_ASCII, &back, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK_MSG_HAS("offset");
  uint64_t decreasing[3] = {0, 3, 2};
  tdb_tile_free(fot);
  tdb_tile_free(ot);
  CHECK_OK(tdb_tile_create(TDB_UINT64, 8, decreasing, sizeof decreasing, &ot, E));
  CHECK_OK(tdb_pipeline_filter(zstd, ot, &fot, E));
  CHECK_OK(tdb_tile_data(fot, &bob, &bon, E));
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, bob, bon, db, dn, TDB_STRING_ASCII, &back, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, NULL, 5, db, dn, TDB_STRING_ASCII, &back, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, ob, on, db, dn, 77, &back, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_pipeline_unfilter_var(zstd, zstd, ob, on, db, dn, TDB_STRING_ASCII, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  tdb_tile_free(fot);
  tdb_tile_free(ot);
  tdb_tile_free(fd);
  tdb_tile_free(fo);

  /* RLE string tiles: flipping any byte never crashes. */
  CHECK_OK(tdb_pipeline_filter_var(rle, zstd, var, &fo, &fd, E));
  CHECK_OK(tdb_tile_data(fo, &ob, &on, E));
  CHECK_OK(tdb_tile_data(fd, &db, &dn, E));
  uint8_t *copy = (uint8_t *)xmalloc(dn);
  for (size_t i = 0; i < dn; i++) {
    for (int bit = 0; bit < 8; bit++) {
      memcpy(copy, db, dn);
      copy[i] ^= (uint8_t)(1 << bit);
      tdb_error_t *err = NULL;
      tdb_tile_t *t = NULL;
      tdb_status_t st =
          tdb_pipeline_unfilter_var(rle, zstd, ob, on, copy, dn, TDB_STRING_ASCII, &t, &err);
      CHECK(st == TDB_OK || st == TDB_ERR_CORRUPT_DATA);
      CHECK((st == TDB_OK) == (t != NULL));
      tdb_tile_free(t);
      tdb_error_free(err);
    }
  }
  free(copy);
  tdb_tile_free(fd);
  tdb_tile_free(fo);
  tdb_pipeline_free(dict);
  tdb_pipeline_free(zstd_rle);
  tdb_pipeline_free(rle);
  tdb_pipeline_free(zstd);
  tdb_tile_free(var);
  tdb_tile_free(fixed);
}

int main(void) {
  test_rle_strings_match_tiledb();
  test_dictionary_strings_match_tiledb();
  test_lz4_strings_match_tiledb();
  test_large_cells_chunking();
  test_roundtrips();
  test_errors();
  CHECK_DONE("test_var");
}
