/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* sysfs.c — the fake's kernel: what a device and its ports report, read from $SYSFS_PATH */
#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>

#include "fake-ibverbs.h"

/*
 * The real kernel answers ibv_query_port() and ibv_query_gid() from the same state it prints in
 * class/infiniband; here those files are the state. This is deliberately its own small reader, not the
 * daemon's sysfs/infiniband.c: it plays the kernel the daemon's reader is tested against, so a misread
 * there shows up as a disagreement between verbs and sysfs instead of being mirrored.
 */

const char *fake_sysfs_root(void) {
        const char *p = getenv("SYSFS_PATH");
        return isempty(p) ? "/sys" : p;
}

static int read_attr(const char *device, const char *attr, char *buf, size_t size) {
        char path[4096];
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "%s/class/infiniband/%s/%s", fake_sysfs_root(), device, attr);
        fd = open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0)
                return -errno;
        n = read(fd, buf, size - 1);
        close(fd);
        if (n < 0)
                return -errno;
        buf[n] = '\0';
        buf[strcspn(buf, "\n")] = '\0';
        return 0;
}

static uint64_t read_number(const char *device, const char *attr, int base, uint64_t fallback) {
        char buf[64], *end;
        unsigned long long v;

        if (read_attr(device, attr, buf, sizeof(buf)) < 0)
                return fallback;
        errno = 0;
        v = strtoull(buf, &end, base);
        /* "4: ACTIVE", "5: LinkUp", "1: CA": the number before the colon. */
        if (errno != 0 || end == buf || (*end != '\0' && *end != ':'))
                return fallback;
        return v;
}

static uint64_t read_guid(const char *device, const char *attr) {
        char buf[64];
        unsigned a, b, c, d;

        if (read_attr(device, attr, buf, sizeof(buf)) < 0 || sscanf(buf, "%4x:%4x:%4x:%4x", &a, &b, &c, &d) != 4)
                return 0;
        return (uint64_t) a << 48 | (uint64_t) b << 32 | (uint64_t) c << 16 | d;
}

static int compare_names(const void *a, const void *b) {
        return strcmp(a, b);
}

int fake_sysfs_list(char (**ret)[64], size_t *ret_n) {
        char path[4096], (*names)[64] = NULL;
        size_t n = 0;
        struct dirent *de;
        DIR *d;

        snprintf(path, sizeof(path), "%s/class/infiniband", fake_sysfs_root());
        d = opendir(path);
        if (!d)
                return errno == ENOENT ? -ENOSYS : -errno;
        while ((de = readdir(d))) {
                if (de->d_name[0] == '.' || strlen(de->d_name) >= 64)
                        continue;
                void *grown = reallocarray(names, n + 1, sizeof(*names));
                if (!grown) {
                        free(names);
                        closedir(d);
                        return -ENOMEM;
                }
                names = grown;
                snprintf(names[n++], 64, "%s", de->d_name);
        }
        closedir(d);
        if (n > 0)
                qsort(names, n, sizeof(*names), compare_names);
        *ret = names;
        *ret_n = n;
        return 0;
}

bool fake_sysfs_device_exists(const char *name) {
        char path[4096];

        snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports", fake_sysfs_root(), name);
        return access(path, F_OK) == 0;
}

int fake_sysfs_read_port_state(const char *name, unsigned port, enum ibv_port_state *ret) {
        char attr[64];

        snprintf(attr, sizeof(attr), "ports/%u/state", port);
        *ret = (enum ibv_port_state) read_number(name, attr, 10, IBV_PORT_NOP);
        return fake_sysfs_device_exists(name) ? 0 : -ENODEV;
}

int fake_sysfs_read_gid(const char *name, unsigned port, unsigned index, uint8_t ret[16]) {
        char attr[64], buf[64];
        int r;

        snprintf(attr, sizeof(attr), "ports/%u/gids/%u", port, index);
        r = read_attr(name, attr, buf, sizeof(buf));
        if (r < 0)
                return r;
        return inet_pton(AF_INET6, buf, ret) == 1 ? 0 : -EINVAL;
}

