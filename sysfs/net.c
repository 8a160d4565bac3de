/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <fcntl.h>

#include "net.h"

bool sysfs_net_name_is_valid(const char *ifname) {
        /* The kernel refuses "/", ":" and whitespace (dev_valid_name); "." and ".." would walk. */
        return !isempty(ifname) && strlen(ifname) < 256 && !strchr(ifname, '/') && !streq(ifname, ".") &&
               !streq(ifname, "..");
}

void sysfs_net_facts_done(SysfsNetFacts *f) {
        free(f->duplex);
        free(f->devtype);
        free(f->driver);
        free(f->device_path);
        free(f->device_subsystem);
        *f = (SysfsNetFacts) { .speed_mbps = -1 };
}

static void read_device(int root_fd, const char *dir, SysfsNetFacts *f) {
        _cleanup_(freep) char *device_dir = NULL;
        _cleanup_(strv_freep) char **env = NULL;
        int r;

        r = sysfs_read_uevent(root_fd, dir, &env);
        if (r >= 0) {
                const char *devtype = sysfs_uevent_get(env, "DEVTYPE");
                if (!isempty(devtype))
                        f->devtype = strdup(devtype);
        }

        f->wireless = sysfs_exists(root_fd, dir, "phy80211") > 0 || sysfs_exists(root_fd, dir, "wireless") > 0;

        r = sysfs_resolve(root_fd, dir, "device", &f->device_path);
        if (r < 0)
                return; /* a virtual interface */

        if (sysfs_path_join(dir, "device", &device_dir) < 0)
                return;
        (void) sysfs_read_link_basename(root_fd, device_dir, "subsystem", &f->device_subsystem);
        if (sysfs_read_link_basename(root_fd, device_dir, "driver", &f->driver) < 0) {
                /* Some buses (and test beds) only name the driver in the device's uevent. */
                _cleanup_(strv_freep) char **denv = NULL;
                if (sysfs_read_uevent(root_fd, device_dir, &denv) >= 0) {
                        const char *driver = sysfs_uevent_get(denv, "DRIVER");
                        if (!isempty(driver))
                                f->driver = strdup(driver);
                }
        }
}

int sysfs_net_read(int root_fd, const char *ifname, int ifindex, SysfsNetWhat what, SysfsNetFacts *ret) {
        _cleanup_(freep) char *dir = NULL;
        SysfsNetFacts f = { .speed_mbps = -1 };
        int index, r;

        if (!sysfs_net_name_is_valid(ifname))
                return -EINVAL;
        r = sysfs_path_join("class/net", ifname, &dir);
        if (r < 0)
                return r;

        /* class/net/NAME is a symlink into devices/ (with ".."), resolved once: the attributes are then
         * read relative to the directory, one short lookup each (a third of start-up at 2001 links was
         * three full walks per link). */
        _cleanup_(closep) int dir_fd = sysfs_open(root_fd, dir, NULL, O_PATH | O_DIRECTORY);
        if (dir_fd < 0)
                return dir_fd;
        r = sysfs_read_int(dir_fd, NULL, "ifindex", &index);
        if (r < 0)
                return r;
        if (index != ifindex)
                return -ESTALE;

        if (what & SYSFS_NET_SPEED) {
                char duplex[16];
                if (sysfs_read_int(dir_fd, NULL, "speed", &f.speed_mbps) < 0 || f.speed_mbps < 0)
                        f.speed_mbps = -1;
                if (sysfs_read_buffer(dir_fd, NULL, "duplex", duplex, sizeof(duplex)) >= 0 &&
                    (streq(duplex, "full") || streq(duplex, "half")))
                        f.duplex = strdup(duplex);
        }

        if (what & SYSFS_NET_DEVICE)
                read_device(root_fd, dir, &f);

        *ret = f;
        return 0;
}
