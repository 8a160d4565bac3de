/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the GPU objects' inputs: the probe's device and measurement objects, the state file,
 * numbering, [Gpu] configuration, and the Inhibit() argument checks. */
#include <math.h>
#include <syslog.h>

#include "unit-test.h"
#include "daemon/config.h"
#include "daemon/gpu-prober.h"
#include "daemon/gpu.h"
#include "daemon/inhibit.h"
#include "shared/bus-json.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

static json_object *parse(const char *text) {
        json_object *o = json_tokener_parse(text);
        assert_non_null(o);
        return o;
}

#define DEVICE(extra)                                                                                   \
        "{\"key\":\"uuid:1@P\",\"name\":\"Card\",\"vendor\":\"V\",\"vendor_id\":4318,\"platform\":\"P\"," \
        "\"type\":\"gpu\",\"compute_units\":108,\"max_clock_mhz\":1410,\"global_memory_bytes\":42949672960," \
        "\"max_allocation_bytes\":10737418240,\"fp16_supported\":true,\"uuid\":null" extra "}"

static void test_inventory(void **state) {
        _cleanup_(json_object_putp) json_object *o = parse(DEVICE(""));
        GpuInventory i = {};

        assert_int_equal(gpu_inventory_from_json(o, &i), 0);
        assert_string_equal(i.key, "uuid:1@P");
        assert_string_equal(i.name, "Card");
        assert_string_equal(i.device_type, "gpu");
        assert_string_equal(i.uuid, "");
        assert_int_equal(i.compute_units, 108);
        assert_true(i.global_memory_bytes == UINT64_C(42949672960));
        assert_true(i.fp16_supported && i.available && !i.host_unified_memory);

        /* What we write reads back the same. */
        _cleanup_(json_object_putp) json_object *back = gpu_inventory_to_json(&i);
        GpuInventory j = {};
        assert_int_equal(gpu_inventory_from_json(back, &j), 0);
        assert_string_equal(j.name, i.name);
        assert_true(j.max_allocation_bytes == i.max_allocation_bytes && j.vendor_id == i.vendor_id);
        gpu_inventory_done(&i);
        gpu_inventory_done(&j);
}

static void test_inventory_bad_input(void **state) {
        static const char *const bad[] = {
                "[]",
                "{\"name\":\"no key\"}",
                "{\"key\":\"\"}",
                "{\"key\":7}",
                DEVICE(",\"compute_units\":-1"),
                DEVICE(",\"compute_units\":4294967296"),
                DEVICE(",\"compute_units\":1.5"),
                DEVICE(",\"compute_units\":\"8\""),
                DEVICE(",\"fp16_supported\":1"),
                DEVICE(",\"name\":{}"),
                DEVICE(",\"global_memory_bytes\":-4"),
        };
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                _cleanup_(json_object_putp) json_object *o = parse(bad[k]);
                GpuInventory i = {};
                if (gpu_inventory_from_json(o, &i) != -EINVAL)
                        fail_msg("accepted: %s", bad[k]);
        }
}

static void test_inventory_strings_are_made_safe(void **state) {
        char long_name[1000];
        memset(long_name, 'x', sizeof(long_name) - 1);
        long_name[sizeof(long_name) - 1] = '\0';
        /* A two-byte character straddling the cut at 256 bytes, then invalid bytes. */
        long_name[255] = (char) 0xc3;
        long_name[256] = (char) 0xa9;

        _cleanup_(json_object_putp) json_object *o = parse(DEVICE(""));
        json_object_object_add(o, "name", json_object_new_string(long_name));
        json_object_object_add(o, "vendor", json_object_new_string("Caf\xe9 \xff"));
        json_object_object_add(o, "type", json_object_new_string("quantum"));
        GpuInventory i = {};
        assert_int_equal(gpu_inventory_from_json(o, &i), 0);
        assert_true(strlen(i.name) <= GPU_TEXT_MAX);
        assert_true(utf8_is_valid(i.name));
        assert_string_equal(i.vendor, "Caf\\xe9 \\xff");
        assert_string_equal(i.device_type, "other");
        gpu_inventory_done(&i);
}

#define MEASUREMENT(fp16, extra)                                                                        \
        "{\"status\":\"ok\",\"memory_bandwidth_gb_s\":1555.5,\"fp32_gflops\":19500,\"fp16_gflops\":" fp16 \
        ",\"memory_bandwidth\":{\"relative_spread\":0.25},\"fp32\":{\"relative_spread\":0.01}," \
        "\"warnings\":[\"drift\"]" extra "}"

