/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* memory.h — the machine's memory: the root object's Memory interface */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"

typedef struct Memory {
        BusObject bus; /* the Memory interface of the root object */
        uint64_t total_bytes;
        uint64_t available_bytes;
        uint64_t published_available; /* the value clients last saw, for the material-change test */
        unsigned change_percent;      /* of TotalBytes: a smaller move of AvailableBytes is not announced */
        uint64_t poll_usec;           /* 0: read only on Refresh() */
        sd_event_source *timer;
} Memory;

/* Reads /proc/meminfo and, with poll_usec, keeps reading it: it is the one thing that announces
 * nothing, so the one thing we poll. */
int memory_start(Memory *mem, BusPublisher *p, sd_event *event, uint64_t poll_usec, unsigned change_percent);
void memory_done(Memory *mem);
void memory_refresh(Memory *mem);

/* Parses /proc/meminfo text. Returns -EBADMSG when MemTotal is missing. */
int meminfo_parse(const char *text, uint64_t *ret_total, uint64_t *ret_available);
/* Whether a new AvailableBytes value differs materially from the published one. */
bool memory_change_is_material(uint64_t published, uint64_t now, uint64_t total, unsigned percent);
