/* Pipeline object: create, add filters, options, count/type, serialization
 * (exact bytes of docs/FORMAT.md §9.1) and deserialization round trips. */
#include "helpers.h"

#define FORMAT_VERSION 22u

/* Serializes `p` and compares with the hex bytes. Also checks the
 * size query and that an exact-capacity buffer works. */
#define CHECK_SERIALIZED(p, hex)                   \
  do {                                             \
    size_t n_ = 0;                                 \
    uint8_t *b_ = serialize_alloc((p), &n_);       \
    CHECK_BYTES_HEX(b_, n_, hex);                  \
    free(b_);                                      \
  } while (0)

/* Deserializes hex bytes (given format version) and checks that serializing
 * the result gives the same bytes back. Returns the pipeline. */
static tdb_pipeline_t *deserialize_hex(const char *hex, uint32_t version) {
  uint8_t in[512];
  size_t n = hex_decode(hex, in, sizeof in);
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_deserialize(in, n, version, &p, E));
  CHECK(p != NULL);
  size_t m = 0;
  uint8_t *out = serialize_alloc(p, &m);
  CHECK_MEM(out, m, in, n);
  free(out);
  return p;
}

static void check_types(const tdb_pipeline_t *p, const uint32_t *types, uint32_t n) {
  uint32_t count = 12345;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == n);
  for (uint32_t i = 0; i < n; i++) {
    tdb_filter_type_t t = 12345;
    CHECK_OK(tdb_pipeline_filter_type(p, i, &t, E));
    CHECK_MSG(t == types[i], "filter %u: type %u, expected %u", i, (unsigned)t,
              (unsigned)types[i]);
  }
}

static int32_t get_level(const tdb_pipeline_t *p, uint32_t i) {
  int32_t v = 12345;
  CHECK_OK(tdb_pipeline_option(p, i, TDB_COMPRESSION_LEVEL, &v, sizeof(v), E));
  return v;
}

static void test_version(void) {
  const char *v = tdb_version();
  CHECK(v != NULL);
  CHECK(v[0] != '\0');
  CHECK(tdb_version() == v || strcmp(tdb_version(), v) == 0);
}

static void test_empty_pipeline(void) {
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_create(&p, E));
  CHECK(p != NULL);
  uint32_t count = 99;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == 0);
  /* §9.1 empty */
  CHECK_SERIALIZED(p, "0000010000000000");

  /* size query protocol */
  size_t need = 0;
  CHECK(tdb_pipeline_serialize(p, NULL, 0, &need, NULL) == TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(need == 8);
  uint8_t big[64];
  memset(big, 0xAA, sizeof big);
  size_t got = 0;
  CHECK_OK(tdb_pipeline_serialize(p, big, sizeof big, &got, E));
  CHECK(got == 8);
  CHECK_BYTES_HEX(big, 8, "0000010000000000");
  CHECK(big[8] == 0xAA); /* nothing written past the serialized size */

  /* the other setters are fine on an empty pipeline and not serialized */
  CHECK_OK(tdb_pipeline_set_threads(p, 4, E));
  CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, true, E));
  CHECK_OK(tdb_pipeline_set_skip_checksum_validation(p, false, E));
  CHECK_SERIALIZED(p, "0000010000000000");
  tdb_pipeline_free(p);
}

static void test_byteshuffle_zstd(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_ZSTD);
  check_types(p, (const uint32_t[]){9, 2}, 2);
  CHECK(get_level(p, 1) == -1); /* default */
  /* §9.1 [BYTESHUFFLE, ZSTD(-1)] */
  CHECK_SERIALIZED(p, "00000100 02000000 09 00000000 02 05000000 02 ffffffff");
  tdb_pipeline_free(p);
}

