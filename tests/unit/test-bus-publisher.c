/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the publisher's sliced signals (bus-object.c): a big flush sends a slice and leaves
 * the rest to a source of lower priority, so that what has a higher one (bus calls, netlink events,
 * the next flush) is dispatched in between; a fresh change goes first; a removed object is never
 * touched again. Without a bus no signal leaves, but an object's pending changes are cleared when its
 * turn comes, which is what these tests watch. */
#include "unit-test.h"
#include "daemon/bus-object.h"

#define N 1000

static const BusObjectType test_type = { .interface = "org.linkprobe.Test" };

typedef struct Fixture {
        sd_event *event;
        BusPublisher p;
        BusObject objects[N];
        sd_event_source *marker; /* a normal-priority source, like the bus's */
        size_t unsent_at_marker;
        unsigned markers;
} Fixture;

static size_t n_pending(const Fixture *f) {
        size_t n = 0;
        for (size_t i = 0; i < N; i++)
                n += f->objects[i].publisher && f->objects[i].n_changed > 0;
        return n;
}

static int on_marker(sd_event_source *s, void *userdata) {
        Fixture *f = userdata;
        f->unsent_at_marker = bus_publisher_n_unsent(&f->p);
        f->markers++;
        return 0;
}

static void run_until_sent(Fixture *f, unsigned *ret_iterations) {
        unsigned i = 0;
        while (bus_publisher_n_unsent(&f->p) > 0 && i < 10 * N) {
                assert_true(sd_event_run(f->event, 0) >= 0);
                i++;
        }
        assert_int_equal(bus_publisher_n_unsent(&f->p), 0);
        if (ret_iterations)
                *ret_iterations = i;
}

static int setup(void **state) {
        Fixture *f = calloc(1, sizeof(Fixture));
        assert_non_null(f);
        assert_int_equal(sd_event_new(&f->event), 0);
        assert_int_equal(bus_publisher_init(&f->p, f->event, &(BusPublisherHooks) {}), 0);
        for (size_t i = 0; i < N; i++) {
                char *path;
                assert_true(asprintf(&path, "/org/linkprobe/Test/%zu", i) > 0);
                bus_object_init(&f->objects[i], &f->p, &test_type, path);
        }
        assert_int_equal(sd_event_add_defer(f->event, &f->marker, on_marker, f), 0);
        assert_int_equal(sd_event_source_set_enabled(f->marker, SD_EVENT_OFF), 0);
        /* Announced at once, as at start-up before the bus name: every later change is a
         * PropertiesChanged. */
        bus_publisher_flush(&f->p);
        assert_int_equal(bus_publisher_n_unsent(&f->p), 0);
        for (size_t i = 0; i < N; i++)
                assert_true(f->objects[i].announced);
        /* The name: from now on signals go out (to no bus here: sd-bus refuses them, nothing else
         * changes). */
        f->p.name_acquired = true;
        while (sd_event_run(f->event, 0) > 0) /* the flush the objects' creation asked for: nothing left */
                ;
        *state = f;
        return 0;
}

static int teardown(void **state) {
        Fixture *f = *state;
        for (size_t i = 0; i < N; i++)
                bus_object_done(&f->objects[i]);
        sd_event_source_disable_unref(f->marker);
        bus_publisher_done(&f->p);
        sd_event_unref(f->event);
        free(f);
        return 0;
}

static void change_all(Fixture *f, const char *property) {
        for (size_t i = 0; i < N; i++)
                bus_object_changed(&f->objects[i], property);
}

static void test_sliced_below_normal_priority(void **state) {
        Fixture *f = *state;
        unsigned iterations;

        /* A watch sample moved every object's rates: the flush (one loop iteration) sends a slice. */
        change_all(f, "RxGbps");
        assert_int_equal(sd_event_run(f->event, 0), 1);
        size_t left = bus_publisher_n_unsent(&f->p);
        assert_true(left >= N - BUS_PUBLISHER_SLICE_MAX && left < N);
        assert_int_equal(n_pending(f), left);

        /* A bus call, a netlink event: dispatched before the next slice. */
        assert_int_equal(sd_event_source_set_enabled(f->marker, SD_EVENT_ONESHOT), 0);
        assert_int_equal(sd_event_run(f->event, 0), 1);
        assert_int_equal(f->markers, 1);
        assert_int_equal(f->unsent_at_marker, left);
        assert_int_equal(bus_publisher_n_unsent(&f->p), left);

        /* With nothing above it, a slice per iteration until all went out. */
        assert_int_equal(sd_event_run(f->event, 0), 1);
        size_t after = bus_publisher_n_unsent(&f->p);
        assert_true(after < left && after >= left - BUS_PUBLISHER_SLICE_MAX);
        run_until_sent(f, &iterations);
        assert_true(iterations >= 1);
        assert_int_equal(n_pending(f), 0);
        assert_true(f->p.n_slices >= (N - BUS_PUBLISHER_SLICE_MAX) / BUS_PUBLISHER_SLICE_MAX);
}