static void test_measurement(void **state) {
        _cleanup_(json_object_putp) json_object *o = parse(MEASUREMENT("78000.5", ""));
        _cleanup_(json_object_putp) json_object *u = parse(MEASUREMENT("\"unsupported\"", ",\"quick\":true"));
        GpuMeasurement m = {};
        char *error = NULL;

        assert_int_equal(gpu_measurement_from_json(o, &m, &error), 1);
        assert_true(m.memory_bandwidth_gb_s == 1555.5 && m.fp32_gflops == 19500 && m.fp16_gflops == 78000.5);
        assert_true(m.memory_bandwidth_spread == 0.25 && m.fp32_spread == 0.01 && m.fp16_spread == 0);
        /* A result from before the median was the figure: the figure was the best run. */
        assert_true(m.memory_bandwidth_best_gb_s == 1555.5 && m.fp32_best_gflops == 19500 &&
                    m.fp16_best_gflops == 78000.5);
        assert_int_equal(strv_length(m.warnings), 1);
        assert_false(m.quick);
        gpu_measurement_done(&m);

        assert_int_equal(gpu_measurement_from_json(u, &m, &error), 1);
        assert_true(isnan(m.fp16_gflops) && isnan(m.fp16_best_gflops)); /* unsupported is NaN, never 0 */
        assert_true(m.quick);

        /* The state file keeps NaN as "unsupported", and the time. */
        m.measured_at_usec = 1234567;
        _cleanup_(json_object_putp) json_object *back = gpu_measurement_to_json(&m);
        GpuMeasurement n = {};
        assert_int_equal(gpu_measurement_from_json(back, &n, &error), 1);
        assert_true(isnan(n.fp16_gflops) && n.measured_at_usec == 1234567 && n.fp32_gflops == 19500);
        assert_true(isnan(n.fp16_best_gflops) && n.fp32_best_gflops == 19500 && n.fp32_spread == 0.01);
        gpu_measurement_done(&m);
        gpu_measurement_done(&n);

        /* As the probe writes it now: the best runs under their old names, the medians (the figures)
         * beside them. */
        _cleanup_(json_object_putp) json_object *p = parse(
                "{\"status\":\"ok\",\"memory_bandwidth_gb_s\":52,\"fp32_gflops\":110,\"fp16_gflops\":230,"
                "\"memory_bandwidth_median_gb_s\":34,\"fp32_median_gflops\":100,\"fp16_median_gflops\":200,"
                "\"memory_bandwidth\":{\"best\":52,\"median\":34,\"relative_spread\":0.6},"
                "\"fp32\":{\"relative_spread\":0.1},\"fp16\":{\"relative_spread\":0.2}}");
        assert_int_equal(gpu_measurement_from_json(p, &m, &error), 1);
        assert_true(m.memory_bandwidth_gb_s == 34 && m.memory_bandwidth_best_gb_s == 52);
        assert_true(m.fp32_gflops == 100 && m.fp32_best_gflops == 110);
        assert_true(m.fp16_gflops == 200 && m.fp16_best_gflops == 230 && m.fp16_spread == 0.2);
        _cleanup_(json_object_putp) json_object *saved = gpu_measurement_to_json(&m);
        assert_int_equal(gpu_measurement_from_json(saved, &n, &error), 1);
        assert_true(n.memory_bandwidth_gb_s == 34 && n.memory_bandwidth_best_gb_s == 52);
        assert_true(n.fp16_gflops == 200 && n.fp16_best_gflops == 230 && n.fp16_spread == 0.2);
        gpu_measurement_done(&m);
        gpu_measurement_done(&n);

        _cleanup_(json_object_putp) json_object *e =
                parse("{\"status\":\"error\",\"error\":{\"name\":\"CL_OUT_OF_RESOURCES\",\"message\":\"no\"}}");
        assert_int_equal(gpu_measurement_from_json(e, &m, &error), 0);
        assert_string_equal(error, "CL_OUT_OF_RESOURCES: no");
        free(error);
}

