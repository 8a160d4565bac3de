/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <net/if.h>
#include <linux/if.h>
#include <stdarg.h>

#include "config.h"
#include "gpu.h"
#include "link.h"
#include "memory.h"
#include "metrics-fabric.h"
#include "metrics-health.h"
#include "metrics-switch.h"
#include "metrics-text.h"
#include "metrics.h"
#include "node.h"
#include "pci.h"
#include "peer.h"
#include "rdma-names.h"
#include "rdma.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/time-util.h"
#include "shared/bus-names.h"
#include "shared/parse-util.h"
#include "status.h"
#include "switch.h"
#include "tbt.h"

#define TEXTFILE_NAME "linkprobe.prom"

struct MetricsExporter {
        sd_event *event;
        const Config *config;
        metrics_render_t render;
        void *userdata;
        int textfile_dir_fd;
        uint64_t written_hash;
        bool written;
        sd_event_source *textfile_timer;
        MetricsHttp *http;
};

static void family(FILE *f, const char *name, const char *type, const char *help) {
        metrics_write_family(f, name, type, help);
}

/* One sample: name{k1="v1",k2="v2"} value. Labels are (key, value) pairs ending with NULL. */
static void sample(FILE *f, const char *name, double value, ...) {
        va_list ap;
        const char *key;
        bool first = true;

        fputs(name, f);
        va_start(ap, value);
        while ((key = va_arg(ap, const char *))) {
                const char *v = va_arg(ap, const char *);
                fprintf(f, "%s%s=\"", first ? "{" : ",", key);
                metrics_write_label_value(f, v);
                fputc('"', f);
                first = false;
        }
        va_end(ap);
        fprintf(f, "%s %.17g\n", first ? "" : "}", value);
}

static void render_daemon(const MetricsSources *m, FILE *f) {
        family(f, "linkprobe_daemon_info", "gauge", "The linkprobed version (always 1).");
        sample(f, "linkprobe_daemon_info", 1, "version", VERSION, NULL);
        family(f, "linkprobe_daemon_state", "gauge", "1 for the daemon's current state, 0 for the others.");
        for (DaemonState s = 0; s < _DAEMON_STATE_MAX; s++)
                sample(f, "linkprobe_daemon_state", m->status->state == s, "state", daemon_state_to_string(s), NULL);
        family(f, "linkprobe_netlink_overruns_total", "counter",
               "Netlink receive buffer overruns, each answered by a full re-read.");
        sample(f, "linkprobe_netlink_overruns_total", (double) m->netlink_overruns, NULL);
        family(f, "linkprobe_udev_overruns_total", "counter", "udev monitor overruns, each answered by re-enumeration.");
        sample(f, "linkprobe_udev_overruns_total", (double) m->udev_overruns, NULL);
}

static void render_node(const MetricsSources *m, FILE *f) {
        const Node *n = m->node;
        char cpus[16];

        snprintf(cpus, sizeof(cpus), "%" PRIu32, n->cpu_count);
        family(f, "linkprobe_node_info", "gauge", "The node's identity (always 1).");
        sample(f, "linkprobe_node_info", 1, "nodename", strempty(n->hostname), "machine_id", strempty(n->machine_id),
               "boot_id", strempty(n->boot_id), "release", strempty(n->kernel_release), "machine",
               strempty(n->architecture), "cpu_model", strempty(n->cpu_model), NULL);
        family(f, "linkprobe_node_cpus", "gauge", "CPUs online when the daemon started.");
        sample(f, "linkprobe_node_cpus", n->cpu_count, NULL);
        family(f, "linkprobe_memory_total_bytes", "gauge", "MemTotal from /proc/meminfo.");
        sample(f, "linkprobe_memory_total_bytes", (double) m->memory->total_bytes, NULL);
        family(f, "linkprobe_memory_available_bytes", "gauge", "MemAvailable from /proc/meminfo.");
        sample(f, "linkprobe_memory_available_bytes", (double) m->memory->available_bytes, NULL);
}

