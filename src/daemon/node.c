/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/utsname.h>
#include <systemd/sd-id128.h>

#include "node.h"
#include "shared/bus-names.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"
#include "shared/time-util.h"

char *cpuinfo_model(const char *text) {
        /* x86 says "model name"; arm64 kernels print no model, only "CPU implementer/part"; other
         * architectures use "cpu model", "Processor", "cpu" or "uarch". First match wins. */
        static const char *const keys[] = { "model name", "Model", "cpu model", "Processor", "uarch", "cpu" };

        for (size_t k = 0; k < ELEMENTSOF(keys); k++) {
                size_t len = strlen(keys[k]);
                for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                        if (!strneq(line, keys[k], len))
                                continue;
                        const char *p = line + len;
                        p += strspn(p, " \t");
                        if (*p != ':')
                                continue;
                        p++;
                        p += strspn(p, " \t");
                        size_t n = strcspn(p, "\n");
                        while (n > 0 && (p[n - 1] == ' ' || p[n - 1] == '\t'))
                                n--;
                        if (n == 0)
                                continue;
                        return strndup(p, n);
                }
        }
        return NULL;
}

static int id128_string(int (*get)(sd_id128_t *), char **ret) {
        sd_id128_t id;
        char buf[SD_ID128_STRING_MAX];
        int r = get(&id);
        if (r < 0)
                return r;
        *ret = strdup(sd_id128_to_string(id, buf));
        return *ret ? 0 : -ENOMEM;
}

static void node_read_hostname(Node *n) {
        char buf[256];
        _cleanup_(freep) char *escaped = NULL;

        if (gethostname(buf, sizeof(buf)) < 0) {
                log_warning_errno(errno, "Failed to read the hostname: %m");
                return;
        }
        buf[sizeof(buf) - 1] = '\0';
        escaped = utf8_escape_invalid(buf);
        if (!escaped) {
                log_oom();
                return;
        }
        (void) bus_object_set_string(&n->bus, &n->hostname, escaped, "Hostname");
}

static int on_hostname_changed(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Node *n = userdata;
        char buf[256];

        /* The kernel signals POLLPRI on a sysctl change; re-reading rearms the notification. */
        (void) lseek(fd, 0, SEEK_SET);
        (void) read(fd, buf, sizeof(buf));
        log_debug("Hostname changed.");
        node_read_hostname(n);
        return 0;
}

static bool cpulists_equal(const char *a, const char *b) {
        return streq(strempty(a), strempty(b));
}

static bool topology_equal(const SysfsCpuTopology *a, const SysfsCpuTopology *b) {
        if (a->n_packages != b->n_packages || a->n_numa_nodes != b->n_numa_nodes)
                return false;
        for (size_t i = 0; i < a->n_packages; i++) {
                const SysfsCpuPackage *x = &a->packages[i], *y = &b->packages[i];
                if (x->id != y->id || x->cores != y->cores || !cpulists_equal(x->cpus, y->cpus) ||
                    x->n_numa_nodes != y->n_numa_nodes ||
                    memcmp(x->numa_nodes, y->numa_nodes, x->n_numa_nodes * sizeof(uint32_t)) != 0)
                        return false;
        }
        for (size_t i = 0; i < a->n_numa_nodes; i++)
                if (a->numa_nodes[i].id != b->numa_nodes[i].id || !cpulists_equal(a->numa_nodes[i].cpus, b->numa_nodes[i].cpus))
                        return false;
        return true;
}

/* The packages and NUMA nodes: what sysfs says now; a tree we cannot read publishes none (said once
 * per change of mind, at notice level: the node's picture then draws no packages). */
static void node_read_topology(Node *n) {
        SysfsCpuTopology t = {};
        int r;

        r = sysfs_cpu_topology_read(n->sysfs_fd, &t);
        if (r == -ENOENT)
                /* No devices/system/cpu: a container's or a test's sysfs, nothing to report. */
                log_debug_errno(r, "sysfs lists no CPUs, publishing no packages: %m");
        else if (r < 0 && !n->topology_failed)
                log_notice_errno(r, "Cannot read the CPU packages and NUMA nodes from sysfs, publishing none: %m");
        n->topology_failed = r < 0 && r != -ENOENT;
        if (topology_equal(&t, &n->topology)) {
                sysfs_cpu_topology_done(&t);
                return;
        }
        sysfs_cpu_topology_done(&n->topology);
        n->topology = t;
        bus_object_changed(&n->bus, "Packages");
        bus_object_changed(&n->bus, "NumaNodes");
}

