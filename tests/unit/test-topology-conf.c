/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Unit tests for Slurm's hostlist expressions (expanded as Slurm does: widths, several brackets, lists;
 * compressed into what expands back to the same names) and topology.conf read (comments, continuation,
 * case, every error with its line) and written (tree and block). */
#include <string.h>

#include "unit-test.h"
#include "ctl/fabric/hostlist.h"
#include "ctl/fabric/topology-conf.h"

static void assert_expands(const char *expr, const char *const *want, size_t n) {
        _cleanup_(hostlist_done) HostList l = {};
        const char *why = NULL;

        assert_int_equal(hostlist_expand(expr, &l, &why), 0);
        assert_int_equal(l.n, n);
        for (size_t i = 0; i < n; i++)
                assert_string_equal(l.names[i], want[i]);
}

static void assert_refused(const char *expr, int error) {
        _cleanup_(hostlist_done) HostList l = {};
        const char *why = NULL;

        assert_int_equal(hostlist_expand(expr, &l, &why), error);
        if (error == -EINVAL)
                assert_non_null(why);
}

static void test_expand(void **state) {
        assert_expands("tux[0-3,12,18-20]", (const char *const[]) { "tux0", "tux1", "tux2", "tux3", "tux12", "tux18", "tux19", "tux20" }, 8);
        assert_expands("node[08-11]", (const char *const[]) { "node08", "node09", "node10", "node11" }, 4);
        assert_expands("a,b[1-2]c,d", (const char *const[]) { "a", "b1c", "b2c", "d" }, 4);
        assert_expands("r[1-2]n[01-02]", (const char *const[]) { "r1n01", "r1n02", "r2n01", "r2n02" }, 4);
        assert_expands("gpu7", (const char *const[]) { "gpu7" }, 1);
        assert_expands("x[9-10]", (const char *const[]) { "x9", "x10" }, 2);
}

static void test_expand_errors(void **state) {
        assert_refused("", -EINVAL);
        assert_refused("a,,b", -EINVAL);
        assert_refused("n[1-", -EINVAL);
        assert_refused("n[1-2", -EINVAL);
        assert_refused("n1-2]", -EINVAL);
        assert_refused("n[]", -EINVAL);
        assert_refused("n[5-2]", -EINVAL);
        assert_refused("n[a-b]", -EINVAL);
        assert_refused("n[1,]", -EINVAL);
        assert_refused("n[[1]]", -EINVAL);
        assert_refused("n[1-2000000]", -E2BIG);
        assert_refused("n[0-999][0-999][0-9]", -E2BIG);
}

/* Whatever the order and the names, the compressed list expands back into the same set. */
static void assert_round_trip(const char *const *names, size_t n, const char *want) {
        _cleanup_(freep) char *s = hostlist_compress((char *const *) names, n);
        _cleanup_(hostlist_done) HostList l = {};

        assert_non_null(s);
        if (want)
                assert_string_equal(s, want);
        assert_int_equal(hostlist_expand(s, &l, NULL), 0);
        assert_int_equal(l.n, n);
        for (size_t i = 0; i < n; i++) {
                bool found = false;
                for (size_t k = 0; k < l.n && !found; k++)
                        found = strcmp(l.names[k], names[i]) == 0;
                assert_true(found);
        }
}

static void test_compress(void **state) {
        assert_round_trip((const char *const[]) { "node03", "node01", "node02", "node05" }, 4, "node[01-03,05]");
        assert_round_trip((const char *const[]) { "leaf1", "leaf2", "spine" }, 3, "leaf[1-2],spine");
        assert_round_trip((const char *const[]) { "n8", "n9", "n10", "n11" }, 4, "n[8-9,10-11]");
        assert_round_trip((const char *const[]) { "a", "b", "c" }, 3, "a,b,c");
        assert_round_trip((const char *const[]) { "gpu-a1", "gpu-b1", "x.y2" }, 3, "gpu-a1,gpu-b1,x.y2");
        assert_round_trip((const char *const[]) { "n007", "n7", "n07" }, 3, NULL);
        assert_round_trip((const char *const[]) { "12", "13" }, 2, "[12-13]");
        /* A name given twice is written once (the expansion has it once). */
        _cleanup_(freep) char *twice = hostlist_compress((char *const *) (const char *const[]) { "a", "n1", "a", "n1", "n2" }, 5);
        assert_string_equal(twice, "a,n[1-2]");
}