static void test_measurement_bad_input(void **state) {
        static const char *const bad[] = {
                "{}",
                "{\"status\":\"maybe\"}",
                "{\"status\":\"error\"}",
                "{\"status\":\"error\",\"error\":{\"name\":\"has space\",\"message\":\"x\"}}",
                "{\"status\":\"ok\",\"fp32_gflops\":1,\"fp16_gflops\":1}",
                MEASUREMENT("0", ",\"fp32_gflops\":-1"),
                MEASUREMENT("0", ",\"fp32_gflops\":\"fast\""),
                MEASUREMENT("\"none\"", ""),
                MEASUREMENT("-2", ""),
                MEASUREMENT("1e999", ""),
                MEASUREMENT("1", ",\"warnings\":\"one\""),
                MEASUREMENT("1", ",\"warnings\":[3]"),
                MEASUREMENT("1", ",\"fp32\":{\"relative_spread\":-0.5}"),
                MEASUREMENT("1", ",\"fp32_median_gflops\":\"fast\""),
                MEASUREMENT("1", ",\"memory_bandwidth_median_gb_s\":-3"),
                MEASUREMENT("1", ",\"fp16_median_gflops\":\"unsupported\""),
                MEASUREMENT("1", ",\"fp32_median_gflops\":\"unsupported\""),
                MEASUREMENT("1", ",\"host_to_device_median_gb_s\":\"fast\""),
                MEASUREMENT("1", ",\"device_to_host_gb_s\":-1"),
        };
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                json_object *o = json_tokener_parse(bad[k]);
                GpuMeasurement m = {};
                char *error = NULL;
                int r = o ? gpu_measurement_from_json(o, &m, &error) : -EINVAL;
                json_object_put(o);
                if (r != -EINVAL)
                        fail_msg("accepted: %s", bad[k]);
                assert_null(error);
        }
}

static void test_warnings_are_bounded(void **state) {
        _cleanup_(json_object_putp) json_object *o = parse(MEASUREMENT("1", ""));
        json_object *w = json_object_new_array();
        for (int k = 0; k < 100; k++)
                json_object_array_add(w, json_object_new_string("again"));
        json_object_object_add(o, "warnings", w);
        GpuMeasurement m = {};
        char *error = NULL;
        assert_int_equal(gpu_measurement_from_json(o, &m, &error), 1);
        assert_int_equal(strv_length(m.warnings), GPU_WARNINGS_MAX);
        gpu_measurement_done(&m);
}

/* The devices, published nowhere: a publisher without a bus only queues. */
typedef struct Fixture {
        BusPublisher publisher;
        Gpus gpus;
} Fixture;

static void fixture_init(Fixture *f) {
        *f = (Fixture) {};
        gpus_init(&f->gpus, &f->publisher);
}

static void fixture_done(Fixture *f) {
        gpus_done(&f->gpus);
        bus_publisher_done(&f->publisher);
}

#define STATE_GPU(number, key, extra)                                                        \
        "{\"number\":" #number ",\"inventory\":{\"key\":\"" key "\",\"name\":\"n\"}" extra "}"

static void test_state_file(void **state) {
        Fixture f;
        fixture_init(&f);

        const char *text =
                "{\"version\":1,\"gpus\":["
                STATE_GPU(3, "a", ",\"probe_state\":\"ok\",\"measurement\":" MEASUREMENT("\"unsupported\"",
                                                                                           ",\"measured_at_usec\":99"))
                "," STATE_GPU(0, "b", ",\"probe_state\":\"running\"")
                "," STATE_GPU(3, "c", "")       /* the number repeats */
                "," STATE_GPU(5, "a", "")       /* the key repeats */
                "," STATE_GPU(1024, "d", "")    /* out of range */
                "," STATE_GPU(6, "e", ",\"probe_state\":\"dancing\",\"last_error\":\"x: y\"")
                "],\"retired\":[{\"number\":1,\"key\":\"gone\"},{\"number\":3,\"key\":\"clash\"},{\"number\":\"2\"}]}";
        assert_int_equal(gpus_load_from_string(&f.gpus, text), 3);

        Gpu *a = gpu_get(&f.gpus, 3), *b = gpu_get(&f.gpus, 0), *e = gpu_get(&f.gpus, 6);
        assert_non_null(a);
        assert_non_null(b);
        assert_non_null(e);
        assert_true(a->probe_state == GPU_PROBE_OK && a->measurement.measured_at_usec == 99);
        assert_true(isnan(a->measurement.fp16_gflops));
        /* Stopped during a run: the run failed. */
        assert_true(b->probe_state == GPU_PROBE_FAILED);
        assert_non_null(strstr(b->last_error, "interrupted"));
        assert_true(e->probe_state == GPU_PROBE_NEVER);
        assert_string_equal(e->last_error, "x: y");

        /* Numbering: the departed "gone" keeps 1; a new key gets the lowest free one, 2. */
        unsigned n;
        assert_int_equal(gpu_number_for_key(&f.gpus, "new", &n), 0);
        assert_int_equal(n, 2);
        assert_int_equal(gpu_number_for_key(&f.gpus, "gone", &n), 0);
        assert_int_equal(n, 1);
        fixture_done(&f);
}

