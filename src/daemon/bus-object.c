/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <linux/sockios.h>
#include <math.h>
#include <sys/ioctl.h>

#include "bus-object.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

static int on_flush(sd_event_source *s, void *userdata) {
        bus_publisher_flush(userdata);
        return 0;
}

static int on_slice(sd_event_source *s, void *userdata);

static int on_queue_wait(sd_event_source *s, uint64_t usec, void *userdata) {
        BusPublisher *p = userdata;
        return sd_event_source_set_enabled(p->slice_source, SD_EVENT_ON);
}

int bus_publisher_init(BusPublisher *p, sd_event *event, const BusPublisherHooks *hooks) {
        int r;

        *p = (BusPublisher) { .hooks = *hooks };
        r = sd_event_add_defer(event, &p->flush_source, on_flush, p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->flush_source, SD_EVENT_OFF);
        (void) sd_event_source_set_description(p->flush_source, "bus-flush");
        r = sd_event_add_defer(event, &p->slice_source, on_slice, p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->slice_source, SD_EVENT_OFF);
        (void) sd_event_source_set_priority(p->slice_source, BUS_PUBLISHER_SLICE_PRIORITY);
        (void) sd_event_source_set_description(p->slice_source, "bus-signal-slice");
        /* Accuracy 1 us: 0 would be sd-event's default, 250 ms. */
        r = sd_event_add_time_relative(event, &p->queue_wait, CLOCK_MONOTONIC, BUS_PUBLISHER_QUEUE_WAIT_USEC, 1,
                                       on_queue_wait, p);
        if (r < 0)
                return r;
        (void) sd_event_source_set_enabled(p->queue_wait, SD_EVENT_OFF);
        (void) sd_event_source_set_priority(p->queue_wait, BUS_PUBLISHER_SLICE_PRIORITY);
        (void) sd_event_source_set_description(p->queue_wait, "bus-signal-queue-wait");
        return 0;
}

void bus_publisher_done(BusPublisher *p) {
        p->flush_source = sd_event_source_disable_unref(p->flush_source);
        p->slice_source = sd_event_source_disable_unref(p->slice_source);
        p->queue_wait = sd_event_source_disable_unref(p->queue_wait);
        p->dirty = mfree(p->dirty);
        p->n_dirty = p->n_dirty_allocated = 0;
        p->emitting = mfree(p->emitting);
        p->emit_next = p->n_emitting = p->n_emitting_allocated = 0;
}

void bus_publisher_schedule(BusPublisher *p) {
        if (p->flush_source)
                (void) sd_event_source_set_enabled(p->flush_source, SD_EVENT_ONESHOT);
}

static int publisher_enqueue(BusPublisher *p, BusObject *o) {
        if (o->dirty_index > 0)
                return 0;

        if (p->n_dirty == p->n_dirty_allocated) {
                size_t n = MAX(p->n_dirty_allocated * 2, (size_t) 64);
                BusObject **grown = reallocarray(p->dirty, n, sizeof(BusObject *));
                if (!grown)
                        return log_oom();
                p->dirty = grown;
                p->n_dirty_allocated = n;
        }
        p->dirty[p->n_dirty++] = o;
        o->dirty_index = p->n_dirty;
        bus_publisher_schedule(p);
        return 0;
}

static void publisher_dequeue(BusPublisher *p, BusObject *o) {
        if (o->dirty_index > 0) {
                p->dirty[o->dirty_index - 1] = NULL;
                o->dirty_index = 0;
        }
        if (o->emit_index > 0) {
                p->emitting[o->emit_index - 1] = NULL;
                o->emit_index = 0;
        }
}

