/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysfs.h — bounded, strict reads of the kernel's sysfs ABI; every path is relative to a root dir fd */
#pragma once

#include <stdint.h>

#include "shared/macros.h"

/* The most a sysfs attribute's show() may return: one page. Anything longer is not sysfs. */
#define SYSFS_ATTR_MAX 4096

/*
 * Conventions for every reader in sysfs/:
 *  - paths are relative to root_fd (default /sys, --sysfs-root=DIR for tests) and are resolved with
 *    RESOLVE_IN_ROOT, so neither ".." nor a symlink can lead out of the root;
 *  - a missing file is -ENOENT (the caller publishes "unknown"), a malformed value -EINVAL,
 *    an out-of-range one -ERANGE; nothing here logs above debug level or keeps global state.
 */

/* Opens the root directory. Returns an O_CLOEXEC fd or -errno. */
int sysfs_root_open(const char *path);

/* Opens dir/attr (dir or attr may be NULL) below root_fd with flags (O_CLOEXEC is always added). */
int sysfs_open(int root_fd, const char *dir, const char *attr, int flags);

/* Reads a text attribute; trailing newlines are stripped. -EFBIG past SYSFS_ATTR_MAX, -EBADMSG on NUL. */
int sysfs_read_string(int root_fd, const char *dir, const char *attr, char **ret);
/* Reads into a caller buffer; same rules, -ENOBUFS when it does not fit. */
int sysfs_read_buffer(int root_fd, const char *dir, const char *attr, char *buf, size_t size);

int sysfs_read_u64(int root_fd, const char *dir, const char *attr, uint64_t *ret);
int sysfs_read_u32(int root_fd, const char *dir, const char *attr, uint32_t *ret);
int sysfs_read_int(int root_fd, const char *dir, const char *attr, int *ret);
int sysfs_read_hex_u32(int root_fd, const char *dir, const char *attr, uint32_t *ret);
/* "0"/"1" only, as the kernel writes booleans. Returns 0 or 1. */
int sysfs_read_bool(int root_fd, const char *dir, const char *attr);

/* 1 if dir/attr exists, 0 if not, -errno on other errors. */
int sysfs_exists(int root_fd, const char *dir, const char *attr);

/* The last component of a symlink's target, e.g. the driver name from "device/driver". */
int sysfs_read_link_basename(int root_fd, const char *dir, const char *attr, char **ret);

/* The canonical path of dir/attr relative to the root (symlinks resolved), e.g.
 * "class/net/eth0" -> "devices/pci0000:00/0000:00:03.0/net/eth0". */
int sysfs_resolve(int root_fd, const char *dir, const char *attr, char **ret);

/* The entry names of a directory, without "." and "..", in natural order ("1" < "2" < "10"),
 * NULL-terminated. An empty directory yields an empty list. */
int sysfs_list_dir(int root_fd, const char *dir, char ***ret);

/* The KEY=VALUE lines of a device's uevent file as a NULL-terminated list. */
int sysfs_read_uevent(int root_fd, const char *dir, char ***ret);
/* Parses uevent text (modified in place) into such a list. */
int sysfs_uevent_parse(char *buf, char ***ret);
/* The value for key in such a list, or NULL. */
const char *sysfs_uevent_get(char *const *env, const char *key);

/* Joins "a" and "b" into "a/b" (either may be NULL or empty). -ENAMETOOLONG past PATH_MAX. */
int sysfs_path_join(const char *a, const char *b, char **ret);
