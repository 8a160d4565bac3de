/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "memory.h"
#include "shared/bus-names.h"
#include "shared/fileio.h"
#include "shared/log.h"
#include "shared/parse-util.h"
#include "shared/string-util.h"

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

static const BusObjectType memory_bus_type = { .interface = MEMORY_INTERFACE };

void memory_refresh(Memory *mem) {
        char buf[8192];
        uint64_t total, available;
        int r;

        r = read_file_head("/proc/meminfo", buf, sizeof(buf));
        if (r >= 0)
                r = meminfo_parse(buf, &total, &available);
        if (r < 0) {
                log_warning_errno(r, "Failed to read /proc/meminfo: %m");
                return;
        }
        bus_object_set(&mem->bus, mem->total_bytes, total, "TotalBytes");
        mem->available_bytes = available;
        if (memory_change_is_material(mem->published_available, available, total, mem->change_percent)) {
                mem->published_available = available;
                bus_object_changed(&mem->bus, "AvailableBytes");
        }
}

static int on_memory_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        Memory *mem = userdata;
        int r;

        memory_refresh(mem);
        r = sd_event_source_set_time_relative(s, mem->poll_usec);
        if (r < 0)
                return log_error_errno(r, "Failed to rearm the memory timer: %m");
        return sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int memory_start(Memory *mem, BusPublisher *p, sd_event *event, uint64_t poll_usec, unsigned change_percent) {
        int r;

        mem->poll_usec = poll_usec;
        mem->change_percent = change_percent;
        r = bus_object_init_root(&mem->bus, p, &memory_bus_type);
        if (r < 0)
                return log_oom();
        memory_refresh(mem);
        mem->published_available = mem->available_bytes;
        if (poll_usec == 0)
                return 0;

        /* /proc/meminfo announces nothing, so this is the one thing we poll; a generous accuracy
         * lets the kernel batch the wakeup with others. */
        r = sd_event_add_time_relative(event, &mem->timer, CLOCK_MONOTONIC, poll_usec,
                                       MIN(poll_usec / 4, 5 * USEC_PER_SEC), on_memory_timer, mem);
        if (r < 0)
                return log_error_errno(r, "Failed to arm the memory timer: %m");
        return 0;
}

void memory_done(Memory *mem) {
        mem->timer = sd_event_source_disable_unref(mem->timer);
        bus_object_done(&mem->bus);
}