static void test_compress_many(void **state) {
        enum { N = 10000 };
        _cleanup_(freep) char **names = calloc(N, sizeof(char *));

        assert_non_null(names);
        for (size_t i = 0; i < N; i++)
                assert_true(asprintf(&names[i], "node%05zu", (i * 7919) % N + 1) > 0);
        _cleanup_(freep) char *s = hostlist_compress(names, N);
        assert_string_equal(s, "node[00001-10000]");
        for (size_t i = 0; i < N; i++)
                free(names[i]);
}

static void test_names(void **state) {
        assert_true(slurm_name_valid("node01"));
        assert_true(slurm_name_valid("gpu-a.rack_2"));
        assert_false(slurm_name_valid(""));
        assert_false(slurm_name_valid("-x"));
        assert_false(slurm_name_valid("a b"));
        assert_false(slurm_name_valid("a,b"));
        assert_false(slurm_name_valid("a[1]"));
        assert_false(slurm_name_valid("a=b"));
        assert_false(slurm_name_valid("a#b"));
        assert_false(slurm_name_valid("MF0;leaf01:MQM8700/U1"));
}

static void test_parse(void **state) {
        static const char text[] = "# the fabric\n"
                                   "switchname=leaf1 nodes=n[01-03] LINKSPEED=200   # a comment\n"
                                   "\n"
                                   "SwitchName=leaf2 \\\n"
                                   "   Nodes=n04,n05 \\\n"
                                   "   LinkSpeed=100\n"
                                   "SwitchName=spine Switches=leaf[1-2]\n";
        _cleanup_(topology_conf_done) TopoConf c = {};
        _cleanup_(freep) char *error = NULL;
        unsigned line = 0;

        assert_int_equal(topology_conf_parse(text, &c, &line, &error), 0);
        assert_int_equal(c.n, 3);
        assert_string_equal(c.switches[0].name, "leaf1");
        assert_int_equal(c.switches[0].nodes.n, 3);
        assert_string_equal(c.switches[0].nodes.names[2], "n03");
        assert_string_equal(c.switches[0].link_speed, "200");
        assert_int_equal(c.switches[0].line, 2);
        assert_string_equal(c.switches[1].name, "leaf2");
        assert_int_equal(c.switches[1].nodes.n, 2);
        assert_string_equal(c.switches[1].link_speed, "100");
        assert_int_equal(c.switches[1].line, 4);
        assert_int_equal(c.switches[2].switches.n, 2);
        assert_string_equal(c.switches[2].switches.names[1], "leaf2");
        assert_ptr_equal(topology_conf_find(&c, "spine"), &c.switches[2]);
        assert_null(topology_conf_find(&c, "nope"));
}

static void assert_parse_error(const char *text, unsigned want_line, const char *want_words) {
        _cleanup_(topology_conf_done) TopoConf c = {};
        _cleanup_(freep) char *error = NULL;
        unsigned line = 0;

        assert_int_equal(topology_conf_parse(text, &c, &line, &error), -EINVAL);
        assert_non_null(error);
        assert_int_equal(line, want_line);
        if (!strstr(error, want_words))
                fail_msg("\"%s\" does not say \"%s\"", error, want_words);
        assert_int_equal(c.n, 0);
}

