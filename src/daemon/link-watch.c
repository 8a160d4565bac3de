/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * Links over time: the watch's sampler for network links. The kernel hands every link's statistics in
 * one dump, and each answer is recorded on its link by link_record_stats(): the counters as published,
 * the rates over the interval, the CRC errors and carrier changes of the last minutes for the health
 * judge. The recorder still sits in link.c beside the link's other state.
 *
 * At start-up the dump is read at once (netlink_sample_stats()); the timer's dumps are read in slices,
 * one datagram (some 150 links, a few hundred microseconds) per loop iteration at WATCH_PRIORITY, on a
 * socket of our own, so that a bus call or a link's change that arrives meanwhile waits for one
 * datagram, not for 2001 links. Each datagram's links are recorded at the time it was read: a link's
 * rate is over its own two readings, however far apart the slices fell. What the readings changed is
 * queued for the publisher once the dump is over (bus-object.h, record_only): one derivation pass
 * and one batch of signals per sample, as when the dump was read at once.
 */
#include <assert.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <sys/socket.h>

#include "link-object.h"
#include "link.h"
#include "link-watch.h"
#include "netlink.h"
#include "shared/log.h"
#include "shared/socket-util.h"
#include "shared/time-util.h"

/* The kernel's largest dump datagram (netlink_dump() caps an skb at 32 KiB). */
#define LINK_WATCH_BUF_SIZE (32 * 1024)

struct LinkWatch {
        sd_event *event;
        Netlink *nl;
        Links *links;
        int fd;               /* the sliced dumps' socket, -EBADF until the first */
        sd_event_source *io;
        void *buf;            /* one datagram, while a dump is read */
        bool at_once;         /* the kernel has no RTM_GETSTATS: netlink.c's RTM_GETLINK dump, at once */
        /* The dump under way (io enabled): its sequence number, start, what it read so far. */
        uint32_t seq;
        uint64_t started;
        size_t n;
        unsigned n_slices;
        uint64_t longest_usec;
        int *read;            /* the links whose reading changed something: queued at the end */
        size_t n_read, n_read_allocated;
        WatchSampleDone done;
        void *userdata;
};

static void link_watch_forget(LinkWatch *lw) {
        lw->buf = mfree(lw->buf); /* 32 KiB for a few ms every interval: not kept in between */
        lw->read = mfree(lw->read);
        lw->n_read = lw->n_read_allocated = 0;
        lw->done = NULL;
}

static void link_watch_close(LinkWatch *lw) {
        lw->io = sd_event_source_disable_unref(lw->io);
        lw->fd = safe_close(lw->fd);
        link_watch_forget(lw);
}

/* Every link whose reading changed a property, queued at once: one derivation pass for the sample.
 * By ifindex, as a link removed meanwhile is gone from the table. */
static void link_watch_queue(LinkWatch *lw) {
        for (size_t i = 0; i < lw->n_read; i++) {
                Link *l = link_get(lw->links, lw->read[i]);
                if (l)
                        bus_object_queue(&l->bus);
        }
}

static void link_watch_finish(LinkWatch *lw, int r) {
        WatchSampleDone done = lw->done;
        void *userdata = lw->userdata;

        log_debug("Link statistics: %zu links read in %u slices over %" PRIu64 " us, the longest %" PRIu64 " us.",
                  lw->n, lw->n_slices, now_usec(CLOCK_MONOTONIC) - lw->started, lw->longest_usec);
        link_watch_queue(lw);
        if (r < 0)
                link_watch_close(lw); /* whatever the kernel still has of this dump goes with the socket */
        else {
                (void) sd_event_source_set_enabled(lw->io, SD_EVENT_OFF);
                link_watch_forget(lw);
        }
        done(userdata, lw->n, r);
}

/* One datagram of the dump: its links recorded at the time it was read. Returns > 0 at the dump's
 * end (r in *ret_r), 0 to go on. */
static int link_watch_read(LinkWatch *lw, int *ret_r) {
        ssize_t k = recv(lw->fd, lw->buf, LINK_WATCH_BUF_SIZE, MSG_DONTWAIT);
        uint64_t now = now_usec(CLOCK_MONOTONIC);

        if (k < 0) {
                if (IN_SET(errno, EAGAIN, EINTR))
                        return 0;
                *ret_r = -errno;
                return 1;
        }
        for (struct nlmsghdr *h = lw->buf; NLMSG_OK_LEFT(h, k); h = NLMSG_NEXT_LEFT(h, k)) {
                LinkStats s;

                if (h->nlmsg_seq != lw->seq)
                        continue;
                if (h->nlmsg_type == NLMSG_DONE) {
                        int error = 0;
                        if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(int)))
                                memcpy(&error, NLMSG_DATA(h), sizeof(error));
                        *ret_r = MIN(error, 0);
                        return 1;
                }
                if (h->nlmsg_type == NLMSG_ERROR) {
                        struct nlmsgerr e = {};
                        if (h->nlmsg_len >= NLMSG_LENGTH(sizeof(e)))
                                memcpy(&e, NLMSG_DATA(h), sizeof(e));
                        *ret_r = e.error < 0 ? e.error : -EIO;
                        return 1;
                }
                /* An interrupted dump (NLM_F_DUMP_INTR) still reads true values; a link it answered
                 * twice is recorded once (by sample), one it skipped is read at the next sample. */
                if (!netlink_parse_stats(h, &s))
                        continue;
                /* Room first: a reading recorded must be queued. */
                if (lw->n_read == lw->n_read_allocated) {
                        size_t m = MAX(lw->n_read_allocated * 2, (size_t) 256);
                        int *grown = reallocarray(lw->read, m, sizeof(int));
                        if (!grown) {
                                *ret_r = -ENOMEM;
                                return 1;
                        }
                        lw->read = grown;
                        lw->n_read_allocated = m;
                }
                lw->n++;
                lw->links->publisher->record_only = true;
                if (link_record_stats(lw->links, &s, lw->started, now))
                        lw->read[lw->n_read++] = s.ifindex;
                lw->links->publisher->record_only = false;
        }
        return 0;
}

