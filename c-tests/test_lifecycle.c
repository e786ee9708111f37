/* The array lifecycle and groups through the C API: tdb_array_consolidate,
 * tdb_array_consolidation_plan, tdb_array_delete_cells, tdb_array_delete_fragments,
 * tdb_array_vacuum, tdb_array_evolve, tdb_array_delete, and tdb_group_t (members, metadata,
 * commits), with the refusals that change nothing. The per-run folder is removed at the end. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <dirent.h>
#include <unistd.h>

#include "check.h"

static char tmp_[256];

/* Removes the per-run folder (nftw-free: the tests know what they made); registered with
 * atexit, so a failing check removes it too. Returns whether it is gone. */
static int remove_scratch(void) {
  if (tmp_[0] == '\0') return 1;
  char cmd[400];
  snprintf(cmd, sizeof cmd, "rm -rf '%s'", tmp_);
  int gone = system(cmd) == 0 && access(tmp_, F_OK) != 0;
  tmp_[0] = '\0';
  return gone;
}

static void remove_scratch_at_exit(void) { (void)remove_scratch(); }

static const char *scratch(const char *name) {
  static char path[512];
  if (tmp_[0] == '\0') {
    strcpy(tmp_, "/tmp/tdbf_c_lifecycle_XXXXXX");
    CHECK(mkdtemp(tmp_) != NULL);
    CHECK(atexit(remove_scratch_at_exit) == 0);
  }
  int n = snprintf(path, sizeof path, "%s/%s", tmp_, name);
  CHECK(n > 0 && (size_t)n < sizeof path);
  return path;
}

static const char *SPARSE =
    "{\"sparse\": true, \"dimensions\": [{\"name\": \"d\", \"type\": \"INT32\", "
    "\"domain\": [0, 99], \"tile\": 10}], \"attributes\": [{\"name\": \"a\", \"type\": "
    "\"INT32\"}]}";

/* Entries of the array's sub-folder `sub`, "." and ".." aside. */
static int sub_entries(const char *array, const char *sub) {
  char p[600];
  snprintf(p, sizeof p, "%s/%s", array, sub);
  DIR *dir = opendir(p);
  CHECK(dir != NULL);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(dir)) != NULL)
    if (strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0) n++;
  closedir(dir);
  return n;
}

