// Small RAII wrappers over tdbfilter's C handles, as a C++17 consumer would write them:
// owning handles freed by their destructors, and errors thrown as tdbfilter::error.
#pragma once

#include <tdbfilter.h>

#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

namespace tdbfilter {

/// A failed call: the library's status and message.
class error : public std::runtime_error {
 public:
  error(tdb_status_t status, const std::string &message)
      : std::runtime_error(message), status_(status) {}
  tdb_status_t status() const noexcept { return status_; }

 private:
  tdb_status_t status_;
};

namespace detail {
struct error_deleter {
  void operator()(tdb_error_t *e) const noexcept { tdb_error_free(e); }
};
struct pipeline_deleter {
  void operator()(tdb_pipeline_t *p) const noexcept { tdb_pipeline_free(p); }
};
struct tile_deleter {
  void operator()(tdb_tile_t *t) const noexcept { tdb_tile_free(t); }
};

/// Runs a C call that takes a trailing `tdb_error_t **`, throwing on failure.
template <typename F>
void check(F &&call) {
  tdb_error_t *raw = nullptr;
  tdb_status_t status = call(&raw);
  std::unique_ptr<tdb_error_t, error_deleter> err(raw);
  if (status != TDB_OK) {
    throw error(status, err ? tdb_error_message(err.get()) : "tdbfilter call failed");
  }
}
}  // namespace detail

/// A tile: filtered bytes or cells, owned by the library.
class tile {
 public:
  explicit tile(tdb_tile_t *t) : handle_(t) {}
  /// The tile's bytes (a view into the library's buffer).
  std::vector<std::uint8_t> bytes() const {
    const std::uint8_t *data = nullptr;
    std::size_t size = 0;
    detail::check([&](tdb_error_t **e) { return tdb_tile_data(handle_.get(), &data, &size, e); });
    return std::vector<std::uint8_t>(data, data + size);
  }
  const tdb_tile_t *get() const noexcept { return handle_.get(); }

 private:
  std::unique_ptr<tdb_tile_t, detail::tile_deleter> handle_;
};

/// A filter pipeline.
class pipeline {
 public:
  /// Parses a spec such as "bitshuffle,zstd:3".
  explicit pipeline(const std::string &spec) {
    tdb_pipeline_t *p = nullptr;
    detail::check([&](tdb_error_t **e) { return tdb_pipeline_from_spec(spec.c_str(), &p, e); });
    handle_.reset(p);
  }

  /// Filters cells of `datatype` (`cell_size` bytes each) into TileDB's filtered tile bytes.
  std::vector<std::uint8_t> filter(const void *cells, std::size_t size, tdb_datatype_t datatype,
                                   std::uint64_t cell_size) const {
    tdb_tile_t *in = nullptr;
    detail::check([&](tdb_error_t **e) {
      return tdb_tile_create(datatype, cell_size, static_cast<const std::uint8_t *>(cells),
                             size, &in, e);
    });
    tile input(in);
    tdb_tile_t *out = nullptr;
    detail::check([&](tdb_error_t **e) {
      return tdb_pipeline_filter(handle_.get(), input.get(), &out, e);
    });
    return tile(out).bytes();
  }

  /// Unfilters TileDB's filtered tile bytes back into cells.
  std::vector<std::uint8_t> unfilter(const std::vector<std::uint8_t> &filtered,
                                     tdb_datatype_t datatype, std::uint64_t cell_size) const {
    tdb_tile_t *out = nullptr;
    detail::check([&](tdb_error_t **e) {
      return tdb_pipeline_unfilter(handle_.get(), filtered.data(), filtered.size(), datatype,
                                   cell_size, &out, e);
    });
    return tile(out).bytes();
  }

 private:
  std::unique_ptr<tdb_pipeline_t, detail::pipeline_deleter> handle_;
};

}  // namespace tdbfilter
