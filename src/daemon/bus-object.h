/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* bus-object.h — change tracking for published objects: record, derive once, one signal per object */
#pragma once

#include <systemd/sd-bus.h>
#include <systemd/sd-event.h>

#include "shared/macros.h"

typedef struct BusObject BusObject;
typedef struct BusPublisher BusPublisher;

#define BUS_OBJECT_CHANGED_MAX 48

typedef struct BusObjectType {
        const char *interface;
        /* Runs once per flush before anything is derived, however many events touched the object in
         * this iteration: the place for a source's work they should share, such as re-reading sysfs. */
        void (*prepare)(BusObject *o);
} BusObjectType;

/*
 * Embedded in every published object. Sources record facts and mark the properties that changed;
 * the publisher's flush (once per event-loop iteration) prepares what was marked, lets the
 * derivation pass compute every fact that combines objects, and then sends one PropertiesChanged
 * per object (one InterfacesAdded for a new one, with its final values).
 */
struct BusObject {
        BusPublisher *publisher;
        const BusObjectType *type;
        char *path;
        bool announced;     /* InterfacesAdded went out, or the object predates our bus name */
        size_t dirty_index; /* 1 + position in the publisher's queue, 0 when not queued */
        size_t emit_index;  /* 1 + position in the publisher's signals still to send, 0 when none */
        /* The properties marked since the last signal, NULL-terminated; allocated at the first mark and
         * freed once sent, so an object at rest costs no list (49 inline pointers were 392 bytes on each
         * of 2001 links). */
        unsigned n_changed, n_changed_allocated;
        const char **changed;
};

/*
 * The flush's two calls out. derive() runs after each round of prepare(), with the objects queued
 * since its previous call: publisher->dirty[from..to) (entries may be NULL: removed meanwhile; read
 * the array by index, since derive() may queue more and the array move). It runs at least once per
 * flush, also with nothing queued (a removal queues nothing). published() runs after a flush that
 * sent signals.
 */
typedef struct BusPublisherHooks {
        void (*derive)(BusPublisher *p, size_t from, size_t to, void *userdata);
        void (*published)(void *userdata);
        void *userdata;
} BusPublisherHooks;

/*
 * A flush derives everything at once but sends its signals in slices: a watch sample that moves every
 * link's rates makes 2001 PropertiesChanged (10 to 30 us each, 20 to 60 ms in all), and a bus call or
 * a link's change that arrives meanwhile must not wait for them. The flush sends what fits in one
 * slice; the rest goes out from a source of lower priority (BUS_PUBLISHER_SLICE_PRIORITY), a slice per
 * loop iteration, so bus calls, netlink events and the next flush are dispatched in between. An object
 * that changes again before its turn is sent once, by whichever flush or slice reaches it first, with
 * everything that changed.
 */
#define BUS_PUBLISHER_SLICE_USEC 1000
#define BUS_PUBLISHER_SLICE_MAX 256 /* objects per slice, however fast they go (and for the tests) */
/* A slice also stops while the bus daemon has this much of what we sent still to read (it routes
 * every signal to its subscribers, slower than we write them): a reply or a link's change sent
 * meanwhile would wait behind all of it, some 50 signals a millisecond. The next slice is tried
 * BUS_PUBLISHER_QUEUE_WAIT_USEC later. */
#define BUS_PUBLISHER_OUTQ_MAX (16 * 1024)
#define BUS_PUBLISHER_QUEUE_WAIT_USEC 1000
/* Below the bus, netlink events and the flush (SD_EVENT_PRIORITY_NORMAL); the watch's own work runs
 * at it too (watch.h). */
#define BUS_PUBLISHER_SLICE_PRIORITY (SD_EVENT_PRIORITY_NORMAL + 10)
/* Clients of the private socket at once (private-bus.c refuses more). */
#define BUS_PUBLISHER_DIRECT_MAX 16

