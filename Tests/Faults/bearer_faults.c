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
//
// libfaketime is not used: it empties Swift's CommandLine.arguments. Only the test target builds this file (with
// the system's C compiler, at test time); it is not part of the product.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
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