static void render_links(const MetricsSources *m, FILE *f) {
        Link *l;

        family(f, "linkprobe_link_info", "gauge", "A network link and what it is (always 1).");
        TABLE_FOREACH(l, &m->links->table) {
                char index[16];
                snprintf(index, sizeof(index), "%d", l->ifindex);
                sample(f, "linkprobe_link_info", 1, "device", l->name_utf8, "ifindex", index, "kind",
                       link_kind_to_string(l->kind), "connection_type", connection_type_to_string(l->derived.connection_type),
                       "driver", strempty(l->driver), "address", strempty(l->hw_address), "operstate",
                       link_operstate_to_string(l->operstate), NULL);
        }
        family(f, "linkprobe_link_up", "gauge", "1 when the link's operational state is up.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_up", l->operstate == IF_OPER_UP, "device", l->name_utf8, NULL);
        family(f, "linkprobe_link_carrier", "gauge", "1 when the link is up and has a carrier.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_carrier", !!(l->flags & IFF_LOWER_UP), "device", l->name_utf8, NULL);
        family(f, "linkprobe_link_carrier_changes_total", "counter", "Carrier changes since the link was created.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_carrier_changes_total", l->carrier_changes, "device", l->name_utf8, NULL);
        family(f, "linkprobe_link_mtu_bytes", "gauge", "The link's MTU.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_mtu_bytes", l->mtu, "device", l->name_utf8, NULL);
        family(f, "linkprobe_link_speed_bytes", "gauge",
               "Negotiated speed in bytes per second; 0 when the kernel does not know.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_speed_bytes", l->derived.speed_mbps * 125000.0, "device", l->name_utf8, NULL);
        /* Best against active: both ends' word (derive-link.c, link-capability.c), beside the speed it is compared with. */
        family(f, "linkprobe_link_best_common_speed_bytes", "gauge",
               "The fastest speed both ends support (this end's link modes, the partner's advertisement), bytes "
               "per second; 0 when unknown.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_best_common_speed_bytes", l->derived.capability.best_common_mbps * 125000.0,
                       "device", l->name_utf8, NULL);
        family(f, "linkprobe_link_degraded", "gauge", "1 when the link trained below the fastest speed both ends support.");
        TABLE_FOREACH(l, &m->links->table)
                sample(f, "linkprobe_link_degraded", l->derived.health_state.degraded, "device", l->name_utf8, NULL);
        family(f, "linkprobe_link_address_info", "gauge", "An address on a link and its class (always 1).");
        TABLE_FOREACH(l, &m->links->table)
                for (size_t i = 0; i < l->addrs.n_addresses; i++) {
                        const LinkAddress *a = &l->addrs.addresses[i];
                        char prefix[8];
                        snprintf(prefix, sizeof(prefix), "%u", a->prefixlen);
                        sample(f, "linkprobe_link_address_info", 1, "device", l->name_utf8, "address", a->text,
                               "prefix_length", prefix, "scope", a->scope_text, "class",
                               address_class_to_string(a->class), NULL);
                }
}

/* The switch port at the far end of each link, as LLDP names it: joins linkprobe_link_info by device. */
static void render_switches(const MetricsSources *m, FILE *f) {
        const Switch *sw;

        family(f, "linkprobe_link_switch_info", "gauge",
               "The switch and its port at the far end of a link, from LLDP (always 1).");
        if (!m->switches)
                return;
        TABLE_FOREACH(sw, &m->switches->table)
                for (size_t i = 0; i < sw->n_ports; i++) {
                        _cleanup_(freep) char *label = NULL;
                        const Link *l;
                        int ifindex;

                        if (sd_bus_path_decode(sw->ports[i].local_path, LINK_PATH_PREFIX, &label) <= 0 ||
                            parse_int(label, &ifindex) < 0 || !(l = link_get(m->links, ifindex)))
                                continue;
                        sample(f, "linkprobe_link_switch_info", 1, "device", l->name_utf8, "chassis_id",
                               strempty(sw->chassis_id), "port_id", sw->ports[i].port_id, "switch_name",
                               strempty(sw->name), NULL);
                }
}