static void test_gzip9(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_GZIP);
  CHECK(get_level(p, 0) == -1);
  set_level(p, 0, 9);
  CHECK(get_level(p, 0) == 9);
  /* §9.1 [GZIP(9)] */
  CHECK_SERIALIZED(p, "00000100 01000000 01 05000000 01 09000000");
  set_level(p, 0, 1);
  /* §9.1 / §6 generic-tile pipeline [GZIP(1)] */
  CHECK_SERIALIZED(p, "00000100 01000000 01 05000000 01 01000000");
  set_level(p, 0, 0);
  CHECK_SERIALIZED(p, "00000100 01000000 01 05000000 01 00000000");
  set_level(p, 0, -1);
  CHECK_SERIALIZED(p, "00000100 01000000 01 05000000 01 ffffffff");
  tdb_pipeline_free(p);
}

static void test_lz4_bzip2(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_LZ4, TDB_FILTER_BZIP2);
  check_types(p, (const uint32_t[]){3, 5}, 2);
  CHECK(get_level(p, 0) == -1);
  CHECK(get_level(p, 1) == -1);
  /* the first two entries of §9.1 [LZ4, BZIP2, RLE] */
  CHECK_SERIALIZED(p, "00000100 02000000 03 05000000 03 ffffffff 05 05000000 05 ffffffff");
  /* LZ4 ignores the level but it is still stored and serialized */
  set_level(p, 0, 7);
  set_level(p, 1, 9);
  CHECK_SERIALIZED(p, "00000100 02000000 03 05000000 03 07000000 05 05000000 05 09000000");
  tdb_pipeline_free(p);
}

static void test_no_option_filters(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_CHECKSUM_MD5, TDB_FILTER_CHECKSUM_SHA256,
                           TDB_FILTER_NONE, TDB_FILTER_BITSHUFFLE);
  check_types(p, (const uint32_t[]){12, 13, 0, 8}, 4);
  /* §9.1 [MD5, SHA256, XOR, NONE, BITSHUFFLE] without the XOR entry */
  CHECK_SERIALIZED(p, "00000100 04000000 0c 00000000 0d 00000000 00 00000000 08 00000000");
  tdb_pipeline_free(p);
}

static void test_all_supported(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_NONE, TDB_FILTER_GZIP, TDB_FILTER_ZSTD,
                           TDB_FILTER_LZ4, TDB_FILTER_BZIP2, TDB_FILTER_BITSHUFFLE,
                           TDB_FILTER_BYTESHUFFLE, TDB_FILTER_CHECKSUM_MD5,
                           TDB_FILTER_CHECKSUM_SHA256);
  check_types(p, (const uint32_t[]){0, 1, 2, 3, 5, 8, 9, 12, 13}, 9);
  set_level(p, 1, 3);
  set_level(p, 2, 19);
  set_level(p, 4, 2);
  CHECK_SERIALIZED(p,
                   "00000100 09000000"
                   "00 00000000"
                   "01 05000000 01 03000000"
                   "02 05000000 02 13000000"
                   "03 05000000 03 ffffffff"
                   "05 05000000 05 02000000"
                   "08 00000000"
                   "09 00000000"
                   "0c 00000000"
                   "0d 00000000");
  /* the same filter may appear several times */
  CHECK_OK(tdb_pipeline_add_filter(p, TDB_FILTER_GZIP, E));
  CHECK_OK(tdb_pipeline_add_filter(p, TDB_FILTER_CHECKSUM_MD5, E));
  uint32_t count = 0;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == 11);
  tdb_filter_type_t t = 0;
  CHECK_OK(tdb_pipeline_filter_type(p, 10, &t, E));
  CHECK(t == TDB_FILTER_CHECKSUM_MD5);
  CHECK(get_level(p, 9) == -1);
  CHECK(get_level(p, 1) == 3);
  tdb_pipeline_free(p);
}

