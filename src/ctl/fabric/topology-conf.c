/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * topology.conf as Slurm's topology/tree plugin reads it (topology.conf(5)): `fabric topology` writes
 * it, `fabric verify` reads the one a cluster runs with. The reader is strict where Slurm would stop
 * (slurmctld refuses a switch with both kinds of children or none) and where a typing error would
 * otherwise pass unseen (an unknown parameter, a switch named twice); every error names its line.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "shared/macros.h"
#include "topology-conf.h"

void topology_conf_done(TopoConf *c) {
        for (size_t i = 0; i < c->n; i++) {
                free(c->switches[i].name);
                free(c->switches[i].link_speed);
                hostlist_done(&c->switches[i].switches);
                hostlist_done(&c->switches[i].nodes);
        }
        free(c->switches);
        *c = (TopoConf) {};
}

TopoSwitch *topology_conf_add(TopoConf *c, const char *name) {
        TopoSwitch *s;

        if (c->n >= TOPOLOGY_CONF_SWITCHES_MAX)
                return NULL;
        if (c->n == c->allocated) {
                size_t a = c->allocated ? c->allocated * 2 : 16;
                TopoSwitch *p = reallocarray(c->switches, a, sizeof(TopoSwitch));
                if (!p)
                        return NULL;
                c->switches = p;
                c->allocated = a;
        }
        s = &c->switches[c->n];
        *s = (TopoSwitch) { .name = strdup(name) };
        if (!s->name)
                return NULL;
        c->n++;
        return s;
}

TopoSwitch *topology_conf_find(const TopoConf *c, const char *name) {
        for (size_t i = 0; i < c->n; i++)
                if (strcmp(c->switches[i].name, name) == 0)
                        return &c->switches[i];
        return NULL;
}

/* ---- reading ---- */

typedef struct Parser {
        TopoConf *conf;
        unsigned line;
        char *error;
} Parser;

_printf_(2, 3) static int fail(Parser *p, const char *format, ...) {
        va_list ap;

        free(p->error);
        va_start(ap, format);
        if (vasprintf(&p->error, format, ap) < 0)
                p->error = NULL;
        va_end(ap);
        return p->error ? -EINVAL : -ENOMEM;
}

static int parse_list(Parser *p, const char *key, const char *value, HostList *l) {
        const char *why = NULL;
        int r = hostlist_expand(value, l, &why);

        if (r == -EINVAL)
                return fail(p, "%s=%s: %s", key, value, why);
        if (r == -E2BIG)
                return fail(p, "%s=: more than %u names", key, HOSTLIST_NAMES_MAX);
        if (r < 0)
                return r;
        for (size_t i = 0; i < l->n; i++)
                if (!slurm_name_valid(l->names[i]))
                        return fail(p, "%s=: \"%s\" is not a name Slurm takes (letters, digits, '-', '_', '.')", key,
                                    l->names[i]);
        return 0;
}

/* One logical line, its comment gone and its continuations joined: "Key=value ..." words. */
static int parse_statement(Parser *p, char *s) {
        TopoSwitch *sw = NULL;
        bool first = true;

        for (char *save = NULL, *word = strtok_r(s, " \t\r\v\f", &save); word; word = strtok_r(NULL, " \t\r\v\f", &save)) {
                char *eq = strchr(word, '='), *value;
                int r;

                if (!eq || eq == word)
                        return fail(p, "\"%s\" is not Parameter=value", word);
                *eq = '\0';
                value = eq + 1;
                if (first) {
                        if (strcasecmp(word, "SwitchName") != 0)
                                return fail(p, "a switch's line starts with SwitchName=, not %s=", word);
                        if (!slurm_name_valid(value))
                                return fail(p, "SwitchName=%s: not a name Slurm takes (letters, digits, '-', '_', '.')", value);
                        if (topology_conf_find(p->conf, value))
                                return fail(p, "switch %s is named twice (first on line %u)", value,
                                            topology_conf_find(p->conf, value)->line);
                        sw = topology_conf_add(p->conf, value);
                        if (!sw)
                                return p->conf->n >= TOPOLOGY_CONF_SWITCHES_MAX
                                               ? fail(p, "more than %u switches", TOPOLOGY_CONF_SWITCHES_MAX)
                                               : -ENOMEM;
                        sw->line = p->line;
                        first = false;
                        continue;
                }
                if (strcasecmp(word, "SwitchName") == 0)
                        return fail(p, "two SwitchName= on one line: one switch per line");
                if (strcasecmp(word, "Switches") == 0 || strcasecmp(word, "Nodes") == 0) {
                        HostList *l = strcasecmp(word, "Nodes") == 0 ? &sw->nodes : &sw->switches;
                        if (l->n > 0)
                                return fail(p, "%s= given twice", word);
                        r = parse_list(p, word, value, l);
                        if (r < 0)
                                return r;
                } else if (strcasecmp(word, "LinkSpeed") == 0) {
                        char *end;
                        errno = 0;
                        (void) strtoul(value, &end, 10);
                        if (!*value || *end || errno != 0 || value[0] == '-')
                                return fail(p, "LinkSpeed=%s: not a whole number", value);
                        free(sw->link_speed);
                        sw->link_speed = strdup(value);
                        if (!sw->link_speed)
                                return -ENOMEM;
                } else
                        return fail(p, "unknown parameter %s= (SwitchName, Switches, Nodes, LinkSpeed)", word);
        }
        if (!sw)
                return 0;
        if (sw->nodes.n > 0 && sw->switches.n > 0)
                return fail(p, "switch %s has both Switches= and Nodes=: Slurm takes one or the other", sw->name);
        if (sw->nodes.n == 0 && sw->switches.n == 0)
                return fail(p, "switch %s has neither Switches= nor Nodes=", sw->name);
        return 0;
}

