// Filters a tile of int64 cells through "bitshuffle,zstd:3" with an installed tdbfilter,
// unfilters it, checks the bytes, and checks that damage is reported as an exception.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <vector>

#include "tdbfilter.hpp"

int main() {
  std::vector<std::int64_t> cells(100000);
  for (std::size_t i = 0; i < cells.size(); i++) cells[i] = 1700000000000 + 1000 * std::int64_t(i);
  const std::size_t size = cells.size() * sizeof(std::int64_t);

  tdbfilter::pipeline p("bitshuffle,zstd:3,checksum_md5");
  auto filtered = p.filter(cells.data(), size, TDB_INT64, sizeof(std::int64_t));
  auto back = p.unfilter(filtered, TDB_INT64, sizeof(std::int64_t));
  if (back.size() != size || std::memcmp(back.data(), cells.data(), size) != 0) {
    std::fprintf(stderr, "consumer-cmake: round trip gave different bytes\n");
    return 1;
  }

  filtered[filtered.size() / 2] ^= 0x40;
  try {
    p.unfilter(filtered, TDB_INT64, sizeof(std::int64_t));
    std::fprintf(stderr, "consumer-cmake: a damaged tile was accepted\n");
    return 1;
  } catch (const tdbfilter::error &e) {
    if (e.status() != TDB_ERR_CHECKSUM_MISMATCH && e.status() != TDB_ERR_CORRUPT_DATA) {
      std::fprintf(stderr, "consumer-cmake: unexpected status %d: %s\n", int(e.status()), e.what());
      return 1;
    }
  }
  std::printf("consumer-cmake (tdbfilter %s): %zu bytes of int64 -> %zu filtered bytes -> same bytes back; damage detected\n",
              tdb_version(), size, filtered.size());
  return 0;
}