/* Behind the signals still to send; false (and the object's signal sent now) when out of memory. */
static bool publisher_defer(BusPublisher *p, BusObject *o) {
        if (o->emit_index > 0)
                return true;
        if (p->n_emitting == p->n_emitting_allocated) {
                size_t n = MAX(p->n_emitting_allocated * 2, (size_t) 64);
                BusObject **grown = reallocarray(p->emitting, n, sizeof(BusObject *));
                if (!grown)
                        return false;
                p->emitting = grown;
                p->n_emitting_allocated = n;
        }
        p->emitting[p->n_emitting++] = o;
        o->emit_index = p->n_emitting;
        (void) sd_event_source_set_enabled(p->slice_source, SD_EVENT_ON);
        return true;
}

void bus_object_init(BusObject *o, BusPublisher *p, const BusObjectType *type, char *path) {
        *o = (BusObject) {
                .publisher = p,
                .type = type,
                .path = path,
        };
        (void) publisher_enqueue(p, o);
}

int bus_object_init_root(BusObject *o, BusPublisher *p, const BusObjectType *type) {
        char *path = strdup(BUS_PATH);

        if (!path)
                return -ENOMEM;
        bus_object_init(o, p, type, path);
        o->announced = true;
        return 0;
}

/* Room for one more name and the terminating NULL: 4, 8, ... up to BUS_OBJECT_CHANGED_MAX + 1. */
static bool changed_append(BusObject *o, const char *property) {
        if (o->n_changed >= BUS_OBJECT_CHANGED_MAX)
                return false;
        if (o->n_changed + 2 > o->n_changed_allocated) {
                unsigned n = MIN(MAX(o->n_changed_allocated * 2, 4u), (unsigned) BUS_OBJECT_CHANGED_MAX + 1);
                const char **c = reallocarray(o->changed, n, sizeof(*c));
                if (!c)
                        return false;
                o->changed = c;
                o->n_changed_allocated = n;
        }
        o->changed[o->n_changed++] = property;
        o->changed[o->n_changed] = NULL;
        return true;
}

static void changed_clear(BusObject *o) {
        o->changed = mfree(o->changed);
        o->n_changed = o->n_changed_allocated = 0;
}

void bus_object_changed(BusObject *o, const char *property) {
        if (!o->publisher)
                return;
        if (o->announced) {
                bool seen = false;
                for (unsigned i = 0; i < o->n_changed; i++)
                        if (o->changed[i] == property || streq(o->changed[i], property)) {
                                seen = true;
                                break;
                        }
                if (!seen && !changed_append(o, property))
                        log_warning("%s: %s changed, but %s, so no signal says so", o->path, property,
                                    o->n_changed >= BUS_OBJECT_CHANGED_MAX ? "too many properties changed at once"
                                                                            : "memory ran out");
        }
        if (!o->publisher->record_only)
                (void) publisher_enqueue(o->publisher, o);
}

void bus_object_queue(BusObject *o) {
        if (o->publisher)
                (void) publisher_enqueue(o->publisher, o);
}

bool bus_object_set_double(BusObject *o, double *field, double value, const char *property) {
        if ((isnan(*field) && isnan(value)) || *field == value)
                return false;
        *field = value;
        bus_object_changed(o, property);
        return true;
}

int bus_object_set_string(BusObject *o, char **field, const char *value, const char *property) {
        int r = free_and_strdup(field, value);
        if (r > 0)
                bus_object_changed(o, property);
        return r;
}

int bus_object_set_strv(BusObject *o, char ***field, char ***value, const char *property) {
        if (strv_equal(*field, *value)) {
                *value = strv_free(*value);
                return 0;
        }
        strv_free(*field);
        *field = TAKE_PTR(*value);
        bus_object_changed(o, property);
        return 1;
}

typedef int (*EmitFunction)(sd_bus *bus, BusObject *o);

static int emit_added(sd_bus *bus, BusObject *o) {
        return sd_bus_emit_object_added(bus, o->path);
}

static int emit_removed(sd_bus *bus, BusObject *o) {
        return sd_bus_emit_object_removed(bus, o->path);
}