const BusObjectType node_bus_type = { .interface = NODE_INTERFACE };

/* NodeId and this boot as our neighbours know them. */
static void node_read_identity(Node *n) {
        char text[SD_ID128_STRING_MAX];
        sd_id128_t id;
        int r;

        r = sd_id128_get_machine_app_specific(LINKPROBE_APP_ID, &id);
        if (r < 0)
                log_notice_errno(r, "No machine ID, so no NodeId: neighbours cannot name this node: %m");
        else {
                memcpy(n->node_id_bytes, id.bytes, NODE_ID_SIZE);
                n->node_id = strdup(sd_id128_to_string(id, text));
        }
        if (sd_id128_get_boot_app_specific(LINKPROBE_APP_ID, &id) >= 0)
                memcpy(n->boot_id_bytes, id.bytes, NODE_ID_SIZE);
        /* The wall clock when CLOCK_BOOTTIME was 0: when this boot began, give or take clock steps. */
        uint64_t now = now_usec(CLOCK_REALTIME), up = now_usec(CLOCK_BOOTTIME);
        n->booted_at = now > up ? now - up : 0;
}

int node_start(Node *n, BusPublisher *p, sd_event *event, int sysfs_fd) {
        struct utsname u;
        char cpuinfo[65536];
        int r;

        n->hostname_fd = -EBADF;
        n->sysfs_fd = sysfs_fd;
        r = bus_object_init_root(&n->bus, p, &node_bus_type);
        if (r < 0)
                return log_oom();
        node_read_hostname(n);

        node_read_identity(n);
        r = id128_string(sd_id128_get_machine, &n->machine_id);
        if (r < 0)
                log_notice_errno(r, "No machine ID (/etc/machine-id): %m");
        r = id128_string(sd_id128_get_boot, &n->boot_id);
        if (r < 0)
                log_notice_errno(r, "No boot ID: %m");

        if (uname(&u) >= 0) {
                n->kernel_release = strdup(u.release);
                n->architecture = strdup(u.machine);
                if (!n->kernel_release || !n->architecture)
                        return log_oom();
        }

        r = read_file_head("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo));
        if (r >= 0)
                n->cpu_model = cpuinfo_model(cpuinfo);
        else
                log_debug_errno(r, "Failed to read /proc/cpuinfo: %m");

        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n->cpu_count = cpus > 0 ? (uint32_t) cpus : 0;
        node_read_topology(n);

        n->hostname_fd = open("/proc/sys/kernel/hostname", O_RDONLY | O_CLOEXEC);
        if (n->hostname_fd < 0)
                return log_debug_errno(errno, "Cannot watch the hostname, it will be read on Refresh(): %m"), 0;
        r = sd_event_add_io(event, &n->hostname_source, n->hostname_fd, EPOLLPRI, on_hostname_changed, n);
        if (r < 0)
                log_debug_errno(r, "Cannot watch the hostname: %m");
        return 0;
}

void node_refresh(Node *n) {
        node_read_hostname(n);
        node_read_topology(n);
}

void node_done(Node *n) {
        n->hostname_source = sd_event_source_disable_unref(n->hostname_source);
        n->hostname_fd = safe_close(n->hostname_fd);
        free(n->hostname);
        free(n->machine_id);
        free(n->boot_id);
        free(n->kernel_release);
        free(n->architecture);
        free(n->cpu_model);
        free(n->node_id);
        sysfs_cpu_topology_done(&n->topology);
        strv_free(n->derived.thunderbolt_host_uuids);
        strv_free(n->derived.rdma_node_guids);
        strv_free(n->derived.hardware_addresses);
        bus_object_done(&n->bus);
        *n = (Node) { .hostname_fd = -EBADF, .sysfs_fd = -EBADF };
}

