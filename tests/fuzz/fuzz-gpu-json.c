/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes what the daemon reads about GPUs: the input is taken as a probe document (published as a
 * measuring run would be) and as a state file. Nothing may crash; every string that reaches the bus
 * must be UTF-8; numbers must be unique; what the state file writes must read back the same. */
#include <math.h>

#include "daemon/gpu.h"
#include "shared/log.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_text(const char *s) {
        if (s && !utf8_is_valid(s))
                abort();
}

static void check_and_round_trip(Gpus *m) {
        Gpu *g;

        TABLE_FOREACH(g, &m->table) {
                const GpuInventory *i = &g->inventory;
                check_text(i->key);
                check_text(i->name);
                check_text(i->vendor);
                check_text(i->platform);
                check_text(i->device_type);
                check_text(i->uuid);
                check_text(i->pci_bus_id);
                check_text(i->driver_version);
                check_text(i->opencl_version);
                check_text(g->last_error);
                STRV_FOREACH(w, g->measurement.warnings)
                        check_text(*w);
                if (g->number >= GPU_NUMBER_MAX || gpu_find(m, i->key) != g)
                        abort();

                json_object *o = gpu_inventory_to_json(i);
                GpuInventory back = {};
                if (!o || gpu_inventory_from_json(o, &back) < 0 || !streq(back.key, i->key) ||
                    !streq(strempty(back.name), strempty(i->name)) || back.global_memory_bytes != i->global_memory_bytes)
                        abort();
                gpu_inventory_done(&back);
                json_object_put(o);

                if (g->measurement.measured_at_usec == 0)
                        continue;
                GpuMeasurement meas = {};
                char *error = NULL;
                o = gpu_measurement_to_json(&g->measurement);
                if (!o || gpu_measurement_from_json(o, &meas, &error) != 1 ||
                    meas.fp32_gflops != g->measurement.fp32_gflops ||
                    isnan(meas.fp16_gflops) != isnan(g->measurement.fp16_gflops))
                        abort();
                gpu_measurement_done(&meas);
                json_object_put(o);
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        /* Not strndup(): the input need not be NUL-terminated, and ASan's strict string checks say so. */
        char *text = malloc(size + 1);
        /* Published nowhere: a publisher without a bus only queues. */
        BusPublisher publisher = {};
        Gpus m, n;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        log_set_max_level(LOG_CRIT);

        gpus_init(&m, &publisher);
        json_object *doc = json_tokener_parse(text);
        if (doc) {
                (void) gpus_apply_document(&m, doc, true, 1, false);
                /* A second time: everything is found again by key, nothing new. */
                size_t before = table_size(&m.table);
                if (gpus_apply_document(&m, doc, false, 2, false) >= 0 && table_size(&m.table) != before)
                        abort();
                json_object_put(doc);
        }
        check_and_round_trip(&m);
        gpus_done(&m);

        gpus_init(&n, &publisher);
        (void) gpus_load_from_string(&n, text);
        check_and_round_trip(&n);
        gpus_done(&n);
        bus_publisher_done(&publisher);
        free(text);
        return 0;
}
