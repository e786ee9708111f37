/*
 * The HDF5 filter plugin: H5PLget_plugin_type / H5PLget_plugin_info and one H5Z filter whose
 * chunk transform is a tdbfilter pipeline (see h5tdbfilter.h for the id, the cd_values and the
 * default pipeline used when a dataset is created without cd_values).
 *
 * Forward, a chunk of cells becomes one TileDB filtered tile; reverse, a tile becomes the
 * cells again. Output buffers come from H5allocate_memory and the input is released with
 * H5free_memory: the allocator HDF5 frees filter buffers with. Any failure (a corrupt or
 * truncated chunk, a wrong key, bad cd_values) pushes tdbfilter's message on HDF5's error
 * stack and returns 0, so the HDF5 call fails instead of the host crashing.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include <hdf5.h>
#include <H5PLextern.h>

#include "h5tdbfilter.h"

#define FILTER_NAME "tdbfilter: TileDB filter pipeline"

/* Pushes "h5tdbfilter: <what>" on HDF5's error stack. */
static void push_error(const char *func, const char *fmt, ...) {
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  H5Epush2(H5E_DEFAULT, __FILE__, func, __LINE__, H5E_ERR_CLS, H5E_PLINE, H5E_CANTFILTER,
           "h5tdbfilter: %s", msg);
}

/* Pushes a failed tdbfilter call's message and frees the error. */
static void push_tdb_error(const char *func, const char *what, tdb_status_t st,
                           tdb_error_t *err) {
  push_error(func, "%s: %s (status %d)", what, err ? tdb_error_message(err) : "unknown error",
             (int)st);
  tdb_error_free(err);
}

/* The pipeline, datatype and cell size that cd_values describe; NULL after pushing an error. */
static tdb_pipeline_t *pipeline_of(const char *func, size_t n, const unsigned cd[],
                                   uint32_t *datatype, uint64_t *cell_size) {
  if (n < H5TDBF_CD_HEADER || cd[0] != H5TDBF_CD_VERSION) {
    push_error(func, "cd_values: %zu values, version %u (expected at least %u values, version %u)",
               n, n ? cd[0] : 0u, H5TDBF_CD_HEADER, H5TDBF_CD_VERSION);
    return NULL;
  }
  if (cd[1] == H5TDBF_FROM_DATASET || cd[2] == 0) {
    push_error(func, "cd_values: the datatype or cell size was not filled in (set_local)");
    return NULL;
  }
  size_t bytes = cd[3];
  if ((bytes + 3) / 4 > n - H5TDBF_CD_HEADER) {
    push_error(func, "cd_values: a %zu-byte pipeline does not fit in %zu values", bytes,
               n - H5TDBF_CD_HEADER);
    return NULL;
  }
  uint8_t serialized[4 * 256] = {0};
  uint8_t *buf = bytes <= sizeof serialized ? serialized : (uint8_t *)malloc(bytes);
  if (buf == NULL) {
    push_error(func, "cannot allocate %zu bytes", bytes);
    return NULL;
  }
  for (size_t i = 0; i < bytes; i++) buf[i] = (uint8_t)(cd[H5TDBF_CD_HEADER + i / 4] >> (8 * (i % 4)));
  tdb_pipeline_t *p = NULL;
  tdb_error_t *err = NULL;
  tdb_status_t st = tdb_pipeline_deserialize(buf, bytes, TDB_FORMAT_VERSION, &p, &err);
  if (buf != serialized) free(buf);
  if (st != TDB_OK) {
    push_tdb_error(func, "cd_values: the serialized pipeline", st, err);
    return NULL;
  }
  *datatype = cd[1];
  *cell_size = cd[2];
  return p;
}

/* The unfiltered size of a filtered tile: the sum of its chunks' original lengths. */
static int unfiltered_size(const uint8_t *b, size_t n, size_t *size) {
  if (n < 8) return -1;
  uint64_t chunks = 0;
  memcpy(&chunks, b, 8);
  size_t at = 8;
  uint64_t total = 0;
  for (uint64_t i = 0; i < chunks; i++) {
    if (n - at < 12) return -1;
    uint32_t h[3];
    memcpy(h, b + at, 12);
    at += 12;
    uint64_t body = (uint64_t)h[1] + h[2];
    if (body > n - at) return -1;
    at += (size_t)body;
    total += h[0];
  }
  if (total > SIZE_MAX) return -1;
  *size = (size_t)total;
  return 0;
}

