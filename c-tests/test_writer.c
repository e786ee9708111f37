/* The array writer through the C API: tdb_array_create from schema JSON, tdb_writer_t dense
 * (row-major box, global-order streaming), sparse (unordered, var-size, nullable), array
 * metadata put/delete/write (several changes as one file), reads back through tdb_array_t,
 * and the errors that commit nothing. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <dirent.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"

/* This program's path (argv[0]), for the read-only check's child. */
static const char *self_path;

static char tmp_[256];

/* A fresh folder name under a per-run temporary folder. */
static const char *scratch(const char *name) {
  static char path[512];
  if (tmp_[0] == '\0') {
    strcpy(tmp_, "/tmp/tdbf_c_writer_XXXXXX");
    CHECK(mkdtemp(tmp_) != NULL);
  }
  int n = snprintf(path, sizeof path, "%s/%s", tmp_, name);
  CHECK(n > 0 && (size_t)n < sizeof path);
  return path;
}

/* Entries of a folder, "." and ".." aside. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  CHECK(d != NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(d);
  return n;
}

static int sub_entries(const char *array, const char *sub) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", array, sub);
  return entries(p);
}

static const char *DENSE =
    "{\"sparse\": false,"
    " \"dimensions\": [{\"name\": \"r\", \"type\": \"INT32\", \"domain\": [1, 6], \"tile\": 2},"
    "                  {\"name\": \"c\", \"type\": \"INT32\", \"domain\": [1, 4], \"tile\": 2}],"
    " \"attributes\": [{\"name\": \"a\", \"type\": \"INT32\", \"filters\": \"byteshuffle,zstd:3\"},"
    "                  {\"name\": \"f\", \"type\": \"FLOAT64\", \"nullable\": true}]}";

static const char *SPARSE =
    "{\"sparse\": true, \"capacity\": 3,"
    " \"dimensions\": [{\"name\": \"x\", \"type\": \"INT64\", \"domain\": [0, 99], \"tile\": 10}],"
    " \"attributes\": [{\"name\": \"s\", \"type\": \"STRING_UTF8\", \"cell_val_num\": \"var\","
    "                   \"filters\": \"zstd:1\"}]}";

/* Reads `field` over `box` (NULL: the non-empty domain). */
static tdb_result_t *read_box(const char *path, const char *field, const void *box,
                              size_t box_size) {
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  tdb_result_t *r = NULL;
  CHECK_OK(tdb_array_read(a, field, box, box_size, &r, E));
  tdb_array_free(a);
  return r;
}