static int emit_changed(sd_bus *bus, BusObject *o) {
        return sd_bus_emit_properties_changed_strv(bus, o->path, o->type->interface, (char **) o->changed);
}

/* On the bus, and to every client of the private socket: a direct connection has no match rules, so
 * each gets what a bus client subscribed to everything would. */
static void publisher_emit(BusPublisher *p, BusObject *o, EmitFunction emit, const char *what) {
        int r;

        r = emit(p->bus, o);
        if (r < 0)
                log_debug_errno(r, "%s: failed to emit %s: %m", o->path, what);
        for (size_t i = 0; i < p->n_direct; i++) {
                r = emit(p->direct[i], o);
                if (r < 0)
                        log_debug_errno(r, "%s: failed to emit %s to a direct client: %m", o->path, what);
        }
}

int bus_publisher_add_direct(BusPublisher *p, sd_bus *bus) {
        if (p->n_direct >= ELEMENTSOF(p->direct))
                return -EMFILE;
        p->direct[p->n_direct++] = bus;
        return 0;
}

void bus_publisher_remove_direct(BusPublisher *p, sd_bus *bus) {
        for (size_t i = 0; i < p->n_direct; i++)
                if (p->direct[i] == bus) {
                        p->direct[i] = p->direct[--p->n_direct];
                        return;
                }
}

void bus_object_remove(BusObject *o) {
        BusPublisher *p = o->publisher;

        if (!p)
                return;
        if (o->announced && p->name_acquired) {
                publisher_emit(p, o, emit_removed, "InterfacesRemoved");
                if (p->hooks.published)
                        p->hooks.published(p->hooks.userdata);
        }
        o->announced = false;
        changed_clear(o);
        publisher_dequeue(p, o);
        /* What other objects derive from this one must follow, though nothing is queued. */
        bus_publisher_schedule(p);
}

void bus_object_done(BusObject *o) {
        if (o->publisher)
                publisher_dequeue(o->publisher, o);
        changed_clear(o);
        o->path = mfree(o->path);
        o->publisher = NULL;
}

/* Returns whether a signal went out. */
static bool bus_object_emit(BusObject *o) {
        BusPublisher *p = o->publisher;
        bool sent = false;

        if (!o->announced) {
                o->announced = true;
                if (p->name_acquired) {
                        publisher_emit(p, o, emit_added, "InterfacesAdded");
                        sent = true;
                }
        } else if (o->n_changed > 0 && p->name_acquired) {
                publisher_emit(p, o, emit_changed, "PropertiesChanged");
                sent = true;
        }
        changed_clear(o);
        return sent;
}

/* One object's signal, now; it leaves the signals still to send. */
static void publisher_send(BusPublisher *p, BusObject *o) {
        if (o->emit_index > 0) {
                p->emitting[o->emit_index - 1] = NULL;
                o->emit_index = 0;
        }
        p->sent |= bus_object_emit(o);
}

/* published() once every signal of the batch went out (metrics, identity file, STATUS=). */
static void publisher_sent_all(BusPublisher *p) {
        if (p->emit_next < p->n_emitting)
                return;
        p->emitting = mfree(p->emitting);
        p->emit_next = p->n_emitting = p->n_emitting_allocated = 0;
        (void) sd_event_source_set_enabled(p->slice_source, SD_EVENT_OFF);
        (void) sd_event_source_set_enabled(p->queue_wait, SD_EVENT_OFF);
        if (p->sent && p->hooks.published) {
                p->sent = false;
                p->hooks.published(p->hooks.userdata);
        }
}

/* What we sent that the bus daemon has not read yet: the messages sd-bus holds (the socket was full)
 * and the bytes in the socket (SIOCOUTQ, on a Unix socket what the peer has not read). Any of it is
 * ahead of the next reply. */