static void test_levels(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_ZSTD, TDB_FILTER_BZIP2, TDB_FILTER_GZIP);
  /* ZSTD: any int32 level is stored as given (docs/FORMAT.md §5.4) */
  const int32_t zstd_levels[] = {-100, -7, -1, 0, 1, 3, 19, 22, 100};
  for (size_t i = 0; i < sizeof zstd_levels / sizeof zstd_levels[0]; i++) {
    set_level(p, 0, zstd_levels[i]);
  }
  set_level(p, 0, -5);
  for (int32_t l = 1; l <= 9; l++) set_level(p, 1, l);
  for (int32_t l = -1; l <= 9; l++) set_level(p, 2, l);
  CHECK_SERIALIZED(p,
                   "00000100 03000000"
                   "02 05000000 02 fbffffff"
                   "05 05000000 05 09000000"
                   "01 05000000 01 09000000");
  tdb_pipeline_free(p);
}

static void test_reinterpret_option(void) {
  /* COMPRESSION_REINTERPRET_DATATYPE applies to every compression filter in
   * memory (default ANY = 17) but is serialized only for DELTA/DOUBLE_DELTA
   * (docs/FORMAT.md §1.5, §3.3). */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_ZSTD);
  uint8_t v = 0;
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, &v, sizeof(v), E));
  CHECK(v == 17);
  uint8_t set = TDB_INT32;
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, &set, sizeof(set), E));
  v = 0xEE;
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, &v, sizeof(v), E));
  CHECK(v == TDB_INT32);
  CHECK_SERIALIZED(p, "00000100 01000000 02 05000000 02 ffffffff");
  tdb_pipeline_free(p);
}

static void test_max_chunk_size(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_LZ4);
  CHECK_OK(tdb_pipeline_set_max_chunk_size(p, 0, E));
  CHECK_SERIALIZED(p, "00000000 01000000 03 05000000 03 ffffffff");
  CHECK_OK(tdb_pipeline_set_max_chunk_size(p, 1024, E));
  CHECK_SERIALIZED(p, "00040000 01000000 03 05000000 03 ffffffff");
  CHECK_OK(tdb_pipeline_set_max_chunk_size(p, 1000000, E));
  CHECK_SERIALIZED(p, "40420f00 01000000 03 05000000 03 ffffffff");
  CHECK_OK(tdb_pipeline_set_max_chunk_size(p, 0xFFFFFFFFu, E));
  CHECK_SERIALIZED(p, "ffffffff 01000000 03 05000000 03 ffffffff");
  CHECK_OK(tdb_pipeline_set_max_chunk_size(p, 65536, E));
  CHECK_SERIALIZED(p, "00000100 01000000 03 05000000 03 ffffffff");
  tdb_pipeline_free(p);
}

static void test_deserialize_vectors(void) {
  /* §9.1 vectors made only of supported filters: they deserialize and
   * re-serialize to identical bytes. */
  tdb_pipeline_t *p;

  p = deserialize_hex("0000010000000000", FORMAT_VERSION);
  check_types(p, NULL, 0);
  tdb_pipeline_free(p);

  p = deserialize_hex("00000100 02000000 09 00000000 02 05000000 02 ffffffff", FORMAT_VERSION);
  check_types(p, (const uint32_t[]){9, 2}, 2);
  CHECK(get_level(p, 1) == -1);
  tdb_pipeline_free(p);

  p = deserialize_hex("00000100 01000000 01 05000000 01 09000000", FORMAT_VERSION);
  check_types(p, (const uint32_t[]){1}, 1);
  CHECK(get_level(p, 0) == 9);
  tdb_pipeline_free(p);

  p = deserialize_hex("00000100 01000000 01 05000000 01 01000000", FORMAT_VERSION);
  CHECK(get_level(p, 0) == 1);
  tdb_pipeline_free(p);

  p = deserialize_hex("00000100 02000000 03 05000000 03 ffffffff 05 05000000 05 ffffffff",
                      FORMAT_VERSION);
  check_types(p, (const uint32_t[]){3, 5}, 2);
  tdb_pipeline_free(p);

  p = deserialize_hex("00000100 04000000 0c 00000000 0d 00000000 00 00000000 08 00000000",
                      FORMAT_VERSION);
  check_types(p, (const uint32_t[]){12, 13, 0, 8}, 4);
  tdb_pipeline_free(p);

  /* max_chunk_size is kept as stored, including 0 */
  p = deserialize_hex("00000000 01000000 02 05000000 02 16000000", FORMAT_VERSION);
  check_types(p, (const uint32_t[]){2}, 1);
  CHECK(get_level(p, 0) == 22);
  tdb_pipeline_free(p);
  p = deserialize_hex("e8030000 00000000", FORMAT_VERSION);
  tdb_pipeline_free(p);

  /* older format versions read these filters the same way */
  const uint32_t versions[] = {1, 7, 11, 18, 19, 20, 21, 22};
  for (size_t i = 0; i < sizeof versions / sizeof versions[0]; i++) {
    p = deserialize_hex(
        "00000100 05000000 09 00000000 08 00000000 0c 00000000 01 05000000 01 06000000"
        "0d 00000000",
        versions[i]);
    check_types(p, (const uint32_t[]){9, 8, 12, 1, 13}, 5);
    CHECK(get_level(p, 3) == 6);
    tdb_pipeline_free(p);
  }
}

