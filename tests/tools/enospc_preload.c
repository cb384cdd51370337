// Fault injection for tests: a full disk. Preloaded (LD_PRELOAD) into a process, it lets
// writes to regular files under the directory ENOSPC_DIR through until ENOSPC_AFTER_BYTES
// bytes have been written there in all, then fails them as a full file system does: a
// short write up to the limit, then -1 with errno = ENOSPC. Other files (the log, stdout)
// are not affected.
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/uio.h>
#include <unistd.h>

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static long long budget = -1;  // bytes still allowed; -1: not configured
static char dir[PATH_MAX];
static size_t dir_len;
static int configured;

static void configure(void) {
  if (configured) return;
  configured = 1;
  const char* after = getenv("ENOSPC_AFTER_BYTES");
  const char* d = getenv("ENOSPC_DIR");
  if (!after || !d || !realpath(d, dir)) return;
  dir_len = strlen(dir);
  budget = atoll(after);
}

static int watched(int fd) {
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  char link[64], target[PATH_MAX];
  snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
  const ssize_t n = readlink(link, target, sizeof target - 1);
  if (n <= 0) return 0;
  target[n] = '\0';
  return strncmp(target, dir, dir_len) == 0 && target[dir_len] == '/';
}

// How many of `want` bytes may be written now (0: the disk is full).
static size_t allow(int fd, size_t want) {
  pthread_mutex_lock(&lock);
  configure();
  size_t granted = want;
  if (budget >= 0 && watched(fd)) {
    granted = (long long)want <= budget ? want : (size_t)budget;
    budget -= (long long)granted;
  }
  pthread_mutex_unlock(&lock);
  return granted;
}

typedef ssize_t (*write_fn)(int, const void*, size_t);
typedef ssize_t (*pwrite_fn)(int, const void*, size_t, off_t);
typedef ssize_t (*writev_fn)(int, const struct iovec*, int);
#define REAL(name, type)   \
  static type real_##name; \
  if (!real_##name) real_##name = (type)dlsym(RTLD_NEXT, #name)

ssize_t write(int fd, const void* buf, size_t count) {
  REAL(write, write_fn);
  const size_t n = count ? allow(fd, count) : 0;
  if (count && n == 0) {
    errno = ENOSPC;
    return -1;
  }
  return real_write(fd, buf, n);
}

ssize_t pwrite(int fd, const void* buf, size_t count, off_t offset) {
  REAL(pwrite, pwrite_fn);
  const size_t n = count ? allow(fd, count) : 0;
  if (count && n == 0) {
    errno = ENOSPC;
    return -1;
  }
  return real_pwrite(fd, buf, n, offset);
}

ssize_t pwrite64(int fd, const void* buf, size_t count, off_t offset) {
  return pwrite(fd, buf, count, offset);
}

ssize_t writev(int fd, const struct iovec* iov, int iovcnt) {
  REAL(writev, writev_fn);
  size_t total = 0;
  for (int i = 0; i < iovcnt; ++i) total += iov[i].iov_len;
  const size_t n = total ? allow(fd, total) : 0;
  if (total && n == 0) {
    errno = ENOSPC;
    return -1;
  }
  if (n == total) return real_writev(fd, iov, iovcnt);
  // A short write: the first n bytes of the vector.
  REAL(write, write_fn);
  size_t done = 0;
  for (int i = 0; i < iovcnt && done < n; ++i) {
    size_t part = iov[i].iov_len < n - done ? iov[i].iov_len : n - done;
    const ssize_t w = real_write(fd, iov[i].iov_base, part);
    if (w < 0) return done ? (ssize_t)done : -1;
    done += (size_t)w;
    if ((size_t)w < part) break;
  }
  return (ssize_t)done;
}
