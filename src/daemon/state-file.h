/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* state-file.h — a JSON file of ours in the state directory: read, set aside when damaged, replaced atomically */
#pragma once

#include <json-c/json.h>
#include <stddef.h>

#include "shared/macros.h"

/* The directory results are kept in: --state-directory=, else $STATE_DIRECTORY (systemd's
 * StateDirectory=), else LOCALSTATEDIR/lib/linkprobe. Opened, and created if missing, on first use. */
typedef struct StateDirectory {
        const char *path; /* NULL: the default above */
        int fd;           /* -EBADF until opened */
} StateDirectory;

#define STATE_DIRECTORY_INIT(p) ((StateDirectory) { .path = (p), .fd = -EBADF })

/* The directory's fd (owned by d), or -errno after a warning: the caller keeps its state in memory
 * and says so. */
int state_directory_open(StateDirectory *d);
void state_directory_done(StateDirectory *d);
/* The absolute path of name in the directory, whatever spelling found it (a relative
 * --state-directory=, $STATE_DIRECTORY): for the programs we run, which have their own cwd. */
int state_directory_path(StateDirectory *d, const char *name, char **ret);

typedef struct StateFile {
        const char *name;        /* in the state directory: "peers.json" */
        const char *bad_suffix;  /* a file we cannot use is renamed to name + this: ".corrupt" */
        size_t size_max;         /* in whole MiB; anything larger is not ours */
        const char *what;        /* for the log: "peer results" */
} StateFile;

/**
 * state_file_read() - read a state file
 * @dir_fd: the state directory
 * @f: the file
 * @ret: the text, NUL-terminated
 * @ret_size: its length (a NUL inside makes it shorter than strlen() says), or NULL
 *
 * First removes the temporary files an interrupted save left (".#NAME.XXXXXXXX"; the real file is
 * intact). A file larger than f->size_max is set aside.
 *
 * Return: 1 and the text; 0 when there is no file; -EFBIG; another -errno after a warning.
 */
int state_file_read(int dir_fd, const StateFile *f, char **ret, size_t *ret_size);

/* Renames the file to its bad name with a warning that says why, so that the next save writes a
 * good file and the old one is kept for whoever wants to look. */
void state_file_set_aside(int dir_fd, const StateFile *f, const char *why);

/* Replaces the file with doc (json_object_to_json_string_ext() flags), see write_file_atomic_at().
 * Logs nothing: callers say what keeping the results in memory means for them. */
int state_file_write(int dir_fd, const StateFile *f, json_object *doc, int json_flags);