static void test_compressor_byte_routing(void) {
  /* docs/FORMAT.md §3.3: for compression filters the compressor byte decides the
   * filter; type byte 1 (GZIP) with compressor byte 2 (ZSTD) is a ZSTD filter.
   * It re-serializes as a regular ZSTD entry. */
  static const uint8_t in[] = {0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01,
                               0x05, 0x00, 0x00, 0x00, 0x02, 0x03, 0x00, 0x00, 0x00};
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_deserialize(in, sizeof in, FORMAT_VERSION, &p, E));
  check_types(p, (const uint32_t[]){TDB_FILTER_ZSTD}, 1);
  CHECK(get_level(p, 0) == 3);
  CHECK_SERIALIZED(p, "00000100 01000000 02 05000000 02 03000000");
  tdb_pipeline_free(p);
}

static void test_compressor_byte_cases(void) {
  /* a compression entry whose compressor byte is NO_COMPRESSION (0) is a
   * NONE filter, which serializes as type 0 without options (§3.3) */
  uint8_t b[64];
  size_t n = hex_decode("00000100 01000000 01 05000000 00 ffffffff", b, sizeof b);
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_deserialize(b, n, FORMAT_VERSION, &p, E));
  check_types(p, (const uint32_t[]){TDB_FILTER_NONE}, 1);
  CHECK_SERIALIZED(p, "00000100 01000000 00 00000000");
  tdb_pipeline_free(p);
  /* type byte BZIP2 with compressor byte LZ4 is an LZ4 filter */
  n = hex_decode("00000100 01000000 05 05000000 03 02000000", b, sizeof b);
  CHECK_OK(tdb_pipeline_deserialize(b, n, FORMAT_VERSION, &p, E));
  check_types(p, (const uint32_t[]){TDB_FILTER_LZ4}, 1);
  CHECK(get_level(p, 0) == 2);
  CHECK_SERIALIZED(p, "00000100 01000000 03 05000000 03 02000000");
  tdb_pipeline_free(p);
}

static void test_option_widths(void) {
  /* tdb_pipeline_option writes exactly the option's C type (§1.5), nothing more */
  tdb_pipeline_t *p = PIPE(TDB_FILTER_ZSTD); /* any int32 level is stored */
  set_level(p, 0, 0x01020304);
  uint8_t buf[16];
  memset(buf, 0xEE, sizeof buf);
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_LEVEL, buf + 4, sizeof(int32_t), E));
  for (int i = 0; i < 4; i++) CHECK(buf[i] == 0xEE);
  CHECK(rd_u32(buf + 4) == 0x01020304);
  for (int i = 8; i < 16; i++) CHECK(buf[i] == 0xEE);
  memset(buf, 0xEE, sizeof buf);
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, buf + 4, sizeof(uint8_t), E));
  CHECK(buf[4] == 17); /* ANY */
  for (int i = 0; i < 16; i++)
    if (i != 4) CHECK(buf[i] == 0xEE);
  /* set_option reads exactly one byte for the reinterpret datatype */
  uint8_t one[1] = {TDB_INT16};
  CHECK_OK(tdb_pipeline_set_option(p, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, one, sizeof one, E));
  uint8_t got = 0;
  CHECK_OK(tdb_pipeline_option(p, 0, TDB_COMPRESSION_REINTERPRET_DATATYPE, &got, sizeof(got), E));
  CHECK(got == TDB_INT16);
  tdb_pipeline_free(p);
}