static bool write_queue_full(BusPublisher *p) {
        uint64_t queued = 0;
        int fd, outq = 0;

        if (!p->bus)
                return false;
        if (sd_bus_get_n_queued_write(p->bus, &queued) >= 0 && queued > 0)
                return true;
        fd = sd_bus_get_fd(p->bus);
        return fd >= 0 && ioctl(fd, SIOCOUTQ, &outq) >= 0 && outq >= BUS_PUBLISHER_OUTQ_MAX;
}

/* At least one object a slice, whatever the clock says (a preempted process still moves on). */
static bool slice_over(BusPublisher *p, uint64_t start, size_t n) {
        return n > 0 && (n >= BUS_PUBLISHER_SLICE_MAX || now_usec(CLOCK_MONOTONIC) - start >= BUS_PUBLISHER_SLICE_USEC ||
                         write_queue_full(p));
}

static int on_slice(sd_event_source *s, void *userdata) {
        BusPublisher *p = userdata;
        uint64_t start = now_usec(CLOCK_MONOTONIC);
        size_t n = 0;

        p->n_slices++;
        while (p->emit_next < p->n_emitting && !slice_over(p, start, n)) {
                BusObject *o = p->emitting[p->emit_next++];
                if (!o)
                        continue;
                publisher_send(p, o);
                n++;
        }
        if (p->emit_next < p->n_emitting && write_queue_full(p)) {
                /* The bus daemon is behind: wait for it rather than spin (sd-bus writes on EPOLLOUT). */
                (void) sd_event_source_set_enabled(p->slice_source, SD_EVENT_OFF);
                (void) sd_event_source_set_time_relative(p->queue_wait, BUS_PUBLISHER_QUEUE_WAIT_USEC);
                (void) sd_event_source_set_enabled(p->queue_wait, SD_EVENT_ONESHOT);
                return 0;
        }
        publisher_sent_all(p);
        return 0;
}

void bus_publisher_flush(BusPublisher *p) {
        size_t prepared = 0, derived = 0, n_sent = 0, n_deferred = 0;
        uint64_t start = now_usec(CLOCK_MONOTONIC), derived_at;
        bool over = false;

        /* Record, derive, publish: prepare what sources marked (re-reading sysfs may mark more), let
         * the derivation pass see what is new, and go round again while it queued anything. */
        for (;;) {
                for (; prepared < p->n_dirty; prepared++) {
                        BusObject *o = p->dirty[prepared];
                        if (o && o->type->prepare)
                                o->type->prepare(o);
                }
                if (p->hooks.derive)
                        p->hooks.derive(p, derived, prepared, p->hooks.userdata);
                derived = prepared;
                if (prepared == p->n_dirty)
                        break;
        }

        /* What this flush found goes first, as far as a slice goes (the derivation counted in): a
         * link's change waits for no signal of an earlier sample. The rest, behind those still to
         * send. */
        derived_at = now_usec(CLOCK_MONOTONIC);
        BusObject **batch = TAKE_PTR(p->dirty);
        size_t n = p->n_dirty;
        p->n_dirty = p->n_dirty_allocated = 0;
        for (size_t i = 0; i < n; i++) {
                BusObject *o = batch[i];
                if (!o)
                        continue;
                o->dirty_index = 0;
                /* Before the name nothing is sent, only marked announced: all of it at once (the
                 * start-up's flushes must find every object announced, or their changes would go
                 * unnamed). */
                over = over || (p->name_acquired && slice_over(p, start, n_sent));
                if (over && publisher_defer(p, o)) {
                        n_deferred++;
                        continue;
                }
                publisher_send(p, o);
                n_sent++;
        }
        free(batch);
        if (n_deferred > 0)
                log_debug("Flush: %zu objects derived in %" PRIu64 " us, %zu sent in %" PRIu64 " us, %zu left for "
                          "slices.", n, derived_at - start, n_sent, now_usec(CLOCK_MONOTONIC) - derived_at, n_deferred);
        publisher_sent_all(p);
}
