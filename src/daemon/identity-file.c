/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>

#include "identity-file.h"
#include "node.h"
#include "shared/fileio.h"
#include "shared/json-util.h"
#include "shared/log.h"

int identity_file_path(IdentityFile *f, char **ret) {
        return state_directory_path(f->directory, IDENTITY_FILE_NAME, ret);
}

void identity_file_update(IdentityFile *f, const Node *n) {
        _cleanup_(json_object_putp) json_object *doc = NULL;
        const char *text;
        int fd, r;

        if (!f->enabled || !n->derived.has_identity ||
            (f->written && f->written_generation == n->derived.identity_generation))
                return;
        fd = state_directory_open(f->directory);
        if (fd < 0)
                return;
        doc = node_identity_to_json(&n->derived.identity);
        if (!doc) {
                log_oom();
                return;
        }
        text = json_object_to_json_string_ext(doc, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        r = write_file_atomic_at(fd, IDENTITY_FILE_NAME, text, strlen(text), 0644);
        if (r < 0) {
                if (!f->failing)
                        log_warning_errno(r, "Cannot write %s: the responder keeps handing out the last identity: %m",
                                          IDENTITY_FILE_NAME);
                f->failing = true;
                return;
        }
        f->failing = false;
        f->written = true;
        f->written_generation = n->derived.identity_generation;
}