static void test_roundtrip_and_equivalence(void) {
  /* A built pipeline and its deserialized copy filter identically. */
  tdb_pipeline_t *a = PIPE(TDB_FILTER_BYTESHUFFLE, TDB_FILTER_CHECKSUM_SHA256,
                           TDB_FILTER_GZIP, TDB_FILTER_CHECKSUM_MD5);
  set_level(a, 2, 4);
  size_t n = 0;
  uint8_t *ser = serialize_alloc(a, &n);
  tdb_pipeline_t *b = NULL;
  CHECK_OK(tdb_pipeline_deserialize(ser, n, FORMAT_VERSION, &b, E));
  size_t m = 0;
  uint8_t *ser2 = serialize_alloc(b, &m);
  CHECK_MEM(ser2, m, ser, n);
  check_types(b, (const uint32_t[]){9, 13, 1, 12}, 4);
  CHECK(get_level(b, 2) == 4);

  /* deserialization copied the bytes: scribbling over the input is harmless */
  memset(ser, 0, n);
  free(ser);

  enum { N = 100000 };
  int32_t *vals = (int32_t *)xmalloc(N * sizeof(int32_t));
  for (int i = 0; i < N; i++) vals[i] = i / 3 - 7;
  size_t fa = 0, fb = 0;
  uint8_t *ta = roundtrip(a, TDB_INT32, 4, vals, N * sizeof(int32_t), &fa);
  uint8_t *tb = roundtrip(b, TDB_INT32, 4, vals, N * sizeof(int32_t), &fb);
  CHECK_MEM(ta, fa, tb, fb);
  /* cross: tile from a, read back with b */
  size_t un = 0;
  uint8_t *u = unfilter_alloc(b, ta, fa, TDB_INT32, 4, &un);
  CHECK_MEM(u, un, vals, N * sizeof(int32_t));
  free(u);
  free(ta);
  free(tb);
  free(vals);
  free(ser2);
  tdb_pipeline_free(a);
  tdb_pipeline_free(b);
}

static void test_exact_capacity(void) {
  tdb_pipeline_t *p = PIPE(TDB_FILTER_GZIP, TDB_FILTER_CHECKSUM_MD5);
  uint8_t buf[32];
  memset(buf, 0xAA, sizeof buf);
  size_t got = 0;
  CHECK_OK(tdb_pipeline_serialize(p, buf, 18 + 5, &got, E));
  CHECK(got == 23);
  CHECK_BYTES_HEX(buf, got, "00000100 02000000 01 05000000 01 ffffffff 0c 00000000");
  CHECK(buf[23] == 0xAA);
  tdb_pipeline_free(p);
}

static void test_many_pipelines(void) {
  /* create/free many pipelines (leak checkers / ASan catch problems here) */
  for (int i = 0; i < 200; i++) {
    tdb_pipeline_t *p = PIPE(TDB_FILTER_ZSTD, TDB_FILTER_CHECKSUM_SHA256);
    tdb_pipeline_free(p);
  }
  tdb_pipeline_free(NULL);
}

int main(void) {
  test_version();
  test_empty_pipeline();
  test_byteshuffle_zstd();
  test_gzip9();
  test_lz4_bzip2();
  test_no_option_filters();
  test_all_supported();
  test_levels();
  test_reinterpret_option();
  test_max_chunk_size();
  test_deserialize_vectors();
  test_compressor_byte_routing();
  test_compressor_byte_cases();
  test_option_widths();
  test_roundtrip_and_equivalence();
  test_exact_capacity();
  test_many_pipelines();
  CHECK_DONE("test_pipeline");
}
