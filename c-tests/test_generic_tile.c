/* Generic tiles (docs/FORMAT.md §6): reading, writing, header fields, TileDB's
 * serialized generic pipelines, encryption and every error path. */
#include "helpers.h"

static const char KEY_STR[] = "0123456789abcdeF0123456789abcdeF";
#define KEY ((const uint8_t *)KEY_STR)

/* TileDB's serialized generic-tile pipelines (§6, §9.1). */
#define PIPELINE_PLAIN "00000100 01000000 01 05000000 01 01000000"
#define PIPELINE_AES "00000100 02000000 01 05000000 01 01000000 0b 00000000"

/* A schema written by libtiledb 2.30.0 (a dense int32 array), plain and
 * encrypted with the key above, and its payload (tests/data/generic/). */
static const char *SCHEMA_PLAIN =
    "160000006a00000000000000a70000000000000004010000000000000000120000000000"
    "010001000000010500000001010000000100000000000000a70000004600000010000000"
    "0000000001000000a700000046000000780113638000017528838111081918985841c47f"
    "2060c029c20252c3025203d201c2296012c26660e0008ac0003b88011280294d4451ca02"
    "53c7c0d08060c2598c0006bf0dd0";
static const char *SCHEMA_AES =
    "16000000ba00000000000000a70000000000000004010000000000000001170000000000"
    "010002000000010500000001010000000b000000000100000000000000a7000000560000"
    "005000000001000000010000001000000010000000596948440d106f5d1a58e968da7c4c"
    "a5e8009a977b12c074cadef58a46000000460000008aef5c412277ee873340bd58de8ddf"
    "a69360b234926ccaf952209389e8469e15695bf676ee59697e8c703910d43838cc390416"
    "5b66e6a2352cd8bc1522352da443d99c6e0ab1870e247acd3b4e16a5c1dc10c453c7c230"
    "067636b5019fb399a7e83a2ef08e31eeafe986da97bb2fd7a3df0a";
static const char *SCHEMA_PAYLOAD =
    "160000000000000010270000000000000000010001000000020500000002ffffffff0000"
    "010001000000020500000002ffffffff0000010001000000040500000004ffffffff0100"
    "0000010000006400010000000000010000000000080000000000000000000000070000"
    "000008000000010000000100000061000100000000000100000000000400000000000000"
    "000000800000000000000000000000000000000000000001";

static uint8_t sentinel_obj;
#define SENT_TILE ((tdb_tile_t *)(void *)&sentinel_obj)
#define SENT_PIPE ((tdb_pipeline_t *)(void *)&sentinel_obj)

/* Writes `size` payload bytes as a CHAR / cell size 1 generic tile through `p`;
 * returns a malloc'd copy of the generic tile. */
static uint8_t *write_generic(const tdb_pipeline_t *p, const void *payload, size_t size,
                              size_t *out_n) {
  tdb_tile_t *tile = NULL, *generic = NULL;
  CHECK_OK(tdb_tile_create(TDB_CHAR, 1, payload, size, &tile, E));
  CHECK_OK(tdb_generic_tile_write(p, tile, &generic, E));
  CHECK(generic != NULL);
  const uint8_t *d = NULL;
  size_t n = 0;
  CHECK_OK(tdb_tile_data(generic, &d, &n, E));
  CHECK(n >= TDB_GENERIC_TILE_HEADER_BASE_SIZE + 8);
  uint8_t *copy = (uint8_t *)xmalloc(n);
  memcpy(copy, d, n);
  tdb_tile_free(generic);
  tdb_tile_free(tile);
  *out_n = n;
  return copy;
}

/* Reads the generic tile at `bytes`; the payload must equal `want`, and the
 * tile must occupy `want_consumed` bytes. */
static void read_expect(const uint8_t *bytes, size_t n, const uint8_t *key, size_t key_len,
                        const void *want, size_t want_n, uint64_t want_consumed) {
  tdb_tile_t *tile = NULL;
  uint64_t consumed = 0;
  CHECK_OK(tdb_generic_tile_read(bytes, n, key, key_len, &tile, &consumed, E));
  CHECK(tile != NULL);
  CHECK_MSG(consumed == want_consumed, "consumed %llu, expected %llu",
            (unsigned long long)consumed, (unsigned long long)want_consumed);
  const uint8_t *d = NULL;
  size_t dn = 0;
  CHECK_OK(tdb_tile_data(tile, &d, &dn, E));
  CHECK_MEM(d, dn, want, want_n);
  tdb_tile_free(tile);
}