static void test_dense(void) {
  const char *path = scratch("dense");
  CHECK_OK(tdb_array_create(path, DENSE, NULL, 0, E));
  CHECK_ERR(tdb_array_create(path, DENSE, NULL, 0, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("already exists");

  /* Rows 2..4, columns 1..4, row-major, at timestamp 7. */
  tdb_writer_t *w = NULL;
  CHECK_OK(tdb_writer_open(path, NULL, 0, 7, &w, E));
  int32_t box[4] = {2, 4, 1, 4};
  CHECK_ERR(tdb_writer_set_subarray(w, box, 12, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_writer_set_subarray(w, box, sizeof box, E));
  int32_t a[12];
  double f[12];
  uint8_t valid[12];
  for (int i = 0; i < 12; i++) {
    a[i] = 100 + i;
    f[i] = i * 0.5;
    valid[i] = (uint8_t)(i % 3 != 0);
  }
  CHECK_OK(tdb_writer_set_data(w, "a", a, sizeof a, E));
  CHECK_ERR(tdb_writer_set_data(w, "r", a, sizeof a, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("dimension");
  CHECK_ERR(tdb_writer_set_data(w, "nope", a, sizeof a, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_writer_set_data(w, "a", NULL, 4, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_writer_set_data(w, "f", f, sizeof f, E));
  CHECK_OK(tdb_writer_set_validity(w, "f", valid, sizeof valid, E));
  CHECK_ERR(tdb_writer_set_validity(w, "a", valid, sizeof valid, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("not nullable");
  const char *name = NULL;
  CHECK_ERR(tdb_writer_fragment_name(w, &name, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  CHECK_OK(tdb_writer_fragment_name(w, &name, E));
  CHECK(strncmp(name, "__7_7_", 6) == 0 && strlen(name) == 6 + 32 + 3);
  CHECK_ERR(tdb_writer_submit(w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("finalized");
  CHECK_ERR(tdb_writer_finalize(w, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_writer_free(w);
  CHECK(sub_entries(path, "__commits") == 1);

  const int32_t whole[4] = {1, 6, 1, 4};
  tdb_result_t *r = read_box(path, "a", whole, sizeof whole);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == 24 * 4);
  const int32_t *cells = (const int32_t *)data;
  /* The whole domain is read row-major; unwritten cells hold the fill value (INT32_MIN). */
  for (int row = 1; row <= 6; row++)
    for (int col = 1; col <= 4; col++) {
      int32_t want = (row >= 2 && row <= 4) ? 100 + (row - 2) * 4 + (col - 1) : INT32_MIN;
      CHECK(cells[(row - 1) * 4 + (col - 1)] == want);
    }
  tdb_result_free(r);
  r = read_box(path, "f", whole, sizeof whole);
  const uint8_t *v = NULL;
  size_t count = 0;
  CHECK_OK(tdb_result_validity(r, &v, &count, E));
  CHECK(count == 24 && v[4] == 0 && v[5] == 1 && v[7] == 0 && v[0] == 0);
  tdb_result_free(r);

  /* Global order: whole tiles of a tile-aligned box (rows 5..6, columns 1..4), two batches of
   * one 2x2 tile each, streamed into one fragment. */
  CHECK_OK(tdb_writer_open(path, NULL, 0, 8, &w, E));
  CHECK_OK(tdb_writer_set_layout(w, TDB_GLOBAL_ORDER, E));
  CHECK_ERR(tdb_writer_set_layout(w, 7, E), TDB_ERR_INVALID_ARGUMENT);
  int32_t box2[4] = {5, 6, 1, 4};
  CHECK_OK(tdb_writer_set_subarray(w, box2, sizeof box2, E));
  for (int t = 0; t < 2; t++) {
    int32_t tile[4] = {t * 10 + 1, t * 10 + 2, t * 10 + 3, t * 10 + 4};
    double tf[4] = {0, 0, 0, 0};
    uint8_t tv[4] = {1, 1, 1, 1};
    CHECK_OK(tdb_writer_set_data(w, "a", tile, sizeof tile, E));
    CHECK_OK(tdb_writer_set_data(w, "f", tf, sizeof tf, E));
    CHECK_OK(tdb_writer_set_validity(w, "f", tv, sizeof tv, E));
    CHECK_OK(tdb_writer_submit(w, E));
  }
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
  r = read_box(path, "a", whole, sizeof whole);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  cells = (const int32_t *)data;
  /* Tile (5..6, 1..2) then (5..6, 3..4), each row-major inside. */
  CHECK(cells[4 * 4 + 0] == 1 && cells[4 * 4 + 1] == 2 && cells[5 * 4 + 0] == 3);
  CHECK(cells[4 * 4 + 2] == 11 && cells[5 * 4 + 3] == 14 && cells[1 * 4 + 0] == 100 && cells[2 * 4 + 0] == 104);
  tdb_result_free(r);

  /* Errors commit nothing: a wrong cell count, a missing field, a box outside the domain, and
   * a writer freed without finalize. */
  int before = sub_entries(path, "__commits");
  CHECK_OK(tdb_writer_open(path, NULL, 0, 9, &w, E));
  CHECK_OK(tdb_writer_set_subarray(w, box, sizeof box, E));
  CHECK_OK(tdb_writer_set_data(w, "a", a, 11 * 4, E));
  CHECK_OK(tdb_writer_set_data(w, "f", f, sizeof f, E));
  CHECK_OK(tdb_writer_set_validity(w, "f", valid, sizeof valid, E));
  CHECK_ERR(tdb_writer_submit(w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("cells");
  CHECK_ERR(tdb_writer_finalize(w, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_writer_free(w);
  CHECK_OK(tdb_writer_open(path, NULL, 0, 9, &w, E));
  CHECK_OK(tdb_writer_set_data(w, "a", a, sizeof a, E));
  CHECK_OK(tdb_writer_set_subarray(w, box, sizeof box, E));
  CHECK_ERR(tdb_writer_submit(w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("field f has no data");
  tdb_writer_free(w);
  CHECK_OK(tdb_writer_open(path, NULL, 0, 9, &w, E));
  int32_t outside[4] = {5, 7, 1, 4};
  CHECK_ERR(tdb_writer_set_subarray(w, outside, sizeof outside, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_writer_set_subarray(w, box, sizeof box, E));
  CHECK_OK(tdb_writer_set_data(w, "a", a, sizeof a, E));
  CHECK_OK(tdb_writer_set_data(w, "f", f, sizeof f, E));
  CHECK_OK(tdb_writer_set_validity(w, "f", valid, sizeof valid, E));
  CHECK_OK(tdb_writer_submit(w, E));
  tdb_writer_free(w); /* never finalized */
  CHECK(sub_entries(path, "__commits") == before);
  CHECK(sub_entries(path, "__fragments") == before);
  tdb_writer_free(NULL);
  CHECK_ERR(tdb_writer_open(scratch("missing"), NULL, 0, 0, &w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_writer_open(path, NULL, 0, 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);
}

static void test_sparse_and_metadata(void) {
  const char *path = scratch("sparse");
  CHECK_ERR(tdb_array_create(path, "{\"sparse\": true}", NULL, 0, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_array_create(path, SPARSE, NULL, 0, E));
  tdb_writer_t *w = NULL;
  CHECK_OK(tdb_writer_open(path, NULL, 0, 3, &w, E));
  /* Unordered: sorted into global order by the writer. */
  int64_t x[5] = {42, 7, 99, 0, 13};
  const char *text = "fortysevenninetyzerothirteen";
  uint64_t offs[5] = {0, 5, 10, 16, 20};
  CHECK_OK(tdb_writer_set_data(w, "x", x, sizeof x, E));
  CHECK_OK(tdb_writer_set_data(w, "s", text, strlen(text), E));
  CHECK_ERR(tdb_writer_set_offsets(w, "x", offs, 5, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_writer_set_offsets(w, "s", offs, 5, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
  tdb_result_t *r = read_box(path, "x", NULL, 0);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == 40);
  const int64_t *xs = (const int64_t *)data;
  CHECK(xs[0] == 0 && xs[1] == 7 && xs[2] == 13 && xs[3] == 42 && xs[4] == 99);
  tdb_result_free(r);
  r = read_box(path, "s", NULL, 0);
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == strlen(text) && memcmp(data, "zeroseventhirteenfortyninety", size) == 0);
  tdb_result_free(r);

  /* Outside the domain and duplicates (not allowed): refused, nothing committed. */
  CHECK_OK(tdb_writer_open(path, NULL, 0, 4, &w, E));
  int64_t bad[2] = {5, 100};
  uint64_t o2[2] = {0, 1};
  CHECK_OK(tdb_writer_set_data(w, "x", bad, sizeof bad, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "ab", 2, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o2, 2, E));
  CHECK_ERR(tdb_writer_submit(w, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_writer_free(w);
  CHECK_OK(tdb_writer_open(path, NULL, 0, 4, &w, E));
  int64_t dup[2] = {5, 5};
  CHECK_OK(tdb_writer_set_data(w, "x", dup, sizeof dup, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "ab", 2, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o2, 2, E));
  CHECK_ERR(tdb_writer_submit(w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("Duplicate");
  tdb_writer_free(w);
  CHECK(sub_entries(path, "__commits") == 1);

  /* Metadata: put, replace, delete, at chosen timestamps. */
  int32_t v[2] = {5, 6};
  CHECK_OK(tdb_array_metadata_put(path, NULL, 0, 10, "pair", TDB_INT32, 2, v, sizeof v, E));
  CHECK_OK(tdb_array_metadata_put(path, NULL, 0, 11, "title", TDB_STRING_UTF8, 5, "hello", 5,
                                  E));
  CHECK_OK(tdb_array_metadata_delete(path, NULL, 0, 12, "pair", E));
  CHECK_ERR(tdb_array_metadata_put(path, NULL, 0, 13, "x", TDB_INT32, 2, v, 4, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_metadata_put(path, NULL, 0, 13, "x", TDB_ANY, 1, v, 1, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_metadata_put(path, NULL, 0, 13, "x", 99, 1, v, 1, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(sub_entries(path, "__meta") == 3);
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  uint32_t n = 0;
  CHECK_OK(tdb_array_metadata_count(a, &n, E));
  CHECK(n == 1);
  tdb_array_free(a);
  CHECK_OK(tdb_array_open_at(path, NULL, 0, 0, 11, &a, E));
  CHECK_OK(tdb_array_metadata_count(a, &n, E));
  CHECK(n == 2);
  tdb_array_free(a);

  /* Several changes as one file: two puts and a deletion; a bad change writes nothing. */
  const char *names[3] = {"a", "b", "title"};
  tdb_datatype_t types[3] = {TDB_INT32, TDB_STRING_UTF8, TDB_INT32};
  uint32_t counts[3] = {2, 2, 0};
  const void *values[3] = {v, "hi", NULL};
  size_t sizes[3] = {sizeof v, 2, 0};
  uint8_t deletes[3] = {0, 0, 1};
  size_t bad_sizes[3] = {4, 2, 0};
  CHECK_ERR(tdb_array_metadata_write(path, NULL, 0, 14, names, types, counts, values, bad_sizes,
                                     deletes, 3, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(sub_entries(path, "__meta") == 3);
  CHECK_OK(tdb_array_metadata_write(path, NULL, 0, 14, names, types, counts, values, sizes,
                                    deletes, 3, NULL, E));
  CHECK(sub_entries(path, "__meta") == 4);
  CHECK_OK(tdb_array_metadata_write(path, NULL, 0, 15, NULL, NULL, NULL, NULL, NULL, NULL, 0,
                                    NULL, E));
  CHECK(sub_entries(path, "__meta") == 4);
  CHECK_OK(tdb_array_open(path, NULL, 0, &a, E));
  CHECK_OK(tdb_array_metadata_count(a, &n, E));
  CHECK(n == 2); /* a and b; title deleted */
  tdb_array_free(a);
}

static void test_encrypted(void) {
  const char *path = scratch("encrypted");
  uint8_t key[32];
  for (int i = 0; i < 32; i++) key[i] = (uint8_t)(i * 7 + 1);
  CHECK_ERR(tdb_array_create(path, SPARSE, key, 31, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_array_create(path, SPARSE, key, sizeof key, E));
  tdb_writer_t *w = NULL;
  CHECK_ERR(tdb_writer_open(path, NULL, 0, 0, &w, E), TDB_ERR_DECRYPTION_FAILED);
  CHECK_OK(tdb_writer_open(path, key, sizeof key, 0, &w, E));
  int64_t x[1] = {1};
  uint64_t o[1] = {0};
  CHECK_OK(tdb_writer_set_data(w, "x", x, sizeof x, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "z", 1, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o, 1, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
  /* A metadata write with a wrong key is refused before anything is written. */
  uint8_t wrong[32] = {0};
  int32_t one = 1;
  CHECK_ERR(tdb_array_metadata_put(path, wrong, 32, 0, "k", TDB_INT32, 1, &one, 4, E),
            TDB_ERR_DECRYPTION_FAILED);
  CHECK(sub_entries(path, "__meta") == 0);
  CHECK_OK(tdb_array_metadata_put(path, key, 32, 0, "k", TDB_INT32, 1, &one, 4, E));
  tdb_array_t *a = NULL;
  CHECK_OK(tdb_array_open(path, key, sizeof key, &a, E));
  uint32_t n = 0;
  CHECK_OK(tdb_array_metadata_count(a, &n, E));
  CHECK(n == 1);
  tdb_result_t *r = NULL;
  CHECK_OK(tdb_array_read(a, "s", NULL, 0, &r, E));
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == 1 && data[0] == 'z');
  tdb_result_free(r);
  tdb_array_free(a);
}

/* Operating-system failures are TDB_ERR_IO naming the path and the system's error; a
 * timestamp of UINT64_MAX is refused; unordered batches go into one fragment. */
static void test_io_errors_and_batches(void) {
  /* A parent that is a file. */
  char file[600], arr[700];
  snprintf(file, sizeof file, "%s", scratch("plain_file"));
  FILE *f = fopen(file, "w");
  CHECK(f != NULL && fputs("x", f) >= 0 && fclose(f) == 0);
  snprintf(arr, sizeof arr, "%s/sub/arr", file);
  CHECK_ERR(tdb_array_create(arr, SPARSE, NULL, 0, E), TDB_ERR_IO);
  CHECK_MSG_HAS("Not a directory");
  CHECK_MSG_HAS("plain_file/sub");

  /* A read-only folder. Root writes into any folder, so as root the call runs in a child
   * that first becomes nobody (65534). */
  char ro[600];
  snprintf(ro, sizeof ro, "%s", scratch("readonly"));
  CHECK(mkdir(ro, 0755) == 0 && chmod(ro, 0555) == 0 && chmod(tmp_, 0755) == 0);
  snprintf(arr, sizeof arr, "%s/arr", ro);
  if (geteuid() == 0) {
    fflush(NULL);
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid == 0) {
      /* A fresh process (this program again), not the fork itself: a forked child of a
       * process with pool threads has only the forking thread, so under valgrind the other
       * threads' buffers would show as leaks of the child. */
      execl(self_path, self_path, "--readonly-child", arr, (char *)NULL);
      _exit(3);
    }
    int status = 0;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  } else {
    CHECK_ERR(tdb_array_create(arr, SPARSE, NULL, 0, E), TDB_ERR_IO);
    CHECK_MSG_HAS("Permission denied");
    CHECK_MSG_HAS("readonly");
  }
  CHECK(chmod(ro, 0755) == 0);
  CHECK(strcmp(tdb_status_name(TDB_ERR_IO), "TDB_ERR_IO") == 0 && TDB_ERR_IO == 9);

  /* UINT64_MAX: refused before anything is written. */
  const char *path = scratch("batches");
  CHECK_OK(tdb_array_create(path, SPARSE, NULL, 0, E));
  tdb_writer_t *w = NULL;
  CHECK_ERR(tdb_writer_open(path, NULL, 0, UINT64_MAX, &w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("UINT64_MAX");
  CHECK(w == NULL);
  int32_t one = 1;
  CHECK_ERR(tdb_array_metadata_put(path, NULL, 0, UINT64_MAX, "k", TDB_INT32, 1, &one,
                                   sizeof one, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(sub_entries(path, "__fragments") == 0 && sub_entries(path, "__meta") == 0);

  /* Unordered: two batches, one fragment in global order. */
  CHECK_OK(tdb_writer_open(path, NULL, 0, 5, &w, E));
  int64_t x1[2] = {42, 7}, x2[3] = {99, 0, 13};
  uint64_t o1[2] = {0, 5}, o2[3] = {0, 6, 10};
  CHECK_OK(tdb_writer_set_data(w, "x", x1, sizeof x1, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "fortyseven", 10, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o1, 2, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_set_data(w, "x", x2, sizeof x2, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "ninetyzerothirteen", 18, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o2, 3, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
  CHECK(sub_entries(path, "__fragments") == 1);
  tdb_result_t *r = read_box(path, "s", NULL, 0);
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size == 28 && memcmp(data, "zeroseventhirteenfortyninety", size) == 0);
  tdb_result_free(r);

  /* Duplicates across unordered batches (the schema allows none): finalize fails, nothing
   * is committed. */
  CHECK_OK(tdb_writer_open(path, NULL, 0, 6, &w, E));
  int64_t d1[1] = {50}, d2[1] = {50};
  uint64_t o0[1] = {0};
  CHECK_OK(tdb_writer_set_data(w, "x", d1, sizeof d1, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "a", 1, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o0, 1, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_set_data(w, "x", d2, sizeof d2, E));
  CHECK_OK(tdb_writer_set_data(w, "s", "b", 1, E));
  CHECK_OK(tdb_writer_set_offsets(w, "s", o0, 1, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_ERR(tdb_writer_finalize(w, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("Duplicate");
  tdb_writer_free(w);
  CHECK(sub_entries(path, "__commits") == 1);
}

/* Removes the per-run folder (nftw-free: the tests know what they made). */
static void cleanup(void) {
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_);
  CHECK(system(cmd) == 0);
}

/* The read-only check's child (see test_io_errors_and_batches): become nobody, then creating
 * an array inside the read-only folder fails with TDB_ERR_IO naming the folder. */
static int readonly_child(const char *arr) {
  if (setgid(65534) != 0 || setuid(65534) != 0) return 2;
  tdb_error_t *err = NULL;
  tdb_status_t st = tdb_array_create(arr, SPARSE, NULL, 0, &err);
  int ok = st == TDB_ERR_IO && tdb_error_status(err) == TDB_ERR_IO &&
           strstr(tdb_error_message(err), "Permission denied") != NULL &&
           strstr(tdb_error_message(err), "readonly") != NULL;
  if (!ok) fprintf(stderr, "status %d: %s\n", (int)st, tdb_error_message(err));
  tdb_error_free(err);
  return ok ? 0 : 1;
}

int main(int argc, char **argv) {
  if (argc == 3 && strcmp(argv[1], "--readonly-child") == 0) return readonly_child(argv[2]);
  self_path = argv[0];
  test_dense();
  test_sparse_and_metadata();
  test_encrypted();
  test_io_errors_and_batches();
  cleanup();
  CHECK_DONE("test_writer");
}
