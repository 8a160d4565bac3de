/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* macros.h — attributes, cleanup helpers and small idioms shared by every linkprobe component */
#pragma once

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define _cleanup_(f) __attribute__((__cleanup__(f)))
#define _unused_ __attribute__((__unused__))
#define _printf_(a, b) __attribute__((__format__(printf, a, b)))
#define _pure_ __attribute__((__pure__))
#define _const_ __attribute__((__const__))
#define _noreturn_ __attribute__((__noreturn__))
#define _warn_unused_result_ __attribute__((__warn_unused_result__))
#define _likely_(x) __builtin_expect(!!(x), 1)
#define _unlikely_(x) __builtin_expect(!!(x), 0)

#define ELEMENTSOF(x) (sizeof(x) / sizeof((x)[0]))

/* The struct that embeds member at ptr. */
#define container_of(ptr, type, member) ((type *) (void *) ((uint8_t *) (ptr) - offsetof(type, member)))

#ifndef MIN
#define MIN(a, b) ((a) < (b) ? (a) : (b))
#endif
#ifndef MAX
#define MAX(a, b) ((a) > (b) ? (a) : (b))
#endif
/* x within [lo, hi] (lo <= hi). GLib's (a test that uses umockdev includes it) means the same. */
#ifndef CLAMP
#define CLAMP(x, lo, hi) MIN(MAX((x), (lo)), (hi))
#endif

#define streq(a, b) (strcmp((a), (b)) == 0)
#define strneq(a, b, n) (strncmp((a), (b), (n)) == 0)

static inline bool isempty(const char *s) {
        return !s || s[0] == '\0';
}

static inline const char *strempty(const char *s) {
        return s ?: "";
}

static inline const char *strna(const char *s) {
        return s ?: "n/a";
}

/* Hands ownership of a pointer or fd to the caller and disarms the local cleanup. */
#define TAKE_PTR(p)                             \
        ({                                      \
                __typeof__(p) _took_ = (p);     \
                (p) = NULL;                     \
                _took_;                         \
        })

#define TAKE_FD(fd)                             \
        ({                                      \
                int _took_fd_ = (fd);           \
                (fd) = -EBADF;                  \
                _took_fd_;                      \
        })

/* Negative errno from a libc call that returns -1 and sets errno. */
#define RET_NERRNO(expr)                        \
        ({                                      \
                int _r_ = (expr);               \
                _r_ < 0 ? -errno : _r_;         \
        })

static inline void freep(void *p) {
        free(*(void **) p);
}

/* Closes without disturbing errno, so cleanup on an error path keeps the reason. */
static inline int safe_close(int fd) {
        if (fd >= 0) {
                int saved = errno;
                close(fd);
                errno = saved;
        }
        return -EBADF;
}

static inline void closep(int *fd) {
        safe_close(*fd);
}

static inline void fclosep(FILE **f) {
        if (*f)
                fclose(*f);
}

static inline void closedirp(DIR **d) {
        if (*d)
                closedir(*d);
}

/* Declares func##p() for a destructor that takes NULL and returns NULL (x = x_free(x);). */
#define DEFINE_TRIVIAL_CLEANUP_FUNC(type, func)         \
        static inline void func##p(type *p) {           \
                if (*p)                                 \
                        *p = func(*p);                  \
        }

#define STRV_FOREACH(s, l) for (char **s = (l); s && *s; s++)

char **strv_free(char **l);
DEFINE_TRIVIAL_CLEANUP_FUNC(char **, strv_free);
size_t strv_length(char *const *l);

/* The errno values that mean "the thing is not there", which sysfs readers turn into "unknown". */
static inline bool errno_is_absent(int r) {
        r = abs(r);
        return r == ENOENT || r == ENODEV || r == ENXIO || r == ENOTDIR;
}

/* free() that returns NULL, for "p = mfree(p);". */
static inline void *mfree(void *p) {
        free(p);
        return NULL;
}

#define new0(type, n) ((type *) calloc((n), sizeof(type)))

/* Frees a and moves b into it: "free_and_replace(l->name, copy);". */
#define free_and_replace(a, b)          \
        ({                              \
                free(a);                \
                (a) = (b);              \
                (b) = NULL;             \
                0;                      \
        })

/* IN_SET(x, A, B, C): x equals one of the listed constants (converted to the type of x, so an enum
 * compares with its constants without a sign mismatch). */
#define IN_SET(x, first, ...)                                                         \
        ({                                                                            \
                const __typeof__(x) _set_[] = { first, __VA_ARGS__ };                 \
                bool _found_ = false;                                                 \
                for (size_t _k_ = 0; _k_ < ELEMENTSOF(_set_); _k_++)                  \
                        if ((x) == _set_[_k_]) {                                      \
                                _found_ = true;                                       \
                                break;                                                \
                        }                                                             \
                _found_;                                                              \
        })
