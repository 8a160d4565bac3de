/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * gpus.json in the state directory: every published device with its number, inventory, last good
 * measurement and probe state, and the numbers held for departed devices. Written atomically after
 * each probe run, read once at start so a restart republishes at once (Stale tells the age).
 */

#include "gpu.h"
#include "shared/json-util.h"
#include "shared/log.h"
#include "shared/string-util.h"
#include "state-file.h"

#define GPU_STATE_FILE "gpus.json"
#define GPU_STATE_VERSION 1
#define GPU_STATE_SIZE_MAX (4U << 20)

static const StateFile gpu_state_file = {
        .name = GPU_STATE_FILE,
        .bad_suffix = ".bad",
        .size_max = GPU_STATE_SIZE_MAX,
        .what = "GPU results",
};

static json_object *gpu_to_state(const Gpu *g) {
        json_object *o = json_object_new_object();

        if (!o)
                return NULL;
        json_object_object_add(o, "number", json_object_new_int64(g->number));
        json_object_object_add(o, "inventory", gpu_inventory_to_json(&g->inventory));
        if (g->measurement.measured_at_usec > 0)
                json_object_object_add(o, "measurement", gpu_measurement_to_json(&g->measurement));
        json_object_object_add(o, "probe_state", json_object_new_string(gpu_probe_state_to_string(g->probe_state)));
        json_object_object_add(o, "last_error", json_object_new_string(strempty(g->last_error)));
        return o;
}

int gpus_save(Gpus *p, StateDirectory *directory) {
        _cleanup_(json_object_putp) json_object *root = json_object_new_object();
        json_object *gpus = json_object_new_array(), *retired = json_object_new_array();
        Gpu *g;
        int dir, r;

        if (!root || !gpus || !retired) {
                json_object_put(gpus);
                json_object_put(retired);
                return log_oom();
        }
        json_object_object_add(root, "version", json_object_new_int(GPU_STATE_VERSION));
        json_object_object_add(root, "gpus", gpus);
        json_object_object_add(root, "retired", retired);
        TABLE_FOREACH(g, &p->table)
                json_object_array_add(gpus, gpu_to_state(g));
        for (size_t i = 0; i < p->n_retired; i++) {
                json_object *slot = json_object_new_object();
                if (!slot)
                        return log_oom();
                json_object_object_add(slot, "number", json_object_new_int64(p->retired[i].number));
                json_object_object_add(slot, "key", json_object_new_string(p->retired[i].key));
                json_object_array_add(retired, slot);
        }

        dir = state_directory_open(directory);
        if (dir < 0)
                return dir; /* logged; the results stay in memory */
        r = state_file_write(dir, &gpu_state_file, root, JSON_C_TO_STRING_PLAIN | JSON_C_TO_STRING_NOSLASHESCAPE);
        if (r == -ENOMEM)
                return log_oom();
        if (r < 0)
                return log_warning_errno(r, "Cannot save GPU results to %s: %m", GPU_STATE_FILE);
        return 0;
}

static int read_number(json_object *o, unsigned *ret) {
        json_object *v;
        int64_t n;

        if (!json_object_object_get_ex(o, "number", &v) || !json_object_is_type(v, json_type_int))
                return -EINVAL;
        n = json_object_get_int64(v);
        if (n < 0 || n >= GPU_NUMBER_MAX)
                return -EINVAL;
        *ret = (unsigned) n;
        return 0;
}

