/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Links and ethtool's netlink family (link-ethtool.c asks, link-modes.c records): which links are asked and
 * when, the answers matched to their links, and at the start the two dumps that answer for every link at
 * once, before READY=1.
 */
#include <errno.h>
#include <linux/ethtool_netlink.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>

#include "link-ethtool-ask.h"
#include "shared/string-util.h"

/* ---- at the start: every link at once ---- */

static void on_dumped(void *userdata, const EthtoolMessage *m) {
        Link *l = link_get(userdata, m->ifindex);

        if (!l)
                return; /* made after the netlink dump: its event asks */
        if (!l->dumped) {
                l->dumped = malloc(sizeof(LinkEthtoolAnswer));
                if (!l->dumped)
                        return; /* then asked, as before */
                *l->dumped = (LinkEthtoolAnswer) { .ifindex = l->ifindex, .modes_error = -ENODATA,
                                                   .state_error = -ENODATA };
                ethtool_link_modes_init(&l->dumped->modes);
                ethtool_link_state_init(&l->dumped->state);
        }
        if (m->kind == ETHTOOL_MESSAGE_LINKMODES) {
                l->dumped->modes = m->modes;
                l->dumped->modes_error = 0;
        } else {
                l->dumped->state = m->state;
                l->dumped->state_error = 0;
        }
}

/* The dumps run on a thread of their own while the loop's thread reads the netlink dumps: on two CPUs the
 * 5 ms they take at 2001 links are then not added to the start. Their replies wait here until the links
 * exist (links_dump_ethtool_end()). */
struct LinksEthtoolDumps {
        pthread_t thread;
        EthtoolMessage *messages;
        size_t n_messages, n_allocated;
        bool thread_started;
        bool failed; /* out of memory: what was kept stands, the rest is asked */
        int error;
};

static void on_dump_reply(void *userdata, const EthtoolMessage *m) {
        LinksEthtoolDumps *d = userdata;

        if (d->failed)
                return;
        if (d->n_messages == d->n_allocated) {
                size_t want = MAX(d->n_allocated * 2, (size_t) 256);
                EthtoolMessage *grown = reallocarray(d->messages, want, sizeof(*grown));
                if (!grown) {
                        d->failed = true;
                        return;
                }
                d->messages = grown;
                d->n_allocated = want;
        }
        d->messages[d->n_messages++] = *m;
}

static void *dumps_main(void *userdata) {
        LinksEthtoolDumps *d = userdata;
        sigset_t all;

        sigfillset(&all);
        (void) pthread_sigmask(SIG_BLOCK, &all, NULL);
        d->error = link_ethtool_dump(ETHTOOL_MSG_LINKMODES_GET, ETHTOOL_MESSAGE_LINKMODES, on_dump_reply, d);
        if (d->error >= 0)
                d->error = link_ethtool_dump(ETHTOOL_MSG_LINKSTATE_GET, ETHTOOL_MESSAGE_LINKSTATE, on_dump_reply, d);
        return NULL;
}

void links_dump_ethtool_begin(Links *links) {
        LinksEthtoolDumps *d;
        pthread_attr_t attr;
        int k;

        if (links->publisher->name_acquired || links->start_dumps)
                return;
        d = new0(LinksEthtoolDumps, 1);
        if (!d)
                return; /* every link asked, as on an event */
        k = pthread_attr_init(&attr);
        if (k == 0) {
                (void) pthread_attr_setstacksize(&attr, 256 * 1024);
                k = pthread_create(&d->thread, &attr, dumps_main, d);
                pthread_attr_destroy(&attr);
        }
        if (k != 0) {
                /* Then in place, on this thread. */
                log_debug_errno(-k, "Cannot start the ethtool dumps' thread, dumping in place: %m");
                dumps_main(d);
                links->start_dumps = d;
                links_dump_ethtool_end(links);
                return;
        }
        d->thread_started = true;
        links->start_dumps = d;
}

