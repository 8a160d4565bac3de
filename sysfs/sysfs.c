/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <limits.h>
#include <linux/openat2.h>
#include <sys/stat.h>
#include <sys/syscall.h>

#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "sysfs.h"

int sysfs_root_open(const char *path) {
        return RET_NERRNO(open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

int sysfs_path_join(const char *a, const char *b, char **ret) {
        char *p;
        int n;

        if (isempty(a) && isempty(b))
                return -EINVAL;
        if (isempty(a) || isempty(b))
                p = strdup(isempty(a) ? b : a);
        else if (asprintf(&p, "%s/%s", a, b) < 0)
                p = NULL;
        if (!p)
                return -ENOMEM;

        n = (int) strlen(p);
        if (n >= PATH_MAX) {
                free(p);
                return -ENAMETOOLONG;
        }
        *ret = p;
        return 0;
}

/* openat2() with RESOLVE_IN_ROOT keeps every lookup inside the root, whatever a fixture's or a
 * hostile tree's symlinks say. Kernels before 5.6 (or seccomp filters) refuse openat2; the real
 * /sys only holds relative links inside itself, so plain openat() is an acceptable fallback. */
static int open_in_root(int root_fd, const char *path, int flags) {
        struct open_how how = {
                .flags = (uint64_t) (flags | O_CLOEXEC),
                .resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS,
        };
        int fd;

        while (*path == '/')
                path++;
        if (*path == '\0')
                path = ".";

        /* With RESOLVE_IN_ROOT the kernel refuses ".." (EAGAIN) whenever any rename or mount
         * happened anywhere during the lookup, as it cannot then prove the walk stayed inside; sysfs
         * links are full of "..", and a busy machine renames files all the time. Retry; if the
         * machine keeps renaming, resolve without the guarantee rather than report nothing. */
        for (unsigned attempt = 0; attempt < 64; attempt++) {
                fd = (int) syscall(SYS_openat2, root_fd, path, &how, sizeof(how));
                if (fd >= 0)
                        return fd;
                if (errno != EAGAIN)
                        break;
        }
        if (errno != ENOSYS && errno != EPERM && errno != EAGAIN)
                return -errno;
        return RET_NERRNO(openat(root_fd, path, flags | O_CLOEXEC));
}

int sysfs_open(int root_fd, const char *dir, const char *attr, int flags) {
        _cleanup_(freep) char *path = NULL;
        int r;

        if (root_fd < 0)
                return -EBADF;
        r = sysfs_path_join(dir, attr, &path);
        if (r < 0)
                return r;
        return open_in_root(root_fd, path, flags);
}

int sysfs_read_buffer(int root_fd, const char *dir, const char *attr, char *buf, size_t size) {
        _cleanup_(closep) int fd = -EBADF;
        char page[SYSFS_ATTR_MAX + 1];
        size_t n = 0;

        fd = sysfs_open(root_fd, dir, attr, O_RDONLY | O_NOCTTY);
        if (fd < 0)
                return fd;

        /* A sysfs attribute arrives whole in one read (show() fills one page), and a regular file in a
         * fixture tree only reads short at its end; so a read that does not fill the buffer was the
         * last one, which saves the EOF read on thousands of attributes at start-up. */
        for (;;) {
                ssize_t k = read(fd, page + n, sizeof(page) - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                n += (size_t) k;
                if (n > SYSFS_ATTR_MAX)
                        return -EFBIG;
                if (k == 0 || (size_t) k < sizeof(page) - (n - (size_t) k))
                        break;
        }

        if (memchr(page, '\0', n))
                return -EBADMSG;
        while (n > 0 && page[n - 1] == '\n')
                n--;
        if (n >= size)
                return -ENOBUFS;
        memcpy(buf, page, n);
        buf[n] = '\0';
        return (int) n;
}

int sysfs_read_string(int root_fd, const char *dir, const char *attr, char **ret) {
        char buf[SYSFS_ATTR_MAX + 1];
        char *s;
        int r;

        r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return r;
        s = strdup(buf);
        if (!s)
                return -ENOMEM;
        *ret = s;
        return 0;
}

int sysfs_read_u64(int root_fd, const char *dir, const char *attr, uint64_t *ret) {
        char buf[64];
        int r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOBUFS ? -EINVAL : r;
        return parse_u64(buf, ret);
}

int sysfs_read_u32(int root_fd, const char *dir, const char *attr, uint32_t *ret) {
        char buf[64];
        int r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOBUFS ? -EINVAL : r;
        return parse_u32(buf, ret);
}

int sysfs_read_int(int root_fd, const char *dir, const char *attr, int *ret) {
        char buf[64];
        int r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOBUFS ? -EINVAL : r;
        return parse_int(buf, ret);
}

int sysfs_read_hex_u32(int root_fd, const char *dir, const char *attr, uint32_t *ret) {
        char buf[64];
        int r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOBUFS ? -EINVAL : r;
        return parse_hex_u32(buf, ret);
}

int sysfs_read_bool(int root_fd, const char *dir, const char *attr) {
        char buf[8];
        int r = sysfs_read_buffer(root_fd, dir, attr, buf, sizeof(buf));
        if (r < 0)
                return r == -ENOBUFS ? -EINVAL : r;
        if (streq(buf, "1"))
                return 1;
        if (streq(buf, "0"))
                return 0;
        return -EINVAL;
}

int sysfs_exists(int root_fd, const char *dir, const char *attr) {
        _cleanup_(closep) int fd = sysfs_open(root_fd, dir, attr, O_PATH);
        if (fd >= 0)
                return 1;
        if (errno_is_absent(fd))
                return 0;
        return fd;
}

int sysfs_read_link_basename(int root_fd, const char *dir, const char *attr, char **ret) {
        _cleanup_(freep) char *path = NULL;
        char target[PATH_MAX];
        const char *base;
        ssize_t n;
        int r;

        r = sysfs_path_join(dir, attr, &path);
        if (r < 0)
                return r;

        /* The link itself must be read without following it, but its parent directories may be links
         * (class/net/X is one), so resolve the parent in the root first. */
        char *slash = strrchr(path, '/');
        _cleanup_(closep) int parent = -EBADF;
        const char *name = path;
        if (slash) {
                *slash = '\0';
                parent = sysfs_open(root_fd, path, NULL, O_PATH | O_DIRECTORY);
                if (parent < 0)
                        return parent;
                name = slash + 1;
        }

        n = readlinkat(slash ? parent : root_fd, name, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';

        while (n > 1 && target[n - 1] == '/')
                target[--n] = '\0';
        base = strrchr(target, '/');
        base = base ? base + 1 : target;
        if (isempty(base) || streq(base, "..") || streq(base, "."))
                return -EINVAL;

        *ret = strdup(base);
        return *ret ? 0 : -ENOMEM;
}

static int fd_path(int fd, char *buf, size_t size) {
        char proc[64];
        ssize_t n;

        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, buf, size - 1);
        if (n < 0)
                return -errno;
        if ((size_t) n >= size - 1)
                return -ENAMETOOLONG;
        buf[n] = '\0';
        return 0;
}

int sysfs_resolve(int root_fd, const char *dir, const char *attr, char **ret) {
        _cleanup_(closep) int fd = -EBADF;
        char root_path[PATH_MAX], path[PATH_MAX];
        size_t root_len;
        const char *rel;
        int r;

        fd = sysfs_open(root_fd, dir, attr, O_PATH);
        if (fd < 0)
                return fd;

        /* The kernel knows where the fd ended up; ask it rather than re-walking the links here. */
        r = fd_path(root_fd, root_path, sizeof(root_path));
        if (r < 0)
                return r;
        r = fd_path(fd, path, sizeof(path));
        if (r < 0)
                return r;

        root_len = strlen(root_path);
        if (streq(root_path, "/"))
                root_len = 0;
        if (strncmp(path, root_path, root_len) != 0 || (path[root_len] != '/' && path[root_len] != '\0'))
                return -EXDEV;
        rel = path + root_len;
        while (*rel == '/')
                rel++;

        *ret = strdup(rel);
        return *ret ? 0 : -ENOMEM;
}

static int compare_names(const void *a, const void *b) {
        return strverscmp(*(char *const *) a, *(char *const *) b);
}

int sysfs_list_dir(int root_fd, const char *dir, char ***ret) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_(strv_freep) char **l = NULL;
        size_t n = 0, allocated = 0;
        struct dirent *de;
        int fd;

        fd = sysfs_open(root_fd, dir, NULL, O_RDONLY | O_DIRECTORY);
        if (fd < 0)
                return fd;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return -errno;
        }

        l = calloc(1, sizeof(char *));
        if (!l)
                return -ENOMEM;
        allocated = 1;

        errno = 0;
        while ((de = readdir(d))) {
                if (streq(de->d_name, ".") || streq(de->d_name, ".."))
                        continue;
                if (n + 2 > allocated) {
                        char **grown = reallocarray(l, allocated * 2, sizeof(char *));
                        if (!grown)
                                return -ENOMEM;
                        l = grown;
                        allocated *= 2;
                }
                l[n] = strdup(de->d_name);
                if (!l[n])
                        return -ENOMEM;
                l[++n] = NULL;
        }
        if (errno != 0)
                return -errno;

        qsort(l, n, sizeof(char *), compare_names);
        *ret = TAKE_PTR(l);
        return 0;
}

int sysfs_uevent_parse(char *buf, char ***ret) {
        _cleanup_(strv_freep) char **l = NULL;
        size_t n = 0, count = 1;
        char *line, *saveptr = NULL;

        for (const char *p = buf; *p; p++)
                count += *p == '\n';
        l = calloc(count + 1, sizeof(char *));
        if (!l)
                return -ENOMEM;

        for (line = strtok_r(buf, "\n", &saveptr); line; line = strtok_r(NULL, "\n", &saveptr)) {
                /* A line without '=' is not part of the uevent format; skip it rather than fail. */
                if (!strchr(line, '=') || line[0] == '=')
                        continue;
                l[n] = strdup(line);
                if (!l[n])
                        return -ENOMEM;
                n++;
        }

        *ret = TAKE_PTR(l);
        return 0;
}

int sysfs_read_uevent(int root_fd, const char *dir, char ***ret) {
        char buf[SYSFS_ATTR_MAX + 1];
        int r;

        r = sysfs_read_buffer(root_fd, dir, "uevent", buf, sizeof(buf));
        if (r < 0)
                return r;
        return sysfs_uevent_parse(buf, ret);
}

const char *sysfs_uevent_get(char *const *env, const char *key) {
        size_t len = strlen(key);

        for (size_t i = 0; env && env[i]; i++)
                if (strneq(env[i], key, len) && env[i][len] == '=')
                        return env[i] + len + 1;
        return NULL;
}