static void test_state_file_bad_input(void **state) {
        static const char *const bad[] = {
                "",
                "not json",
                "[]",
                "{\"version\":2,\"gpus\":[]}",
                "{\"version\":\"1\",\"gpus\":[]}",
                "{\"version\":1}",
                "{\"version\":1,\"gpus\":{}}",
                "{\"version\":1,\"gpus\":[{\"number\":0,\"inventory\":{\"key\":\"a\"}}",
        };
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                Fixture f;
                fixture_init(&f);
                if (gpus_load_from_string(&f.gpus, bad[k]) != -EINVAL)
                        fail_msg("accepted: %s", bad[k]);
                assert_int_equal(table_size(&f.gpus.table), 0);
                fixture_done(&f);
        }

        /* Entries that are not devices are skipped, the rest is kept. */
        Fixture f;
        fixture_init(&f);
        assert_int_equal(gpus_load_from_string(&f.gpus, "{\"version\":1,\"gpus\":[7,{},{\"number\":-1},"
                                                   "{\"number\":2,\"inventory\":[]}," STATE_GPU(4, "k", "") "]}"),
                         1);
        assert_non_null(gpu_get(&f.gpus, 4));
        fixture_done(&f);
}

static void test_numbers(void **state) {
        Fixture f;
        unsigned n;
        Gpu *g;

        fixture_init(&f);
        for (unsigned k = 0; k < 3; k++) {
                char key[8];
                snprintf(key, sizeof(key), "k%u", k);
                assert_int_equal(gpu_number_for_key(&f.gpus, key, &n), 0);
                assert_int_equal(n, k);
                assert_int_equal(gpu_new(&f.gpus, n, key, &g), 0);
        }
        /* k1 leaves: its number stays reserved, and comes back with it. */
        gpu_remove(gpu_get(&f.gpus, 1));
        assert_int_equal(gpu_number_for_key(&f.gpus, "k9", &n), 0);
        assert_int_equal(n, 3);
        assert_int_equal(gpu_number_for_key(&f.gpus, "k1", &n), 0);
        assert_int_equal(n, 1);

        /* At most GPU_RETIRED_MAX departed devices keep theirs; the oldest gives it up. */
        for (unsigned k = 0; k < GPU_RETIRED_MAX + 1; k++) {
                char key[16];
                snprintf(key, sizeof(key), "gone%u", k);
                assert_int_equal(gpu_number_retire(&f.gpus, 100 + k, key), 0);
        }
        assert_int_equal(f.gpus.n_retired, GPU_RETIRED_MAX);
        assert_int_equal(gpu_number_for_key(&f.gpus, "gone0", &n), 0);
        assert_int_equal(n, 1); /* forgotten: a fresh number */
        fixture_done(&f);
}

static void test_inhibit_what(void **state) {
        static const struct {
                const char *text;
                int mask;
        } cases[] = {
                { "gpu", INHIBIT_GPU },
                { "rdma", INHIBIT_RDMA },
                { "gpu:rdma", INHIBIT_GPU | INHIBIT_RDMA },
                { "rdma:gpu", INHIBIT_GPU | INHIBIT_RDMA },
                { "gpu:gpu", INHIBIT_GPU },
                { "", -EINVAL },
                { ":", -EINVAL },
                { "gpu:", -EINVAL },
                { ":gpu", -EINVAL },
                { "gpu::rdma", -EINVAL },
                { "GPU", -EINVAL },
                { "gpus", -EINVAL },
                { "gp", -EINVAL },
                { "gpu rdma", -EINVAL },
        };
        char buf[INHIBIT_WHAT_STRING_MAX];

        for (size_t k = 0; k < ELEMENTSOF(cases); k++)
                if (inhibit_what_from_string(cases[k].text) != cases[k].mask)
                        fail_msg("\"%s\": %d", cases[k].text, inhibit_what_from_string(cases[k].text));
        assert_int_equal(inhibit_what_from_string(NULL), -EINVAL);
        assert_string_equal(inhibit_what_to_string(INHIBIT_GPU | INHIBIT_RDMA, buf), "gpu:rdma");
        assert_string_equal(inhibit_what_to_string(INHIBIT_RDMA, buf), "rdma");
        assert_string_equal(inhibit_what_to_string(0, buf), "");
}