/* "200 Gb/sec (4X HDR)", or "10 Gb/sec (4X)" before the kernel named speeds: the IB PortInfo bits. */
static void parse_rate(const char *text, struct ibv_port_attr *a) {
        /* The per-lane figure the kernel prints for each speed (ib_rate_to_mult() and friends). */
        static const struct { const char *name; uint8_t bits; double lane_gbps; } speeds[] = {
                { "SDR", 1, 2.5 }, { "DDR", 2, 5 }, { "QDR", 4, 10 }, { "FDR10", 8, 10 },
                { "FDR", 16, 14 }, { "EDR", 32, 25 }, { "HDR", 64, 50 }, { "NDR", 128, 100 },
        };
        static const struct { unsigned lanes; uint8_t bits; } widths[] = {
                { 1, 1 }, { 2, 16 }, { 4, 2 }, { 8, 4 }, { 12, 8 },
        };
        char speed[16] = "";
        unsigned lanes = 0;
        double gbps = 0;

        if (sscanf(text, "%lf Gb/sec (%uX %15[A-Z0-9])", &gbps, &lanes, speed) < 2 || lanes == 0)
                return;
        for (size_t i = 0; i < ELEMENTSOF(widths); i++)
                if (widths[i].lanes == lanes)
                        a->active_width = widths[i].bits;
        for (size_t i = 0; i < ELEMENTSOF(speeds) && a->active_speed == 0; i++) {
                if (!isempty(speed) ? streq(speed, speeds[i].name) :
                                      speeds[i].bits != 8 && gbps / lanes > speeds[i].lane_gbps - 0.01 &&
                                              gbps / lanes < speeds[i].lane_gbps + 0.01)
                        a->active_speed = speeds[i].bits;
        }
}

/* RoCE: the largest IB MTU that fits the interface's MTU less the RoCE v2 headers (the kernel's
 * iboe_get_mtu()). */
static enum ibv_mtu roce_mtu(const char *device, unsigned port) {
        char attr[64], ndev[64], path[4096], buf[32];
        long mtu = 1500;
        int fd;

        snprintf(attr, sizeof(attr), "ports/%u/gid_attrs/ndevs/0", port);
        if (read_attr(device, attr, ndev, sizeof(ndev)) == 0 && !isempty(ndev)) {
                snprintf(path, sizeof(path), "%s/class/net/%s/mtu", fake_sysfs_root(), ndev);
                fd = open(path, O_RDONLY | O_CLOEXEC);
                if (fd >= 0) {
                        ssize_t n = read(fd, buf, sizeof(buf) - 1);
                        if (n > 0) {
                                buf[n] = '\0';
                                mtu = strtol(buf, NULL, 10);
                        }
                        close(fd);
                }
        }
        mtu -= 40 + 8 + 12 + 4 + 28 + 4;
        return mtu >= 4096 ? IBV_MTU_4096 : mtu >= 2048 ? IBV_MTU_2048 : mtu >= 1024 ? IBV_MTU_1024 :
               mtu >= 512 ? IBV_MTU_512 : IBV_MTU_256;
}