static void test_fresh_change_goes_first(void **state) {
        Fixture *f = *state;
        BusObject *last = &f->objects[N - 1];

        change_all(f, "RxGbps");
        assert_int_equal(sd_event_run(f->event, 0), 1);
        assert_true(last->emit_index > 0); /* at the back of the queue */
        assert_int_equal(last->n_changed, 1);

        /* The link went down: its flush sends it now, with the rate that waited, and it leaves the
         * queue; the objects before it still wait. */
        bus_object_changed(last, "AdminState");
        assert_int_equal(last->n_changed, 2);
        size_t before = bus_publisher_n_unsent(&f->p);
        assert_int_equal(sd_event_run(f->event, 0), 1);
        assert_int_equal(last->n_changed, 0);
        assert_int_equal(last->emit_index, 0);
        assert_int_equal(last->dirty_index, 0);
        assert_int_equal(bus_publisher_n_unsent(&f->p), before - 1);
        assert_true(n_pending(f) > 0);
        run_until_sent(f, NULL);
        assert_int_equal(n_pending(f), 0);
}

static void test_removed_while_queued(void **state) {
        Fixture *f = *state;

        change_all(f, "TxGbps");
        assert_int_equal(sd_event_run(f->event, 0), 1);
        size_t before = bus_publisher_n_unsent(&f->p);
        /* Links deleted while their signals wait: never touched again (ASan would say). */
        for (size_t i = N - 10; i < N; i++) {
                assert_true(f->objects[i].emit_index > 0);
                bus_object_remove(&f->objects[i]);
                bus_object_done(&f->objects[i]);
        }
        assert_int_equal(bus_publisher_n_unsent(&f->p), before - 10);
        run_until_sent(f, NULL);
        assert_int_equal(n_pending(f), 0);
}

static void test_small_flush_not_deferred(void **state) {
        Fixture *f = *state;

        /* One link's change, nothing else queued: sent by its flush, no slice source left on. */
        bus_object_changed(&f->objects[3], "OperState");
        uint64_t slices = f->p.n_slices;
        assert_int_equal(sd_event_run(f->event, 0), 1);
        assert_int_equal(f->objects[3].n_changed, 0);
        assert_int_equal(bus_publisher_n_unsent(&f->p), 0);
        for (int i = 0; i < 3; i++) /* nothing pending, no slice */
                assert_true(sd_event_run(f->event, 0) >= 0);
        assert_int_equal(f->p.n_slices, slices);
}

static void test_record_only(void **state) {
        Fixture *f = *state;
        BusObject *o = &f->objects[5];

        /* A piece of a sliced reading: recorded, not queued, no flush for it. */
        f->p.record_only = true;
        bus_object_changed(o, "RxGbps");
        bus_object_changed(o, "TxGbps");
        f->p.record_only = false;
        assert_int_equal(o->n_changed, 2);
        assert_int_equal(o->dirty_index, 0);
        /* (sd_event_run() may still say 1: a timerfd armed before its source was turned off wakes
         * the loop for nothing.) */
        for (int i = 0; i < 3; i++)
                assert_true(sd_event_run(f->event, 0) >= 0);
        assert_int_equal(o->n_changed, 2);
        assert_int_equal(o->dirty_index, 0);

        /* The reading is over: queued, and sent with both in one signal. */
        bus_object_queue(o);
        assert_true(o->dirty_index > 0);
        assert_int_equal(sd_event_run(f->event, 0), 1);
        assert_int_equal(o->n_changed, 0);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test_setup_teardown(test_sliced_below_normal_priority, setup, teardown),
                cmocka_unit_test_setup_teardown(test_fresh_change_goes_first, setup, teardown),
                cmocka_unit_test_setup_teardown(test_removed_while_queued, setup, teardown),
                cmocka_unit_test_setup_teardown(test_small_flush_not_deferred, setup, teardown),
                cmocka_unit_test_setup_teardown(test_record_only, setup, teardown),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
