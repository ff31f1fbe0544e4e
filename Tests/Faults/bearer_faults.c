// A small LD_PRELOAD library that lets a test put faults of the machine under a real bearer-proxy process
// (#22): a wall clock that steps, and a disk that is full. The test controls both through files in the directory
// named by BEARER_FAULTS_DIR, so it can change them while the process runs:
//
//   clock-offset   a decimal number of seconds (may be negative) added to CLOCK_REALTIME, gettimeofday and time;
//                  CLOCK_MONOTONIC and CLOCK_BOOTTIME are left alone, as a real clock step leaves them.
//   elapsed        a decimal number of seconds added to every clock, monotonic ones included: time passing
//                  without the test waiting for it (only ever increase it, as time does).
//   disk-full      while this file exists, write(2), pwrite(2) and writev(2) on regular files fail with ENOSPC
//                  (sockets, pipes and terminals are unaffected).
//   read-only      while this file exists, holding an absolute directory path, everything that would change that
//                  directory or a file in it fails with EROFS, as on a read-only mount: open for writing or
//                  creating, rename, unlink, mkdir, chmod. Reading it works. (A directory chmod-ed 0500 is no
//                  substitute: its owner — the proxy — may chmod it back, and bearer-proxy does.)
//
// libfaketime is not used: it empties Swift's CommandLine.arguments. Only the test target builds this file (with
// the system's C compiler, at test time); it is not part of the product.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

static int faults_path(char *buffer, size_t size, const char *name) {
    const char *directory = getenv("BEARER_FAULTS_DIR");
    if (directory == NULL || strlen(directory) + strlen(name) + 2 > size) return 0;
    strcpy(buffer, directory);
    strcat(buffer, "/");
    strcat(buffer, name);
    return 1;
}

// A control's number of seconds, in nanoseconds; 0 when there is no file. Reads with raw system calls, so it never
// re-enters itself.
static long long seconds_in(const char *name) {
    char path[4096];
    if (!faults_path(path, sizeof path, name)) return 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char text[64];
    long count = syscall(SYS_read, fd, text, sizeof text - 1);
    syscall(SYS_close, fd);
    if (count <= 0) return 0;
    text[count] = 0;
    return (long long)(strtod(text, NULL) * 1e9);
}

static int disk_is_full(void) {
    char path[4096];
    if (!faults_path(path, sizeof path, "disk-full")) return 0;
    return syscall(SYS_faccessat, AT_FDCWD, path, F_OK) == 0;
}

static int is_regular_file(int fd) {
    struct stat info;
    return fstat(fd, &info) == 0 && S_ISREG(info.st_mode);
}

static void shift(struct timespec *time, long long offset) {
    long long nanoseconds = (long long)time->tv_sec * 1000000000LL + time->tv_nsec + offset;
    time->tv_sec = (time_t)(nanoseconds / 1000000000LL);
    time->tv_nsec = (long)(nanoseconds % 1000000000LL);
    if (time->tv_nsec < 0) {
        time->tv_nsec += 1000000000L;
        time->tv_sec -= 1;
    }
}

int clock_gettime(clockid_t clock, struct timespec *time) {
    static int (*real)(clockid_t, struct timespec *);
    if (real == NULL) real = (int (*)(clockid_t, struct timespec *))dlsym(RTLD_NEXT, "clock_gettime");
    int result = real(clock, time);
    if (result != 0) return result;
    long long offset = seconds_in("elapsed");
    if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE) offset += seconds_in("clock-offset");
    if (clock == CLOCK_REALTIME || clock == CLOCK_REALTIME_COARSE || clock == CLOCK_MONOTONIC
        || clock == CLOCK_MONOTONIC_COARSE || clock == CLOCK_MONOTONIC_RAW || clock == CLOCK_BOOTTIME) {
        shift(time, offset);
    }
    return result;
}

int gettimeofday(struct timeval *restrict value, void *restrict zone) {
    struct timespec now;
    if (clock_gettime(CLOCK_REALTIME, &now) != 0) return -1;
    value->tv_sec = now.tv_sec;
    value->tv_usec = now.tv_nsec / 1000;
    (void)zone;
    return 0;
}

time_t time(time_t *result) {
    struct timespec now;
    clock_gettime(CLOCK_REALTIME, &now);
    if (result != NULL) *result = now.tv_sec;
    return now.tv_sec;
}

ssize_t write(int fd, const void *buffer, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (real == NULL) real = (ssize_t (*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    if (count > 0 && is_regular_file(fd) && disk_is_full()) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buffer, count);
}

ssize_t pwrite(int fd, const void *buffer, size_t count, off_t offset) {
    static ssize_t (*real)(int, const void *, size_t, off_t);
    if (real == NULL) real = (ssize_t (*)(int, const void *, size_t, off_t))dlsym(RTLD_NEXT, "pwrite");
    if (count > 0 && is_regular_file(fd) && disk_is_full()) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, buffer, count, offset);
}