struct BusPublisher {
        sd_bus *bus;        /* NULL until connected */
        bool name_acquired; /* signals go out only once clients can reach us by name */
        sd_bus *direct[BUS_PUBLISHER_DIRECT_MAX]; /* direct connections, which get every signal too */
        size_t n_direct;
        BusPublisherHooks hooks;
        BusObject **dirty;
        size_t n_dirty, n_dirty_allocated;
        sd_event_source *flush_source;
        /* Derived, signals not sent yet: [emit_next, n_emitting), entries NULL once sent or removed. */
        BusObject **emitting;
        size_t emit_next, n_emitting, n_emitting_allocated;
        sd_event_source *slice_source;
        sd_event_source *queue_wait; /* the slices' retry while the write queue drains */
        bool sent; /* a signal went out since published() last ran */
        /* Set around a piece of a sliced reading (link-watch.c): changes are recorded on their objects
         * but not queued, and the reader queues what changed once it read everything, so that the
         * derivation pass runs once for the whole sample, not once per piece. */
        bool record_only;
        uint64_t n_slices; /* slices sent after their flush, since start (for the debug log and tests) */
};

int bus_publisher_init(BusPublisher *p, sd_event *event, const BusPublisherHooks *hooks);
void bus_publisher_done(BusPublisher *p);
/* A flush at the end of this event-loop iteration even if nothing is queued (after a removal). */
void bus_publisher_schedule(BusPublisher *p);
/* Prepares, derives and emits everything queued, now: the objects final, their signals sent or
 * queued behind a slice (above). Also called directly after the initial enumeration, and before
 * answering a method whose reply must find the objects final. */
void bus_publisher_flush(BusPublisher *p);
/* How many objects' signals are still to be sent in slices. */
static inline size_t bus_publisher_n_unsent(const BusPublisher *p) {
        size_t n = 0;
        for (size_t i = p->emit_next; i < p->n_emitting; i++)
                n += p->emitting[i] != NULL;
        return n;
}
/* Signals go to bus too from now on, until removed. -EMFILE past BUS_PUBLISHER_DIRECT_MAX. */
int bus_publisher_add_direct(BusPublisher *p, sd_bus *bus);
void bus_publisher_remove_direct(BusPublisher *p, sd_bus *bus);

/* Takes ownership of path. The object is queued for InterfacesAdded. */
void bus_object_init(BusObject *o, BusPublisher *p, const BusObjectType *type, char *path);
/* One interface of the root object: it exists as long as the daemon, and only ever sends
 * PropertiesChanged. */
int bus_object_init_root(BusObject *o, BusPublisher *p, const BusObjectType *type);
/* Marks property (a string with static lifetime) as changed. Unannounced objects need no names. */
void bus_object_changed(BusObject *o, const char *property);
/* Queues the object for the next flush without naming a property (its prepare() or the derivation
 * pass decides). */
void bus_object_queue(BusObject *o);
/* Emits InterfacesRemoved if the object was announced (it must still be findable by the bus's
 * object lookup) and drops pending changes. Call before taking the object out of its table. */
void bus_object_remove(BusObject *o);
/* Releases the path and dequeues. */
void bus_object_done(BusObject *o);

/* Updates *field and records the change when the value differs. */
#define bus_object_set(o, field, value, property)                   \
        ({                                                          \
                __typeof__(field) _v_ = (value);                    \
                bool _c_ = (field) != _v_;                          \
                if (_c_) {                                          \
                        (field) = _v_;                              \
                        bus_object_changed((o), (property));        \
                }                                                   \
                _c_;                                                \
        })

/* The same for a double, where NaN (unknown) equals NaN: an unknown rate staying unknown is no change. */
bool bus_object_set_double(BusObject *o, double *field, double value, const char *property);

/* The same for owned strings (NULL allowed). Returns 1 if changed, 0 if equal, -ENOMEM. */
int bus_object_set_string(BusObject *o, char **field, const char *value, const char *property);
/* The same for owned string lists; takes over *value. Returns 1 if changed, 0 if equal. */
int bus_object_set_strv(BusObject *o, char ***field, char ***value, const char *property);
