/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes linkprobed.conf parsing: any file either loads into sane values or is refused, and never
 * crashes or leaks. */
#include <sys/mman.h>
#include <syslog.h>

#include "daemon/config.h"
#include "shared/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(closep) int fd = -EBADF;
        char path[64];
        Config c;

        if (size > 65536)
                return 0;
        log_set_max_level(LOG_EMERG);
        fd = memfd_create("linkprobed.conf", MFD_CLOEXEC);
        if (fd < 0 || write(fd, data, size) != (ssize_t) size)
                return 0;
        snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);

        config_init(&c);
        if (config_load(&c, path, true) >= 0) {
                if (c.memory_change_percent > 100 || (c.netlink_rcvbuf == 0) || c.udev_rcvbuf == 0)
                        abort();
                if (c.log_level < -1 || c.log_level > LOG_DEBUG)
                        abort();
        }
        config_done(&c);
        return 0;
}