/* Labels as node_exporter's infiniband collector has them (device = the HCA, port), so they join. */
static void render_rdma(const MetricsSources *m, FILE *f) {
        RdmaPort *p;

        if (table_size(&m->rdma->ports) == 0)
                return;
        family(f, "linkprobe_rdma_port_info", "gauge", "An RDMA port and what it is (always 1).");
        TABLE_FOREACH(p, &m->rdma->ports) {
                char port[16], guid[RDMA_GUID_STRING_MAX];
                snprintf(port, sizeof(port), "%u", p->number);
                sample(f, "linkprobe_rdma_port_info", 1, "device", p->device, "port", port, "transport",
                       rdma_transport_to_bus(p->transport), "link_layer", rdma_link_layer_to_bus(p->status.link_layer),
                       "width", rdma_width_to_bus(p->status.rate.width), "speed", rdma_speed_to_bus(p->status.rate.speed),
                       "node_guid", rdma_format_guid(p->node_guid, guid), "netdev",
                       p->netdevs && p->netdevs[0] ? p->netdevs[0] : "", NULL);
        }
        family(f, "linkprobe_rdma_port_active", "gauge", "1 when the port's state is active.");
        TABLE_FOREACH(p, &m->rdma->ports) {
                char port[16];
                snprintf(port, sizeof(port), "%u", p->number);
                sample(f, "linkprobe_rdma_port_active", p->status.state == RDMA_PORT_STATE_ACTIVE, "device", p->device,
                       "port", port, NULL);
        }
        family(f, "linkprobe_rdma_port_rate_bytes", "gauge", "The port's rate in bytes per second; 0 when unknown.");
        TABLE_FOREACH(p, &m->rdma->ports) {
                char port[16];
                snprintf(port, sizeof(port), "%u", p->number);
                sample(f, "linkprobe_rdma_port_rate_bytes", rdma_rate_gbps(&p->status.rate) * 1.25e8, "device",
                       p->device, "port", port, NULL);
        }
}

/* Every hop of the Thunderbolt tree that is a link (routers below the host, peers). The sysname is the
 * key ("0-301"); rates are per direction, rx towards the device. */
static void render_thunderbolt(const MetricsSources *m, FILE *f) {
        TbtObject *o;

        if (!tbt_any_published(m->thunderbolt))
                return;

        family(f, "linkprobe_thunderbolt_device_info", "gauge",
               "A Thunderbolt/USB4 domain, router, peer host or retimer (always 1).");
        TABLE_FOREACH(o, &m->thunderbolt->objects) {
                if (!o->published)
                        continue;
                TbtDevice *d = o->device;
                sample(f, "linkprobe_thunderbolt_device_info", 1, "sysname", o->sysname_utf8, "type",
                       tbt_node_type_to_string(o->type), "name", d ? strempty(d->device_name) : "", "vendor",
                       d ? strempty(d->vendor_name) : "", "unique_id", d ? strempty(d->unique_id) : "", "link_class",
                       o->has_link ? tbt_link_class_to_string(o->link_class) : "", NULL);
        }

        static const struct {
                const char *name, *help;
                size_t offset;
        } rates[] = {
                { "linkprobe_thunderbolt_link_rx_bytes", "Negotiated rate of the hop towards the device, bytes per second.",
                  offsetof(TbtObject, rx_gbps) },
                { "linkprobe_thunderbolt_link_tx_bytes", "Negotiated rate of the hop towards the host, bytes per second.",
                  offsetof(TbtObject, tx_gbps) },
                { "linkprobe_thunderbolt_path_rx_bytes", "The slowest hop from the host towards the device, bytes per second.",
                  offsetof(TbtObject, path_rx_gbps) },
                { "linkprobe_thunderbolt_path_tx_bytes", "The slowest hop towards the host, bytes per second.",
                  offsetof(TbtObject, path_tx_gbps) },
        };
        for (size_t i = 0; i < ELEMENTSOF(rates); i++) {
                family(f, rates[i].name, "gauge", rates[i].help);
                TABLE_FOREACH(o, &m->thunderbolt->objects) {
                        if (!o->published || !o->has_link)
                                continue;
                        unsigned gbps = *(const unsigned *) (const void *) ((const uint8_t *) o + rates[i].offset);
                        sample(f, rates[i].name, gbps * 1.25e8, "sysname", o->sysname_utf8, NULL);
                }
        }
        family(f, "linkprobe_thunderbolt_link_degraded", "gauge",
               "1 when both ends could do more than the link negotiated.");
        TABLE_FOREACH(o, &m->thunderbolt->objects)
                if (o->published && o->has_link)
                        sample(f, "linkprobe_thunderbolt_link_degraded", o->degraded, "sysname", o->sysname_utf8, NULL);
}

/* One series per measured path, labelled with the peer, the transport and the local side, so "the
 * slowest edge of the cluster" is one PromQL min() away. */
