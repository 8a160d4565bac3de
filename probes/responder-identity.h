/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* responder-identity.h — the identity the responder hands out: given once, or read from a file that changes */
#pragma once

#include <sys/stat.h>

#include "shared/node-identity.h"

/* The largest identity file we read; what linkprobed writes is well below 2 KiB. */
#define RESPONDER_IDENTITY_FILE_MAX (16U * 1024U)

typedef struct ResponderIdentity {
        char *path;        /* the file linkprobed keeps up to date; NULL when given once or never */
        bool have;         /* identity holds a valid identity */
        NodeIdentity identity;
        struct stat st;    /* of the file identity was read from: it is read again only when it changed */
} ResponderIdentity;

void responder_identity_done(ResponderIdentity *ri);
/* From now on the identity is what path says (JSON, node_identity_to_json()'s form); read at once. */
int responder_identity_set_file(ResponderIdentity *ri, const char *path);
void responder_identity_set(ResponderIdentity *ri, const NodeIdentity *id);

/**
 * responder_identity_get() - the identity to hand out now
 * @ri: the source
 *
 * Re-reads the file if it was replaced or changed since the last read (linkprobed replaces it
 * atomically when the node's hostname, Thunderbolt hosts or RDMA devices change). A file that cannot
 * be read or parsed leaves the last good identity in place, after a warning.
 *
 * Return: the identity, or NULL when there is none.
 */
const NodeIdentity *responder_identity_get(ResponderIdentity *ri);
