/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Link.Switch: the switch whose port's far end is the link, as the switches' sources recorded it. Only
 * the switch kind records which of our objects its ports face; the link learns it here, once. */
#include "derive-switch.h"
#include "link.h"
#include "rdma.h"
#include "shared/bus-names.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "switch.h"

typedef struct LinkSwitch {
        int ifindex;
        size_t order; /* ties go to the first switch by key */
        const Switch *sw;
        const SwitchPort *port;
} LinkSwitch;

static int link_switch_compare(const void *a, const void *b) {
        const LinkSwitch *x = a, *y = b;
        if (x->ifindex != y->ifindex)
                return x->ifindex < y->ifindex ? -1 : 1;
        return x->order < y->order ? -1 : x->order > y->order;
}

static int local_link_ifindex(const char *path) {
        _cleanup_(freep) char *label = NULL;
        int ifindex;

        if (sd_bus_path_decode(path, LINK_PATH_PREFIX, &label) <= 0 || parse_int(label, &ifindex) < 0 || ifindex <= 0)
                return 0;
        return ifindex;
}

static void link_set_switch(Link *l, const LinkSwitch *ls) {
        const SwitchPortEthernet *e = ls ? &ls->port->ethernet : NULL;
        size_t n = e ? e->n_speeds : 0;

        if (bus_object_set_string(&l->bus, &l->derived.switch_path, ls ? ls->sw->bus.path : NULL, "Switch") < 0)
                log_oom();
        if (n != l->derived.n_lldp_partner_speeds ||
            (n > 0 && memcmp(l->derived.lldp_partner_speeds_mbps, e->speeds_mbps, n * sizeof(uint32_t)) != 0)) {
                if (n > 0)
                        memcpy(l->derived.lldp_partner_speeds_mbps, e->speeds_mbps, n * sizeof(uint32_t));
                l->derived.n_lldp_partner_speeds = n;
                bus_object_changed(&l->bus, "LldpPartnerSpeedsMbps");
                /* The link's capability is judged from them where autonegotiation heard nothing: again, in
                 * the next pass. */
                bus_object_queue(&l->bus);
        }
}

void derive_links_switch(Links *links, Switches *switches) {
        _cleanup_(freep) LinkSwitch *all = NULL;
        size_t n = 0, allocated = 0;
        const Switch *sw;
        Link *l;

        TABLE_FOREACH(sw, &switches->table)
                for (size_t i = 0; i < sw->n_ports; i++) {
                        int ifindex = local_link_ifindex(sw->ports[i].local_path);
                        if (ifindex <= 0)
                                continue;
                        if (n == allocated) {
                                size_t want = MAX(allocated * 2, (size_t) 16);
                                LinkSwitch *grown = reallocarray(all, want, sizeof(LinkSwitch));
                                if (!grown) {
                                        log_oom();
                                        return;
                                }
                                all = grown;
                                allocated = want;
                        }
                        all[n] = (LinkSwitch) { .ifindex = ifindex, .order = n, .sw = sw, .port = &sw->ports[i] };
                        n++;
                }
        if (n > 0)
                qsort(all, n, sizeof(LinkSwitch), link_switch_compare);

        size_t at = 0;
        TABLE_FOREACH(l, &links->table) {
                /* Both in ifindex order: one walk. */
                while (at < n && all[at].ifindex < l->ifindex)
                        at++;
                link_set_switch(l, at < n && all[at].ifindex == l->ifindex ? &all[at] : NULL);
        }
}

/* Few RDMA ports, few switch ports: each port looks through them. */
void derive_rdma_ports_switch(Rdma *rdma, Switches *switches) {
        RdmaPort *p;

        TABLE_FOREACH(p, &rdma->ports) {
                const Switch *found = NULL, *sw;

                TABLE_FOREACH(sw, &switches->table)
                        for (size_t i = 0; !found && p->bus.path && i < sw->n_ports; i++)
                                if (streq_ptr(sw->ports[i].local_path, p->bus.path))
                                        found = sw;
                if (bus_object_set_string(&p->bus, &p->derived.switch_path, found ? found->bus.path : NULL,
                                          "Switch") < 0)
                        log_oom();
        }
}
