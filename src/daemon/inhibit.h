/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* inhibit.h — inhibitors held by file descriptor (Manager.Inhibit): no GPU or RDMA probe starts meanwhile */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "shared/macros.h"
#include "shared/ratelimit.h"

typedef struct Inhibitor Inhibitor;
typedef struct Inhibitors Inhibitors;

/* Called when the union of what is inhibited changed: old and new masks of InhibitWhat. */
typedef void (*inhibitors_changed_t)(unsigned old_mask, unsigned new_mask, void *userdata);

/* The kinds of probes an inhibitor holds off, as a bit mask. */
typedef enum InhibitWhat {
        INHIBIT_GPU = 1 << 0,
        INHIBIT_RDMA = 1 << 1,
        _INHIBIT_WHAT_ALL = INHIBIT_GPU | INHIBIT_RDMA,
} InhibitWhat;

/* Limits, so that no client can make the daemon hold an unbounded number of descriptors. */
#define INHIBITORS_PER_SENDER_MAX 8
#define INHIBITORS_MAX 64
#define INHIBIT_WHO_MAX 128 /* bytes */
#define INHIBIT_WHY_MAX 256 /* bytes */
#define INHIBIT_WHAT_STRING_MAX sizeof("gpu:rdma")

typedef struct InhibitorInfo {
        unsigned what;
        const char *who;
        const char *why;
        uint32_t uid; /* UINT32_MAX when the bus could not tell */
        uint32_t pid; /* 0 when the bus could not tell */
} InhibitorInfo;

/*
 * Parses a colon-separated list of kinds ("gpu", "rdma", "gpu:rdma", in any order). Returns the
 * mask, or -EINVAL for an empty list, an empty element or an unknown kind.
 */
int inhibit_what_from_string(const char *s);
/* "gpu", "rdma", "gpu:rdma" or "" for an empty mask. */
const char *inhibit_what_to_string(unsigned what, char buf[static INHIBIT_WHAT_STRING_MAX]);

/*
 * Whether s is acceptable as an inhibitor's who or why: at most max bytes of UTF-8 without control
 * characters (they would end up in logs and on terminals); empty only if allow_empty.
 */
bool inhibit_text_is_valid(const char *s, size_t max, bool allow_empty);

/*
 * Registers an inhibitor for the sender of message and returns, in *ret_fd, the descriptor that
 * holds it: the write end of a pipe whose read end the daemon watches. The inhibitor goes away when
 * every copy of that descriptor is closed or the sender leaves the bus. The caller has validated the
 * arguments and checked privileges. -EUSERS when the sender, -ENFILE when everybody together holds
 * the maximum.
 */
int inhibitor_add(Inhibitors *s, sd_bus_message *message, unsigned what, const char *who, const char *why,
                  uint32_t uid, uint32_t pid, int *ret_fd);

/*
 * An inhibitor the daemon holds for itself ([Inhibit] WhileUnitsActive=): no descriptor, no limits,
 * listed like the others with the daemon's uid and pid; held until inhibitor_drop().
 */
int inhibitor_hold(Inhibitors *s, unsigned what, const char *who, const char *why, Inhibitor **ret);
/* Says why anew, without letting go in between. */
int inhibitor_set_why(Inhibitor *h, const char *why);
/* Releases h (how: for the log); returns NULL. */
Inhibitor *inhibitor_drop(Inhibitor *h, const char *how);

int inhibitors_new(sd_event *event, inhibitors_changed_t changed, void *userdata, Inhibitors **ret);
Inhibitors *inhibitors_free(Inhibitors *s);

/* The per-sender rate limit of Inhibit(). */
RateLimit *inhibitors_ratelimit(Inhibitors *s);

/* The union of what every held inhibitor inhibits (0 for NULL). */
unsigned inhibitors_mask(const Inhibitors *s);
/* The held inhibitors, oldest first; i from 0 while it returns true. */
bool inhibitors_get(const Inhibitors *s, size_t i, InhibitorInfo *ret);

/*
 * Whether probes of what ("gpu", "rdma", or several joined with ':') may not start now: true when any
 * held inhibitor covers any of them. An unknown what is a programming error and answers true, the
 * safe side.
 */
bool inhibitors_cover(const Inhibitors *s, const char *what);