static size_t tdbfilter_h5_filter(unsigned flags, size_t cd_nelmts, const unsigned cd_values[],
                                  size_t nbytes, size_t *buf_size, void **buf) {
  static const char *func = "tdbfilter_h5_filter";
  uint32_t datatype = 0;
  uint64_t cell_size = 0;
  tdb_pipeline_t *p = pipeline_of(func, cd_nelmts, cd_values, &datatype, &cell_size);
  if (p == NULL) return 0;
  tdb_error_t *err = NULL;
  tdb_status_t st;
  void *out = NULL;
  size_t written = 0;

  if (flags & H5Z_FLAG_REVERSE) {
    size_t size = 0;
    if (unfiltered_size((const uint8_t *)*buf, nbytes, &size) != 0) {
      push_error(func, "reading a %zu-byte chunk: not a TileDB filtered tile (truncated or "
                       "corrupt chunk table)", nbytes);
      goto fail;
    }
    out = H5allocate_memory(size ? size : 1, false);
    if (out == NULL) {
      push_error(func, "reading a %zu-byte chunk: cannot allocate %zu bytes", nbytes, size);
      goto fail;
    }
    st = tdb_pipeline_unfilter_into(p, (const uint8_t *)*buf, nbytes, datatype, cell_size, out,
                                    size, &written, &err);
    if (st != TDB_OK) {
      char what[96];
      snprintf(what, sizeof what, "reading a %zu-byte chunk", nbytes);
      push_tdb_error(func, what, st, err);
      goto fail;
    }
  } else {
    tdb_tile_t *tile = NULL;
    st = tdb_tile_create(datatype, cell_size, *buf, nbytes, &tile, &err);
    size_t bound = 0;
    if (st == TDB_OK) st = tdb_pipeline_filtered_size_bound(p, nbytes, &bound, &err);
    if (st == TDB_OK && (out = H5allocate_memory(bound ? bound : 1, false)) == NULL) {
      tdb_tile_free(tile);
      push_error(func, "writing a %zu-byte chunk: cannot allocate %zu bytes", nbytes, bound);
      goto fail;
    }
    if (st == TDB_OK) st = tdb_pipeline_filter_into(p, tile, out, bound, &written, &err);
    tdb_tile_free(tile);
    if (st != TDB_OK) {
      char what[96];
      snprintf(what, sizeof what, "writing a %zu-byte chunk", nbytes);
      push_tdb_error(func, what, st, err);
      goto fail;
    }
  }
  tdb_pipeline_free(p);
  H5free_memory(*buf);
  *buf = out;
  *buf_size = written ? written : 1;
  return written;

fail:
  if (out) H5free_memory(out);
  tdb_pipeline_free(p);
  return 0;
}

/* The TileDB datatype of an HDF5 integer or float type, or H5TDBF_FROM_DATASET if none. */
static uint32_t tiledb_datatype(hid_t type) {
  H5T_class_t cls = H5Tget_class(type);
  size_t size = H5Tget_size(type);
  if (cls == H5T_FLOAT) {
    return size == 4 ? TDB_FLOAT32 : size == 8 ? TDB_FLOAT64 : H5TDBF_FROM_DATASET;
  }
  if (cls == H5T_INTEGER) {
    int is_signed = H5Tget_sign(type) == H5T_SGN_2;
    switch (size) {
      case 1: return is_signed ? TDB_INT8 : TDB_UINT8;
      case 2: return is_signed ? TDB_INT16 : TDB_UINT16;
      case 4: return is_signed ? TDB_INT32 : TDB_UINT32;
      case 8: return is_signed ? TDB_INT64 : TDB_UINT64;
      default: return H5TDBF_FROM_DATASET;
    }
  }
  return H5TDBF_FROM_DATASET;
}

/* No cd_values: stores those of the default pipeline for the dataset's type (h5tdbfilter.h,
 * "Defaults"): integers and floats of 2, 4 or 8 bytes H5TDBF_DEFAULT_SPEC_NUMERIC with their
 * TileDB datatype, 1-byte integers H5TDBF_DEFAULT_SPEC_OTHER with theirs, any other type
 * H5TDBF_DEFAULT_SPEC_OTHER over its bytes (TDB_UINT8 cells of 1 byte). */
