/* Tiny assertion helpers shared by the C tests.
 *
 * Every failing check prints file:line and the failing expression, then
 * exits with status 1. CHECK_DONE prints "<name>: N checks passed".
 *
 * Calls to the library pass E as their error argument:
 *     CHECK_OK(tdb_pipeline_create(&p, E));
 *     CHECK_ERR(tdb_pipeline_add_filter(p, 99, E), TDB_ERR_INVALID_ARGUMENT);
 * E is the address of a per-file error slot; the macros reset it before the
 * call, verify it afterwards (NULL on success, an error carrying the same
 * status and a non-empty message on failure) and free it.
 */
#ifndef TDBFILTER_C_TESTS_CHECK_H
#define TDBFILTER_C_TESTS_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tdbfilter.h"

static unsigned long check_count_ = 0;
static tdb_error_t *check_err_ = NULL;
/* Message of the last error seen by CHECK_ERR (copied, so it survives free). */
static char check_last_msg_[4096];

#define E (&check_err_)

static unsigned long check_failures_ = 0;

/* TDB_TEST_LIGHT=1 (set by the valgrind run of scripts/test.d/65-sanitizers.sh, where the
 * heaviest tests would take minutes): those tests run the same checks on a smaller workload
 * (fewer or smaller tiles, fewer levels) and say so. */
static inline int check_light_(void) {
  const char *v = getenv("TDB_TEST_LIGHT");
  return v != NULL && v[0] != '\0' && v[0] != '0';
}

/* Set TDB_CHECK_KEEP_GOING=1 to report every failing check instead of
 * stopping at the first one (debugging aid; later checks may then crash). */
static inline void check_fail_(const char *file, int line, const char *expr) {
  fprintf(stderr, "%s:%d: CHECK failed: %s\n", file, line, expr);
  fflush(stderr);
  const char *kg = getenv("TDB_CHECK_KEEP_GOING");
  if (kg != NULL && kg[0] != '\0' && kg[0] != '0') {
    check_failures_++;
    return;
  }
  exit(1);
}

/* The library names its statuses (tdb_status_name, "TDB_ERR_UNKNOWN" for other values). */
static inline const char *check_status_name_(int st) { return tdb_status_name((int32_t)st); }

/* Case-insensitive substring search (ASCII). */
static inline int check_contains_ci_(const char *hay, const char *needle) {
  if (hay == NULL || needle == NULL) return 0;
  size_t n = strlen(needle);
  for (; *hay; hay++) {
    size_t i = 0;
    while (i < n && hay[i]) {
      char a = hay[i], b = needle[i];
      if (a >= 'A' && a <= 'Z') a = (char)(a - 'A' + 'a');
      if (b >= 'A' && b <= 'Z') b = (char)(b - 'A' + 'a');
      if (a != b) break;
      i++;
    }
    if (i == n) return 1;
  }
  return n == 0;
}