static tdb_pipeline_t *default_pipeline(const uint8_t *key) {
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_generic_tile_default_pipeline(&p, E));
  CHECK(p != NULL);
  if (key) CHECK_OK(tdb_pipeline_set_encryption_key(p, key, 32, E));
  return p;
}

/* ---------------------------------------------------------------------- */

static void test_default_pipeline(void) {
  tdb_pipeline_t *p = default_pipeline(NULL);
  uint32_t count = 0;
  tdb_filter_type_t type = 0;
  int32_t level = 0;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == 1);
  CHECK_OK(tdb_pipeline_filter_type(p, 0, &type, E));
  CHECK(type == TDB_FILTER_GZIP);
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_LEVEL, &level, sizeof(level), E));
  CHECK(level == 1);
  size_t n = 0;
  uint8_t *s = serialize_alloc(p, &n);
  CHECK_BYTES_HEX(s, n, PIPELINE_PLAIN);
  free(s);
  tdb_pipeline_free(p);
  CHECK_ERR(tdb_generic_tile_default_pipeline(NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
}

static void test_exact_bytes_and_header(void) {
  tdb_pipeline_t *p = default_pipeline(NULL);
  size_t n = 0;
  uint8_t *g = write_generic(p, "TileDB generic tile", 19, &n);
  CHECK_BYTES_HEX(g, n,
                  "16000000 3d00000000000000 1300000000000000 04 0100000000000000 00 "
                  "12000000 " PIPELINE_PLAIN
                  " 0100000000000000 | 13000000 19000000 10000000 | 00000000 01000000 "
                  "13000000 19000000 | 78010bc9cc49757152484fcd4b2dca4c5628017201431206e0");
  tdb_generic_tile_header_t h;
  memset(&h, 0xAB, sizeof h);
  CHECK_OK(tdb_generic_tile_header(g, n, &h, E));
  CHECK(h.version == 22);
  CHECK(h.persisted_size == 61);
  CHECK(h.tile_size == 19);
  CHECK(h.datatype == TDB_CHAR);
  CHECK(h.cell_size == 1);
  CHECK(h.encryption_type == TDB_NO_ENCRYPTION);
  CHECK(h.filter_pipeline_size == 18);
  CHECK(h.header_size == 52);
  CHECK(h.total_size == n);
  read_expect(g, n, NULL, 0, "TileDB generic tile", 19, n);

  /* The empty payload: zero chunks. */
  free(g);
  g = write_generic(p, NULL, 0, &n);
  CHECK_BYTES_HEX(g, n,
                  "16000000 0800000000000000 0000000000000000 04 0100000000000000 00 "
                  "12000000 " PIPELINE_PLAIN " 0000000000000000");
  read_expect(g, n, NULL, 0, "", 0, n);
  free(g);
  tdb_pipeline_free(p);
}

static void test_tiledb_vectors(void) {
  static uint8_t plain[512], aes[512], payload[512];
  size_t np = hex_decode(SCHEMA_PLAIN, plain, sizeof plain);
  size_t na = hex_decode(SCHEMA_AES, aes, sizeof aes);
  size_t nl = hex_decode(SCHEMA_PAYLOAD, payload, sizeof payload);
  CHECK(np == 158 && na == 243 && nl == 167);
  read_expect(plain, np, NULL, 0, payload, nl, np);
  read_expect(aes, na, KEY, 32, payload, nl, na);

  /* Our writer reproduces TileDB's plain bytes exactly. */
  tdb_pipeline_t *p = default_pipeline(NULL);
  size_t n = 0;
  uint8_t *g = write_generic(p, payload, nl, &n);
  CHECK_MEM(g, n, plain, np);
  free(g);
  tdb_pipeline_free(p);

  /* Encrypted: same size and the same 57 header bytes; IVs differ. */
  p = default_pipeline(KEY);
  g = write_generic(p, payload, nl, &n);
  CHECK(n == na);
  CHECK_MEM(g, 57, aes, 57);
  CHECK_BYTES_HEX(g + 34, 23, PIPELINE_AES);
  read_expect(g, n, KEY, 32, payload, nl, na);
  free(g);
  tdb_pipeline_free(p);

  /* Header fields of TileDB's encrypted schema. */
  tdb_generic_tile_header_t h;
  CHECK_OK(tdb_generic_tile_header(aes, na, &h, E));
  CHECK(h.version == 22 && h.persisted_size == 186 && h.tile_size == 167);
  CHECK(h.datatype == TDB_CHAR && h.cell_size == 1);
  CHECK(h.encryption_type == TDB_AES_256_GCM && h.filter_pipeline_size == 23);
  CHECK(h.header_size == 57 && h.total_size == 243);

  /* Its pipeline: [GZIP 1, AES]; with the key set it writes the same header. */
  tdb_pipeline_t *hp = NULL;
  CHECK_OK(tdb_generic_tile_pipeline(aes, na, &hp, E));
  uint32_t count = 0;
  tdb_filter_type_t type = 0;
  CHECK_OK(tdb_pipeline_filter_count(hp, &count, E));
  CHECK(count == 2);
  CHECK_OK(tdb_pipeline_filter_type(hp, 1, &type, E));
  CHECK(type == TDB_FILTER_AES_256_GCM);
  size_t sn = 0;
  uint8_t *s = serialize_alloc(hp, &sn);
  CHECK_BYTES_HEX(s, sn, PIPELINE_AES);
  free(s);
  tdb_tile_t *tile = NULL, *generic = SENT_TILE;
  CHECK_OK(tdb_tile_create(TDB_CHAR, 1, payload, nl, &tile, E));
  CHECK_ERR(tdb_generic_tile_write(hp, tile, &generic, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("key");
  CHECK(generic == SENT_TILE);
  CHECK_OK(tdb_pipeline_set_encryption_key(hp, KEY, 32, E));
  CHECK_OK(tdb_generic_tile_write(hp, tile, &generic, E));
  const uint8_t *d = NULL;
  size_t dn = 0;
  CHECK_OK(tdb_tile_data(generic, &d, &dn, E));
  CHECK(dn == na);
  CHECK_MEM(d, 57, aes, 57);
  tdb_tile_free(generic);
  tdb_tile_free(tile);
  tdb_pipeline_free(hp);

  /* The plain schema's pipeline is [GZIP 1]. */
  CHECK_OK(tdb_generic_tile_pipeline(plain, np, &hp, E));
  s = serialize_alloc(hp, &sn);
  CHECK_BYTES_HEX(s, sn, PIPELINE_PLAIN);
  free(s);
  tdb_pipeline_free(hp);
}

static void test_round_trips(void) {
  static const size_t sizes[] = {0, 1, 100, 65536, 65537, 200000};
  tdb_pipeline_t *plain = default_pipeline(NULL);
  tdb_pipeline_t *enc = default_pipeline(KEY);
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    size_t size = sizes[i];
    uint8_t *data = (uint8_t *)xmalloc(size);
    fill_random(data, size, i + 1);
    for (size_t j = 0; j < size; j += 3) data[j] = 0; /* somewhat compressible */
    size_t n = 0;
    uint8_t *g = write_generic(plain, data, size, &n);
    read_expect(g, n, NULL, 0, data, size, n);
    uint64_t chunks = rd_u64(g + 52);
    CHECK_MSG(chunks == (size + 65535) / 65536, "size %zu: %llu chunks", size,
              (unsigned long long)chunks);
    free(g);

    g = write_generic(enc, data, size, &n);
    CHECK(g[29] == 1);
    CHECK_BYTES_HEX(g + 34, 23, PIPELINE_AES);
    read_expect(g, n, KEY, 32, data, size, n);
    free(g);
    free(data);
  }
  tdb_pipeline_free(plain);
  tdb_pipeline_free(enc);

  /* Any pipeline, datatype and cell size: they are stored in the header. */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_ZSTD);
  int32_t cells[3000];
  for (int i = 0; i < 3000; i++) cells[i] = i * 7;
  tdb_tile_t *tile = NULL, *generic = NULL;
  CHECK_OK(tdb_tile_create(TDB_INT32, 12, cells, sizeof cells, &tile, E));
  CHECK_OK(tdb_generic_tile_write(p, tile, &generic, E));
  const uint8_t *d = NULL;
  size_t dn = 0;
  CHECK_OK(tdb_tile_data(generic, &d, &dn, E));
  tdb_generic_tile_header_t h;
  CHECK_OK(tdb_generic_tile_header(d, dn, &h, E));
  CHECK(h.datatype == TDB_INT32 && h.cell_size == 12 && h.tile_size == sizeof cells);
  CHECK(h.encryption_type == TDB_NO_ENCRYPTION && h.total_size == dn);
  read_expect(d, dn, NULL, 0, cells, sizeof cells, dn);
  tdb_tile_free(generic);
  tdb_tile_free(tile);
  tdb_pipeline_free(p);
}

static void test_consumed_across_concatenated_tiles(void) {
  tdb_pipeline_t *p = default_pipeline(NULL);
  size_t na = 0, nb = 0;
  uint8_t big[70000];
  for (size_t i = 0; i < sizeof big; i++) big[i] = (uint8_t)(i % 13);
  uint8_t *a = write_generic(p, "first tile", 10, &na);
  uint8_t *b = write_generic(p, big, sizeof big, &nb);
  const char footer[] = "not a generic tile: a footer";
  size_t total = na + nb + sizeof footer;
  uint8_t *file = (uint8_t *)xmalloc(total);
  memcpy(file, a, na);
  memcpy(file + na, b, nb);
  memcpy(file + na + nb, footer, sizeof footer);

  /* Walk: each read reports its own size. */
  read_expect(file, total, NULL, 0, "first tile", 10, na);
  read_expect(file + na, total - na, NULL, 0, big, sizeof big, nb);
  tdb_tile_t *t = SENT_TILE;
  uint64_t consumed = 777;
  CHECK_ERR(tdb_generic_tile_read(file + na + nb, sizeof footer, NULL, 0, &t, &consumed, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK(t == SENT_TILE && consumed == 777);
  tdb_generic_tile_header_t h;
  CHECK_OK(tdb_generic_tile_header(file + na, total - na, &h, E));
  CHECK(h.total_size == nb && h.tile_size == sizeof big);
  CHECK(rd_u64(file + na + h.header_size) == 2); /* chunks 65536 + 4464 */
  free(file);
  free(a);
  free(b);

  /* The same with encrypted tiles. */
  tdb_pipeline_free(p);
  p = default_pipeline(KEY);
  a = write_generic(p, "first tile", 10, &na);
  b = write_generic(p, big, sizeof big, &nb);
  file = (uint8_t *)xmalloc(na + nb);
  memcpy(file, a, na);
  memcpy(file + na, b, nb);
  read_expect(file, na + nb, KEY, 32, "first tile", 10, na);
  read_expect(file + na, nb, KEY, 32, big, sizeof big, nb);
  free(file);
  free(a);
  free(b);
  tdb_pipeline_free(p);
}

static void test_null_arguments(void) {
  tdb_pipeline_t *p = default_pipeline(NULL);
  size_t n = 0;
  uint8_t *g = write_generic(p, "abc", 3, &n);
  tdb_tile_t *tile = NULL;
  CHECK_OK(tdb_tile_create(TDB_CHAR, 1, "abc", 3, &tile, E));
  tdb_tile_t *t = SENT_TILE;
  tdb_pipeline_t *pout = SENT_PIPE;
  uint64_t consumed = 777;
  tdb_generic_tile_header_t h;
  memset(&h, 0xAB, sizeof h);

  CHECK_ERR(tdb_generic_tile_read(NULL, n, NULL, 0, &t, &consumed, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK_ERR(tdb_generic_tile_read(NULL, 0, NULL, 0, &t, &consumed, E),
            TDB_ERR_CORRUPT_DATA);
  CHECK_ERR(tdb_generic_tile_read(g, n, NULL, 0, NULL, &consumed, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK_ERR(tdb_generic_tile_read(g, n, NULL, 0, &t, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK_ERR(tdb_generic_tile_read(g, n, NULL, 32, &t, &consumed, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("key");
  CHECK(t == SENT_TILE && consumed == 777);
  /* error may be NULL */
  CHECK(tdb_generic_tile_read(NULL, 1, NULL, 0, &t, &consumed, NULL) ==
        TDB_ERR_INVALID_ARGUMENT);

  CHECK_ERR(tdb_generic_tile_header(NULL, n, &h, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_generic_tile_header(g, n, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(h.version == 0xABABABABu);

  CHECK_ERR(tdb_generic_tile_pipeline(NULL, n, &pout, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_generic_tile_pipeline(g, n, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(pout == SENT_PIPE);

  CHECK_ERR(tdb_generic_tile_write(NULL, tile, &t, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK_ERR(tdb_generic_tile_write(p, NULL, &t, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK_ERR(tdb_generic_tile_write(p, tile, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("null");
  CHECK(t == SENT_TILE);

  /* A var-size tile cannot be a generic tile. */
  const uint64_t offsets[2] = {0, 1};
  tdb_tile_t *var = NULL;
  CHECK_OK(tdb_tile_create_var(TDB_STRING_ASCII, offsets, 2, "ab", 2, &var, E));
  CHECK_ERR(tdb_generic_tile_write(p, var, &t, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(t == SENT_TILE);
  tdb_tile_free(var);

  tdb_tile_free(tile);
  free(g);
  tdb_pipeline_free(p);
}

static void test_truncation(void) {
  tdb_pipeline_t *plain = default_pipeline(NULL);
  tdb_pipeline_t *enc = default_pipeline(KEY);
  uint8_t data[300];
  fill_random(data, sizeof data, 7);
  for (int e = 0; e < 2; e++) {
    size_t n = 0;
    uint8_t *g = write_generic(e ? enc : plain, data, sizeof data, &n);
    for (size_t cut = 0; cut < n; cut++) {
      tdb_tile_t *t = SENT_TILE;
      uint64_t consumed = 777;
      tdb_generic_tile_header_t h;
      h.version = 777;
      CHECK_ERR(tdb_generic_tile_read(g, cut, e ? KEY : NULL, e ? 32 : 0, &t, &consumed, E),
                TDB_ERR_CORRUPT_DATA);
      CHECK(t == SENT_TILE && consumed == 777);
      CHECK_ERR(tdb_generic_tile_header(g, cut, &h, E), TDB_ERR_CORRUPT_DATA);
      CHECK(h.version == 777);
    }
    if (e == 0) {
      CHECK_ERR(tdb_generic_tile_read(g, 10, NULL, 0, &(tdb_tile_t *){NULL},
                                      &(uint64_t){0}, E),
                TDB_ERR_CORRUPT_DATA);
      CHECK_MSG_HAS("truncated");
    }
    free(g);
  }
  tdb_pipeline_free(plain);
  tdb_pipeline_free(enc);
}

static void test_corrupt_headers(void) {
  tdb_pipeline_t *p = default_pipeline(NULL);
  size_t n = 0;
  uint8_t *g = write_generic(p, "hello hello hello", 17, &n);
  uint8_t *b = (uint8_t *)xmalloc(n);
  tdb_tile_t *t = NULL;
  uint64_t consumed = 0;
#define CORRUPT(stmt, needle)                                                        \
  do {                                                                               \
    memcpy(b, g, n);                                                                 \
    stmt;                                                                            \
    CHECK_ERR(tdb_generic_tile_read(b, n, NULL, 0, &t, &consumed, E),                \
              TDB_ERR_CORRUPT_DATA);                                                 \
    CHECK_MSG_HAS(needle);                                                           \
  } while (0)
  CORRUPT(wr_u64(b + 4, rd_u64(g + 4) - 1), "truncated");
  CORRUPT(wr_u64(b + 4, UINT64_MAX), "persisted_size");
  CORRUPT(wr_u64(b + 12, 18), "tile_size");
  CORRUPT(b[20] = 44, "datatype");
  CORRUPT(wr_u64(b + 21, 0), "cell size");
  CORRUPT(b[29] = 2, "encryption type");
  CORRUPT(b[29] = 1, "no encryption filter");
  CORRUPT(wr_u32(b + 30, 17), "pipeline");
  CORRUPT(wr_u32(b + 30, 0xFFFFFFFFu), "truncated");
  CORRUPT(b[42] = 17, "filter type");
  CORRUPT(wr_u64(b + 52, 2), "chunk 1");
  CORRUPT(b[n - 1] ^= 0xFF, "gzip");
#undef CORRUPT
  /* A newer header version is unsupported, not corrupt. */
  memcpy(b, g, n);
  wr_u32(b, 24);
  CHECK_ERR(tdb_generic_tile_read(b, n, NULL, 0, &t, &consumed, E), TDB_ERR_UNSUPPORTED);
  CHECK_MSG_HAS("version");
  free(b);
  free(g);
  tdb_pipeline_free(p);
}

static void test_keys(void) {
  tdb_pipeline_t *plain = default_pipeline(NULL);
  tdb_pipeline_t *enc = default_pipeline(KEY);
  uint8_t data[100000];
  for (size_t i = 0; i < sizeof data; i++) data[i] = (uint8_t)(i * 7 + i / 1000);
  size_t np = 0, ne = 0;
  uint8_t *gp = write_generic(plain, data, sizeof data, &np);
  uint8_t *ge = write_generic(enc, data, sizeof data, &ne);
  tdb_tile_t *t = SENT_TILE;
  uint64_t consumed = 777;

  /* Encrypted tile, no key. */
  CHECK_ERR(tdb_generic_tile_read(ge, ne, NULL, 0, &t, &consumed, E),
            TDB_ERR_DECRYPTION_FAILED);
  CHECK_MSG_HAS("tile is encrypted with AES_256_GCM but given key is for NO_ENCRYPTION");
  /* Unencrypted tile, a key. */
  CHECK_ERR(tdb_generic_tile_read(gp, np, KEY, 32, &t, &consumed, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("tile is encrypted with NO_ENCRYPTION but given key is for AES_256_GCM");
  /* Wrong key lengths. */
  static const size_t bad_lengths[] = {0, 1, 16, 31, 33};
  uint8_t long_key[33];
  memcpy(long_key, KEY, 32);
  long_key[32] = 0;
  for (size_t i = 0; i < sizeof bad_lengths / sizeof bad_lengths[0]; i++) {
    CHECK_ERR(tdb_generic_tile_read(ge, ne, long_key, bad_lengths[i], &t, &consumed, E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK_MSG_HAS("32");
  }
  /* Wrong key. */
  uint8_t wrong[32];
  memcpy(wrong, KEY, 32);
  wrong[5] ^= 1;
  CHECK_ERR(tdb_generic_tile_read(ge, ne, wrong, 32, &t, &consumed, E),
            TDB_ERR_DECRYPTION_FAILED);
  CHECK(t == SENT_TILE && consumed == 777);

  /* Flipped bytes: in the IVs, tags and ciphertext -> decryption fails; anywhere
   * else -> a clean error, or (fields that do not matter for reading, e.g. the
   * stored GZIP level) the right data. Never wrong data. */
  tdb_generic_tile_header_t h;
  CHECK_OK(tdb_generic_tile_header(ge, ne, &h, E));
  size_t chunk0 = (size_t)h.header_size + 8;
  const size_t must_fail[] = {
      chunk0 + 12 + 8 + 8,  /* IV of the first part */
      chunk0 + 12 + 8 + 20, /* its tag */
      chunk0 + 12 + 44 + 8, /* IV of the second part */
      chunk0 + 12 + 80,     /* first ciphertext byte */
      chunk0 + 12 + 80 + 20,
      ne - 1, /* last ciphertext byte */
  };
  uint8_t *b = (uint8_t *)xmalloc(ne);
  for (size_t i = 0; i < sizeof must_fail / sizeof must_fail[0]; i++) {
    memcpy(b, ge, ne);
    b[must_fail[i]] ^= 0x10;
    CHECK_ERR(tdb_generic_tile_read(b, ne, KEY, 32, &t, &consumed, E),
              TDB_ERR_DECRYPTION_FAILED);
  }
  for (size_t pos = 0; pos < ne; pos += 5) {
    memcpy(b, ge, ne);
    b[pos] ^= 0x01;
    tdb_tile_t *r = NULL;
    tdb_error_t *err = NULL;
    tdb_status_t st = tdb_generic_tile_read(b, ne, KEY, 32, &r, &consumed, &err);
    if (st == TDB_OK) {
      const uint8_t *d = NULL;
      size_t dn = 0;
      CHECK_OK(tdb_tile_data(r, &d, &dn, E));
      CHECK_MEM(d, dn, data, sizeof data);
      tdb_tile_free(r);
      CHECK(err == NULL);
    } else {
      CHECK_MSG(st == TDB_ERR_DECRYPTION_FAILED || st == TDB_ERR_CORRUPT_DATA ||
                    st == TDB_ERR_UNSUPPORTED,
                "byte %zu: status %d", pos, (int)st);
      CHECK(r == NULL && err != NULL);
      tdb_error_free(err);
    }
  }
  free(b);
  free(gp);
  free(ge);
  tdb_pipeline_free(plain);
  tdb_pipeline_free(enc);
}

int main(void) {
  test_default_pipeline();
  test_exact_bytes_and_header();
  test_tiledb_vectors();
  test_round_trips();
  test_consumed_across_concatenated_tiles();
  test_null_arguments();
  test_truncation();
  test_corrupt_headers();
  test_keys();
  CHECK_DONE("test_generic_tile");
}