static herr_t set_default(const char *func, hid_t dcpl, hid_t type, unsigned flags) {
  size_t type_size = H5Tget_size(type);
  if (type_size == 0) {
    push_error(func, "cannot read the size of the dataset's type");
    return -1;
  }
  uint32_t datatype = tiledb_datatype(type);
  uint32_t cell_size = 1;
  const char *spec = H5TDBF_DEFAULT_SPEC_OTHER;
  if (datatype == H5TDBF_FROM_DATASET) {
    datatype = TDB_UINT8;
  } else if (type_size > 1) {
    spec = H5TDBF_DEFAULT_SPEC_NUMERIC;
    cell_size = (uint32_t)type_size;
  }
  tdb_pipeline_t *p = NULL;
  tdb_error_t *err = NULL;
  tdb_status_t st = tdb_pipeline_from_spec(spec, &p, &err);
  if (st != TDB_OK) {
    push_tdb_error(func, "the default pipeline", st, err);
    return -1;
  }
  unsigned cd[256];
  size_t n = 256;
  st = h5tdbfilter_cd_values(p, datatype, cell_size, cd, &n);
  tdb_pipeline_free(p);
  if (st != TDB_OK) {
    push_error(func, "cd_values of the default pipeline %s: status %d", spec, (int)st);
    return -1;
  }
  if (H5Pmodify_filter(dcpl, H5Z_FILTER_TDBFILTER, flags, n, cd) < 0) {
    push_error(func, "cannot store the cd_values of the default pipeline %s", spec);
    return -1;
  }
  return 1;
}

/* At dataset creation: fills in the datatype and cell size from the dataset's type, or with no
 * cd_values at all, the default pipeline's. */
static herr_t tdbfilter_h5_set_local(hid_t dcpl, hid_t type, hid_t space) {
  static const char *func = "tdbfilter_h5_set_local";
  (void)space;
  unsigned flags = 0;
  /* HDF5 refuses a cd_values capacity above 256 ("probable uninitialized"). */
  size_t n = 256;
  unsigned cd[256];
  if (H5Pget_filter_by_id2(dcpl, H5Z_FILTER_TDBFILTER, &flags, &n, cd, 0, NULL, NULL) < 0) {
    push_error(func, "cannot read the filter's cd_values");
    return -1;
  }
  if (n > 256) {
    push_error(func, "cd_values: %zu values, more than HDF5's 256", n);
    return -1;
  }
  if (n == 0) return set_default(func, dcpl, type, flags);
  if (n < H5TDBF_CD_HEADER || cd[0] != H5TDBF_CD_VERSION) {
    push_error(func, "cd_values: %zu values, version %u, expected version %u (build them with "
                     "h5tdbfilter_cd_values, or give none for the default pipeline)",
               n, cd[0], H5TDBF_CD_VERSION);
    return -1;
  }
  size_t type_size = H5Tget_size(type);
  if (cd[1] == H5TDBF_FROM_DATASET) {
    cd[1] = tiledb_datatype(type);
    if (cd[1] == H5TDBF_FROM_DATASET) {
      push_error(func, "the dataset's type (class %d, %zu bytes) has no TileDB datatype: give "
                       "one in cd_values[1]", (int)H5Tget_class(type), type_size);
      return -1;
    }
  }
  if (cd[2] == 0) cd[2] = (unsigned)type_size;
  /* Check the pipeline now, so a bad one fails at creation and not at the first write. */
  uint32_t datatype = 0;
  uint64_t cell_size = 0;
  tdb_pipeline_t *p = pipeline_of(func, n, cd, &datatype, &cell_size);
  if (p == NULL) return -1;
  tdb_pipeline_free(p);
  if (H5Pmodify_filter(dcpl, H5Z_FILTER_TDBFILTER, flags, n, cd) < 0) {
    push_error(func, "cannot store the cd_values");
    return -1;
  }
  return 1;
}

static const H5Z_class2_t TDBFILTER_H5_CLASS = {
    H5Z_CLASS_T_VERS,
    (H5Z_filter_t)H5Z_FILTER_TDBFILTER,
    1, /* encoder present */
    1, /* decoder present */
    FILTER_NAME,
    NULL, /* can_apply */
    tdbfilter_h5_set_local,
    tdbfilter_h5_filter,
};

H5PL_type_t H5PLget_plugin_type(void) { return H5PL_TYPE_FILTER; }

const void *H5PLget_plugin_info(void) { return &TDBFILTER_H5_CLASS; }