static int on_stats_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        LinkWatch *lw = userdata;
        uint64_t cpu = now_usec(CLOCK_THREAD_CPUTIME_ID);
        int r = 0, end;

        end = link_watch_read(lw, &r);
        lw->n_slices++;
        lw->longest_usec = MAX(lw->longest_usec, now_usec(CLOCK_THREAD_CPUTIME_ID) - cpu);
        if (!end)
                return 0;
        if (IN_SET(r, -EOPNOTSUPP, -EINVAL, -EPROTONOSUPPORT) && lw->n == 0) {
                /* Before Linux 4.7: the statistics come with RTM_GETLINK's whole description of every
                 * link, read at once from now on. */
                log_debug_errno(r, "RTM_GETSTATS is not supported (%m), dumping links for their statistics.");
                lw->at_once = true;
                r = netlink_sample_stats(lw->nl, now_usec(CLOCK_MONOTONIC), &lw->n);
        }
        link_watch_finish(lw, r);
        return 0;
}

static int link_watch_open(LinkWatch *lw) {
        int r;

        if (lw->fd >= 0)
                return 0;
        lw->fd = socket(AF_NETLINK, SOCK_RAW | SOCK_CLOEXEC | SOCK_NONBLOCK, NETLINK_ROUTE);
        if (lw->fd < 0)
                return -errno;
        r = sd_event_add_io(lw->event, &lw->io, lw->fd, EPOLLIN, on_stats_io, lw);
        if (r < 0) {
                link_watch_close(lw);
                return r;
        }
        (void) sd_event_source_set_priority(lw->io, WATCH_PRIORITY);
        (void) sd_event_source_set_description(lw->io, "watch-link-stats");
        (void) sd_event_source_set_enabled(lw->io, SD_EVENT_OFF);
        return 0;
}

static int start(void *source, uint64_t interval_usec, WatchSampleDone done, void *userdata) {
        LinkWatch *lw = source;
        struct {
                struct nlmsghdr h;
                struct if_stats_msg st;
        } request = {
                .h = {
                        .nlmsg_len = sizeof(request),
                        .nlmsg_type = RTM_GETSTATS,
                        .nlmsg_flags = NLM_F_REQUEST | NLM_F_DUMP,
                },
                .st = { .family = AF_UNSPEC, .filter_mask = IFLA_STATS_FILTER_BIT(IFLA_STATS_LINK_64) },
        };
        int r;

        if (!lw->nl || lw->at_once)
                return -EOPNOTSUPP;
        assert(!lw->done);
        r = link_watch_open(lw);
        if (r < 0)
                return r;
        lw->buf = malloc(LINK_WATCH_BUF_SIZE);
        if (!lw->buf)
                return -ENOMEM;
        request.h.nlmsg_seq = ++lw->seq;
        if (send(lw->fd, &request, sizeof(request), 0) < 0) {
                r = -errno;
                link_watch_close(lw); /* a dump half read, or a socket gone wrong: a fresh one next time */
                return r;
        }
        lw->started = now_usec(CLOCK_MONOTONIC);
        lw->n = lw->n_slices = 0;
        lw->longest_usec = 0;
        lw->done = done;
        lw->userdata = userdata;
        return sd_event_source_set_enabled(lw->io, SD_EVENT_ON);
}

static void cancel(void *source) {
        LinkWatch *lw = source;

        /* The kernel would go on with the dump: the socket goes with it. */
        if (lw->done)
                link_watch_close(lw);
}

static int sample(void *source, uint64_t now, uint64_t interval_usec, size_t *ret_n) {
        LinkWatch *lw = source;

        if (!lw->nl) /* no rtnetlink socket: nothing to read, and nothing to say */
                return 0;
        return netlink_sample_stats(lw->nl, now, ret_n);
}

int link_watch_new(sd_event *event, Netlink *nl, Links *links, LinkWatch **ret) {
        LinkWatch *lw = new0(LinkWatch, 1);

        if (!lw)
                return -ENOMEM;
        *lw = (LinkWatch) { .event = event, .nl = nl, .links = links, .fd = -EBADF };
        *ret = lw;
        return 0;
}

LinkWatch *link_watch_free(LinkWatch *lw) {
        if (!lw)
                return NULL;
        link_watch_close(lw);
        return mfree(lw);
}

WatchSampler link_watch_sampler(LinkWatch *lw) {
        return (WatchSampler) {
                .objects = "links",
                .sample = sample,
                .start = start,
                .cancel = cancel,
                .source = lw,
                .failed = "Cannot read link statistics, rates and link health stay unknown",
                .recovered = "Link statistics can be read again.",
        };
}
