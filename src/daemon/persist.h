/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* persist.h — peer results and AddPeer() addresses kept across restarts in the state directory */
#pragma once

#include "shared/macros.h"

typedef struct Peers Peers;
typedef struct StateDirectory StateDirectory;

/* Where the peers are kept, and whether saving works. */
typedef struct Persist {
        Peers *peers;
        StateDirectory *directory;
        bool failing;         /* the last save failed (logged once) */
        uint64_t retry_after; /* CLOCK_MONOTONIC: no new attempt to open the directory before */
} Persist;

#define PERSIST_FILE "peers.json"
#define PERSIST_FILE_MAX (4U << 20)

/*
 * Reads PERSIST_FILE: addresses added with AddPeer() become targets again and every path is
 * republished with its last result (Stale when past its TTL). A missing file is the first start; a
 * file that is not what we write (corrupt, truncated by hand, another version) is moved aside to
 * PERSIST_FILE.corrupt with a warning; a single entry that fails validation is skipped with one.
 * Temporary files a crash left behind are removed. Never fails the daemon: returns 0 or the -errno it
 * logged.
 */
int persist_load(Persist *p);

/*
 * Replaces PERSIST_FILE atomically (temporary file, fsync, rename, fsync of the directory). When the
 * state directory cannot be written the failure is logged once, the state stays in memory, and the
 * next save after a minute tries again.
 */
int persist_save(Persist *p);
