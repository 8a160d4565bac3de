/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* identity-file.h — this node's identity where linkprobe-responder reads it (identity.json, state directory) */
#pragma once

#include "shared/macros.h"
#include "state-file.h"

typedef struct Node Node;

#define IDENTITY_FILE_NAME "identity.json"

typedef struct IdentityFile {
        StateDirectory *directory;
        bool enabled; /* a responder runs: the file is kept */
        unsigned written_generation; /* Node.derived.identity_generation last written */
        bool written;
        bool failing;
} IdentityFile;

/* The file's absolute path, for the responder's --identity-file=; -errno when the state directory
 * cannot be opened (the responder then answers without an identity). */
int identity_file_path(IdentityFile *f, char **ret);
/* Replaces the file (atomically, world-readable: nothing in it is secret) when the node's identity
 * changed since the last write. */
void identity_file_update(IdentityFile *f, const Node *n);