static void read_port(const char *device, unsigned number, FakePortInfo *p) {
        struct ibv_port_attr *a = &p->attr;
        char attr[64], buf[64];

        *p = (FakePortInfo) { .number = (uint8_t) number };
#define PORT_NUMBER(field, name, base, fallback)                                       \
        snprintf(attr, sizeof(attr), "ports/%u/" name, number);                        \
        a->field = (__typeof__(a->field)) read_number(device, attr, base, fallback)
        PORT_NUMBER(state, "state", 10, IBV_PORT_NOP);
        PORT_NUMBER(phys_state, "phys_state", 10, 0);
        PORT_NUMBER(lid, "lid", 16, 0);
        PORT_NUMBER(sm_lid, "sm_lid", 16, 0);
        PORT_NUMBER(lmc, "lid_mask_count", 10, 0);
        PORT_NUMBER(sm_sl, "sm_sl", 10, 0);
        PORT_NUMBER(port_cap_flags, "cap_mask", 16, 0);
#undef PORT_NUMBER
        snprintf(attr, sizeof(attr), "ports/%u/link_layer", number);
        a->link_layer = read_attr(device, attr, buf, sizeof(buf)) == 0 && streq(buf, "Ethernet") ?
                        IBV_LINK_LAYER_ETHERNET : IBV_LINK_LAYER_INFINIBAND;
        snprintf(attr, sizeof(attr), "ports/%u/rate", number);
        if (read_attr(device, attr, buf, sizeof(buf)) == 0)
                parse_rate(buf, a);
        a->max_mtu = IBV_MTU_4096;
        a->active_mtu = a->link_layer == IBV_LINK_LAYER_ETHERNET ? roce_mtu(device, number) : IBV_MTU_4096;
        a->max_msg_sz = FAKE_MSG_MAX;
        a->pkey_tbl_len = 1;
        a->qkey_viol_cntr = 0;
        a->bad_pkey_cntr = 0;
        a->init_type_reply = 0;
        a->subnet_timeout = 18;
        a->max_vl_num = 1;

        /* The GID table: as many entries as the kernel shows files, zero ones included. Kernels before
         * 4.9 have no gid_attrs: InfiniBand, or RoCE v1. */
        for (unsigned i = 0; i < FAKE_GIDS_MAX; i++) {
                if (fake_sysfs_read_gid(device, number, i, p->gids[i]) == -ENOENT)
                        break;
                p->n_gids = i + 1;
                snprintf(attr, sizeof(attr), "ports/%u/gid_attrs/types/%u", number, i);
                if (a->link_layer == IBV_LINK_LAYER_INFINIBAND)
                        p->gid_types[i] = IBV_GID_TYPE_IB;
                else
                        p->gid_types[i] = read_attr(device, attr, buf, sizeof(buf)) == 0 && streq(buf, "RoCE v2") ?
                                                  IBV_GID_TYPE_ROCE_V2 : IBV_GID_TYPE_ROCE_V1;
        }
        a->gid_tbl_len = (int) p->n_gids;
}

int fake_sysfs_read_device(const char *name, FakeDeviceInfo *ret) {
        char path[4096], buf[64];
        struct dirent *de;
        DIR *d;

        if (!fake_sysfs_device_exists(name))
                return -ENODEV;
        *ret = (FakeDeviceInfo) {};
        snprintf(ret->name, sizeof(ret->name), "%s", name);
        ret->node_type = (enum ibv_node_type) read_number(name, "node_type", 10, IBV_NODE_UNKNOWN);
        ret->node_guid = read_guid(name, "node_guid");
        ret->sys_image_guid = read_guid(name, "sys_image_guid");
        if (read_attr(name, "fw_ver", buf, sizeof(buf)) == 0)
                snprintf(ret->fw_ver, sizeof(ret->fw_ver), "%s", buf);
        ret->vendor_id = (uint32_t) read_number(name, "device/vendor", 16, 0);
        ret->vendor_part_id = (uint32_t) read_number(name, "device/device", 16, 0);
        ret->hw_ver = (uint32_t) read_number(name, "hw_rev", 0, 0);

        snprintf(path, sizeof(path), "%s/class/infiniband/%s/ports", fake_sysfs_root(), name);
        d = opendir(path);
        if (!d)
                return -ENODEV;
        while ((de = readdir(d))) {
                char *end;
                unsigned long n = strtoul(de->d_name, &end, 10);
                if (de->d_name[0] == '.' || *end != '\0' || n == 0 || n > FAKE_PORTS_MAX)
                        continue;
                ret->n_ports = MAX(ret->n_ports, (unsigned) n);
        }
        closedir(d);
        for (unsigned i = 0; i < ret->n_ports; i++)
                read_port(name, i + 1, &ret->ports[i]);
        return 0;
}
