/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Fuzzes uevent parsing: every entry keeps its '=', lookups never read past an entry. */
#include "sysfs/sysfs.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        _cleanup_(strv_freep) char **env = NULL;
        _cleanup_(freep) char *buf = NULL;

        if (size > SYSFS_ATTR_MAX)
                return 0;
        buf = malloc(size + 1);
        if (!buf)
                return 0;
        memcpy(buf, data, size);
        buf[size] = '\0';
        if (sysfs_uevent_parse(buf, &env) < 0)
                return 0;
        STRV_FOREACH(e, env) {
                const char *eq = strchr(*e, '=');
                if (!eq || eq == *e)
                        abort();
                char key[64];
                size_t n = MIN((size_t) (eq - *e), sizeof(key) - 1);
                memcpy(key, *e, n);
                key[n] = '\0';
                if (n == (size_t) (eq - *e) && !sysfs_uevent_get(env, key))
                        abort();
        }
        (void) sysfs_uevent_get(env, "DEVTYPE");
        return 0;
}
