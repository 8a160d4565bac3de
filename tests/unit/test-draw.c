/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for the node's picture (linkprobectl-draw*.c), from GetManagedObjects answers made here:
 * names escaped for DOT whatever they hold (quotes, backslashes, entities, control characters, bytes
 * that are not UTF-8), long reasons wrapped at a space and never inside a character, a degraded PCIe
 * link's figures and reason in its line, a Parent loop and dangling parents drawn once and ended, 0
 * objects, and thousands of functions cut to the budget with the rest counted. Each DOT text is laid
 * out and rendered by Graphviz too, so what we write is what it reads. */
#include <unistd.h>

#include "unit-test.h"
#include "ctl/linkprobectl-draw-labels.h"
#include "ctl/linkprobectl-draw-node.h"
#include "ctl/linkprobectl-draw.h"
#include "ctl/linkprobectl.h"

static json_object *objects_new(void) {
        json_object *o = json_object_new_object();
        assert_non_null(o);
        return o;
}

/* Adds an object at path with one interface (kind) and the properties in json (a JSON object text). */
static json_object *add(json_object *objects, const char *path, const char *kind, const char *json) {
        json_object *interfaces = json_object_new_object(), *props = json_tokener_parse(json);
        char name[128];

        assert_non_null(props);
        snprintf(name, sizeof(name), BUS_INTERFACE_PREFIX "%s", kind);
        json_object_object_add(interfaces, name, props);
        json_object_object_add(objects, path, interfaces);
        return props;
}

static char *pci_path(unsigned bus) {
        char *s = NULL;
        assert_true(asprintf(&s, BUS_PATH "/pci/f%u", bus) > 0);
        return s;
}

/* One PCI function: json of its properties around parent and the figures. */
static void add_pci(json_object *objects, unsigned bus, int parent, const char *port_type, const char *extra) {
        _cleanup_(freep) char *path = pci_path(bus), *parent_path = parent >= 0 ? pci_path((unsigned) parent) : strdup("/"),
                              *json = NULL;

        assert_true(asprintf(&json,
                             "{\"Address\": \"0000:%02x:00.0\", \"Parent\": \"%s\", \"PortType\": \"%s\", \"NumaNode\": %d, "
                             "\"LocalCpus\": \"0-7\", \"Name\": \"Example device\", \"Health\": \"ok\", \"HealthReason\": \"\"%s%s}",
                             bus & 0xff, parent_path, port_type, (int) (bus % 2), *extra ? ", " : "", extra) > 0);
        add(objects, path, "Pci", json);
}

/* The picture of objects: its DOT text, also rendered to SVG in a file (asserted to work). */
static char *draw(json_object *objects) {
        char path[] = "/tmp/linkprobe-test-draw-XXXXXX";
        char *dot = draw_node_dot(objects, NULL, NULL, NULL);
        int fd = mkstemp(path);

        assert_non_null(dot);
        assert_true(fd >= 0);
        close(fd);
        arg_draw = DRAW_SVG;
        arg_output = path;
        assert_int_equal(draw_render_dot(dot), 0);
        arg_output = NULL;
        assert_int_equal(unlink(path), 0);
        return dot;
}

/* The label's text without its line breaks ("\n" in DOT), for phrases a wrap may have split. */
static char *unwrapped(const char *dot) {
        char *s = strdup(dot), *t = s;

        assert_non_null(s);
        for (const char *p = dot; *p; p++) {
                if (p[0] == '\\' && p[1] == 'n') {
                        *t++ = ' ';
                        p++;
                } else
                        *t++ = *p;
        }
        *t = '\0';
        return s;
}

static void test_escape(void **state) {
        _cleanup_(freep) char *a = draw_escape("a\"b\\c&lt;d\x1b[2J\xff<e>"), *b = draw_escape(NULL);

        assert_string_equal(a, "a\\\"b\\\\c&amp;lt;d\\\\x1b[2J\\\\xff<e>");
        assert_string_equal(b, "");
}