#define CHECK(expr)                                       \
  do {                                                    \
    check_count_++;                                       \
    if (!(expr)) check_fail_(__FILE__, __LINE__, #expr); \
  } while (0)

/* Like CHECK but prints extra context (printf-style) before failing. */
#define CHECK_MSG(expr, ...)                            \
  do {                                                  \
    check_count_++;                                     \
    if (!(expr)) {                                      \
      fprintf(stderr, "%s:%d: ", __FILE__, __LINE__);   \
      fprintf(stderr, __VA_ARGS__);                     \
      fprintf(stderr, "\n");                            \
      check_fail_(__FILE__, __LINE__, #expr);           \
    }                                                   \
  } while (0)

static inline void check_status_(int got, int want, const char *file, int line,
                                 const char *expr) {
  tdb_error_t *err = check_err_;
  check_err_ = NULL;
  check_count_++;
  if (got != want) {
    fprintf(stderr, "%s:%d: %s\n    returned %s (%d), expected %s (%d)\n", file,
            line, expr, check_status_name_(got), got, check_status_name_(want),
            want);
    if (err != NULL) {
      const char *m = tdb_error_message(err);
      fprintf(stderr, "    error message: %s\n", m ? m : "(null)");
    }
    check_fail_(file, line, expr);
  }
  if (want == 0) {
    if (err != NULL) {
      fprintf(stderr, "%s:%d: %s\n    succeeded but set *error\n", file, line, expr);
      check_fail_(file, line, expr);
    }
    check_last_msg_[0] = '\0';
    return;
  }
  /* Failure: an owned error with the same status and a non-empty message. */
  check_count_++;
  if (err == NULL) {
    fprintf(stderr, "%s:%d: %s\n    failed with %s but left *error NULL\n", file,
            line, expr, check_status_name_(got));
    check_fail_(file, line, expr);
  }
  check_count_++;
  if ((int)tdb_error_status(err) != want) {
    fprintf(stderr, "%s:%d: %s\n    tdb_error_status() = %d, expected %d\n", file,
            line, expr, (int)tdb_error_status(err), want);
    check_fail_(file, line, expr);
  }
  const char *msg = tdb_error_message(err);
  check_count_++;
  if (msg == NULL || msg[0] == '\0') {
    fprintf(stderr, "%s:%d: %s\n    error message is empty\n", file, line, expr);
    check_fail_(file, line, expr);
  }
  strncpy(check_last_msg_, msg ? msg : "", sizeof check_last_msg_ - 1);
  check_last_msg_[sizeof check_last_msg_ - 1] = '\0';
  tdb_error_free(err);
}

/* The call must succeed. */
#define CHECK_OK(call)                                          \
  do {                                                          \
    check_err_ = NULL;                                          \
    int check_st_ = (int)(call);                                \
    check_status_(check_st_, 0, __FILE__, __LINE__, #call);     \
  } while (0)

/* The call must fail with `status`; its message is then in check_last_msg_. */
#define CHECK_ERR(call, status)                                          \
  do {                                                                   \
    check_err_ = NULL;                                                   \
    int check_st_ = (int)(call);                                         \
    check_status_(check_st_, (int)(status), __FILE__, __LINE__, #call);  \
  } while (0)

/* The last CHECK_ERR message must contain `needle` (case-insensitive). */
#define CHECK_MSG_HAS(needle)                                                  \
  CHECK_MSG(check_contains_ci_(check_last_msg_, (needle)),                     \
            "error message \"%s\" does not mention \"%s\"", check_last_msg_,   \
            (needle))

#define CHECK_DONE(name)                                                   \
  do {                                                                     \
    if (check_failures_) {                                                 \
      printf("%s: %lu of %lu checks failed\n", (name), check_failures_,    \
             check_count_);                                                \
      fflush(stdout);                                                      \
      return 1;                                                            \
    }                                                                      \
    printf("%s: %lu checks passed\n", (name), check_count_);               \
    fflush(stdout);                                                        \
    return 0;                                                              \
  } while (0)

/* ---- small byte helpers shared by the tests ---- */

static inline uint32_t rd_u32(const uint8_t *p) {
  return (uint32_t)p[0] | ((uint32_t)p[1] << 8) | ((uint32_t)p[2] << 16) |
         ((uint32_t)p[3] << 24);
}

static inline uint64_t rd_u64(const uint8_t *p) {
  return (uint64_t)rd_u32(p) | ((uint64_t)rd_u32(p + 4) << 32);
}

static inline void wr_u32(uint8_t *p, uint32_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
  p[2] = (uint8_t)(v >> 16);
  p[3] = (uint8_t)(v >> 24);
}

static inline void wr_u64(uint8_t *p, uint64_t v) {
  wr_u32(p, (uint32_t)v);
  wr_u32(p + 4, (uint32_t)(v >> 32));
}

/* Parses a hex string, ignoring spaces and '|'. Returns the byte count;
 * exits on malformed input or overflow of `cap`. */
static inline size_t hex_decode(const char *hex, uint8_t *out, size_t cap) {
  size_t n = 0;
  int hi = -1;
  for (; *hex; hex++) {
    char c = *hex;
    int v = 0;
    if (c == ' ' || c == '|' || c == '\n') continue;
    if (c >= '0' && c <= '9') v = c - '0';
    else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
    else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
    else {
      check_fail_(__FILE__, __LINE__, "hex_decode: bad hex digit");
      continue;
    }
    if (hi < 0) {
      hi = v;
    } else {
      if (n >= cap) check_fail_(__FILE__, __LINE__, "hex_decode: buffer too small");
      out[n++] = (uint8_t)(hi * 16 + v);
      hi = -1;
    }
  }
  if (hi >= 0) check_fail_(__FILE__, __LINE__, "hex_decode: odd digit count");
  return n;
}

static inline void dump_hex(const char *label, const uint8_t *p, size_t n) {
  fprintf(stderr, "    %s (%zu bytes): ", label, n);
  for (size_t i = 0; i < n && i < 256; i++) fprintf(stderr, "%02x", p[i]);
  if (n > 256) fprintf(stderr, "...");
  fprintf(stderr, "\n");
}

/* got[0..got_n) must equal the bytes written in `hex`. */
#define CHECK_BYTES_HEX(got, got_n, hex)                                     \
  do {                                                                       \
    static uint8_t check_exp_[4096];                                         \
    size_t check_exp_n_ = hex_decode((hex), check_exp_, sizeof check_exp_); \
    const uint8_t *check_got_ = (const uint8_t *)(got);                      \
    size_t check_got_n_ = (size_t)(got_n);                                   \
    check_count_++;                                                          \
    if (check_got_n_ != check_exp_n_ ||                                      \
        (check_exp_n_ && memcmp(check_got_, check_exp_, check_exp_n_))) {    \
      dump_hex("got     ", check_got_, check_got_n_);                        \
      dump_hex("expected", check_exp_, check_exp_n_);                        \
      check_fail_(__FILE__, __LINE__, #got " == " #hex);                     \
    }                                                                        \
  } while (0)

/* got[0..got_n) must equal exp[0..exp_n). */
#define CHECK_MEM(got, got_n, exp, exp_n)                                      \
  do {                                                                         \
    const uint8_t *check_g_ = (const uint8_t *)(got);                          \
    const uint8_t *check_x_ = (const uint8_t *)(exp);                          \
    size_t check_gn_ = (size_t)(got_n), check_xn_ = (size_t)(exp_n);          \
    check_count_++;                                                            \
    if (check_gn_ != check_xn_ ||                                              \
        (check_xn_ && memcmp(check_g_, check_x_, check_xn_))) {                \
      size_t check_i_ = 0;                                                     \
      while (check_i_ < check_gn_ && check_i_ < check_xn_ &&                   \
             check_g_[check_i_] == check_x_[check_i_])                         \
        check_i_++;                                                            \
      fprintf(stderr, "    sizes %zu vs %zu, first difference at byte %zu\n", \
              check_gn_, check_xn_, check_i_);                                 \
      check_fail_(__FILE__, __LINE__, #got " == " #exp);                       \
    }                                                                          \
  } while (0)

/* Deterministic pseudo-random bytes (xorshift). */
static inline void fill_random(uint8_t *p, size_t n, uint64_t seed) {
  uint64_t s = seed * 0x9E3779B97F4A7C15ull + 1;
  for (size_t i = 0; i < n; i++) {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    p[i] = (uint8_t)(s >> 24);
  }
}

static inline void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (p == NULL) check_fail_(__FILE__, __LINE__, "malloc");
  return p;
}

#endif
