/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/epoll.h>

#include "inhibit.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

struct Inhibitor {
        Inhibitors *owner;
        unsigned what;
        char *who;
        char *why;
        char *sender;
        uint32_t uid;
        uint32_t pid;
        int fd; /* our read end of the pipe; hangs up when the client's copies are all closed */
        sd_event_source *hangup_source;
        sd_bus_track *track; /* the sender, so leaving the bus releases too */
};

struct Inhibitors {
        sd_event *event;
        Inhibitor **items; /* oldest first */
        size_t n_items;
        RateLimit ratelimit;
        inhibitors_changed_t changed;
        void *userdata;
};

static const char *const inhibit_kinds[] = { "gpu", "rdma" };

int inhibit_what_from_string(const char *s) {
        unsigned mask = 0;

        if (isempty(s))
                return -EINVAL;
        for (const char *p = s;;) {
                size_t n = strcspn(p, ":");
                bool known = false;

                for (size_t k = 0; k < ELEMENTSOF(inhibit_kinds); k++)
                        if (n == strlen(inhibit_kinds[k]) && strneq(p, inhibit_kinds[k], n)) {
                                mask |= 1U << k;
                                known = true;
                        }
                if (!known)
                        return -EINVAL;
                if (p[n] == '\0')
                        break;
                p += n + 1;
        }
        return (int) mask;
}

const char *inhibit_what_to_string(unsigned what, char buf[static INHIBIT_WHAT_STRING_MAX]) {
        size_t n = 0;

        buf[0] = '\0';
        for (size_t k = 0; k < ELEMENTSOF(inhibit_kinds); k++)
                if (what & (1U << k))
                        n += (size_t) snprintf(buf + n, INHIBIT_WHAT_STRING_MAX - n, "%s%s", n > 0 ? ":" : "",
                                               inhibit_kinds[k]);
        return buf;
}

bool inhibit_text_is_valid(const char *s, size_t max, bool allow_empty) {
        size_t n;

        if (!s)
                return false;
        n = strlen(s);
        if (n == 0)
                return allow_empty;
        if (n > max)
                return false;
        /* The bus has already refused invalid UTF-8 (sd-bus checks every string it reads); checking
         * again costs nothing and keeps this function honest on its own. */
        if (!utf8_is_valid_n(s, n))
                return false;
        for (const unsigned char *p = (const unsigned char *) s; *p; p++)
                if (*p < 0x20 || *p == 0x7f)
                        return false;
        return true;
}

int inhibitors_new(sd_event *event, inhibitors_changed_t changed, void *userdata, Inhibitors **ret) {
        Inhibitors *s = new0(Inhibitors, 1);

        if (!s)
                return -ENOMEM;
        s->event = event;
        s->changed = changed;
        s->userdata = userdata;
        /* Ten in a row, then one a second per sender: enough for any script, not for a flood. */
        ratelimit_init(&s->ratelimit, 1, 10, 1024);
        *ret = s;
        return 0;
}

RateLimit *inhibitors_ratelimit(Inhibitors *s) {
        return &s->ratelimit;
}

unsigned inhibitors_mask(const Inhibitors *s) {
        unsigned mask = 0;

        for (size_t i = 0; s && i < s->n_items; i++)
                mask |= s->items[i]->what;
        return mask;
}

bool inhibitors_get(const Inhibitors *s, size_t i, InhibitorInfo *ret) {
        if (!s || i >= s->n_items)
                return false;
        const Inhibitor *h = s->items[i];
        *ret = (InhibitorInfo) {
                .what = h->what,
                .who = h->who,
                .why = h->why,
                .uid = h->uid,
                .pid = h->pid,
        };
        return true;
}

bool inhibitors_cover(const Inhibitors *s, const char *what) {
        int mask = inhibit_what_from_string(what);

        if (mask < 0) {
                log_debug("inhibitors_cover(\"%s\"): unknown kind, answering yes.", strna(what));
                return true;
        }
        return (inhibitors_mask(s) & (unsigned) mask) != 0;
}

static Inhibitor *inhibitor_free(Inhibitor *h) {
        if (!h)
                return NULL;
        h->hangup_source = sd_event_source_disable_unref(h->hangup_source);
        h->track = sd_bus_track_unref(h->track);
        safe_close(h->fd);
        free(h->who);
        free(h->why);
        free(h->sender);
        return mfree(h);
}

DEFINE_TRIVIAL_CLEANUP_FUNC(Inhibitor *, inhibitor_free);

/* Tells the owner (who announces Inhibited and lets held-off probes catch up) when the union moved. */
static void inhibitors_changed(Inhibitors *s, unsigned old_mask) {
        unsigned mask = inhibitors_mask(s);

        if (mask != old_mask && s->changed)
                s->changed(old_mask, mask, s->userdata);
}