static void render_peers(const MetricsSources *m, FILE *f) {
        static const struct {
                const char *name, *type, *help;
        } families[] = {
                { "linkprobe_peer_upload_bytes", "gauge", "Measured goodput to the peer, bytes per second." },
                { "linkprobe_peer_download_bytes", "gauge", "Measured goodput from the peer, bytes per second." },
                { "linkprobe_peer_rtt_seconds", "gauge", "Median round-trip time to the peer." },
                { "linkprobe_peer_jitter_seconds", "gauge", "Mean absolute difference of consecutive RTT samples." },
                { "linkprobe_peer_measured_timestamp_seconds", "gauge", "When the path was last measured (Unix time)." },
                { "linkprobe_peer_stale", "gauge", "1 when the last measurement is older than its TTL." },
                { "linkprobe_peer_cross_traffic_bytes", "gauge",
                  "Other traffic seen on the interface during the last measurement, bytes per second (0 when undisturbed)." },
        };
        Peer *p;
        bool any = false;

        TABLE_FOREACH(p, &m->peers->paths)
                any |= p->m.measured_at > 0;
        if (!any)
                return;

        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                family(f, families[i].name, families[i].type, families[i].help);
                TABLE_FOREACH(p, &m->peers->paths) {
                        if (p->m.measured_at == 0)
                                continue;
                        double v[] = {
                                p->m.upload_gbps * 1.25e8,
                                p->m.download_gbps * 1.25e8,
                                p->m.rtt_usec / 1e6,
                                p->m.jitter_usec / 1e6,
                                (double) p->m.measured_at / 1e6,
                                p->derived.stale,
                                p->m.cross_traffic_gbps * 1.25e8,
                        };
                        _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(families), "one value per family");
                        sample(f, families[i].name, v[i], "peer", strempty(p->peer_address), "path", p->key, "transport",
                               peer_transport_to_string(p->transport), "source", strempty(p->m.source_interface), NULL);
                }
        }
}

/* Labels that join with DCGM's (UUID, pci_bus_id; gpu = our index; DCGM's camelCase modelName is
 * spelled model, as Prometheus' naming rules and promtool want). Throughput is
 * in FLOP/s and bytes/s; FP16 of a device without it is left out rather than reported as 0. */
static void render_gpus(const MetricsSources *m, FILE *f) {
        Gpu *g;

        if (table_size(&m->gpus->table) == 0)
                return;
        family(f, "linkprobe_gpu_info", "gauge", "An OpenCL device and what it is (always 1).");
        TABLE_FOREACH(g, &m->gpus->table) {
                char index[16];
                snprintf(index, sizeof(index), "%u", g->number);
                sample(f, "linkprobe_gpu_info", 1, "gpu", index, "UUID", strempty(g->inventory.uuid), "pci_bus_id",
                       strempty(g->inventory.pci_bus_id), "model", strempty(g->inventory.name), "vendor",
                       strempty(g->inventory.vendor), "type", strempty(g->inventory.device_type), "driver_version",
                       strempty(g->inventory.driver_version), "probe_state", gpu_probe_state_to_string(g->probe_state),
                       NULL);
        }
        family(f, "linkprobe_gpu_memory_bytes", "gauge", "Global memory of the device.");
        TABLE_FOREACH(g, &m->gpus->table) {
                char index[16];
                snprintf(index, sizeof(index), "%u", g->number);
                sample(f, "linkprobe_gpu_memory_bytes", (double) g->inventory.global_memory_bytes, "gpu", index,
                       "UUID", strempty(g->inventory.uuid), NULL);
        }

        static const struct {
                const char *name, *help;
        } measured[] = {
                { "linkprobe_gpu_memory_bandwidth_bytes", "Measured memory read bandwidth, bytes per second." },
                { "linkprobe_gpu_fp32_flops", "Measured FP32 throughput (fused multiply-add counted as two)." },
                { "linkprobe_gpu_fp16_flops", "Measured FP16 throughput; absent without cl_khr_fp16." },
                { "linkprobe_gpu_measured_timestamp_seconds", "When the device was last measured (Unix time)." },
                { "linkprobe_gpu_host_to_device_bytes", "Measured copy rate from host memory, bytes per second." },
                { "linkprobe_gpu_device_to_host_bytes", "Measured copy rate to host memory, bytes per second." },
        };
        for (size_t i = 0; i < ELEMENTSOF(measured); i++) {
                family(f, measured[i].name, "gauge", measured[i].help);
                TABLE_FOREACH(g, &m->gpus->table) {
                        const GpuMeasurement *gm = &g->measurement;
                        double v[] = {
                                gm->memory_bandwidth_gb_s * 1e9,
                                gm->fp32_gflops * 1e9,
                                gm->fp16_gflops * 1e9,
                                (double) gm->measured_at_usec / 1e6,
                                gm->host_to_device_gb_s * 1e9,
                                gm->device_to_host_gb_s * 1e9,
                        };
                        _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(measured), "one value per family");
                        char index[16];
                        if (gm->measured_at_usec == 0 || v[i] != v[i]) /* never measured, or NaN */
                                continue;
                        if (i >= 4 && v[i] == 0) /* a probe without the transfer test */
                                continue;
                        snprintf(index, sizeof(index), "%u", g->number);
                        sample(f, measured[i].name, v[i], "gpu", index, "UUID", strempty(g->inventory.uuid), NULL);
                }
        }
}

