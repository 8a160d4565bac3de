/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* node.h — the machine itself: the root object's Node interface */
#pragma once

#include <systemd/sd-event.h>

#include "bus-object.h"

typedef struct Node {
        BusObject bus; /* the Node interface of the root object */
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

/* Reads the identity and starts watching the hostname (the kernel wakes pollers on change). */
int node_start(Node *n, BusPublisher *p, sd_event *event);
void node_done(Node *n);
/* Re-reads what may change (hostname). */
void node_refresh(Node *n);

/* The CPU model from /proc/cpuinfo text ("model name", or what ARM and others call it). */
char *cpuinfo_model(const char *text);