static void inhibitor_release(Inhibitor *h, const char *how) {
        Inhibitors *s = h->owner;
        unsigned old_mask = inhibitors_mask(s);
        char what[INHIBIT_WHAT_STRING_MAX];

        for (size_t i = 0; i < s->n_items; i++)
                if (s->items[i] == h) {
                        memmove(s->items + i, s->items + i + 1, (s->n_items - i - 1) * sizeof(Inhibitor *));
                        s->n_items--;
                        break;
                }
        log_info("Released inhibitor of %s by \"%s\" (uid %" PRIu32 ", pid %" PRIu32 "): %s.",
                 inhibit_what_to_string(h->what, what), h->who, h->uid, h->pid, how);
        inhibitor_free(h);
        inhibitors_changed(s, old_mask);
}

static int on_hangup(sd_event_source *source, int fd, uint32_t revents, void *userdata) {
        inhibitor_release(userdata, "descriptor closed");
        return 0;
}

static int on_sender_gone(sd_bus_track *track, void *userdata) {
        inhibitor_release(userdata, "client left the bus");
        return 0;
}

static Inhibitor *inhibitor_new(Inhibitors *s, unsigned what, const char *who, const char *why, uint32_t uid,
                                uint32_t pid, const char *sender) {
        _cleanup_(inhibitor_freep) Inhibitor *h = new0(Inhibitor, 1);

        if (!h)
                return NULL;
        h->fd = -EBADF;
        h->owner = s;
        h->what = what;
        h->uid = uid;
        h->pid = pid;
        h->who = strdup(who);
        h->why = strdup(why);
        h->sender = strdup(sender);
        if (!h->who || !h->why || !h->sender)
                return NULL;
        return TAKE_PTR(h);
}

/* Takes over h; the kinds it holds off are announced. */
static int inhibitors_append(Inhibitors *s, Inhibitor *h) {
        unsigned old_mask = inhibitors_mask(s);
        char what_text[INHIBIT_WHAT_STRING_MAX];
        Inhibitor **grown = reallocarray(s->items, s->n_items + 1, sizeof(Inhibitor *));

        if (!grown) {
                inhibitor_free(h);
                return -ENOMEM;
        }
        s->items = grown;
        s->items[s->n_items++] = h;
        log_info("Inhibitor of %s taken by \"%s\" (uid %" PRIu32 ", pid %" PRIu32 "): %s",
                 inhibit_what_to_string(h->what, what_text), h->who, h->uid, h->pid,
                 isempty(h->why) ? "no reason given" : h->why);
        inhibitors_changed(s, old_mask);
        return 0;
}

int inhibitor_add(Inhibitors *s, sd_bus_message *message, unsigned what, const char *who, const char *why,
                  uint32_t uid, uint32_t pid, int *ret_fd) {
        _cleanup_(inhibitor_freep) Inhibitor *h = NULL;
        _cleanup_(closep) int write_fd = -EBADF;
        const char *sender = sd_bus_message_get_sender(message);
        size_t from_sender = 0;
        int pipefd[2], r;

        for (size_t i = 0; i < s->n_items; i++)
                if (streq(s->items[i]->sender, strempty(sender)))
                        from_sender++;
        if (from_sender >= INHIBITORS_PER_SENDER_MAX)
                return -EUSERS;
        if (s->n_items >= INHIBITORS_MAX)
                return -ENFILE;

        h = inhibitor_new(s, what, who, why, uid, pid, strempty(sender));
        if (!h)
                return -ENOMEM;

        if (pipe2(pipefd, O_CLOEXEC) < 0)
                return -errno;
        h->fd = pipefd[0];
        write_fd = pipefd[1];

        /* Only the hang-up matters; whatever a client writes into the pipe is never read. */
        r = sd_event_add_io(s->event, &h->hangup_source, h->fd, EPOLLHUP, on_hangup, h);
        if (r < 0)
                return r;
        (void) sd_event_source_set_description(h->hangup_source, "inhibitor");

        if (sender) {
                r = sd_bus_track_new(sd_bus_message_get_bus(message), &h->track, on_sender_gone, h);
                if (r < 0)
                        return r;
                r = sd_bus_track_add_sender(h->track, message);
                if (r < 0)
                        return r;
        }

        r = inhibitors_append(s, TAKE_PTR(h));
        if (r < 0)
                return r;
        *ret_fd = TAKE_FD(write_fd);
        return 0;
}

int inhibitor_hold(Inhibitors *s, unsigned what, const char *who, const char *why, Inhibitor **ret) {
        Inhibitor *h = inhibitor_new(s, what, who, why, (uint32_t) getuid(), (uint32_t) getpid(), "");
        int r;

        if (!h)
                return -ENOMEM;
        r = inhibitors_append(s, h);
        if (r < 0)
                return r;
        *ret = h;
        return 0;
}

int inhibitor_set_why(Inhibitor *h, const char *why) {
        return free_and_strdup(&h->why, why) < 0 ? -ENOMEM : 0;
}

Inhibitor *inhibitor_drop(Inhibitor *h, const char *how) {
        if (h)
                inhibitor_release(h, how);
        return NULL;
}

Inhibitors *inhibitors_free(Inhibitors *s) {
        if (!s)
                return NULL;
        for (size_t i = 0; i < s->n_items; i++)
                inhibitor_free(s->items[i]);
        free(s->items);
        ratelimit_done(&s->ratelimit);
        return mfree(s);
}
