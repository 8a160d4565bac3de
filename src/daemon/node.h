/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node.h — the machine itself (Node interface) and its memory (Memory interface) */
#pragma once

#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct Manager Manager;

typedef struct Node {
        char *hostname;
        char *machine_id;
        char *boot_id;
        char *kernel_release;
        char *architecture;
        char *cpu_model;
        uint32_t cpu_count;
        int hostname_fd;
        sd_event_source *hostname_source;
} Node;

typedef struct Memory {
        uint64_t total_bytes;
        uint64_t available_bytes;
        uint64_t published_available; /* the value clients last saw, for the material-change test */
        sd_event_source *timer;
} Memory;

/* Reads the identity and starts watching the hostname (the kernel wakes pollers on change). */
int node_start(Manager *m);
void node_done(Node *n);
/* Re-reads what may change (hostname). */
void node_refresh(Manager *m);

int memory_start(Manager *m);
void memory_done(Memory *mem);
void memory_refresh(Manager *m);

/* Parses /proc/meminfo text. Returns -EBADMSG when MemTotal is missing. */
int meminfo_parse(const char *text, uint64_t *ret_total, uint64_t *ret_available);
/* Whether a new AvailableBytes value differs materially from the published one. */
bool memory_change_is_material(uint64_t published, uint64_t now, uint64_t total, unsigned percent);
/* The CPU model from /proc/cpuinfo text ("model name", or what ARM and others call it). */
char *cpuinfo_model(const char *text);