void links_dump_ethtool_end(Links *links) {
        LinksEthtoolDumps *d = TAKE_PTR(links->start_dumps);

        if (!d)
                return;
        if (d->thread_started)
                (void) pthread_join(d->thread, NULL);
        for (size_t i = 0; i < d->n_messages; i++)
                on_dumped(links, &d->messages[i]);
        if (d->error < 0)
                log_debug_errno(d->error, "An ethtool dump failed, links it did not describe are asked one by one: %m");
        free(d->messages);
        free(d);
}

/* Records an answer (a request's or the start's dump) on its link; the pass derives what follows
 * (SpeedMbps, the capability, Health). 0, or -ENOMEM (logged). */
static int link_take_ethtool_answer(Link *l, const LinkEthtoolAnswer *a) {
        int r = link_modes_apply(&l->ethtool, a);

        if (r < 0)
                return log_oom();
        if (r > 0)
                bus_object_queue(&l->bus);
        return 0;
}

bool link_apply_dumped_ethtool(Link *l) {
        if (!l->dumped || l->dumped->modes_error < 0 || l->dumped->state_error < 0 || !l->links->modes.ethtool ||
            !link_asks_ethtool(l) || !l->name)
                return false;
        l->ethtool.waiting = false;
        return link_take_ethtool_answer(l, l->dumped) >= 0;
}

/* ---- link modes (link-modes.c records them; the links are found and announced here) ---- */

bool link_asks_ethtool(const Link *l) {
        return link_modes_kind_asked(l->kind);
}

void link_request_ethtool(Link *l) {
        if (!l->links->modes.ethtool || !link_asks_ethtool(l) || !l->name)
                return;
        link_modes_request(&l->links->modes, &l->ethtool);
}

/* Every link waiting to be asked, until the worker's queue is full (a start-up burst goes in turns). Each
 * answer frees one place: the walk goes on from where the last one stopped, not from the first link, or
 * 2000 links at start-up would cost 2000 walks of the table. */
static void links_send_waiting(Links *links) {
        size_t n = links->table.n_items;

        links->modes.backlog = false;
        for (size_t k = 0; k < n; k++) {
                size_t i = (links->modes_cursor + k) % n;
                Link *l = links->table.items[i];

                if (l->ethtool.waiting && !link_modes_send(&links->modes, &l->ethtool, l->ifindex, l->name)) {
                        links->modes_cursor = i; /* still full: the next answer tries again, here */
                        return;
                }
        }
        links->modes_cursor = 0;
}

static int on_ethtool_defer(sd_event_source *s, void *userdata) {
        links_send_waiting(userdata);
        return 0;
}

static void on_ethtool_answer(void *userdata, const LinkEthtoolAnswer *a) {
        Links *links = userdata;
        Link *l = link_get(links, a->ifindex);

        if (l && l->ethtool.request == a->seq) {
                if (a->modes_error < 0 && a->modes_error != -EOPNOTSUPP)
                        log_link_debug_errno(l, a->modes_error, "ethtool gave no link modes: %m");
                (void) link_take_ethtool_answer(l, a);
        }
        if (links->modes.backlog)
                links_send_waiting(links);
}

static void on_ethtool_changed(void *userdata, int ifindex) {
        Links *links = userdata;
        Link *l;

        if (ifindex > 0) {
                l = link_get(links, ifindex);
                if (l) {
                        log_link_debug(l, "ethtool's monitor group says the link modes or settings changed.");
                        link_request_ethtool(l);
                }
                return;
        }
        TABLE_FOREACH(l, &links->table)
                link_request_ethtool(l);
}

int links_start_ethtool(Links *links, sd_event *event) {
        return link_modes_asker_start(&links->modes, event, on_ethtool_answer, on_ethtool_changed, on_ethtool_defer,
                                      links);
}

void links_stop_ethtool(Links *links) {
        link_modes_asker_stop(&links->modes);
}
