/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The series of links over time: counters as _total, rates in bytes per second, Health as a gauge per
 * value (1 for the current one), with the labels the other series of each kind have (a link's device,
 * an RDMA port's device and port, a PCI function's pci_address, a Thunderbolt object's sysname), so
 * that alert rules join them with node_exporter's. What is unknown (a counter the kernel does not
 * have, a rate before two samples) is left out, never written as 0.
 */
#include <math.h>

#include "link.h"
#include "metrics-health.h"
#include "metrics-text.h"
#include "metrics-sources.h"
#include "pci.h"
#include "rdma.h"
#include "tbt.h"

#define BYTES_PER_GBIT 1.25e8

typedef struct Family {
        const char *name, *type, *help;
} Family;

static void family(FILE *f, const Family *fam) {
        metrics_write_family(f, fam->name, fam->type, fam->help);
}

static void counter(FILE *f, const char *name, uint64_t v, const MetricsLabel *labels, size_t n) {
        if (v != COUNTER_UNKNOWN)
                metrics_write_sample(f, name, (double) v, labels, n);
}

static void rate(FILE *f, const char *name, double gbps, const MetricsLabel *labels, size_t n) {
        if (!isnan(gbps))
                metrics_write_sample(f, name, gbps * BYTES_PER_GBIT, labels, n);
}

/* One series per health value: the current one 1, the others 0. labels has room for "health" last. */
static void health(FILE *f, const char *name, Health h, MetricsLabel *labels, size_t n) {
        for (Health v = 0; v < _HEALTH_MAX; v++) {
                labels[n] = (MetricsLabel) { "health", health_to_string(v) };
                metrics_write_sample(f, name, h == v, labels, n + 1);
        }
}

static void render_links(const MetricsSources *m, FILE *f) {
        static const Family rates[] = {
                { "linkprobe_link_receive_rate_bytes", "gauge", "Bytes per second received over the last watch interval." },
                { "linkprobe_link_transmit_rate_bytes", "gauge", "Bytes per second sent over the last watch interval." },
        };
        static const Family counters[] = {
                { "linkprobe_link_receive_errors_total", "counter", "Receive errors (rtnetlink statistics)." },
                { "linkprobe_link_transmit_errors_total", "counter", "Transmit errors (rtnetlink statistics)." },
                { "linkprobe_link_receive_crc_errors_total", "counter", "Frames received with a bad CRC." },
                { "linkprobe_link_receive_dropped_total", "counter", "Received packets the kernel dropped." },
        };
        static const Family health_family = { "linkprobe_link_health", "gauge",
                                              "1 for the link's current health (ok, degraded, errors, flapping, unknown)." };
        Link *l;

        for (size_t i = 0; i < ELEMENTSOF(rates); i++) {
                family(f, &rates[i]);
                TABLE_FOREACH(l, &m->links->table) {
                        MetricsLabel labels[] = { { "device", l->name_utf8 } };
                        rate(f, rates[i].name, i == 0 ? l->watch.rx_gbps : l->watch.tx_gbps, labels, 1);
                }
        }
        for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
                family(f, &counters[i]);
                TABLE_FOREACH(l, &m->links->table) {
                        const LinkStats *s = &l->watch.now;
                        uint64_t v[] = { s->rx_errors, s->tx_errors, s->rx_crc_errors, s->rx_dropped };
                        _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(counters), "one value per family");
                        MetricsLabel labels[] = { { "device", l->name_utf8 } };
                        counter(f, counters[i].name, v[i], labels, 1);
                }
        }
        family(f, &health_family);
        TABLE_FOREACH(l, &m->links->table) {
                MetricsLabel labels[2] = { { "device", l->name_utf8 } };
                health(f, health_family.name, l->derived.health_state.health, labels, 1);
        }
}

static void render_pci(const MetricsSources *m, FILE *f) {
        static const Family families[] = {
                { "linkprobe_pci_link_changes_total", "counter", "PCIe link speed or width changes seen." },
                { "linkprobe_pci_aer_correctable_total", "counter", "Correctable AER errors (ERR_COR messages)." },
                { "linkprobe_pci_aer_nonfatal_total", "counter", "Non-fatal uncorrectable AER errors." },
                { "linkprobe_pci_aer_fatal_total", "counter", "Fatal uncorrectable AER errors." },
                { "linkprobe_pci_health", "gauge", "1 for the function's current health (ok, degraded, errors, flapping, unknown)." },
        };
        PciObject *o;

        if (!m->pci || !pci_any_published(m->pci))
                return;
        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                family(f, &families[i]);
                TABLE_FOREACH(o, &m->pci->functions) {
                        MetricsLabel labels[2] = { { "pci_address", o->address } };
                        if (!o->published)
                                continue;
                        if (i == 0)
                                counter(f, families[i].name, o->watch.link_changes, labels, 1);
                        else if (i <= 3)
                                counter(f, families[i].name, o->watch.aer[i - 1], labels, 1);
                        else
                                health(f, families[i].name, o->derived.health_state.health, labels, 1);
                }
        }
}

