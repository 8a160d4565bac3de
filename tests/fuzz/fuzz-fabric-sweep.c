/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes the subnet sweep's document as the daemon applies it (fabric-sweep.c): the input is taken as
 * linkprobe-probe-fabric's output, whose strings come from the fabric (NodeDescriptions, PortInfo).
 * Nothing may crash; no more switches than the cap; every link's names fit; applying the same document
 * twice finds every switch again; a refused document changes nothing. */
#include "daemon/fabric-sweep.h"
#include "daemon/switch.h"
#include "shared/log.h"
#include "shared/string-util.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CAP 16

static void check(Switches *s) {
        Switch *sw;

        if (table_size(&s->table) > CAP)
                abort();
        TABLE_FOREACH(sw, &s->table) {
                if (!sw->swept || sw->n_links > 254)
                        abort();
                for (size_t i = 0; i < sw->n_links; i++) {
                        const SwitchLink *l = &sw->links[i];
                        if (l->port < 1 || l->port > 254 || !memchr(l->width, '\0', sizeof(l->width)) ||
                            !memchr(l->speed, '\0', sizeof(l->speed)) || l->rate_gbps < 0)
                                abort();
                        /* The judgement of both ends: names that fit, a reason exactly when degraded. */
                        if (!memchr(l->best_width, '\0', sizeof(l->best_width)) ||
                            !memchr(l->best_speed, '\0', sizeof(l->best_speed)) ||
                            !memchr(l->degraded_reason, '\0', sizeof(l->degraded_reason)) ||
                            l->best_rate_gbps < 0 || l->degraded != (l->degraded_reason[0] != '\0'))
                                abort();
                }
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *text = malloc(size + 1), *error = NULL;
        BusPublisher publisher = {};
        Switches s;
        bool truncated;

        if (!text)
                return 0;
        memcpy(text, data, size);
        text[size] = '\0';
        log_set_max_level(LOG_CRIT);

        switches_init(&s, &publisher);
        json_object *doc = json_tokener_parse(text);
        if (doc) {
                int r = fabric_sweep_apply_document(&s, doc, CAP, 1, &error, &truncated);
                if (r < 0 && table_size(&s.table) != 0)
                        abort(); /* refused: nothing published */
                free(error);
                check(&s);
                size_t before = table_size(&s.table);
                error = NULL;
                if (fabric_sweep_apply_document(&s, doc, CAP, 2, &error, &truncated) >= 0 &&
                    table_size(&s.table) != before)
                        abort();
                free(error);
                check(&s);
                json_object_put(doc);
        }
        switches_done(&s);
        bus_publisher_done(&publisher);
        free(text);
        return 0;
}