static void test_parse_errors(void **state) {
        assert_parse_error("SwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", 2, "named twice");
        assert_parse_error("Nodes=n1 SwitchName=a\n", 1, "starts with SwitchName=");
        assert_parse_error("SwitchName=a Nodes=n1 Speed=1\n", 1, "unknown parameter Speed=");
        assert_parse_error("# ok\nSwitchName=a Nodes=n[1-\n", 2, "not closed");
        assert_parse_error("SwitchName=a\n", 1, "neither");
        assert_parse_error("SwitchName=a Nodes=n1 Switches=b\n", 1, "both");
        assert_parse_error("SwitchName=a Nodes=n1 LinkSpeed=fast\n", 1, "LinkSpeed=fast");
        assert_parse_error("SwitchName=a b\n", 1, "not Parameter=value");
        assert_parse_error("SwitchName=a,b Nodes=n1\n", 1, "not a name Slurm takes");
        assert_parse_error("SwitchName=a Nodes=n1,x;y\n", 1, "not a name Slurm takes");
        assert_parse_error("SwitchName=a Nodes=n1 Nodes=n2\n", 1, "given twice");
        assert_parse_error("SwitchName=a SwitchName=b Nodes=n1\n", 1, "two SwitchName=");
        assert_parse_error("\n\nSwitchName=a \\\n Nodes=n[2-1]\n", 3, "below its start");
}

static void test_empty_and_comments_only(void **state) {
        _cleanup_(topology_conf_done) TopoConf c = {};
        _cleanup_(freep) char *error = NULL;
        unsigned line = 0;

        assert_int_equal(topology_conf_parse("# nothing\n   \n\t# more\n", &c, &line, &error), 0);
        assert_int_equal(c.n, 0);
        assert_int_equal(topology_conf_parse("", &c, &line, &error), 0);
        assert_int_equal(c.n, 0);
}

static char *written(bool block, const TopoConf *c) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);

        assert_non_null(f);
        assert_int_equal(block ? topology_conf_write_block(f, c) : topology_conf_write_tree(f, c), 0);
        assert_int_equal(fclose(f), 0);
        return buf;
}

static void test_write_and_read_back(void **state) {
        _cleanup_(topology_conf_done) TopoConf c = {}, back = {};
        _cleanup_(freep) char *tree = NULL, *block = NULL, *error = NULL;
        TopoSwitch *s;
        unsigned line = 0;

        s = topology_conf_add(&c, "leaf1");
        for (int i = 20; i >= 1; i--) {
                char name[16];
                snprintf(name, sizeof(name), "node%02d", i);
                assert_int_equal(hostlist_add(&s->nodes, name), 0);
        }
        s->link_speed = strdup("200");
        s = topology_conf_add(&c, "leaf2");
        assert_int_equal(hostlist_add(&s->nodes, "gpu7"), 0);
        s = topology_conf_add(&c, "spine1");
        assert_int_equal(hostlist_add(&s->switches, "leaf1"), 0);
        assert_int_equal(hostlist_add(&s->switches, "leaf2"), 0);

        tree = written(false, &c);
        assert_string_equal(tree, "SwitchName=leaf1 Nodes=node[01-20] LinkSpeed=200\n"
                                  "SwitchName=leaf2 Nodes=gpu7\n"
                                  "SwitchName=spine1 Switches=leaf[1-2]\n");
        block = written(true, &c);
        assert_string_equal(block, "BlockName=leaf1 Nodes=node[01-20]\nBlockName=leaf2 Nodes=gpu7\n");
        assert_int_equal(topology_conf_parse(tree, &back, &line, &error), 0);
        assert_int_equal(back.n, 3);
        assert_int_equal(back.switches[0].nodes.n, 20);
        assert_int_equal(back.switches[2].switches.n, 2);
}

int main(void) {
        const struct CMUnitTest tests[] = {
                cmocka_unit_test(test_expand),
                cmocka_unit_test(test_expand_errors),
                cmocka_unit_test(test_compress),
                cmocka_unit_test(test_compress_many),
                cmocka_unit_test(test_names),
                cmocka_unit_test(test_parse),
                cmocka_unit_test(test_parse_errors),
                cmocka_unit_test(test_empty_and_comments_only),
                cmocka_unit_test(test_write_and_read_back),
        };
        return cmocka_run_group_tests(tests, NULL, NULL);
}