/* Published PCI functions, labelled pci_address as node_exporter's and DCGM's PCI series are keyed by
 * bus address, so a degraded link joins with the device's other metrics. */
static void render_pci(const MetricsSources *m, FILE *f) {
        static const struct {
                const char *name, *help;
        } families[] = {
                { "linkprobe_pci_link_speed_gts", "Current PCIe link speed per lane, GT/s; 0 unknown." },
                { "linkprobe_pci_link_max_speed_gts", "Maximum PCIe link speed of this function, GT/s; 0 unknown." },
                { "linkprobe_pci_link_width", "Current PCIe link width, lanes; 0 unknown." },
                { "linkprobe_pci_link_max_width", "Maximum PCIe link width of this function, lanes; 0 unknown." },
                { "linkprobe_pci_link_degraded", "1 when the link trained below what both ends support, not for power saving (Degraded)." },
                { "linkprobe_pci_path_bytes", "Narrowest PCIe link up to the root complex, bytes per second; 0 unknown." },
                { "linkprobe_pci_numa_node", "The function's NUMA node; -1 none or unknown." },
        };
        PciObject *o;

        if (!m->pci || !pci_any_published(m->pci))
                return;

        family(f, "linkprobe_pci_device_info", "gauge", "A published PCI function and what it is (always 1).");
        TABLE_FOREACH(o, &m->pci->functions) {
                const PciDevice *d = o->device;
                char vendor[8] = "", device[8] = "", cls[12] = "";
                if (!o->published)
                        continue;
                if (d->has_vendor_id)
                        snprintf(vendor, sizeof(vendor), "0x%04x", d->vendor_id);
                if (d->has_device_id)
                        snprintf(device, sizeof(device), "0x%04x", d->device_id);
                if (d->has_class)
                        snprintf(cls, sizeof(cls), "0x%06x", d->class_code);
                sample(f, "linkprobe_pci_device_info", 1, "pci_address", o->address, "vendor_id", vendor, "device_id",
                       device, "class", cls, "driver", strempty(d->driver), "name", strempty(o->name), "parent",
                       strempty(d->parent), "port_type", strempty(pci_port_type_to_string(o->derived.type)), NULL);
        }
        for (size_t i = 0; i < ELEMENTSOF(families); i++) {
                family(f, families[i].name, "gauge", families[i].help);
                TABLE_FOREACH(o, &m->pci->functions) {
                        const PciDevice *d = o->device;
                        double v[] = {
                                d->current.gts, d->max.gts, d->current.width, d->max.width, o->derived.health_state.degraded,
                                o->derived.path_gbps * 1.25e8, d->numa_node,
                        };
                        _Static_assert(ELEMENTSOF(v) == ELEMENTSOF(families), "one value per family");
                        if (o->published)
                                sample(f, families[i].name, v[i], "pci_address", o->address, NULL);
                }
        }
}

int metrics_render(const MetricsSources *m, FILE *f) {
        render_daemon(m, f);
        render_node(m, f);
        render_links(m, f);
        render_switches(m, f);
        render_thunderbolt(m, f);
        render_rdma(m, f);
        metrics_render_rdma_remote(m, f);
        metrics_render_switch_links(m, f);
        render_gpus(m, f);
        render_pci(m, f);
        render_peers(m, f);
        metrics_render_health(m, f);
        metrics_render_fabric(m->node, m->neighbors, f);
        return ferror(f) ? -EIO : 0;
}