static int load_gpu(Gpus *gpus, json_object *entry) {
        _cleanup_(gpu_inventory_done) GpuInventory inv = {};
        _cleanup_(gpu_measurement_done) GpuMeasurement meas = {};
        _cleanup_(freep) char *error = NULL;
        json_object *inventory, *measurement;
        GpuProbeState state;
        unsigned number;
        Gpu *g;
        int r;

        if (read_number(entry, &number) < 0 || !json_object_object_get_ex(entry, "inventory", &inventory) ||
            gpu_inventory_from_json(inventory, &inv) < 0)
                return -EINVAL;
        if (gpu_get(gpus, number) || gpu_find(gpus, inv.key))
                return -EEXIST;

        if (json_object_object_get_ex(entry, "measurement", &measurement) &&
            (gpu_measurement_from_json(measurement, &meas, &error) <= 0 || meas.measured_at_usec == 0)) {
                log_warning("%s: GPU %u: ignoring a malformed measurement.", GPU_STATE_FILE, number);
                gpu_measurement_done(&meas);
        }

        state = gpu_probe_state_from_string(json_string_or(entry, "probe_state", NULL));
        const char *last_error = json_string_or(entry, "last_error", NULL);
        if (state == GPU_PROBE_RUNNING) {
                /* The daemon stopped during a run. */
                state = GPU_PROBE_FAILED;
                last_error = "interrupted: the daemon stopped during the measurement";
        } else if (state < 0)
                state = meas.measured_at_usec > 0 ? GPU_PROBE_OK : GPU_PROBE_NEVER;
        if (last_error && (strlen(last_error) > 1024 || !utf8_is_valid(last_error)))
                last_error = "unknown: unreadable error in the state file";

        r = gpu_new(gpus, number, inv.key, &g);
        if (r < 0)
                return r;
        gpu_set_inventory(g, &inv);
        if (meas.measured_at_usec > 0)
                gpu_set_measurement(g, &meas);
        g->probe_state = state;
        r = free_and_strdup(&g->last_error, isempty(last_error) ? NULL : last_error);
        return r < 0 ? r : 0;
}

static void load_retired(Gpus *gpus, json_object *retired) {
        size_t n = json_object_array_length(retired);

        for (size_t k = 0; k < n && k < GPU_RETIRED_MAX; k++) {
                json_object *slot = json_object_array_get_idx(retired, k);
                const char *key = json_string_or(slot, "key", NULL);
                unsigned number;

                if (read_number(slot, &number) < 0 || isempty(key) || strlen(key) > GPU_KEY_MAX ||
                    !utf8_is_valid(key) || gpu_get(gpus, number) || gpu_find(gpus, key))
                        continue;
                (void) gpu_number_retire(gpus, number, key);
        }
}

int gpus_load_from_string(Gpus *gpus, const char *text) {
        _cleanup_(json_object_putp) json_object *root = NULL;
        json_object *version, *list, *retired;
        Gpus *table = gpus;
        size_t n, loaded = 0;

        root = json_tokener_parse(text);
        if (!root || !json_object_is_type(root, json_type_object) ||
            !json_object_object_get_ex(root, "version", &version) || !json_object_is_type(version, json_type_int) ||
            json_object_get_int64(version) != GPU_STATE_VERSION || !json_object_object_get_ex(root, "gpus", &list) ||
            !json_object_is_type(list, json_type_array))
                return -EINVAL;

        n = json_object_array_length(list);
        for (size_t k = 0; k < n && k < GPUS_MAX; k++) {
                int r = load_gpu(table, json_object_array_get_idx(list, k));
                if (r == -ENOMEM)
                        return r;
                if (r < 0)
                        log_warning("%s: ignoring entry %zu (%s).", GPU_STATE_FILE, k,
                                    r == -EEXIST ? "its number or key repeats" : "malformed");
                else
                        loaded++;
        }
        if (json_object_object_get_ex(root, "retired", &retired) && json_object_is_type(retired, json_type_array))
                load_retired(gpus, retired);
        return (int) loaded;
}

int gpus_load(Gpus *gpus, StateDirectory *directory) {
        _cleanup_(freep) char *text = NULL;
        int dir, r;

        dir = state_directory_open(directory);
        if (dir < 0)
                return dir;
        r = state_file_read(dir, &gpu_state_file, &text, NULL);
        if (r <= 0)
                return r;

        r = gpus_load_from_string(gpus, text);
        if (r == -EINVAL) {
                state_file_set_aside(dir, &gpu_state_file, "not a GPU state file of this version");
                return 0;
        }
        if (r > 0)
                log_info("Republished %d GPU results saved by a previous run.", r);
        return r;
}