static void test_label_wraps_and_escapes(void **state) {
        /* 60 characters of "ä" (two bytes each) and a space: wrapped at the space, never inside one. */
        char long_line[200] = "";
        for (int i = 0; i < 30; i++)
                strcat(long_line, "ä");
        strcat(long_line, " ");
        for (int i = 0; i < 30; i++)
                strcat(long_line, "ö");
        _cleanup_(freep) char *label = DRAW_LABEL(strdup("first \"line\""), NULL, strdup(long_line));

        assert_non_null(label);
        assert_non_null(strstr(label, "first \\\"line\\\"\\n"));
        assert_non_null(strstr(label, "ää\\nöö"));
}

static void test_degraded_link_says_why(void **state) {
        _cleanup_(json_object_putp) json_object *objects = objects_new();
        _cleanup_(freep) char *dot = NULL, *text = NULL;

        add_pci(objects, 1, -1, "root-port", "\"CurrentLinkSpeed\": 32.0, \"CurrentLinkWidth\": 16");
        add_pci(objects, 2, 1, "endpoint",
                "\"CurrentLinkSpeed\": 32.0, \"CurrentLinkWidth\": 4, \"CurrentLinkGeneration\": 5, \"MaxLinkGeneration\": 5, "
                "\"MaxLinkWidth\": 16, \"Gbps\": 126.0, \"Degraded\": true, \"DegradedReason\": \"trained at x4\", "
                "\"Health\": \"degraded\", \"HealthReason\": \"link trained at x4, both ends support x16\"");
        add(objects, BUS_PATH "/link/_32", "Link",
            "{\"Name\": \"eth\\\"0<b>\", \"Index\": 2, \"Kind\": \"ether\", \"SpeedMbps\": 100000, \"PciDevice\": \"" BUS_PATH
            "/pci/f2\", \"Health\": \"ok\", \"OperState\": \"up\", \"Carrier\": true}");
        dot = draw(objects);
        text = unwrapped(dot);
        assert_non_null(strstr(text, "Gen5 32.0 GT/s x4 126 Gb/s of Gen5 x16 Health: degraded: link trained at x4, both ends support x16"));
        assert_non_null(strstr(dot, "color=\"#e65100\""));
        assert_non_null(strstr(dot, "eth\\\"0<b>\\nether · 100 Gb/s"));
        assert_non_null(strstr(dot, "NUMA node 1, CPUs 0-7"));
}

static void test_parent_loop_and_dangling(void **state) {
        _cleanup_(json_object_putp) json_object *objects = objects_new();
        _cleanup_(freep) char *dot = NULL;

        /* 1 and 2 each other's parent: neither is a root, so nothing draws them, and nothing hangs. */
        add_pci(objects, 1, 2, "upstream-port", "");
        add_pci(objects, 2, 1, "downstream-port", "");
        /* 3's parent is not on the bus: a root of its own. */
        add_pci(objects, 3, 9, "endpoint", "");
        dot = draw(objects);
        assert_non_null(strstr(dot, "0000:03:00.0"));
        assert_null(strstr(dot, "0000:01:00.0"));
}

static void test_nothing(void **state) {
        _cleanup_(json_object_putp) json_object *objects = objects_new();
        _cleanup_(freep) char *dot = draw(objects);

        assert_non_null(strstr(dot, "linkprobed publishes no devices"));
}

static void test_thousands(void **state) {
        _cleanup_(json_object_putp) json_object *objects = objects_new();
        _cleanup_(freep) char *dot = NULL, *text = NULL;
        char note[128];

        /* A root port and 3,000 functions below it, and 500 virtual links. */
        add_pci(objects, 0, -1, "root-port", "");
        for (unsigned i = 1; i <= 3000; i++)
                add_pci(objects, i, 0, "endpoint", "\"CurrentLinkSpeed\": 8.0, \"CurrentLinkWidth\": 1");
        for (unsigned i = 0; i < 500; i++) {
                char path[64], json[128];
                snprintf(path, sizeof(path), BUS_PATH "/link/v%u", i);
                snprintf(json, sizeof(json), "{\"Name\": \"v%u\", \"Index\": %u, \"Kind\": \"veth\"}", i, i + 10);
                add(objects, path, "Link", json);
        }
        dot = draw(objects);
        text = unwrapped(dot);
        snprintf(note, sizeof(note), "Left out to keep the picture readable: %d PCI functions, %d network links",
                 3001 - DRAW_NODES_MAX, 500 - 40);
        assert_non_null(strstr(text, note));
}