int metrics_render_string(const MetricsSources *m, char **ret, size_t *ret_size) {
        char *buf = NULL;
        size_t size = 0;
        FILE *f = open_memstream(&buf, &size);
        int r;

        if (!f)
                return -ENOMEM;
        r = metrics_render(m, f);
        if (fclose(f) != 0 && r >= 0)
                r = -ENOMEM;
        if (r < 0) {
                free(buf);
                return r;
        }
        *ret = buf;
        if (ret_size)
                *ret_size = size;
        return 0;
}

/* FNV-1a: only to tell "the same text as last time", not a security property. */
static uint64_t hash_bytes(const char *p, size_t n) {
        uint64_t h = UINT64_C(1469598103934665603);
        for (size_t i = 0; i < n; i++) {
                h ^= (uint8_t) p[i];
                h *= UINT64_C(1099511628211);
        }
        return h;
}

static int textfile_write(MetricsExporter *e) {
        _cleanup_(freep) char *text = NULL;
        size_t size;
        int r;

        r = e->render(e->userdata, &text, &size);
        if (r < 0)
                return log_warning_errno(r, "Failed to render metrics: %m");
        uint64_t h = hash_bytes(text, size);
        if (e->written && h == e->written_hash)
                return 0;

        /* Readable by node_exporter, whichever user it runs as. */
        r = write_file_atomic_at(e->textfile_dir_fd, TEXTFILE_NAME, text, size, 0644);
        if (r < 0)
                return log_warning_errno(r, "Failed to write the metrics textfile: %m");
        e->written = true;
        e->written_hash = h;
        return 1;
}

static int on_textfile_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void) textfile_write(userdata);
        return 0;
}

void metrics_exporter_changed(MetricsExporter *e) {
        if (!e || !e->textfile_timer)
                return;
        int enabled = SD_EVENT_OFF;
        (void) sd_event_source_get_enabled(e->textfile_timer, &enabled);
        if (enabled != SD_EVENT_OFF)
                return; /* a write is already due */
        /* A burst of changes becomes one write at the end of the window. */
        (void) sd_event_source_set_time_relative(e->textfile_timer, e->config->metrics_textfile_interval_usec);
        (void) sd_event_source_set_enabled(e->textfile_timer, SD_EVENT_ONESHOT);
}

MetricsExporter *metrics_exporter_free(MetricsExporter *e) {
        if (!e)
                return NULL;
        sd_event_source_disable_unref(e->textfile_timer);
        metrics_http_free(e->http);
        safe_close(e->textfile_dir_fd);
        return mfree(e);
}

int metrics_exporter_start(sd_event *event, const Config *config, metrics_render_t render, void *userdata,
                           MetricsExporter **ret) {
        MetricsExporter *e;
        int r;

        *ret = NULL;
        if (!config->metrics_textfile_directory && !config->metrics_listen)
                return 0;

        e = new0(MetricsExporter, 1);
        if (!e)
                return log_oom();
        *e = (MetricsExporter) {
                .event = event,
                .config = config,
                .render = render,
                .userdata = userdata,
                .textfile_dir_fd = -EBADF,
        };
        *ret = e;

        if (config->metrics_textfile_directory) {
                e->textfile_dir_fd = open(config->metrics_textfile_directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
                if (e->textfile_dir_fd < 0)
                        log_warning_errno(errno, "Cannot open the metrics textfile directory %s, not writing it: %m",
                                          config->metrics_textfile_directory);
                else {
                        r = sd_event_add_time_relative(event, &e->textfile_timer, CLOCK_MONOTONIC, 0, 0,
                                                       on_textfile_timer, e);
                        if (r < 0)
                                return log_error_errno(r, "Failed to set up the metrics textfile timer: %m");
                        /* Written once at start, then whenever what we publish changed. */
                        (void) textfile_write(e);
                        (void) sd_event_source_set_enabled(e->textfile_timer, SD_EVENT_OFF);
                }
        }
        if (config->metrics_listen) {
                r = metrics_http_start(event, config->metrics_listen, render, userdata, &e->http);
                if (r < 0)
                        log_warning_errno(r, "Not serving /metrics on %s: %m", config->metrics_listen);
        }
        return 0;
}
