/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl --svg, --png: the pictures' options, and Graphviz (libgvc) laying out and rendering the
 * DOT text that linkprobectl-draw-node.c (the node) and linkprobectl-fabric.c (the cluster) write.
 *
 * Graphviz rather than an SVG writer of our own: the PCIe tree is a ranked tree, the NUMA nodes are
 * clusters and the fabric a general graph, which is what its dot layout does (crossings minimised, edge
 * labels placed clear of boxes); its SVG escapes text for XML, and its cairo renderer makes the PNG
 * with the same layout. */
#include <fcntl.h>
#include <graphviz/gvc.h>
#include <libgen.h>
#include <sys/stat.h>
#include <unistd.h>

#include "linkprobectl-draw.h"
#include "linkprobectl.h"

static int usage(const char *message) {
        fprintf(stderr, "%s\n", message);
        return CTL_EXIT_USAGE;
}

/* The directory --output= names a file in must let us create one there; said before the daemon is asked. */
static int check_output(const char *path) {
        _cleanup_(freep) char *copy = strdup(path), *shown = escape_for_terminal(path);
        struct stat st;

        if (!copy || !shown)
                return log_oom_ctl();
        if (stat(path, &st) == 0) {
                if (S_ISDIR(st.st_mode)) {
                        fprintf(stderr, "Cannot write the picture to %s: it is a directory.\n", shown);
                        return CTL_EXIT_FAILURE;
                }
                if (!S_ISREG(st.st_mode) || access(path, W_OK) == 0)
                        return 0;
                fprintf(stderr, "Cannot write the picture to %s: %s.\n", shown, strerror(errno));
                return CTL_EXIT_FAILURE;
        }
        if (errno != ENOENT || access(dirname(copy), W_OK | X_OK) < 0) {
                fprintf(stderr, "Cannot write the picture to %s: %s.\n", shown, strerror(errno));
                return CTL_EXIT_FAILURE;
        }
        return 0;
}

int draw_check_args(const char *verb, int argc, char **argv) {
        if (arg_draw == DRAW_NONE) {
                if (arg_dot && streq(verb, "topo") && arg_json != JSON_OFF)
                        return usage("--dot and --json are two ways to print the node: pick one.");
                return arg_output ? usage("--output= says where --svg or --png writes the picture: give one of them.") : 0;
        }
        if (!streq(verb, "topo") && !streq(verb, "fabric"))
                return usage("--svg and --png draw \"topo\" (this node) and \"fabric\" (the cluster).");
        if (arg_json != JSON_OFF || arg_dot)
                return usage("--svg or --png, --json and --dot are ways to print the same thing: pick one.");
        if (streq(verb, "fabric") && argc > 1 && (streq(argv[1], "ring") || streq(argv[1], "coordinator")))
                return usage("fabric ring and fabric coordinator print no picture: --svg and --png do not apply.");
        if (arg_draw == DRAW_PNG && !arg_output && isatty(STDOUT_FILENO))
                return usage("A PNG is not for a terminal: give --output=FILE, or send it into a pipe.");
        return arg_output ? check_output(arg_output) : 0;
}

char *draw_escape(const char *s) {
        _cleanup_(freep) char *shown = escape_for_terminal(strempty(s));
        char *ret, *t;

        if (!shown)
                return NULL;
        ret = t = malloc(strlen(shown) * 5 + 1);
        if (!ret)
                return NULL;
        for (const char *p = shown; *p; p++) {
                if (*p == '&') {
                        t = stpcpy(t, "&amp;");
                        continue;
                }
                if (*p == '"' || *p == '\\')
                        *t++ = '\\';
                *t++ = *p;
        }
        *t = '\0';
        return ret;
}