/* One fragment at timestamp t with the one cell d, a. */
static void write_cell(const char *path, uint64_t t, int32_t d, int32_t a) {
  tdb_writer_t *w = NULL;
  CHECK_OK(tdb_writer_open(path, NULL, 0, t, &w, E));
  CHECK_OK(tdb_writer_set_layout(w, TDB_UNORDERED, E));
  CHECK_OK(tdb_writer_set_data(w, "d", &d, sizeof d, E));
  CHECK_OK(tdb_writer_set_data(w, "a", &a, sizeof a, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
}

/* One fragment at timestamp t: cells d = t, a = 10 t. */
static void write_fragment(const char *path, uint64_t t) {
  write_cell(path, t, (int32_t)t, (int32_t)(10 * t));
}

static uint32_t fragment_count(const char *path) {
  tdb_array_t *array = NULL;
  uint32_t n = 0;
  CHECK_OK(tdb_array_open(path, NULL, 0, &array, E));
  CHECK_OK(tdb_array_fragment_count(array, &n, E));
  tdb_array_free(array);
  return n;
}

/* The values of field `field` (INT32) of the whole array, in global order, into out[0..cap). */
static size_t read_i32(const char *path, const char *field, int32_t *out, size_t cap) {
  tdb_array_t *array = NULL;
  tdb_result_t *r = NULL;
  const uint8_t *data = NULL;
  size_t size = 0;
  CHECK_OK(tdb_array_open(path, NULL, 0, &array, E));
  CHECK_OK(tdb_array_read(array, field, NULL, 0, &r, E));
  CHECK_OK(tdb_result_data(r, &data, &size, E));
  CHECK(size % 4 == 0 && size / 4 <= cap);
  if (size / 4 <= cap && size > 0) memcpy(out, data, size);
  tdb_result_free(r);
  tdb_array_free(array);
  return size / 4;
}

/* The name of the i-th visible fragment (into name[0..cap)). */
static void fragment_name(const char *path, uint32_t i, char *name, size_t cap) {
  tdb_array_t *array = NULL;
  const char *n = NULL;
  CHECK_OK(tdb_array_open(path, NULL, 0, &array, E));
  CHECK_OK(tdb_array_fragment(array, i, &n, NULL, NULL, NULL, NULL, NULL, NULL, E));
  CHECK(n != NULL && strlen(n) < cap);
  strncpy(name, n, cap - 1);
  name[cap - 1] = '\0';
  tdb_array_free(array);
}

/* Consolidation in every mode, through the plan, a timestamp range and a fragment list; the
 * refusals write nothing. */
static void test_consolidate(void) {
  char path[512];
  strcpy(path, scratch("cons"));
  CHECK_OK(tdb_array_create(path, SPARSE, NULL, 0, E));
  for (uint64_t t = 1; t <= 4; t++) write_fragment(path, t);
  write_cell(path, 5, 2, 99); /* overwrites d = 2 */
  write_cell(path, 6, 7, 70);
  CHECK(fragment_count(path) == 6);
  const int32_t want_d[] = {1, 2, 3, 4, 7}, want_a[] = {10, 99, 30, 40, 70};
  int32_t got[16];

  /* Refusals: nothing is written. */
  int frags = sub_entries(path, "__fragments"), commits = sub_entries(path, "__commits");
  CHECK_ERR(tdb_array_consolidate(path, "everything", NULL, NULL, 0, 0, UINT64_MAX, NULL, 0, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("unknown consolidation mode 'everything'");
  CHECK_ERR(tdb_array_consolidate(NULL, NULL, NULL, NULL, 0, 0, UINT64_MAX, NULL, 0, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_consolidate(path, NULL, NULL, NULL, 0, 5, 1, NULL, 0, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("after the end");
  CHECK_ERR(tdb_array_consolidate(path, NULL, NULL, "short", 5, 0, UINT64_MAX, NULL, 0, E),
            TDB_ERR_INVALID_ARGUMENT);
  char n0[128], n1[128];
  fragment_name(path, 0, n0, sizeof n0);
  fragment_name(path, 1, n1, sizeof n1);
  const char *missing[] = {n0, "__1_1_00000000000000000000000000000000_22"};
  CHECK_ERR(tdb_array_consolidate(path, NULL, NULL, NULL, 0, 0, UINT64_MAX, missing, 2, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("Found 1 of 2 required fragments");
  const char *pair[] = {n0, n1};
  CHECK_ERR(tdb_array_consolidate(path, "commits", NULL, NULL, 0, 0, UINT64_MAX, pair, 2, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_consolidate(path, NULL, NULL, NULL, 0, 0, UINT64_MAX, NULL, 2, E),
            TDB_ERR_INVALID_ARGUMENT);
  tdb_config_t *cfg = NULL;
  CHECK_OK(tdb_config_alloc(&cfg, E));
  CHECK_ERR(tdb_config_set(cfg, "sm.consolidation.steps", "many", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("sm.consolidation.steps");
  CHECK_ERR(tdb_config_set(cfg, "sm.consolidation.nope", "1", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_config_set(cfg, "sm.consolidation.mode", "all", E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_config_set(cfg, "sm.consolidation.step_min_frags", "5", E));
  CHECK_OK(tdb_config_set(cfg, "sm.consolidation.step_max_frags", "2", E));
  CHECK_ERR(tdb_array_consolidate(path, NULL, cfg, NULL, 0, 0, UINT64_MAX, NULL, 0, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_MSG_HAS("Minimum fragments");
  tdb_config_free(cfg);
  CHECK(sub_entries(path, "__fragments") == frags && sub_entries(path, "__commits") == commits);
  CHECK(fragment_count(path) == 6);

  /* TileDB's consolidation plan: d = 2 is written at t = 2 and t = 5, so those two overlap;
   * nothing else does. With a large desired size every small fragment joins them. */
  tdb_array_t *array = NULL;
  char plan[2048];
  size_t need = 0;
  CHECK_OK(tdb_array_open(path, NULL, 0, &array, E));
  CHECK_ERR(tdb_array_consolidation_plan(array, 1, NULL, 0, &need, E), TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(need > 2 && need < sizeof plan);
  memset(plan, 'x', sizeof plan);
  CHECK_ERR(tdb_array_consolidation_plan(array, 1, plan, need - 1, &need, E),
            TDB_ERR_BUFFER_TOO_SMALL);
  CHECK(plan[0] == 'x');
  CHECK_OK(tdb_array_consolidation_plan(array, 1, plan, sizeof plan, &need, E));
  CHECK(strlen(plan) + 1 == need && plan[0] == '[' && plan[1] == '[');
  char n2[128], n5[128];
  fragment_name(path, 1, n2, sizeof n2);
  fragment_name(path, 4, n5, sizeof n5);
  char want[300];
  snprintf(want, sizeof want, "[\"%s\", \"%s\"]", n2, n5);
  CHECK_MSG(strncmp(plan + 1, want, strlen(want)) == 0, "plan %s, want %s first", plan, want);
  CHECK_OK(tdb_array_consolidation_plan(array, UINT64_MAX / 2, plan, sizeof plan, &need, E));
  CHECK(strncmp(plan, "[[\"", 3) == 0 && strstr(plan, "], [") == NULL);
  CHECK_ERR(tdb_array_consolidation_plan(NULL, 1, plan, sizeof plan, &need, E),
            TDB_ERR_INVALID_ARGUMENT);
  tdb_array_free(array);

  /* Exactly two listed fragments merge into one. */
  CHECK_OK(tdb_array_consolidate(path, NULL, NULL, NULL, 0, 0, UINT64_MAX, pair, 2, E));
  CHECK(fragment_count(path) == 5);
  CHECK(read_i32(path, "d", got, 16) == 5 && memcmp(got, want_d, sizeof want_d) == 0);
  CHECK(read_i32(path, "a", got, 16) == 5 && memcmp(got, want_a, sizeof want_a) == 0);

  /* The config's mode and steps, narrowed to the fragments inside [3, 5]. */
  CHECK_OK(tdb_config_alloc(&cfg, E));
  CHECK_OK(tdb_config_set(cfg, "sm.consolidation.mode", "fragments", E));
  CHECK_OK(tdb_config_set(cfg, "sm.consolidation.steps", "1", E));
  CHECK_OK(tdb_config_set(cfg, "sm.consolidation.timestamp_start", "2", E));
  CHECK_OK(tdb_array_consolidate(path, NULL, cfg, NULL, 0, 3, 5, NULL, 0, E));
  CHECK(fragment_count(path) == 3); /* [1-2], [3-5], [6] */
  CHECK(read_i32(path, "a", got, 16) == 5 && memcmp(got, want_a, sizeof want_a) == 0);

  /* The footers of the three visible fragments into one file. */
  CHECK_OK(tdb_array_consolidate(path, "fragment_meta", NULL, NULL, 0, 0, UINT64_MAX, NULL, 0, E));
  CHECK(sub_entries(path, "__fragment_meta") == 1);
  {
    tdb_array_t *fa = NULL;
    uint32_t nf = 0;
    bool has = false;
    CHECK_OK(tdb_array_open(path, NULL, 0, &fa, E));
    CHECK_OK(tdb_array_fragment_count(fa, &nf, E));
    CHECK(nf == 3);
    for (uint32_t i = 0; i < nf; i++) {
      has = false;
      CHECK_OK(tdb_array_fragment_has_consolidated_metadata(fa, i, &has, E));
      CHECK(has);
    }
    CHECK_ERR(tdb_array_fragment_has_consolidated_metadata(fa, nf, &has, E),
              TDB_ERR_INVALID_ARGUMENT);
    CHECK_ERR(tdb_array_fragment_has_consolidated_metadata(fa, 0, NULL, E),
              TDB_ERR_INVALID_ARGUMENT);
    tdb_array_free(fa);
  }

  /* Everything, then the other modes from the config and the argument. */
  CHECK_OK(tdb_array_consolidate(path, "fragments", NULL, NULL, 0, 0, UINT64_MAX, NULL, 0, E));
  CHECK(fragment_count(path) == 1);
  CHECK(read_i32(path, "d", got, 16) == 5 && memcmp(got, want_d, sizeof want_d) == 0);
  CHECK(read_i32(path, "a", got, 16) == 5 && memcmp(got, want_a, sizeof want_a) == 0);
  CHECK_OK(tdb_config_set(cfg, "sm.consolidation.mode", "commits", E));
  int before = sub_entries(path, "__commits");
  CHECK_OK(tdb_array_consolidate(path, NULL, cfg, NULL, 0, 0, UINT64_MAX, NULL, 0, E));
  CHECK(sub_entries(path, "__commits") == before + 1);
  tdb_config_free(cfg);
  int32_t v = 1;
  CHECK_OK(tdb_array_metadata_put(path, NULL, 0, 7, "m", TDB_INT32, 1, &v, sizeof v, E));
  v = 2;
  CHECK_OK(tdb_array_metadata_put(path, NULL, 0, 8, "m", TDB_INT32, 1, &v, sizeof v, E));
  CHECK(sub_entries(path, "__meta") == 2);
  CHECK_OK(tdb_array_consolidate(path, "array_meta", NULL, NULL, 0, 0, UINT64_MAX, NULL, 0, E));
  CHECK(sub_entries(path, "__meta") == 4); /* the merged file and its .vac */

  /* Vacuuming after it leaves one fragment, the .con and the .ign listing the vacuumed
   * fragments it names (as TileDB), one metadata file, and reads the same. */
  CHECK_OK(tdb_array_vacuum(path, "fragments", NULL, E));
  CHECK_OK(tdb_array_vacuum(path, "commits", NULL, E));
  CHECK_OK(tdb_array_vacuum(path, "array_meta", NULL, E));
  CHECK(sub_entries(path, "__fragments") == 1);
  CHECK(sub_entries(path, "__commits") == 2);
  CHECK(sub_entries(path, "__meta") == 1);
  CHECK(read_i32(path, "d", got, 16) == 5 && memcmp(got, want_d, sizeof want_d) == 0);
  CHECK(read_i32(path, "a", got, 16) == 5 && memcmp(got, want_a, sizeof want_a) == 0);
}

static void test_array_lifecycle(void) {
  char path[512];
  strcpy(path, scratch("arr"));
  CHECK_OK(tdb_array_create(path, SPARSE, NULL, 0, E));
  for (uint64_t t = 1; t <= 3; t++) write_fragment(path, t);
  CHECK(fragment_count(path) == 3);

  /* Deleting cells: a bad condition, the reserved timestamp and a bad key write nothing;
   * a delete at 3 hides a = 10 (written at 1) and is a commit, not a fragment. */
  int c0 = sub_entries(path, "__commits");
  CHECK_ERR(tdb_array_delete_cells(path, "nope == 1", 3, NULL, 0, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_delete_cells(path, "a == 10", UINT64_MAX, NULL, 0, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_delete_cells(path, "a == 10", 3, "short", 5, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_delete_cells(path, NULL, 3, NULL, 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(sub_entries(path, "__commits") == c0);
  CHECK_OK(tdb_array_delete_cells(path, "a == 10", 3, NULL, 0, NULL, E));
  CHECK(sub_entries(path, "__commits") == c0 + 1);
  int32_t left[4];
  CHECK(read_i32(path, "a", left, 4) == 2 && left[0] == 20 && left[1] == 30);
  tdb_array_t *at2 = NULL;
  uint32_t frags_at2 = 0;
  CHECK_OK(tdb_array_open(path, NULL, 0, &at2, E));
  CHECK_OK(tdb_array_fragment_count(at2, &frags_at2, E));
  CHECK(frags_at2 == 3);
  tdb_array_free(at2);

  CHECK_ERR(tdb_array_delete_fragments(path, 3, 1, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(fragment_count(path) == 3);
  CHECK_OK(tdb_array_delete_fragments(path, 2, 2, NULL, E));
  CHECK(fragment_count(path) == 2);

  CHECK_OK(tdb_array_vacuum(path, NULL, NULL, E));
  CHECK_OK(tdb_array_vacuum(path, "commits", NULL, E));
  CHECK_ERR(tdb_array_vacuum(path, "everything", NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_array_vacuum(NULL, NULL, NULL, E), TDB_ERR_INVALID_ARGUMENT);

  CHECK_OK(tdb_array_evolve(
      path, "[{\"add_attribute\": {\"name\": \"b\", \"type\": \"INT64\", \"fill\": 7}}]", 0,
      NULL, E));
  tdb_array_t *array = NULL;
  uint32_t attrs = 0;
  CHECK_OK(tdb_array_open(path, NULL, 0, &array, E));
  CHECK_OK(tdb_array_attribute_count(array, &attrs, E));
  CHECK(attrs == 2);
  tdb_array_free(array);
  CHECK_ERR(tdb_array_evolve(path, "[{\"drop_attribute\": \"nope\"}]", 0, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK(strstr(check_last_msg_, "does not exist") != NULL);
  CHECK_ERR(tdb_array_evolve(path, "not json", 0, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  /* An array at the current format version: nothing to upgrade; not an array: refused. */
  int schemas = sub_entries(path, "__schema");
  CHECK_OK(tdb_array_upgrade_version(path, NULL, 0, 0, NULL, E));
  CHECK(sub_entries(path, "__schema") == schemas);
  CHECK_ERR(tdb_array_upgrade_version(scratch("no_array"), NULL, 0, 0, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);
  /* An evolution stamped before the newest schema is written, as TileDB 2.30 writes it. */
  CHECK_OK(tdb_array_evolve(path, "[{\"drop_attribute\": \"b\"}]", 5, NULL, E));
  CHECK(sub_entries(path, "__schema") == schemas + 1);

  CHECK_OK(tdb_array_delete(path, NULL, E));
  CHECK_ERR(tdb_array_open(path, NULL, 0, &array, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(access(path, F_OK) != 0);
}

static void test_groups(void) {
  char group[512], sub[512], arr[512];
  strcpy(group, scratch("g"));
  strcpy(sub, scratch("g/sub"));
  strcpy(arr, scratch("garr"));
  CHECK_OK(tdb_array_create(arr, SPARSE, NULL, 0, E));
  CHECK_OK(tdb_group_create(group, NULL, E));
  CHECK_OK(tdb_group_create(sub, NULL, E));
  CHECK_ERR(tdb_group_create(group, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_group_free(NULL);

  tdb_group_t *g = NULL;
  CHECK_ERR(tdb_group_open(arr, 0, NULL, &g, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK(g == NULL);
  CHECK_OK(tdb_group_open(group, 0, NULL, &g, E));
  uint32_t n = 99;
  CHECK_OK(tdb_group_member_count(g, &n, E));
  CHECK(n == 0);
  CHECK_OK(tdb_group_add_member(g, arr, false, "arr", E));
  CHECK_OK(tdb_group_add_member(g, "sub", true, NULL, E));
  int64_t answer = 42;
  CHECK_OK(tdb_group_metadata_put(g, "answer", TDB_INT64, 1, &answer, sizeof answer, E));
  CHECK_ERR(tdb_group_metadata_put(g, "bad", TDB_INT64, 2, &answer, sizeof answer, E),
            TDB_ERR_INVALID_ARGUMENT);
  CHECK_OK(tdb_group_commit(g, E));
  CHECK_OK(tdb_group_member_count(g, &n, E));
  CHECK(n == 2);
  const char *uri = NULL, *name = NULL;
  tdb_object_type_t type = TDB_OBJECT_INVALID;
  bool relative = true;
  CHECK_OK(tdb_group_member(g, 0, &uri, &name, &type, &relative, E));
  CHECK(name != NULL && strcmp(name, "arr") == 0);
  CHECK(type == TDB_OBJECT_ARRAY && !relative);
  CHECK(strstr(uri, "garr") != NULL);
  CHECK_OK(tdb_group_member(g, 1, &uri, &name, &type, &relative, E));
  CHECK(name == NULL && type == TDB_OBJECT_GROUP && relative);
  CHECK(strstr(uri, "/g/sub") != NULL);
  CHECK_ERR(tdb_group_member(g, 2, &uri, &name, &type, &relative, E),
            TDB_ERR_INVALID_ARGUMENT);

  uint32_t count = 0, values = 0;
  tdb_datatype_t dt = 0;
  const void *value = NULL;
  CHECK_OK(tdb_group_metadata_count(g, &count, E));
  CHECK(count == 1);
  CHECK_OK(tdb_group_metadata_get(g, "answer", &dt, &values, &value, E));
  CHECK(dt == TDB_INT64 && values == 1 && *(const int64_t *)value == 42);
  const char *key = NULL;
  CHECK_OK(tdb_group_metadata_entry(g, 0, &key, NULL, NULL, NULL, E));
  CHECK(strcmp(key, "answer") == 0);
  CHECK_ERR(tdb_group_metadata_get(g, "nope", &dt, &values, &value, E),
            TDB_ERR_INVALID_ARGUMENT);

  /* A refused session writes nothing and keeps the view. */
  CHECK_OK(tdb_group_remove_member(g, "nothing", E));
  CHECK_ERR(tdb_group_commit(g, E), TDB_ERR_INVALID_ARGUMENT);
  tdb_group_free(g);
  g = NULL;

  CHECK_OK(tdb_group_open(group, 0, NULL, &g, E));
  CHECK_OK(tdb_group_remove_member(g, "arr", E));
  CHECK_OK(tdb_group_metadata_delete(g, "answer", E));
  CHECK_OK(tdb_group_commit(g, E));
  CHECK_OK(tdb_group_member_count(g, &n, E));
  CHECK(n == 1);
  CHECK_OK(tdb_group_metadata_count(g, &count, E));
  CHECK(count == 0);
  tdb_group_free(g);

  /* Metadata consolidation: the two sessions' files merged (the key put then deleted leaves
   * no entry: only the .vac is written), vacuumed down to nothing, the group reads the same. */
  int meta = sub_entries(group, "__meta");
  CHECK(meta >= 2);
  CHECK_OK(tdb_group_consolidate_metadata(group, NULL, E));
  CHECK(sub_entries(group, "__meta") == meta + 1);
  CHECK_OK(tdb_group_vacuum_metadata(group, NULL, E));
  CHECK(sub_entries(group, "__meta") == 0);
  CHECK_OK(tdb_group_open(group, 0, NULL, &g, E));
  CHECK_OK(tdb_group_metadata_count(g, &count, E));
  CHECK(count == 0);
  tdb_group_free(g);
  CHECK_ERR(tdb_group_consolidate_metadata(arr, NULL, E), TDB_ERR_INVALID_ARGUMENT);
  CHECK_ERR(tdb_group_vacuum_metadata(NULL, NULL, E), TDB_ERR_INVALID_ARGUMENT);
}

int main(void) {
  test_array_lifecycle();
  test_consolidate();
  test_groups();
  CHECK(remove_scratch());
  CHECK_DONE("test_lifecycle");
}
