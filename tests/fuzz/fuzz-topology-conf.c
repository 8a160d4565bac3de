/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes topology.conf as `fabric verify --slurm=` reads an administrator's file: the parser, the
 * hostlist expressions in it, and what it writes back, which must read back into the same switches. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ctl/fabric/hostlist.h"
#include "shared/macros.h"
#include "ctl/fabric/topology-conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int compare(const void *a, const void *b) {
        return strcmp(*(char *const *) a, *(char *const *) b);
}

/* How many distinct names: the writer writes a name given twice once. */
static size_t distinct(const HostList *l) {
        size_t n = 0;

        if (l->n == 0)
                return 0;
        qsort(l->names, l->n, sizeof(char *), compare);
        for (size_t i = 0; i < l->n; i++)
                n += i == 0 || strcmp(l->names[i], l->names[i - 1]) != 0;
        return n;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(topology_conf_done) TopoConf c = {}, back = {};
        _cleanup_(freep) char *s = NULL, *error = NULL, *out = NULL;
        unsigned line = 0;
        size_t out_size = 0;
        FILE *f;

        if (size > 4096)
                return 0;
        s = malloc(size + 1);
        if (!s)
                return 0;
        memcpy(s, data, size);
        s[size] = '\0';
        if (topology_conf_parse(s, &c, &line, &error) < 0) {
                if (!error || line == 0)
                        abort();
                return 0;
        }
        f = open_memstream(&out, &out_size);
        if (!f)
                return 0;
        if (topology_conf_write_tree(f, &c) < 0) {
                fclose(f);
                return 0;
        }
        fclose(f);
        free(error);
        error = NULL;
        if (topology_conf_parse(out, &back, &line, &error) < 0 || back.n != c.n)
                abort();
        for (size_t i = 0; i < c.n; i++)
                if (distinct(&back.switches[i].nodes) != distinct(&c.switches[i].nodes) ||
                    distinct(&back.switches[i].switches) != distinct(&c.switches[i].switches))
                        abort();
        return 0;
}
