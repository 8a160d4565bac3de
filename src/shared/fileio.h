/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* fileio.h — whole-file reads with a size limit, and atomic replacement of a file */
#pragma once

#include <sys/types.h>

#include "macros.h"

/* Reads until size bytes arrived or the end of the file, whatever interrupts a read(). Returns the
 * number of bytes read (less than size only at the end of the file) or -errno. */
ssize_t loop_read(int fd, void *buf, size_t size);

/* Reads the beginning of path, up to size - 1 bytes, NUL-terminated: for /proc files, whose parsers
 * need no more than their first lines. Returns the number of bytes read or -errno. */
int read_file_head(const char *path, char *buf, size_t size);

/* Reads name (relative to dir_fd, or absolute) into a NUL-terminated buffer. -EFBIG past max. */
int read_file_at(int dir_fd, const char *name, size_t max, char **ret, size_t *ret_size);

/*
 * Replaces name in dir_fd with data so that a reader, a crash or a power cut sees either the old file
 * or the new one, never a mix: written to a temporary file in the same directory, fsync()ed, renamed
 * over the old one, then the directory is fsync()ed. On failure the old file is untouched and the
 * temporary file removed.
 */
int write_file_atomic_at(int dir_fd, const char *name, const void *data, size_t size, mode_t mode);
