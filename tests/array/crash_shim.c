/* Exact kill points for tests/array/run_crash_tests.py, from outside the writer: preloaded
 * (LD_PRELOAD) into `tdbf array write`, this counts the calls through which a process changes
 * files (open for writing or creating, write, pwrite, fsync, fdatasync, mkdir, unlink, rmdir,
 * rename) and, when TDBF_CRASH_AT=N, kills the process with SIGKILL just before the N-th one:
 * everything before it is in the page cache, nothing after it happened. With
 * TDBF_CRASH_COUNT=FILE the process writes the number of calls it made to FILE when it exits,
 * so that the test knows the range of kill points. The writer itself has no hook. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

static long kill_at = -1;
static long count = 0;
static const char *count_file = NULL;
static int done = 0;

__attribute__((constructor)) static void init(void) {
    const char *s = getenv("TDBF_CRASH_AT");
    if (s != NULL) kill_at = atol(s);
    count_file = getenv("TDBF_CRASH_COUNT");
}

__attribute__((destructor)) static void fini(void) {
    long n = __atomic_load_n(&count, __ATOMIC_SEQ_CST);
    done = 1;
    if (count_file != NULL) {
        FILE *f = fopen(count_file, "w");
        if (f != NULL) {
            fprintf(f, "%ld\n", n);
            fclose(f);
        }
    }
}

static void event(void) {
    if (done) return;
    if (__atomic_add_fetch(&count, 1, __ATOMIC_SEQ_CST) == kill_at) raise(SIGKILL);
}

#define REAL(name, ret, args) static ret (*real_##name) args = NULL; \
    if (real_##name == NULL) real_##name = (ret (*) args)dlsym(RTLD_NEXT, #name)

static int writes(int flags) { return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0; }

/* open and open64 (path, flags[, mode]); openat and openat64 (dir, path, flags[, mode]). */
#define OPEN_WRAPPER(name, params, args) \
    int name params { \
        REAL(name, int, params); \
        va_list ap; \
        va_start(ap, flags); \
        mode_t mode = (mode_t)va_arg(ap, int); \
        va_end(ap); \
        if (writes(flags)) event(); \
        return real_##name args; \
    }

OPEN_WRAPPER(open, (const char *path, int flags, ...), (path, flags, mode))
OPEN_WRAPPER(open64, (const char *path, int flags, ...), (path, flags, mode))
OPEN_WRAPPER(openat, (int dir, const char *path, int flags, ...), (dir, path, flags, mode))
OPEN_WRAPPER(openat64, (int dir, const char *path, int flags, ...), (dir, path, flags, mode))

ssize_t write(int fd, const void *buf, size_t n) {
    REAL(write, ssize_t, (int, const void *, size_t));
    if (fd > 2) event();
    return real_write(fd, buf, n);
}

ssize_t pwrite64(int fd, const void *buf, size_t n, off_t at) {
    REAL(pwrite64, ssize_t, (int, const void *, size_t, off_t));
    event();
    return real_pwrite64(fd, buf, n, at);
}

int fsync(int fd) {
    REAL(fsync, int, (int));
    event();
    return real_fsync(fd);
}

int fdatasync(int fd) {
    REAL(fdatasync, int, (int));
    event();
    return real_fdatasync(fd);
}

int mkdir(const char *path, mode_t mode) {
    REAL(mkdir, int, (const char *, mode_t));
    event();
    return real_mkdir(path, mode);
}

int unlink(const char *path) {
    REAL(unlink, int, (const char *));
    event();
    return real_unlink(path);
}

int rmdir(const char *path) {
    REAL(rmdir, int, (const char *));
    event();
    return real_rmdir(path);
}

int rename(const char *from, const char *to) {
    REAL(rename, int, (const char *, const char *));
    event();
    return real_rename(from, to);
}
