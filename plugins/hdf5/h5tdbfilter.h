/*
 * h5tdbfilter: an HDF5 filter plugin whose chunk transform is a tdbfilter pipeline (TileDB's
 * filter pipeline). A chunk on disk is exactly one TileDB filtered tile.
 *
 * Filter id: H5Z_FILTER_TDBFILTER (333), from HDF5's range 256-511 for unregistered filters.
 * A permanently registered id (512-32767, assigned by The HDF Group) would replace this one
 * constant; files written with 333 would then need the old id to stay readable.
 *
 * cd_values (version 1), unsigned ints:
 *   [0] H5TDBF_CD_VERSION (1)
 *   [1] the cells' TileDB datatype (tdb_datatype_t), or H5TDBF_FROM_DATASET: set_local fills
 *       it from the dataset's type when the dataset is created
 *   [2] cell size in bytes, or 0: set_local fills it from the dataset's type
 *   [3] n, the length of the serialized TileDB pipeline in bytes
 *   [4 .. 4 + ceil(n / 4)) the serialized pipeline (TileDB format version 22), 4 bytes per
 *       value, little-endian, the last value zero-padded
 *
 * Defaults: a dataset created with the filter and no cd_values at all (h5py
 * `compression=333` without `compression_opts`; `H5Pset_filter(dcpl, 333, flags, 0, NULL)`)
 * gets, from set_local, the cd_values of a default pipeline chosen from the dataset's type:
 *   - integers and floats of 2, 4 or 8 bytes: H5TDBF_DEFAULT_SPEC_NUMERIC
 *     ("byteshuffle,zstd:3") over cells of their TileDB datatype;
 *   - 1-byte integers: H5TDBF_DEFAULT_SPEC_OTHER ("zstd:3") over TDB_INT8 / TDB_UINT8 cells;
 *   - any other type (strings, compounds, enums, arrays, 2-byte floats, ...):
 *     H5TDBF_DEFAULT_SPEC_OTHER over the chunk's bytes as TDB_UINT8 cells of 1 byte.
 * The filled-in cd_values are stored with the dataset, so a file stays readable if these
 * defaults ever change.
 */
#ifndef H5TDBFILTER_H
#define H5TDBFILTER_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <tdbfilter.h>

#ifdef __cplusplus
extern "C" {
#endif

/** The HDF5 filter id of the plugin. */
#define H5Z_FILTER_TDBFILTER 333
/** The cd_values layout version this header describes. */
#define H5TDBF_CD_VERSION 1u
/** cd_values[1]: take the datatype from the dataset (set_local). */
#define H5TDBF_FROM_DATASET 0xFFFFFFFFu
/** Fixed slots before the pipeline bytes. */
#define H5TDBF_CD_HEADER 4u
/** The default pipeline (no cd_values) for integers and floats of 2, 4 or 8 bytes. */
#define H5TDBF_DEFAULT_SPEC_NUMERIC "byteshuffle,zstd:3"
/** The default pipeline (no cd_values) for every other type, 1-byte integers included. */
#define H5TDBF_DEFAULT_SPEC_OTHER "zstd:3"

/**
 * Fills `cd` (capacity `*n` values) with the cd_values of `pipeline` for cells of `datatype`
 * (or H5TDBF_FROM_DATASET) and `cell_size` (or 0), and sets `*n` to the number of values. With
 * `cd` NULL or `*n` too small, only sets `*n` and returns TDB_ERR_BUFFER_TOO_SMALL.
 */
static inline tdb_status_t h5tdbfilter_cd_values(const tdb_pipeline_t *pipeline,
                                                 uint32_t datatype, uint32_t cell_size,
                                                 unsigned *cd, size_t *n) {
  size_t bytes = 0;
  tdb_status_t st = tdb_pipeline_serialize(pipeline, NULL, 0, &bytes, NULL);
  if (st != TDB_ERR_BUFFER_TOO_SMALL && st != TDB_OK) return st;
  size_t need = H5TDBF_CD_HEADER + (bytes + 3) / 4;
  if (cd == NULL || *n < need) {
    *n = need;
    return TDB_ERR_BUFFER_TOO_SMALL;
  }
  uint8_t *buf = (uint8_t *)calloc(need * 4, 1);
  if (buf == NULL) return TDB_ERR_OUT_OF_MEMORY;
  st = tdb_pipeline_serialize(pipeline, buf, bytes, &bytes, NULL);
  if (st == TDB_OK) {
    cd[0] = H5TDBF_CD_VERSION;
    cd[1] = datatype;
    cd[2] = cell_size;
    cd[3] = (unsigned)bytes;
    for (size_t i = 0; i < (bytes + 3) / 4; i++) {
      const uint8_t *b = buf + 4 * i;
      cd[H5TDBF_CD_HEADER + i] = (unsigned)b[0] | (unsigned)b[1] << 8 | (unsigned)b[2] << 16 |
                                 (unsigned)b[3] << 24;
    }
    *n = need;
  }
  free(buf);
  return st;
}

#ifdef __cplusplus
}
#endif

#endif /* H5TDBFILTER_H */