static void test_inhibit_text(void **state) {
        char max[INHIBIT_WHO_MAX + 2];
        memset(max, 'w', sizeof(max));
        max[INHIBIT_WHO_MAX] = '\0';

        assert_true(inhibit_text_is_valid("trainer", INHIBIT_WHO_MAX, false));
        assert_true(inhibit_text_is_valid("Zürich ✓", INHIBIT_WHO_MAX, false));
        assert_true(inhibit_text_is_valid(max, INHIBIT_WHO_MAX, false));
        assert_true(inhibit_text_is_valid("", INHIBIT_WHY_MAX, true));
        assert_false(inhibit_text_is_valid("", INHIBIT_WHO_MAX, false));
        assert_false(inhibit_text_is_valid(NULL, INHIBIT_WHO_MAX, true));
        assert_false(inhibit_text_is_valid("tab\there", INHIBIT_WHO_MAX, false));
        assert_false(inhibit_text_is_valid("del\x7f", INHIBIT_WHO_MAX, false));
        assert_false(inhibit_text_is_valid("\xff\xfe", INHIBIT_WHO_MAX, false));
        max[INHIBIT_WHO_MAX] = 'w';
        max[INHIBIT_WHO_MAX + 1] = '\0';
        assert_false(inhibit_text_is_valid(max, INHIBIT_WHO_MAX, false));
}

static void test_not_inhibited_without_inhibitors(void **state) {
        assert_false(inhibitors_cover(NULL, "gpu"));
        assert_false(inhibitors_cover(NULL, "gpu:rdma"));
        /* A kind nobody knows is a bug in the caller; the safe answer is yes. */
        assert_true(inhibitors_cover(NULL, "tpu"));
        assert_int_equal(inhibitors_mask(NULL), 0);
}

static char config_path[] = "/tmp/linkprobe-test-gpu-config-XXXXXX";

static int load_config(Config *c, const char *text) {
        FILE *f = fopen(config_path, "we");
        assert_non_null(f);
        fputs(text, f);
        fclose(f);
        config_init(c);
        return config_load(c, config_path, true);
}

static void test_config(void **state) {
        Config c;
        int fd = mkstemp(config_path);
        assert_true(fd >= 0);
        close(fd);

        config_init(&c);
        assert_true(c.gpu_enabled && !c.gpu_quick);
        assert_true(c.gpu_ttl_usec == 3600 * USEC_PER_SEC && c.gpu_deadline_usec == 120 * USEC_PER_SEC);
        assert_true(c.gpu_randomized_delay_usec == 300 * USEC_PER_SEC);

        assert_int_equal(load_config(&c, "[Gpu]\nEnabled=no\nTTLSec=0\nRandomizedDelaySec=30s\nDeadlineSec=1s\n"
                                         "Quick=yes\n"), 0);
        assert_true(!c.gpu_enabled && c.gpu_quick && c.gpu_ttl_usec == 0);
        assert_true(c.gpu_deadline_usec == USEC_PER_SEC && c.gpu_randomized_delay_usec == 30 * USEC_PER_SEC);
        config_done(&c);

        static const char *const bad[] = {
                "[Gpu]\nEnabled=maybe\n", "[Gpu]\nTTLSec=-1\n",     "[Gpu]\nDeadlineSec=0\n",
                "[Gpu]\nDeadlineSec=500ms\n", "[Gpu]\nDeadlineSec=2h\n", "[Gpu]\nQuick=\n",
                "[Gpu]\nRandomizedDelaySec=soon\n",
        };
        for (size_t k = 0; k < ELEMENTSOF(bad); k++) {
                if (load_config(&c, bad[k]) != -EINVAL)
                        fail_msg("accepted: %s", bad[k]);
                config_done(&c);
        }
        unlink(config_path);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_inventory),
                cmocka_unit_test(test_inventory_bad_input),
                cmocka_unit_test(test_inventory_strings_are_made_safe),
                cmocka_unit_test(test_measurement),
                cmocka_unit_test(test_measurement_bad_input),
                cmocka_unit_test(test_warnings_are_bounded),
                cmocka_unit_test(test_state_file),
                cmocka_unit_test(test_state_file_bad_input),
                cmocka_unit_test(test_numbers),
                cmocka_unit_test(test_inhibit_what),
                cmocka_unit_test(test_inhibit_text),
                cmocka_unit_test(test_not_inhibited_without_inhibitors),
                cmocka_unit_test(test_config),
        };
        log_set_max_level(LOG_CRIT);
        return cmocka_run_group_tests_name("gpu", tests, NULL, NULL);
}
