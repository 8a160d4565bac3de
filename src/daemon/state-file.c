/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>

#include "build-paths.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "state-file.h"

int state_directory_open(StateDirectory *d) {
        _cleanup_(freep) char *from_env = NULL;
        const char *dir = d->path;
        int fd;

        if (d->fd >= 0)
                return d->fd;
        if (!dir) {
                /* systemd's StateDirectory= sets this (several paths are separated by ':'). */
                const char *e = getenv("STATE_DIRECTORY");
                if (!isempty(e)) {
                        from_env = strndup(e, strcspn(e, ":"));
                        if (!from_env)
                                return log_oom();
                        dir = from_env;
                } else
                        dir = LOCALSTATEDIR "/lib/linkprobe";
        }

        if (mkdir(dir, 0755) < 0 && errno != EEXIST)
                return log_warning_errno(errno, "Cannot create the state directory %s: %m", dir);
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        if (fd < 0)
                return log_warning_errno(errno, "Cannot open the state directory %s: %m", dir);
        d->fd = fd;
        return fd;
}

int state_directory_path(StateDirectory *d, const char *name, char **ret) {
        char proc[64], target[PATH_MAX];
        ssize_t n;
        int fd = state_directory_open(d);

        if (fd < 0)
                return fd;
        snprintf(proc, sizeof(proc), "/proc/self/fd/%d", fd);
        n = readlink(proc, target, sizeof(target) - 1);
        if (n < 0)
                return -errno;
        target[n] = '\0';
        return asprintf(ret, "%s/%s", target, name) < 0 ? -ENOMEM : 0;
}

void state_directory_done(StateDirectory *d) {
        d->fd = safe_close(d->fd);
}

static void remove_leftovers(int dir_fd, const StateFile *f) {
        _cleanup_(closedirp) DIR *d = NULL;
        _cleanup_(freep) char *prefix = NULL;
        int fd = openat(dir_fd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        struct dirent *de;

        if (fd < 0)
                return;
        d = fdopendir(fd);
        if (!d) {
                safe_close(fd);
                return;
        }
        /* write_file_atomic_at()'s temporary names. */
        if (asprintf(&prefix, ".#%s.", f->name) < 0)
                return;
        while ((de = readdir(d)))
                if (startswith(de->d_name, prefix) && unlinkat(dir_fd, de->d_name, 0) >= 0)
                        log_debug("Removed %s, left by an interrupted save.", de->d_name);
}

void state_file_set_aside(int dir_fd, const StateFile *f, const char *why) {
        _cleanup_(freep) char *bad = NULL;

        if (asprintf(&bad, "%s%s", f->name, f->bad_suffix) < 0) {
                log_oom();
                return;
        }
        if (renameat(dir_fd, f->name, dir_fd, bad) < 0)
                log_warning_errno(errno, "Ignoring %s (%s), and cannot move it aside: %m", f->name, why);
        else
                log_warning("Ignoring %s (%s); moved it to %s.", f->name, why, bad);
}

int state_file_read(int dir_fd, const StateFile *f, char **ret, size_t *ret_size) {
        int r;

        remove_leftovers(dir_fd, f);
        r = read_file_at(dir_fd, f->name, f->size_max, ret, ret_size);
        if (r == -ENOENT)
                return 0;
        if (r == -EFBIG) {
                char why[64];
                snprintf(why, sizeof(why), "larger than %zuM", f->size_max >> 20);
                state_file_set_aside(dir_fd, f, why);
                return r;
        }
        if (r < 0)
                return log_warning_errno(r, "Cannot read %s, starting without saved %s: %m", f->name, f->what);
        return 1;
}

int state_file_write(int dir_fd, const StateFile *f, json_object *doc, int json_flags) {
        const char *text = json_object_to_json_string_ext(doc, json_flags);
        if (!text)
                return -ENOMEM;
        return write_file_atomic_at(dir_fd, f->name, text, strlen(text), 0644);
}
