/* The array lifecycle and groups through the C API: tdb_array_delete_fragments, tdb_array_vacuum,
 * tdb_array_evolve, tdb_array_delete, and tdb_group_t (members, metadata, commits), with the
 * refusals that change nothing. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <unistd.h>

#include "check.h"

static char tmp_[256];

static const char *scratch(const char *name) {
  static char path[512];
  if (tmp_[0] == '\0') {
    strcpy(tmp_, "/tmp/tdbf_c_lifecycle_XXXXXX");
    CHECK(mkdtemp(tmp_) != NULL);
  }
  int n = snprintf(path, sizeof path, "%s/%s", tmp_, name);
  CHECK(n > 0 && (size_t)n < sizeof path);
  return path;
}

static const char *SPARSE =
    "{\"sparse\": true, \"dimensions\": [{\"name\": \"d\", \"type\": \"INT32\", "
    "\"domain\": [0, 99], \"tile\": 10}], \"attributes\": [{\"name\": \"a\", \"type\": "
    "\"INT32\"}]}";

/* One fragment at timestamp t: cells d = t, a = 10 t. */
static void write_fragment(const char *path, uint64_t t) {
  tdb_writer_t *w = NULL;
  int32_t d = (int32_t)t, a = (int32_t)(10 * t);
  CHECK_OK(tdb_writer_open(path, NULL, 0, t, &w, E));
  CHECK_OK(tdb_writer_set_layout(w, TDB_UNORDERED, E));
  CHECK_OK(tdb_writer_set_data(w, "d", &d, sizeof d, E));
  CHECK_OK(tdb_writer_set_data(w, "a", &a, sizeof a, E));
  CHECK_OK(tdb_writer_submit(w, E));
  CHECK_OK(tdb_writer_finalize(w, E));
  tdb_writer_free(w);
}

static uint32_t fragment_count(const char *path) {
  tdb_array_t *array = NULL;
  uint32_t n = 0;
  CHECK_OK(tdb_array_open(path, NULL, 0, &array, E));
  CHECK_OK(tdb_array_fragment_count(array, &n, E));
  tdb_array_free(array);
  return n;
}

static void test_array_lifecycle(void) {
  char path[512];
  strcpy(path, scratch("arr"));
  CHECK_OK(tdb_array_create(path, SPARSE, NULL, 0, E));
  for (uint64_t t = 1; t <= 3; t++) write_fragment(path, t);
  CHECK(fragment_count(path) == 3);

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
  CHECK_ERR(tdb_array_evolve(path, "[{\"drop_attribute\": \"a\"}]", 5, NULL, E),
            TDB_ERR_INVALID_ARGUMENT);

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
}

int main(void) {
  test_array_lifecycle();
  test_groups();
  CHECK_DONE("test_lifecycle");
}
