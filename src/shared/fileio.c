/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <stdio.h>
#include <sys/random.h>
#include <sys/stat.h>

#include "fileio.h"

ssize_t loop_read(int fd, void *buf, size_t size) {
        uint8_t *p = buf;
        size_t n = 0;

        while (n < size) {
                ssize_t k = read(fd, p + n, size - n);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        return -errno;
                }
                if (k == 0)
                        break;
                n += (size_t) k;
        }
        return (ssize_t) n;
}

int read_file_head(const char *path, char *buf, size_t size) {
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t n;

        if (fd < 0)
                return -errno;
        n = loop_read(fd, buf, size - 1);
        if (n < 0)
                return (int) n;
        buf[n] = '\0';
        return (int) n;
}

int read_file_at(int dir_fd, const char *name, size_t max, char **ret, size_t *ret_size) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *buf = NULL;
        size_t n = 0, allocated = 0;
        struct stat st;

        /* O_NONBLOCK: a FIFO in the file's place would block the open until a writer came along (and
         * the daemon with it); regular files ignore the flag. */
        fd = openat(dir_fd, name, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        if ((uint64_t) st.st_size > max)
                return -EFBIG;

        for (;;) {
                if (n + 1 >= allocated) {
                        size_t want = MIN(MAX(allocated * 2, (size_t) 4096), max + 2);
                        if (want <= n + 1)
                                return -EFBIG;
                        char *grown = realloc(buf, want);
                        if (!grown)
                                return -ENOMEM;
                        buf = grown;
                        allocated = want;
                }
                size_t want = allocated - n - 1;
                ssize_t k = loop_read(fd, buf + n, want);
                if (k < 0)
                        return (int) k;
                n += (size_t) k;
                if (n > max)
                        return -EFBIG;
                if ((size_t) k < want)
                        break; /* the end of the file */
        }
        buf[n] = '\0';
        *ret = TAKE_PTR(buf);
        if (ret_size)
                *ret_size = n;
        return 0;
}

int write_file_atomic_at(int dir_fd, const char *name, const void *data, size_t size, mode_t mode) {
        _cleanup_(freep) char *tmp = NULL;
        _cleanup_(closep) int fd = -EBADF;
        const uint8_t *p = data;
        int r;

        if (isempty(name) || strchr(name, '/'))
                return -EINVAL;

        /* A fresh name per attempt: a crashed writer's leftover, or another writer, never collides. */
        for (unsigned attempt = 0;; attempt++) {
                uint64_t suffix;
                if (getrandom(&suffix, sizeof(suffix), GRND_NONBLOCK) != sizeof(suffix))
                        suffix = ((uint64_t) getpid() << 32) ^ (uint64_t) attempt ^ (uint64_t) (uintptr_t) &suffix;
                tmp = mfree(tmp);
                if (asprintf(&tmp, ".#%s.%016" PRIx64, name, suffix) < 0)
                        return -ENOMEM;
                fd = openat(dir_fd, tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, mode);
                if (fd >= 0)
                        break;
                if (errno != EEXIST || attempt >= 16)
                        return -errno;
        }

        for (size_t left = size; left > 0;) {
                ssize_t k = write(fd, p, left);
                if (k < 0) {
                        if (errno == EINTR)
                                continue;
                        r = -errno;
                        goto fail;
                }
                p += k;
                left -= (size_t) k;
        }
        /* The mode given at creation is masked by the umask; make it exactly what was asked. */
        if (fchmod(fd, mode) < 0 || fsync(fd) < 0) {
                r = -errno;
                goto fail;
        }
        if (renameat(dir_fd, tmp, dir_fd, name) < 0) {
                r = -errno;
                goto fail;
        }
        /* The rename itself is only durable once the directory is. */
        if (dir_fd != AT_FDCWD)
                (void) fsync(dir_fd);
        return 0;

fail:
        (void) unlinkat(dir_fd, tmp, 0);
        return r;
}