/* Node.Packages and Node.NumaNodes: a frame per package holding its NUMA nodes (and their PCIe trees),
 * the CPU-less NUMA node outside any package; without them, the NUMA nodes alone as before. */
static void test_packages_frame_numa_nodes(void **state) {
        _cleanup_(json_object_putp) json_object *objects = objects_new(), *node = json_tokener_parse(
                "{\"Packages\": [{\"Id\": 0, \"Cpus\": \"0-3\", \"Cores\": 4, \"NumaNodes\": [0]},"
                " {\"Id\": 1, \"Cpus\": \"4-7\", \"Cores\": 1, \"NumaNodes\": [1]}],"
                " \"NumaNodes\": [{\"Id\": 0, \"Cpus\": \"0-3\"}, {\"Id\": 1, \"Cpus\": \"4-7\"}, {\"Id\": 2, \"Cpus\": \"\"}]}");
        _cleanup_(freep) char *dot = NULL, *text = NULL, *plain = NULL;

        assert_non_null(node);
        add_pci(objects, 1, -1, "root-port", ""); /* NUMA node 1 */
        add_pci(objects, 2, -1, "root-port", ""); /* NUMA node 0 */
        dot = draw_node_dot(objects, node, NULL, NULL);
        assert_non_null(dot);
        text = unwrapped(dot);
        assert_non_null(strstr(text, "Package 0: 4 cores, CPUs 0-3"));
        assert_non_null(strstr(text, "Package 1: 1 core, CPUs 4-7"));
        assert_non_null(strstr(text, "NUMA node 1, CPUs 4-7"));
        assert_non_null(strstr(text, "NUMA node 2, no CPUs"));
        /* Each NUMA node's frame opens inside its package's, before the next package's begins. */
        for (int p = 0; p < 2; p++) {
                char package[64], numa[64];
                snprintf(package, sizeof(package), "subgraph \"cluster_package%d\"", p);
                snprintf(numa, sizeof(numa), "subgraph \"cluster_numa%d\"", p);
                const char *start = strstr(dot, package), *inner = strstr(dot, numa), *next = start ? strstr(start + 1, " subgraph \"cluster_package") : NULL;
                assert_non_null(start);
                assert_non_null(inner);
                assert_true(inner > start && (!next || inner < next));
        }
        /* The CPU-less node comes after every package, in none of them. */
        assert_true(strstr(dot, "subgraph \"cluster_numa2\"") > strstr(dot, "subgraph \"cluster_package0\""));
        /* It renders. */
        arg_draw = DRAW_SVG;
        char path[] = "/tmp/linkprobe-test-draw-XXXXXX";
        int fd = mkstemp(path);
        assert_true(fd >= 0);
        close(fd);
        arg_output = path;
        assert_int_equal(draw_render_dot(dot), 0);
        arg_output = NULL;
        assert_int_equal(unlink(path), 0);

        /* Without the packages: no package frames, the NUMA nodes still drawn. */
        plain = draw_node_dot(objects, NULL, NULL, NULL);
        assert_non_null(plain);
        assert_null(strstr(plain, "cluster_package"));
        assert_non_null(strstr(plain, "cluster_numa0"));
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_escape),
                cmocka_unit_test(test_label_wraps_and_escapes),
                cmocka_unit_test(test_degraded_link_says_why),
                cmocka_unit_test(test_parent_loop_and_dangling),
                cmocka_unit_test(test_nothing),
                cmocka_unit_test(test_thousands),
                cmocka_unit_test(test_packages_frame_numa_nodes),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
