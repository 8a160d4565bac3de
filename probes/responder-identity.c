/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>

#include "responder-identity.h"
#include "shared/fileio.h"
#include "shared/json-util.h"
#include "shared/log.h"

void responder_identity_done(ResponderIdentity *ri) {
        ri->path = mfree(ri->path);
        *ri = (ResponderIdentity) {};
}

static bool same_file(const struct stat *a, const struct stat *b) {
        return a->st_dev == b->st_dev && a->st_ino == b->st_ino && a->st_size == b->st_size &&
               a->st_mtim.tv_sec == b->st_mtim.tv_sec && a->st_mtim.tv_nsec == b->st_mtim.tv_nsec;
}

/* Reads the file if it is not the one read last; 0 when identity is current, -errno otherwise. */
static int identity_read(ResponderIdentity *ri) {
        _cleanup_(closep) int fd = -EBADF;
        _cleanup_(freep) char *text = NULL;
        _cleanup_(json_object_putp) json_object *doc = NULL;
        NodeIdentity id;
        struct stat st;
        ssize_t n;

        /* O_NONBLOCK: a FIFO in its place must not hold the responder up. */
        fd = open(ri->path, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return -EINVAL;
        if (ri->have && same_file(&st, &ri->st))
                return 0;
        text = malloc(RESPONDER_IDENTITY_FILE_MAX + 1);
        if (!text)
                return -ENOMEM;
        n = loop_read(fd, text, RESPONDER_IDENTITY_FILE_MAX + 1);
        if (n < 0)
                return (int) n;
        if ((size_t) n > RESPONDER_IDENTITY_FILE_MAX || memchr(text, '\0', (size_t) n))
                return -EINVAL;
        text[n] = '\0';
        doc = json_tokener_parse(text);
        if (!doc || node_identity_from_json(doc, &id) < 0)
                return -EINVAL;
        ri->identity = id;
        ri->st = st;
        ri->have = true;
        log_debug("Identity from %s: %s.", ri->path, id.hostname);
        return 0;
}

int responder_identity_set_file(ResponderIdentity *ri, const char *path) {
        char *copy = strdup(path);
        int r;

        if (!copy)
                return -ENOMEM;
        free(ri->path);
        ri->path = copy;
        ri->have = false;
        r = identity_read(ri);
        if (r < 0)
                log_warning_errno(r, "Cannot read the identity file %s, answering without an identity until it can be: %m",
                                  path);
        return 0;
}

void responder_identity_set(ResponderIdentity *ri, const NodeIdentity *id) {
        ri->path = mfree(ri->path);
        ri->identity = *id;
        ri->have = true;
}

const NodeIdentity *responder_identity_get(ResponderIdentity *ri) {
        if (ri->path) {
                int r = identity_read(ri);
                if (r < 0 && ri->have)
                        log_warning_errno(r, "Cannot read the identity file %s, keeping the last one: %m", ri->path);
        }
        return ri->have ? &ri->identity : NULL;
}
