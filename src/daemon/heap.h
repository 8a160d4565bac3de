/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* heap.h — the daemon's heap: warm while it is asked, handed back once it is quiet */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct HeapKeeper HeapKeeper;

/* malloc's policy (large blocks from the heap, no trimming on free): before anything is allocated. */
void heap_configure(void);

/* Gives what the heap holds free back to the kernel (malloc_trim()) 10 s after the loop handled an
 * event (at most every 10 s while it keeps handling them), then sleeps until the next: no wakeups of
 * its own while the daemon is idle. */
int heap_keeper_new(sd_event *event, HeapKeeper **ret);
HeapKeeper *heap_keeper_free(HeapKeeper *k);
DEFINE_TRIVIAL_CLEANUP_FUNC(HeapKeeper *, heap_keeper_free);