int topology_conf_parse(const char *text, TopoConf *ret, unsigned *ret_line, char **ret_error) {
        _cleanup_(freep) char *logical = NULL;
        Parser p = { .conf = ret, .line = 0 };
        size_t len = 0, allocated = 0;
        unsigned start = 0;
        const char *s = text;
        int r = 0;

        *ret = (TopoConf) {};
        while (*s) {
                const char *eol = strchrnul(s, '\n'), *end = eol, *hash;
                bool continued;

                p.line++;
                hash = memchr(s, '#', (size_t) (eol - s));
                if (hash)
                        end = hash;
                /* A "\" at the end continues the statement (not inside a comment). */
                while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r'))
                        end--;
                continued = !hash && end > s && end[-1] == '\\';
                if (continued)
                        end--;
                if (len == 0)
                        start = p.line;
                if (len + (size_t) (end - s) + 2 > allocated) {
                        size_t a = MAX(allocated * 2, len + (size_t) (end - s) + 64);
                        char *n = realloc(logical, a);
                        if (!n) {
                                r = -ENOMEM;
                                break;
                        }
                        logical = n;
                        allocated = a;
                }
                memcpy(logical + len, s, (size_t) (end - s));
                len += (size_t) (end - s);
                logical[len++] = ' ';
                logical[len] = '\0';
                s = *eol ? eol + 1 : eol;
                if (continued && *s)
                        continue;
                unsigned at = p.line;
                p.line = start;
                r = parse_statement(&p, logical);
                p.line = at;
                len = 0;
                if (r < 0) {
                        p.line = start;
                        break;
                }
        }
        if (r < 0) {
                *ret_line = p.line;
                *ret_error = p.error ?: strdup("out of memory");
                topology_conf_done(ret);
                return r == -ENOMEM && !p.error ? -ENOMEM : -EINVAL;
        }
        free(p.error);
        return 0;
}

/* ---- writing ---- */

int topology_conf_write_tree(FILE *f, const TopoConf *c) {
        for (size_t i = 0; i < c->n; i++) {
                const TopoSwitch *s = &c->switches[i];
                _cleanup_(freep) char *switches = s->switches.n ? hostlist_compress(s->switches.names, s->switches.n) : NULL,
                                      *nodes = s->nodes.n ? hostlist_compress(s->nodes.names, s->nodes.n) : NULL;

                if ((s->switches.n && !switches) || (s->nodes.n && !nodes))
                        return -ENOMEM;
                fprintf(f, "SwitchName=%s%s%s%s%s%s%s\n", s->name, switches ? " Switches=" : "", strempty(switches),
                        nodes ? " Nodes=" : "", strempty(nodes), s->link_speed ? " LinkSpeed=" : "", strempty(s->link_speed));
        }
        return ferror(f) ? -EIO : 0;
}

int topology_conf_write_block(FILE *f, const TopoConf *c) {
        for (size_t i = 0; i < c->n; i++) {
                const TopoSwitch *s = &c->switches[i];
                _cleanup_(freep) char *nodes = NULL;

                if (s->nodes.n == 0)
                        continue;
                nodes = hostlist_compress(s->nodes.names, s->nodes.n);
                if (!nodes)
                        return -ENOMEM;
                fprintf(f, "BlockName=%s Nodes=%s\n", s->name, nodes);
        }
        return ferror(f) ? -EIO : 0;
}
