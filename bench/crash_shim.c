/* An LD_PRELOAD shim for bench/reliability.py's crash figure: it stops the process it is
 * loaded into inside every write window of an artifact, so the test can look at the files
 * exactly there and then let the process go on or kill it (SIGKILL) on the spot.
 *
 * The windows, each reported as one line "<kind>\t<path>\t<path>\n" on the control socket,
 * after which the shim waits for one byte before going on:
 *   write    half of a write(2)'s bytes are in the file, the rest not yet: mid-write;
 *   rename   a rename whose destination is under the watched root, just before it;
 *   renamed  the same rename, just after it (before the directory's fsync).
 * rename, renameat and renameat2 are intercepted (os.replace calls rename; the runner's
 * directory exchange calls renameat2 through ctypes).
 *
 * Environment: WG_CRASH_FD (the control socket's descriptor), WG_CRASH_ROOT (an absolute,
 * resolved directory: only writes to regular files under it and renames into it are
 * windows) and WG_CRASH_PARENT (the controller's pid). The shim is armed only in the
 * controller's direct child, so the runner's own children (git, the sandboxed workers)
 * are never stopped even when they inherit LD_PRELOAD.
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

static int control = -1;
static char root[PATH_MAX];
static size_t root_length;

__attribute__((constructor)) static void arm(void) {
    const char *fd = getenv("WG_CRASH_FD"), *watched = getenv("WG_CRASH_ROOT"), *parent = getenv("WG_CRASH_PARENT");
    if (fd == NULL || watched == NULL || parent == NULL || atoi(parent) != (int)getppid())
        return;
    control = atoi(fd);
    fcntl(control, F_SETFD, FD_CLOEXEC);
    snprintf(root, sizeof root, "%s/", watched);
    root_length = strlen(root);
}

static int watched(const char *path) { return strncmp(path, root, root_length) == 0; }

/* The absolute path `name` names, relative to `dirfd` (AT_FDCWD: the working directory). */
static int resolve(int dirfd, const char *name, char *out) {
    char base[PATH_MAX];
    if (name[0] == '/')
        return snprintf(out, PATH_MAX, "%s", name) < PATH_MAX;
    if (dirfd == AT_FDCWD) {
        if (getcwd(base, sizeof base) == NULL)
            return 0;
    } else {
        char link[64];
        snprintf(link, sizeof link, "/proc/self/fd/%d", dirfd);
        ssize_t n = readlink(link, base, sizeof base - 1);
        if (n < 0)
            return 0;
        base[n] = '\0';
    }
    return snprintf(out, PATH_MAX, "%s/%s", base, name) < PATH_MAX;
}

/* Reports the window and waits for the controller (which may kill us here instead). */
static void stop(const char *kind, const char *first, const char *second) {
    int saved = errno;
    char line[2 * PATH_MAX + 32];
    int n = snprintf(line, sizeof line, "%s\t%s\t%s\n", kind, first, second);
    if (n > 0 && n < (int)sizeof line && syscall(SYS_write, control, line, n) == n) {
        char ack;
        syscall(SYS_read, control, &ack, 1);
    }
    errno = saved;
}

ssize_t write(int fd, const void *buffer, size_t count) {
    static ssize_t (*real)(int, const void *, size_t);
    if (real == NULL)
        real = (ssize_t(*)(int, const void *, size_t))dlsym(RTLD_NEXT, "write");
    char link[64], path[PATH_MAX];
    struct stat info;
    if (control < 0 || fd == control || count < 2 || fstat(fd, &info) != 0 || !S_ISREG(info.st_mode))
        return real(fd, buffer, count);
    snprintf(link, sizeof link, "/proc/self/fd/%d", fd);
    ssize_t length = readlink(link, path, sizeof path - 1);
    if (length < 0)
        return real(fd, buffer, count);
    path[length] = '\0';
    if (!watched(path))
        return real(fd, buffer, count);
    size_t half = count / 2;
    ssize_t done = real(fd, buffer, half);
    if (done != (ssize_t)half)
        return done;
    stop("write", path, "");
    ssize_t rest = real(fd, (const char *)buffer + half, count - half);
    return rest < 0 ? done : done + rest;
}

static int around(int olddirfd, const char *from, int newdirfd, const char *to, int (*call)(void *), void *args) {
    char source[PATH_MAX], target[PATH_MAX];
    int stops = control >= 0 && resolve(newdirfd, to, target) && watched(target) && resolve(olddirfd, from, source);
    if (stops)
        stop("rename", source, target);
    int result = call(args);
    if (stops && result == 0)
        stop("renamed", source, target);
    return result;
}

struct call { int olddirfd; const char *from; int newdirfd; const char *to; unsigned flags; };

static int call_rename(void *raw) {
    static int (*real)(const char *, const char *);
    struct call *c = raw;
    if (real == NULL)
        real = (int (*)(const char *, const char *))dlsym(RTLD_NEXT, "rename");
    return real(c->from, c->to);
}

static int call_renameat(void *raw) {
    static int (*real)(int, const char *, int, const char *);
    struct call *c = raw;
    if (real == NULL)
        real = (int (*)(int, const char *, int, const char *))dlsym(RTLD_NEXT, "renameat");
    return real(c->olddirfd, c->from, c->newdirfd, c->to);
}

static int call_renameat2(void *raw) {
    static int (*real)(int, const char *, int, const char *, unsigned);
    struct call *c = raw;
    if (real == NULL)
        real = (int (*)(int, const char *, int, const char *, unsigned))dlsym(RTLD_NEXT, "renameat2");
    if (real == NULL)
        return (int)syscall(SYS_renameat2, c->olddirfd, c->from, c->newdirfd, c->to, c->flags);
    return real(c->olddirfd, c->from, c->newdirfd, c->to, c->flags);
}

int rename(const char *from, const char *to) {
    struct call c = {AT_FDCWD, from, AT_FDCWD, to, 0};
    return around(AT_FDCWD, from, AT_FDCWD, to, call_rename, &c);
}

int renameat(int olddirfd, const char *from, int newdirfd, const char *to) {
    struct call c = {olddirfd, from, newdirfd, to, 0};
    return around(olddirfd, from, newdirfd, to, call_renameat, &c);
}

int renameat2(int olddirfd, const char *from, int newdirfd, const char *to, unsigned flags) {
    struct call c = {olddirfd, from, newdirfd, to, flags};
    return around(olddirfd, from, newdirfd, to, call_renameat2, &c);
}
