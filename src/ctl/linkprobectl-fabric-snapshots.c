/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric --snapshots FILE...: the cluster's graph for clusters without Prometheus, from each node's
 * `linkprobectl snapshot` (copied to one place however the user likes: scp, a shared directory, a
 * scheduler's own channel). Each file is one node's own view, read exactly as `fabric` reads this
 * node's daemon, and the views are merged as Prometheus' series are.
 */
#include <fcntl.h>

#include "linkprobectl-fabric-local.h"
#include "fabric/fabric-model.h"
#include "linkprobectl-fabric-snapshots.h"
#include "linkprobectl.h"
#include "shared/fileio.h"
#include "shared/time-util.h"

/* A snapshot holds one node's objects: a few MB for a big node. */
#define SNAPSHOT_MAX (64U * 1024U * 1024U)

static int read_snapshot(const char *file, json_object **ret) {
        _cleanup_(freep) char *text = NULL, *shown = escape_for_terminal(file);
        _cleanup_(json_object_putp) json_object *doc = NULL;
        enum json_tokener_error error = json_tokener_success;
        size_t size;
        int r;

        r = read_file_at(AT_FDCWD, file, SNAPSHOT_MAX, &text, &size);
        if (r < 0) {
                fprintf(stderr, "Cannot read %s: %s\n", strna(shown), r == -EFBIG ? "larger than any snapshot" : strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        doc = json_tokener_parse_verbose(text, &error);
        if (!json_object_is_type(doc, json_type_object)) {
                fprintf(stderr, "%s is not JSON%s%s.\n", strna(shown), doc ? "" : ": ",
                        doc ? " object" : json_tokener_error_desc(error));
                return CTL_EXIT_FAILURE;
        }
        if (!json_object_is_type(ctl_member(doc, "Schema"), json_type_int) || !ctl_member(doc, "Objects")) {
                fprintf(stderr, "%s is not the output of \"linkprobectl snapshot\" (no \"Schema\" or \"Objects\").\n",
                        strna(shown));
                return CTL_EXIT_FAILURE;
        }
        if (json_int_or(doc, "Schema", 0) != CTL_JSON_SCHEMA) {
                fprintf(stderr, "%s has schema %" PRId64 "; this linkprobectl reads schema %d.\n", strna(shown),
                        json_int_or(doc, "Schema", 0), CTL_JSON_SCHEMA);
                return CTL_EXIT_FAILURE;
        }
        *ret = TAKE_PTR(doc);
        return 0;
}

/* A NodeId in two files: one node's snapshot given twice, or two machines with one machine ID. */
static int check_clash(json_object *seen, const char *file, json_object *doc) {
        const char *id = json_string_or(ctl_member(doc, "Node"), "NodeId", NULL);
        json_object *was;

        if (!json_object_object_get_ex(seen, id, &was)) {
                json_object *o = json_object_new_object();
                json_object_object_add(o, "file", json_object_new_string(file));
                json_object_object_add(o, "doc", json_object_get(doc));
                json_object_object_add(seen, id, o);
                return 0;
        }
        _cleanup_(freep) char *a = escape_for_terminal(json_string_or(was, "file", "")), *b = escape_for_terminal(file);
        json_object *other = ctl_member(ctl_member(was, "doc"), "Node"), *node = ctl_member(doc, "Node");
        _cleanup_(freep) char *ha = escape_for_terminal(json_string_or(other, "Hostname", "?")),
                              *hb = escape_for_terminal(json_string_or(node, "Hostname", "?"));
        if (streq(json_string_or(other, "BootId", "x"), json_string_or(node, "BootId", "y")))
                fprintf(stderr, "%s and %s are snapshots of the same node (%s, NodeId %s): give each node's once.\n",
                        strna(a), strna(b), strna(hb), id);
        else
                fprintf(stderr,
                        "%s (%s) and %s (%s) come from two nodes with one NodeId, %s: a cloned machine ID? Give each "
                        "node its own /etc/machine-id.\n",
                        strna(a), strna(ha), strna(b), strna(hb), id);
        return CTL_EXIT_FAILURE;
}

/* Older than this, a snapshot is said to be old: the paths it holds may have gone stale since. */
#define SNAPSHOT_OLD_USEC (3600 * USEC_PER_SEC)

int fabric_from_snapshots(char **files, size_t n, json_object **ret) {
        _cleanup_(json_object_putp) json_object *model = fabric_model_new("snapshots"), *docs = json_object_new_array(),
                                               *seen = json_object_new_object();
        _cleanup_(fabric_sides_done) FabricSides sides = {};
        uint64_t now = now_usec(CLOCK_REALTIME);
        int r;

        if (!model || !docs || !seen)
                return log_oom_ctl();
        if (n == 0) {
                fprintf(stderr, "--snapshots needs the files, one per node (from \"linkprobectl snapshot\").\n");
                return CTL_EXIT_USAGE;
        }
        for (size_t i = 0; i < n; i++) {
                _cleanup_(freep) char *shown = escape_for_terminal(files[i]);
                json_object *doc = NULL;
                uint64_t taken;

                r = read_snapshot(files[i], &doc);
                if (r != 0)
                        return r;
                json_object_array_add(docs, doc);
                if (isempty(json_string_or(ctl_member(doc, "Node"), "NodeId", NULL))) {
                        fprintf(stderr, "%s: the node has no NodeId (no /etc/machine-id?): it names no neighbours.\n",
                                strna(shown));
                        return CTL_EXIT_FAILURE;
                }
                r = check_clash(seen, files[i], doc);
                if (r != 0)
                        return r;
                taken = (uint64_t) json_int_or(doc, "TimeUsec", 0);
                if (taken > 0 && now > taken + SNAPSHOT_OLD_USEC)
                        fprintf(stderr, "Warning: %s was taken %" PRIu64 " min ago; its paths may be stale by now.\n",
                                strna(shown), (now - taken) / USEC_PER_SEC / 60);
                r = fabric_add_local_view(model, &sides, ctl_member(doc, "Node"), ctl_member(doc, "Objects"), false);
                if (r < 0)
                        return log_oom_ctl();
        }
        if (fabric_sides_merge(model, &sides) < 0)
                return log_oom_ctl();
        *ret = TAKE_PTR(model);
        return 0;
}
