/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* pci.h — PCI functions as sysfs describes them (pci/<address> objects), kept live from udev */
#pragma once

#include "bus-object.h"
#include "counter.h"
#include "health.h"
#include "log-object.h"
#include "pci-tree.h"
#include "shared/table.h"
#include "sysfs/kfd.h"
#include "sysfs/pci.h"
#include "sysfs/watched.h"

typedef struct PciNames PciNames;
typedef struct UdevSource UdevSource;
struct udev_device;

/* A link from a GPU to another GPU, from the kernel's KFD topology or from NVML (the GPU probe). */
typedef struct PciGpuLink {
        char *peer_address; /* the other GPU's function */
        char *peer_path;    /* its pci/ object; NULL when it is not published */
        const char *type;   /* "XGMI", "PCIe", "NVLink", ... (static) */
        unsigned count;     /* links of that kind between the two (NVLink: active links) */
        uint32_t weight;    /* KFD's relative cost; 0 unknown */
        double min_gbytes, max_gbytes; /* GB/s per direction; 0 unknown */
} PciGpuLink;

/* One row of Manager.GetAffinity(). */
typedef struct PciAffinity {
        char *a, *b; /* object paths */
        const char *relation; /* "PIX", ..., "NV4" (static or owned by relation_buf) */
        char relation_buf[16];
        char *through;
} PciAffinity;

/*
 * Every function of bus/pci. All are kept, so the tree can be built, but only those behind a published
 * object (a network link, an RDMA port, a GPU, a Thunderbolt domain), the GPUs the kernel's or NVML's
 * GPU topology names, and every bridge above them are published: the derivation pass decides.
 */
typedef struct Pci {
        Table functions; /* PciObject* by address */
        BusPublisher *publisher;
        int sysfs_fd;
        PciNames *names;
        /* Functions came, went or changed: the derivation pass rebuilds the tree. */
        bool changed;
        /* The first enumeration is done: a function that appears now is new (hotplug), and its AER
         * counters count from zero since it appeared. */
        bool enumerated;
        KfdLink *kfd_links; /* GPU-to-GPU links of the KFD topology, read with every enumeration */
        size_t n_kfd_links;

        /* Derived (derive-pci.c): Manager.GetAffinity(). */
        PciAffinity *affinity;
        size_t n_affinity;
} Pci;

typedef struct PciObject {
        char *address; /* first: the table's key, "0000:41:00.0" */
        Pci *owner;
        BusObject bus; /* initialised only while published */
        bool published;
        bool seen;         /* mark and sweep of an enumeration */
        PciDevice *device; /* what sysfs said at the last read */
        char *name;        /* from the PCI ID database when published; NULL unknown */

        /* Over time: what the watch and udev saw the link and the AER counters do. */
        struct {
                bool sampled;            /* the watch read it at least once since it was published */
                uint32_t link_changes;   /* LinkChanges: speed or width changes seen, both ends known */
                uint64_t last_change_at; /* LastLinkChangeAt: CLOCK_REALTIME usec; 0 never */
                Window speed_changes;    /* those that are not power saving (health.h) */
                Window width_changes;
                uint64_t aer[_PCI_AER_SEVERITY_MAX];      /* totals as read; COUNTER_UNKNOWN */
                uint64_t aer_last[_PCI_AER_SEVERITY_MAX]; /* for the increase */
                Window aer_window[_PCI_AER_SEVERITY_MAX];
                PciAerCounters correctable;               /* the last correctable file, per kind */
                char correctable_kinds[96];               /* the kinds that rose last: "Receiver Error" */
                int gpu_busy_percent;                     /* -1 unknown or not a GPU */
        } watch;

        /* Derived (derive-pci.c writes these). */
        struct {
                bool wanted; /* published: behind a published object, a GPU, or a bridge above one */
                bool gpu;    /* a GPU the KFD topology or NVML names */
                char *parent_path;
                PciPortType type;
                double gbps; /* its own link as it reports it, after encoding */
                double path_gbps;
                char *path_limit; /* the hop that limits the path, described */
                char **problems;
                PciGpuLink *gpu_links;
                size_t n_gpu_links;
                /* The link the tree gives it, for the health judgement. */
                bool has_link;   /* a link above it: an endpoint or an upstream port */
                bool tunnel;     /* that link is a USB4/Thunderbolt PCIe tunnel */
                PciLink link;    /* as trained */
                PciLink capable; /* the lower of both ends' maximum */
                double link_gbps;
                bool trained_low;        /* below what both ends support (pci-tree.c) */
                char *trained_low_below; /* a port: the function below whose link trained low; NULL */
                HealthLoad load; /* its traffic and that of everything below it (derive-health.c) */
                HealthState health_state; /* derive-health.c: Health, Degraded and their reasons, one verdict */
        } derived;
} PciObject;

void pci_init(Pci *pci, BusPublisher *p, int sysfs_fd);
void pci_done(Pci *pci);
/* Follows the udev subsystem "pci"; call before the monitor starts. */
int pci_watch(Pci *pci, UdevSource *udev);

PciObject *pci_object_get(Pci *pci, const char *address);
/* A GPU: one the KFD topology or NVML names, or a display controller by its class. */
bool pci_object_is_gpu(const PciObject *o) _pure_;
/* pci/<address>, the address encoded with sd_bus_path_encode(). */
int pci_object_path(const char *address, char **ret);
/* Publishes or unpublishes (the derivation pass); a new object gets its name from the PCI ID
 * database first. */
int pci_object_set_published(PciObject *o, bool published);
/* Whether any function is published (what the metrics render only then). */
bool pci_any_published(Pci *pci);
/* The PCI function of a device path ("devices/pci0000:00/0000:00:03.0/net/eth0"), if it is on the bus. */
PciObject *pci_object_for_syspath(Pci *pci, const char *syspath);
/* The PCI ID database is held only while names are looked up; the pass lets go after publishing. */
void pci_names_release(Pci *pci);

/* The udev handlers: add, change, bind and unbind re-read the function; remove drops it. The
 * enumeration re-reads everything and the KFD topology, marks and sweeps. */
void pci_udev_event(void *userdata, struct udev_device *device, const char *action);
int pci_enumerate_all(void *userdata);

void pci_gpu_links_free(PciGpuLink *l, size_t n);
void pci_affinity_free(PciAffinity *a, size_t n);

/* Counts a change of the trained link, at now (CLOCK_MONOTONIC) and realtime (CLOCK_REALTIME) usec, as
 * the watch (pci-watch.c) or a udev event's re-read found it; a change from or to an unknown link is none. */
void pci_object_count_link_change_at(PciObject *o, const PciLink *from, const PciLink *to, uint64_t now,
                                     uint64_t realtime);
/* The same at this moment, of a published function. */
void pci_object_count_link_change(PciObject *o, const PciLink *from, const PciLink *to);

/* Tells pci objects apart from others in the publisher's queue. */
extern const BusObjectType pci_bus_type;

#define log_pci_full_errno(o, level, error, ...) \
        log_object_full_errno(level, error, "PCI_DEVICE", (o)->address, __VA_ARGS__)
#define log_pci_debug(o, ...) (void) log_pci_full_errno(o, LOG_DEBUG, 0, __VA_ARGS__)
#define log_pci_info(o, ...) (void) log_pci_full_errno(o, LOG_INFO, 0, __VA_ARGS__)
#define log_pci_warning(o, ...) (void) log_pci_full_errno(o, LOG_WARNING, 0, __VA_ARGS__)
