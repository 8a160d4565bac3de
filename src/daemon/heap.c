/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The daemon's heap. GetManagedObjects of 2000 links builds a 2.4 MB reply, and other answers run to
 * hundreds of KB. glibc maps such blocks afresh and unmaps them when freed, so every page of every reply
 * was faulted in anew: measured on a paravirtualised VM with 2001 links, that was half of the daemon's
 * CPU for the call (30 ms; 14 ms with the pages kept) and 12 ms of a client's 61.
 *
 * So large blocks come from the heap, and free() gives nothing back by itself: a second call finds its
 * pages warm. What the heap holds free is handed back (malloc_trim(), which also releases free pages
 * inside it) 10 s after work, and every 10 s while work goes on, so an idle daemon is as small as
 * before; the keeper never wakes an idle daemon itself: it arms its timer only after other work.
 */
#include <inttypes.h>
#include <malloc.h>

#include "heap.h"
#include "shared/log.h"
#include "shared/parse-util.h"

/* glibc's largest (HEAP_MAX_SIZE / 2 on 64-bit): blocks above it are mapped whatever we ask. */
#define HEAP_MMAP_THRESHOLD (32 * 1024 * 1024)
/* Larger than anything we allocate, so free() never trims; the keeper does. */
#define HEAP_TRIM_THRESHOLD (256 * 1024 * 1024)
#define HEAP_TRIM_DELAY_USEC (10 * USEC_PER_SEC)
#define HEAP_TRIM_ACCURACY_USEC (1 * USEC_PER_SEC)

struct HeapKeeper {
        sd_event_source *post;
        sd_event_source *timer;
        bool trimmed; /* the iteration that just ended was the trim itself */
};

void heap_configure(void) {
        /* Either alone is not enough: a fixed mmap threshold also fixes the trim threshold at twice it
         * unless that is set too. */
        (void) mallopt(M_MMAP_THRESHOLD, HEAP_MMAP_THRESHOLD);
        (void) mallopt(M_TRIM_THRESHOLD, HEAP_TRIM_THRESHOLD);
}

static int on_trim(sd_event_source *s, uint64_t usec, void *userdata) {
        HeapKeeper *k = userdata;

        if (malloc_trim(0))
                log_debug("Gave the heap's free pages back after %" PRIu64 " s without work.",
                          HEAP_TRIM_DELAY_USEC / USEC_PER_SEC);
        k->trimmed = true;
        return 0;
}

/* After every loop iteration that handled an event: arms the trim, unless that event was the trim. */
static int on_post(sd_event_source *s, void *userdata) {
        HeapKeeper *k = userdata;
        uint64_t now;
        int r;

        if (k->trimmed) {
                k->trimmed = false;
                return 0;
        }
        /* Armed already: not pushed back, or a daemon busy every few seconds (the watch) would never
         * trim. */
        if (sd_event_source_get_enabled(k->timer, NULL) > 0)
                return 0;
        r = sd_event_now(sd_event_source_get_event(s), CLOCK_MONOTONIC, &now);
        if (r < 0)
                return 0;
        r = sd_event_source_set_time(k->timer, now + HEAP_TRIM_DELAY_USEC);
        if (r >= 0)
                r = sd_event_source_set_enabled(k->timer, SD_EVENT_ONESHOT);
        if (r < 0)
                log_debug_errno(r, "Cannot arm the heap's trim: %m");
        return 0;
}

int heap_keeper_new(sd_event *event, HeapKeeper **ret) {
        _cleanup_(heap_keeper_freep) HeapKeeper *k = NULL;
        int r;

        k = new0(HeapKeeper, 1);
        if (!k)
                return -ENOMEM;
        r = sd_event_add_time(event, &k->timer, CLOCK_MONOTONIC, UINT64_MAX, HEAP_TRIM_ACCURACY_USEC, on_trim, k);
        if (r < 0)
                return r;
        r = sd_event_source_set_enabled(k->timer, SD_EVENT_OFF);
        if (r < 0)
                return r;
        /* Last among the post sources: the publisher's flush may free what this iteration built. */
        r = sd_event_add_post(event, &k->post, on_post, k);
        if (r < 0)
                return r;
        r = sd_event_source_set_priority(k->post, SD_EVENT_PRIORITY_IDLE);
        if (r < 0)
                return r;
        *ret = TAKE_PTR(k);
        return 0;
}

HeapKeeper *heap_keeper_free(HeapKeeper *k) {
        if (!k)
                return NULL;
        sd_event_source_disable_unref(k->post);
        sd_event_source_disable_unref(k->timer);
        return mfree(k);
}
