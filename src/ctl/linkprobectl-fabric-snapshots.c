/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * fabric --snapshots FILE...: the cluster's graph for clusters without Prometheus, from each node's
 * `linkprobectl snapshot` (copied to one place however the user likes: scp, a shared directory, a
 * scheduler's own channel). Each file is one node's own view, read exactly as `fabric` reads this
 * node's daemon, and the views are merged as Prometheus' series are.
 */
#include <fcntl.h>
#include <limits.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linkprobectl-fabric-local.h"
#include "fabric/fabric-model.h"
#include "linkprobectl-fabric-snapshots.h"
#include "linkprobectl.h"
#include "shared/fileio.h"
#include "shared/time-util.h"

/* A snapshot holds one node's objects: a few MB for a big node. */
#define SNAPSHOT_MAX (64U * 1024U * 1024U)

/* One buffer and one parser for every file: ten thousand files read one after another would otherwise
 * allocate and free as many buffers, and glibc pays for that in consolidating its free lists. */
typedef struct Reader {
        char *buf;
        size_t allocated;
        json_tokener *tok;
} Reader;

static void reader_done(Reader *r) {
        free(r->buf);
        if (r->tok)
                json_tokener_free(r->tok);
}

/* The file's text in r->buf, NUL-terminated: 0 or a negative errno (-EFBIG past SNAPSHOT_MAX). */
static int reader_read(Reader *r, const char *file, size_t *ret_size) {
        _cleanup_(closep) int fd = open(file, O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        struct stat st;
        size_t n = 0;

        if (fd < 0)
                return -errno;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (!S_ISREG(st.st_mode))
                return S_ISDIR(st.st_mode) ? -EISDIR : -EBADFD;
        for (;;) {
                /* Room for what fstat() said and a little more: a file that grows while read is read on. */
                size_t want = MAX((size_t) st.st_size + 2, n + 4096);
                if (want > SNAPSHOT_MAX + 2)
                        want = SNAPSHOT_MAX + 2;
                if (want > r->allocated) {
                        char *grown = realloc(r->buf, want);
                        if (!grown)
                                return -ENOMEM;
                        r->buf = grown;
                        r->allocated = want;
                }
                if (n + 1 >= r->allocated)
                        return -EFBIG;
                ssize_t k = loop_read(fd, r->buf + n, r->allocated - n - 1);
                if (k < 0)
                        return (int) k;
                if (k == 0)
                        break;
                n += (size_t) k;
                if (n > SNAPSHOT_MAX)
                        return -EFBIG;
        }
        r->buf[n] = '\0';
        *ret_size = n;
        return 0;
}

static int read_snapshot(Reader *reader, const char *file, json_object **ret) {
        _cleanup_(freep) char *shown = escape_for_terminal(file);
        _cleanup_(json_object_putp) json_object *doc = NULL;
        enum json_tokener_error error = json_tokener_success;
        size_t size = 0;
        int r;

        r = reader_read(reader, file, &size);
        if (r < 0) {
                fprintf(stderr, "Cannot read %s: %s\n", strna(shown), r == -EFBIG ? "larger than any snapshot" : strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        if (!reader->tok && !(reader->tok = json_tokener_new()))
                return log_oom_ctl();
        json_tokener_reset(reader->tok);
        doc = json_tokener_parse_ex(reader->tok, reader->buf, (int) MIN(size + 1, (size_t) INT_MAX));
        error = json_tokener_get_error(reader->tok);
        if (error != json_tokener_success) {
                json_object_put(doc);
                doc = NULL;
        }
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
                /* What a later clash is told with, not the whole document: ten thousand nodes' documents
                 * would hold hundreds of MB. */
                json_object *o = json_object_new_object(), *node = ctl_member(doc, "Node");
                json_object_object_add(o, "file", json_object_new_string(file));
                json_object_object_add(o, "Hostname", json_object_get(ctl_member(node, "Hostname")));
                json_object_object_add(o, "BootId", json_object_get(ctl_member(node, "BootId")));
                json_object_object_add(seen, id, o);
                return 0;
        }
        _cleanup_(freep) char *a = escape_for_terminal(json_string_or(was, "file", "")), *b = escape_for_terminal(file);
        json_object *other = was, *node = ctl_member(doc, "Node");
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

static void drop_unborrowed(json_object *objects) {
        static const char *const borrowed[] = { "Peer", "Link", "Neighbor", "Thunderbolt" };
        _cleanup_(json_object_putp) json_object *keep = json_object_new_object();

        if (!keep)
                return;
        for (size_t k = 0; k < ELEMENTSOF(borrowed); k++)
                json_object_object_add(keep, borrowed[k], json_object_get(ctl_member(objects, borrowed[k])));
        json_object_object_foreach(objects, kind, list) {
                (void) list;
                if (!json_object_object_get_ex(keep, kind, NULL))
                        json_object_object_add(objects, kind, NULL);
        }
}

/* Older than this, a snapshot is said to be old: the paths it holds may have gone stale since. */
#define SNAPSHOT_OLD_USEC (3600 * USEC_PER_SEC)

int fabric_from_snapshots(char **files, size_t n, json_object **ret) {
        _cleanup_(json_object_putp) json_object *model = fabric_model_new("snapshots"), *docs = json_object_new_array(),
                                               *seen = json_object_new_object();
        _cleanup_(fabric_sides_done) FabricSides sides = {};
        _cleanup_(reader_done) Reader reader = {};
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

                r = read_snapshot(&reader, files[i], &doc);
                if (r != 0)
                        return r;
                /* Kept while the words about its edges borrow its strings (until the merge). */
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
                size_t words = sides.n;
                r = fabric_add_local_view(model, &sides, ctl_member(doc, "Node"), ctl_member(doc, "Objects"), false);
                if (r < 0)
                        return log_oom_ctl();
                /* The model copied what it keeps; only the words borrow. A node that said nothing about an
                 * edge is let go at once, the others keep only the kinds the words point into. */
                if (sides.n == words)
                        json_object_array_del_idx(docs, json_object_array_length(docs) - 1, 1);
                else
                        drop_unborrowed(ctl_member(doc, "Objects"));
        }
        if (fabric_sides_merge(model, &sides) < 0)
                return log_oom_ctl();
        *ret = TAKE_PTR(model);
        return 0;
}