/* device and port, as node_exporter's infiniband collector labels them, and room for "health". */
static MetricsLabel *port_labels(const RdmaPort *p, char port[static 16], MetricsLabel labels[static 3]) {
        snprintf(port, 16, "%u", p->number);
        labels[0] = (MetricsLabel) { "device", p->device };
        labels[1] = (MetricsLabel) { "port", port };
        return labels;
}

static void render_rdma(const MetricsSources *m, FILE *f) {
        static const struct {
                Family family;
                InfinibandCounter counter;
        } counters[] = {
                { { "linkprobe_rdma_port_symbol_errors_total", "counter", "Minor link errors (symbol_error)." },
                  INFINIBAND_SYMBOL_ERROR },
                { { "linkprobe_rdma_port_link_error_recoveries_total", "counter", "Successful link retrainings." },
                  INFINIBAND_LINK_ERROR_RECOVERY },
                { { "linkprobe_rdma_port_link_downed_total", "counter", "Retrainings that failed: the link went down." },
                  INFINIBAND_LINK_DOWNED },
                { { "linkprobe_rdma_port_receive_errors_total", "counter", "Packets received with errors." },
                  INFINIBAND_PORT_RCV_ERRORS },
                { { "linkprobe_rdma_port_transmit_discards_total", "counter", "Outbound packets discarded." },
                  INFINIBAND_PORT_XMIT_DISCARDS },
        };
        static const Family rates[] = {
                { "linkprobe_rdma_port_receive_rate_bytes", "gauge",
                  "Bytes per second received as the port's counters count them (RDMA; on InfiniBand also IPoIB)." },
                { "linkprobe_rdma_port_transmit_rate_bytes", "gauge", "Bytes per second sent as the port's counters count them." },
                { "linkprobe_rdma_port_ip_receive_rate_bytes", "gauge",
                  "Bytes per second received through the IP stack of the port's network interface." },
                { "linkprobe_rdma_port_ip_transmit_rate_bytes", "gauge",
                  "Bytes per second sent through the IP stack of the port's network interface." },
        };
        static const Family fallback = { "linkprobe_rdma_port_suspected_fallback", "gauge",
                                         "1 while sustained IP traffic and no RDMA traffic suggest a fallback to sockets." };
        static const Family health_family = { "linkprobe_rdma_port_health", "gauge",
                                              "1 for the port's current health (ok, degraded, errors, flapping, unknown)." };
        MetricsLabel labels[3];
        RdmaPort *p;
        char port[16];

        if (table_size(&m->rdma->ports) == 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(counters); i++) {
                family(f, &counters[i].family);
                TABLE_FOREACH(p, &m->rdma->ports)
                        counter(f, counters[i].family.name, p->watch.value[counters[i].counter], port_labels(p, port, labels), 2);
        }
        for (size_t i = 0; i < ELEMENTSOF(rates); i++) {
                family(f, &rates[i]);
                TABLE_FOREACH(p, &m->rdma->ports) {
                        double v[] = { p->watch.rx_gbps, p->watch.tx_gbps, p->derived.ip_rx_gbps, p->derived.ip_tx_gbps };
                        _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(rates), "one value per family");
                        rate(f, rates[i].name, v[i], port_labels(p, port, labels), 2);
                }
        }
        family(f, &fallback);
        TABLE_FOREACH(p, &m->rdma->ports)
                metrics_write_sample(f, fallback.name, p->derived.fallback.suspected, port_labels(p, port, labels), 2);
        family(f, &health_family);
        TABLE_FOREACH(p, &m->rdma->ports)
                health(f, health_family.name, p->derived.health_state.health, port_labels(p, port, labels), 2);
}

static void render_thunderbolt(const MetricsSources *m, FILE *f) {
        static const Family changes = { "linkprobe_thunderbolt_link_changes_total", "counter",
                                        "Link rate or lane changes, and replugs of the same device." };
        static const Family health_family = { "linkprobe_thunderbolt_health", "gauge",
                                              "1 for the object's current health (ok, degraded, errors, flapping, unknown)." };
        TbtObject *o;

        if (!tbt_any_published(m->thunderbolt))
                return;
        family(f, &changes);
        TABLE_FOREACH(o, &m->thunderbolt->objects)
                if (o->published) {
                        MetricsLabel labels[1] = { { "sysname", o->sysname_utf8 } };
                        metrics_write_sample(f, changes.name, o->link_changes.count, labels, 1);
                }
        family(f, &health_family);
        TABLE_FOREACH(o, &m->thunderbolt->objects)
                if (o->published) {
                        MetricsLabel labels[2] = { { "sysname", o->sysname_utf8 } };
                        health(f, health_family.name, o->derived.health_state.health, labels, 1);
                }
}

void metrics_render_health(const MetricsSources *m, FILE *f) {
        render_links(m, f);
        render_pci(m, f);
        render_rdma(m, f);
        render_thunderbolt(m, f);
}