static int write_all(int fd, const char *data, size_t len) {
        while (len > 0) {
                ssize_t n = write(fd, data, len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                data += n;
                len -= (size_t) n;
        }
        return 0;
}

/* A regular file is replaced whole (a reader never sees half a picture); anything else (a FIFO,
 * /dev/stdout) is written into. */
static int write_output(const char *path, const char *data, size_t len) {
        _cleanup_(freep) char *tmp = ctl_strdupf("%s.XXXXXX", path), *shown = escape_for_terminal(path);
        struct stat st;
        mode_t mask;
        int fd, r;

        if (!tmp || !shown)
                return log_oom_ctl();
        if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
                fd = open(path, O_WRONLY | O_CLOEXEC | O_NOCTTY);
                r = fd < 0 ? -errno : write_all(fd, data, len);
                if (fd >= 0 && close(fd) < 0 && r == 0)
                        r = -errno;
        } else {
                fd = mkostemp(tmp, O_CLOEXEC);
                if (fd < 0)
                        r = -errno;
                else {
                        mask = umask(0);
                        umask(mask);
                        r = fchmod(fd, 0666 & ~mask) < 0 ? -errno : write_all(fd, data, len);
                        if (close(fd) < 0 && r == 0)
                                r = -errno;
                        if (r == 0 && rename(tmp, path) < 0)
                                r = -errno;
                        if (r < 0)
                                (void) unlink(tmp);
                }
        }
        if (r < 0) {
                fprintf(stderr, "Cannot write the picture to %s: %s.\n", shown, strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return 0;
}

static int write_stdout(const char *data, size_t len) {
        int r;

        fflush(stdout);
        r = write_all(STDOUT_FILENO, data, len);
        if (r < 0) {
                fprintf(stderr, "Cannot write the picture to standard output: %s.\n", strerror(-r));
                return CTL_EXIT_FAILURE;
        }
        return 0;
}

/* Under the sanitizers (SANITIZE=1): Graphviz and the font libraries below it keep caches and
 * per-layout allocations they never free, which LeakSanitizer would report as ours. Our own leaks still
 * count: a report names a frame of those libraries only when they allocated the block. */
const char *__lsan_default_suppressions(void);
const char *__lsan_default_suppressions(void) {
        return "leak:libgvc.so\n"
               "leak:libcgraph.so\n"
               "leak:libgvplugin_\n"
               "leak:libfontconfig.so\n"
               "leak:libpango\n"
               "leak:libcairo.so\n"
               "leak:libharfbuzz.so\n"
               "leak:libglib-2.0.so\n"
               "leak:libgobject-2.0.so\n";
}

/* One Graphviz context for the process, never freed: its cairo plugin keeps the last font's name in a
 * static that a freed context leaves dangling (Graphviz 2.42), so a second context would read freed
 * memory. A static pointer keeps it reachable for the leak checkers. */
static GVC_t *gvc_context(void) {
        static GVC_t *gvc = NULL;

        if (!gvc)
                gvc = gvContext();
        return gvc;
}

int draw_render_dot(const char *dot) {
        const char *format = arg_draw == DRAW_PNG ? "png" : "svg";
        GVC_t *gvc;
        Agraph_t *g;
        char *data = NULL;
        unsigned int len = 0;
        int r = CTL_EXIT_FAILURE;

        /* Graphviz's warnings (a font it substitutes) are not the user's business; its errors are. */
        agseterr(AGERR);
        gvc = gvc_context();
        if (!gvc)
                return log_oom_ctl();
        g = agmemread(dot);
        if (!g)
                fprintf(stderr, "Cannot draw the picture: Graphviz did not take the graph.\n");
        else if (gvLayout(gvc, g, "dot") != 0)
                fprintf(stderr, "Cannot draw the picture: Graphviz could not lay it out.\n");
        else {
                if (gvRenderData(gvc, g, format, &data, &len) != 0 || !data)
                        fprintf(stderr, "Cannot draw the picture: Graphviz has no %s renderer "
                                        "(is its cairo plugin, libgvc6's libgvplugin_pango, installed?).\n",
                                format);
                else
                        r = arg_output ? write_output(arg_output, data, len) : write_stdout(data, len);
                gvFreeRenderData(data);
                gvFreeLayout(gvc, g);
        }
        if (g)
                agclose(g);
        return r;
}
