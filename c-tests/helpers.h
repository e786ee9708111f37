/* Library helpers shared by the C tests (built on check.h). */
#ifndef TDBFILTER_C_TESTS_HELPERS_H
#define TDBFILTER_C_TESTS_HELPERS_H

#include "check.h"

/* Builds a pipeline from a list of filter types (all must be accepted). */
static inline tdb_pipeline_t *make_pipeline(const uint32_t *types, size_t n) {
  tdb_pipeline_t *p = NULL;
  CHECK_OK(tdb_pipeline_create(&p, E));
  CHECK(p != NULL);
  for (size_t i = 0; i < n; i++) CHECK_OK(tdb_pipeline_add_filter(p, types[i], E));
  uint32_t count = 0;
  CHECK_OK(tdb_pipeline_filter_count(p, &count, E));
  CHECK(count == n);
  return p;
}

#define PIPE(...)                                   \
  make_pipeline((const uint32_t[]){__VA_ARGS__},    \
                sizeof((const uint32_t[]){__VA_ARGS__}) / sizeof(uint32_t))
#define PIPE_EMPTY() make_pipeline(NULL, 0)

/* The size of an option's C type (ABI 0.2: the value_size of tdb_pipeline_set_option and
 * tdb_pipeline_option); 4 for unknown options, which fail on the option number. */
static inline size_t option_size(uint32_t option) {
  switch (option) {
    case TDB_SCALE_FLOAT_BYTEWIDTH:
    case TDB_SCALE_FLOAT_FACTOR:
    case TDB_SCALE_FLOAT_OFFSET:
      return 8;
    case TDB_WEBP_INPUT_FORMAT:
    case TDB_WEBP_LOSSLESS:
    case TDB_COMPRESSION_REINTERPRET_DATATYPE:
      return 1;
    default: /* level (int32), windows (uint32), WEBP quality (float) */
      return 4;
  }
}

static inline void set_level(tdb_pipeline_t *p, uint32_t index, int32_t level) {
  CHECK_OK(tdb_pipeline_set_option(p, index, TDB_COMPRESSION_LEVEL, &level, sizeof(level), E));
  int32_t got = 12345;
  CHECK_OK(tdb_pipeline_option(p, index, TDB_COMPRESSION_LEVEL, &got, sizeof(got), E));
  CHECK(got == level);
}

/* Serializes into a malloc'd buffer (size query first). */
static inline uint8_t *serialize_alloc(const tdb_pipeline_t *p, size_t *n) {
  size_t need = 0;
  CHECK_ERR(tdb_pipeline_serialize(p, NULL, 0, &need, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(need >= 8);
  uint8_t *buf = (uint8_t *)xmalloc(need);
  size_t got = 0;
  CHECK_OK(tdb_pipeline_serialize(p, buf, need, &got, E));
  CHECK(got == need);
  *n = got;
  return buf;
}

/* Filters `size` bytes and returns a malloc'd copy of the filtered tile. */
static inline uint8_t *filter_alloc(const tdb_pipeline_t *p, uint32_t datatype,
                                    uint64_t cell_size, const void *data, size_t size,
                                    size_t *out_n) {
  tdb_tile_t *tile = NULL, *filtered = NULL;
  CHECK_OK(tdb_tile_create(datatype, cell_size, data, size, &tile, E));
  CHECK(tile != NULL);
  CHECK_OK(tdb_pipeline_filter(p, tile, &filtered, E));
  CHECK(filtered != NULL);
  const uint8_t *fd = NULL;
  size_t fn = 0;
  CHECK_OK(tdb_tile_data(filtered, &fd, &fn, E));
  CHECK(fn >= 8);
  CHECK(fd != NULL);
  uint8_t *copy = (uint8_t *)xmalloc(fn);
  memcpy(copy, fd, fn);
  tdb_tile_free(filtered);
  tdb_tile_free(tile);
  *out_n = fn;
  return copy;
}

/* Unfilters and returns a malloc'd copy of the tile bytes. */
static inline uint8_t *unfilter_alloc(const tdb_pipeline_t *p, const uint8_t *bytes,
                                      size_t n, uint32_t datatype, uint64_t cell_size,
                                      size_t *out_n) {
  tdb_tile_t *tile = NULL;
  CHECK_OK(tdb_pipeline_unfilter(p, bytes, n, datatype, cell_size, &tile, E));
  CHECK(tile != NULL);
  const uint8_t *d = NULL;
  size_t dn = 0;
  CHECK_OK(tdb_tile_data(tile, &d, &dn, E));
  CHECK(dn == 0 || d != NULL);
  uint8_t *copy = (uint8_t *)xmalloc(dn);
  if (dn) memcpy(copy, d, dn);
  tdb_tile_free(tile);
  *out_n = dn;
  return copy;
}

/* Filters, checks tdb_filtered_tile_size (the byte length of the filtered
 * tile, §4.1) and the unfiltered round trip. Returns the malloc'd filtered
 * tile. */
static inline uint8_t *roundtrip(const tdb_pipeline_t *p, uint32_t datatype,
                                 uint64_t cell_size, const void *data, size_t size,
                                 size_t *out_n) {
  size_t fn = 0;
  uint8_t *f = filter_alloc(p, datatype, cell_size, data, size, &fn);
  uint64_t ts = ~(uint64_t)0;
  CHECK_OK(tdb_filtered_tile_size(f, fn, &ts, E));
  CHECK_MSG(ts == fn, "filtered_tile_size %llu, filtered tile is %zu bytes",
            (unsigned long long)ts, fn);
  size_t un = 0;
  uint8_t *u = unfilter_alloc(p, f, fn, datatype, cell_size, &un);
  CHECK_MEM(u, un, data, size);
  free(u);
  if (out_n) *out_n = fn;
  return f;
}

/* ---- chunk table (docs/FORMAT.md §4.1) ---- */
typedef struct {
  uint32_t orig, filtered, md_len;
  size_t md_off, data_off; /* offsets of metadata / data inside the tile */
} chunk_t;

/* Parses and validates the whole chunk table: the tile must be exactly
 * 8 + sum(12 + md + data). Returns the number of chunks. */
static inline size_t parse_chunks(const uint8_t *b, size_t n, chunk_t *out, size_t max) {
  CHECK(n >= 8);
  uint64_t num = rd_u64(b);
  CHECK(num <= max);
  size_t off = 8;
  for (uint64_t i = 0; i < num; i++) {
    CHECK(n - off >= 12);
    out[i].orig = rd_u32(b + off);
    out[i].filtered = rd_u32(b + off + 4);
    out[i].md_len = rd_u32(b + off + 8);
    off += 12;
    CHECK(n - off >= (size_t)out[i].md_len + out[i].filtered);
    out[i].md_off = off;
    out[i].data_off = off + out[i].md_len;
    off += (size_t)out[i].md_len + out[i].filtered;
  }
  CHECK(off == n);
  return (size_t)num;
}

#endif