ssize_t writev(int fd, const struct iovec *vector, int count) {
    static ssize_t (*real)(int, const struct iovec *, int);
    if (real == NULL) real = (ssize_t (*)(int, const struct iovec *, int))dlsym(RTLD_NEXT, "writev");
    if (count > 0 && is_regular_file(fd) && disk_is_full()) {
        errno = ENOSPC;
        return -1;
    }
    return real(fd, vector, count);
}

// Whether `path` is the directory named in the read-only control, or under it. Raw system calls, as above.
static int is_read_only(const char *path) {
    char control[4096];
    if (path == NULL || path[0] != '/' || !faults_path(control, sizeof control, "read-only")) return 0;
    int fd = (int)syscall(SYS_openat, AT_FDCWD, control, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 0;
    char prefix[4096];
    long count = syscall(SYS_read, fd, prefix, sizeof prefix - 1);
    syscall(SYS_close, fd);
    if (count <= 0) return 0;
    prefix[count] = 0;
    size_t length = strcspn(prefix, "\n");
    while (length > 1 && prefix[length - 1] == '/') length--;
    return strncmp(path, prefix, length) == 0 && (path[length] == 0 || path[length] == '/');
}

static int opens_for_change(int flags) {
    return (flags & (O_WRONLY | O_RDWR | O_CREAT | O_TRUNC)) != 0;
}

static int refused(void) {
    errno = EROFS;
    return -1;
}

#define OPEN_MODE(flags, mode)                                     \
    mode_t mode = 0;                                               \
    if ((flags) & (O_CREAT | O_TMPFILE)) {                         \
        va_list arguments;                                         \
        va_start(arguments, flags);                                \
        mode = (mode_t)va_arg(arguments, int);                     \
        va_end(arguments);                                         \
    }

int open(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (real == NULL) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open");
    OPEN_MODE(flags, mode)
    if (opens_for_change(flags) && is_read_only(path)) return refused();
    return real(path, flags, mode);
}

int open64(const char *path, int flags, ...) {
    static int (*real)(const char *, int, ...);
    if (real == NULL) real = (int (*)(const char *, int, ...))dlsym(RTLD_NEXT, "open64");
    OPEN_MODE(flags, mode)
    if (opens_for_change(flags) && is_read_only(path)) return refused();
    return real(path, flags, mode);
}

int openat(int directory, const char *path, int flags, ...) {
    static int (*real)(int, const char *, int, ...);
    if (real == NULL) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat");
    OPEN_MODE(flags, mode)
    if (opens_for_change(flags) && is_read_only(path)) return refused();
    return real(directory, path, flags, mode);
}

int openat64(int directory, const char *path, int flags, ...) {
    static int (*real)(int, const char *, int, ...);
    if (real == NULL) real = (int (*)(int, const char *, int, ...))dlsym(RTLD_NEXT, "openat64");
    OPEN_MODE(flags, mode)
    if (opens_for_change(flags) && is_read_only(path)) return refused();
    return real(directory, path, flags, mode);
}

int rename(const char *from, const char *to) {
    static int (*real)(const char *, const char *);
    if (real == NULL) real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    if (is_read_only(from) || is_read_only(to)) return refused();
    return real(from, to);
}

int unlink(const char *path) {
    static int (*real)(const char *);
    if (real == NULL) real = (int (*)(const char *))dlsym(RTLD_NEXT, "unlink");
    if (is_read_only(path)) return refused();
    return real(path);
}

int mkdir(const char *path, mode_t mode) {
    static int (*real)(const char *, mode_t);
    if (real == NULL) real = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "mkdir");
    if (is_read_only(path)) {
        // An existing directory still answers EEXIST, as on a read-only mount, so "create if missing" works.
        struct stat info;
        if (stat(path, &info) == 0) {
            errno = EEXIST;
            return -1;
        }
        return refused();
    }
    return real(path, mode);
}

int chmod(const char *path, mode_t mode) {
    static int (*real)(const char *, mode_t);
    if (real == NULL) real = (int (*)(const char *, mode_t))dlsym(RTLD_NEXT, "chmod");
    if (is_read_only(path)) return refused();
    return real(path, mode);
}

int fchmodat(int directory, const char *path, mode_t mode, int flags) {
    static int (*real)(int, const char *, mode_t, int);
    if (real == NULL) real = (int (*)(int, const char *, mode_t, int))dlsym(RTLD_NEXT, "fchmodat");
    if (is_read_only(path)) return refused();
    return real(directory, path, mode, flags);
}
