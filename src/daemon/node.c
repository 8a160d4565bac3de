/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>
#include <sys/epoll.h>
#include <sys/utsname.h>
#include <systemd/sd-id128.h>

#include "manager.h"
#include "node.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

/* /proc files are small; 64 KiB holds /proc/cpuinfo of a 64-core machine's first CPUs, which is all
 * cpuinfo_model() needs. */
static int read_proc_file(const char *path, char *buf, size_t size) {
        _cleanup_(closep) int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        ssize_t n;

        if (fd < 0)
                return -errno;
        /* Only the beginning is read when the file is larger: it is all the parsers need. */
        n = loop_read(fd, buf, size - 1);
        if (n < 0)
                return (int) n;
        buf[n] = '\0';
        return (int) n;
}

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

int meminfo_parse(const char *text, uint64_t *ret_total, uint64_t *ret_available) {
        uint64_t total = 0, available = 0, free_kb = 0;
        bool have_total = false, have_available = false;

        for (const char *line = text; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
                char key[32], unit[8] = "";
                unsigned long long v;
                int n = sscanf(line, "%31[^:]: %llu %7s", key, &v, unit);
                if (n < 2)
                        continue;
                if (n == 3 && !streq(unit, "kB"))
                        continue;
                if (v > UINT64_MAX / 1024)
                        return -ERANGE;
                if (streq(key, "MemTotal")) {
                        total = v * 1024;
                        have_total = true;
                } else if (streq(key, "MemAvailable")) {
                        available = v * 1024;
                        have_available = true;
                } else if (streq(key, "MemFree"))
                        free_kb = v * 1024;
        }
        if (!have_total)
                return -EBADMSG;
        /* Kernels before 3.14 have no MemAvailable; MemFree understates but is the honest fallback. */
        *ret_total = total;
        *ret_available = have_available ? available : free_kb;
        return 0;
}

bool memory_change_is_material(uint64_t published, uint64_t now, uint64_t total, unsigned percent) {
        uint64_t delta = published > now ? published - now : now - published;
        uint64_t threshold = total / 100 * percent;
        return delta > 0 && delta >= threshold;
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

static void node_read_hostname(Manager *m) {
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
        (void) bus_object_set_string(&m->node_object, &m->node.hostname, escaped, "Hostname");
}

static int on_hostname_changed(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        Manager *m = userdata;
        char buf[256];

        /* The kernel signals POLLPRI on a sysctl change; re-reading rearms the notification. */
        (void) lseek(fd, 0, SEEK_SET);
        (void) read(fd, buf, sizeof(buf));
        log_debug("Hostname changed.");
        node_read_hostname(m);
        return 0;
}

int node_start(Manager *m) {
        Node *n = &m->node;
        struct utsname u;
        char cpuinfo[65536];
        int r;

        n->hostname_fd = -EBADF;
        node_read_hostname(m);

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

        r = read_proc_file("/proc/cpuinfo", cpuinfo, sizeof(cpuinfo));
        if (r >= 0)
                n->cpu_model = cpuinfo_model(cpuinfo);
        else
                log_debug_errno(r, "Failed to read /proc/cpuinfo: %m");

        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        n->cpu_count = cpus > 0 ? (uint32_t) cpus : 0;

        n->hostname_fd = open("/proc/sys/kernel/hostname", O_RDONLY | O_CLOEXEC);
        if (n->hostname_fd < 0)
                return log_debug_errno(errno, "Cannot watch the hostname, it will be read on Refresh(): %m"), 0;
        r = sd_event_add_io(m->event, &n->hostname_source, n->hostname_fd, EPOLLPRI, on_hostname_changed, m);
        if (r < 0)
                log_debug_errno(r, "Cannot watch the hostname: %m");
        return 0;
}

void node_refresh(Manager *m) {
        node_read_hostname(m);
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
        *n = (Node) { .hostname_fd = -EBADF };
}

void memory_refresh(Manager *m) {
        Memory *mem = &m->memory;
        char buf[8192];
        uint64_t total, available;
        int r;

        r = read_proc_file("/proc/meminfo", buf, sizeof(buf));
        if (r >= 0)
                r = meminfo_parse(buf, &total, &available);
        if (r < 0) {
                log_warning_errno(r, "Failed to read /proc/meminfo: %m");
                return;
        }

        bus_object_set(&m->memory_object, mem->total_bytes, total, "TotalBytes");
        mem->available_bytes = available;
        if (memory_change_is_material(mem->published_available, available, total,
                                      m->config.memory_change_percent)) {
                mem->published_available = available;
                bus_object_changed(&m->memory_object, "AvailableBytes");
        }
}

static int on_memory_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Manager *m = userdata;
        int r;

        memory_refresh(m);
        r = sd_event_source_set_time_relative(s, m->config.memory_poll_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm the memory timer: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int memory_start(Manager *m) {
        Memory *mem = &m->memory;
        int r;

        memory_refresh(m);
        mem->published_available = mem->available_bytes;

        if (m->config.memory_poll_usec == 0)
                return 0;
        /* /proc/meminfo announces nothing, so this is the one thing we poll; a generous accuracy
         * lets the kernel batch the wakeup with others. */
        r = sd_event_add_time_relative(m->event, &mem->timer, CLOCK_MONOTONIC, m->config.memory_poll_usec,
                                       MIN(m->config.memory_poll_usec / 4, 5 * USEC_PER_SEC),
                                       on_memory_timer, m);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the memory timer: %m");
        return 0;
}

void memory_done(Memory *mem) {
        mem->timer = sd_event_source_disable_unref(mem->timer);
}
