/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The PCI functions: a table of what sysfs says per function, updated from udev events and full
 * enumerations through one path. Which of them are published, and everything computed from the tree,
 * is the derivation pass's (derive-pci.c); this file only records, marks, and publishes on request. */
#include <libudev.h>

#include "pci-names.h"
#include "pci.h"
#include "shared/bus-names.h"
#include "shared/string-util.h"
#include "shared/time-util.h"
#include "udev.h"

const BusObjectType pci_bus_type = {
        .interface = PCI_INTERFACE,
};

static int pci_object_compare(const void *key, const void *object) {
        return strcmp(key, ((const PciObject *) object)->address);
}

int pci_object_path(const char *address, char **ret) {
        return sd_bus_path_encode(PCI_PATH_PREFIX, address, ret);
}

PciObject *pci_object_get(Pci *pci, const char *address) {
        return address ? table_get(&pci->functions, address) : NULL;
}

bool pci_object_is_gpu(const PciObject *o) {
        return o->derived.gpu || (o->device->has_class && (o->device->class_code >> 16) == 0x03);
}

PciObject *pci_object_for_syspath(Pci *pci, const char *syspath) {
        _cleanup_(freep) char *address = NULL;

        if (!syspath || pci_syspath_split(syspath, &address, NULL, NULL, NULL) < 0)
                return NULL;
        return pci_object_get(pci, address);
}

void pci_gpu_links_free(PciGpuLink *l, size_t n) {
        for (size_t i = 0; l && i < n; i++) {
                free(l[i].peer_address);
                free(l[i].peer_path);
        }
        free(l);
}

void pci_affinity_free(PciAffinity *a, size_t n) {
        for (size_t i = 0; a && i < n; i++) {
                free(a[i].a);
                free(a[i].b);
                free(a[i].through);
        }
        free(a);
}

static PciObject *pci_object_free(PciObject *o) {
        if (!o)
                return NULL;
        bus_object_done(&o->bus);
        pci_device_free(o->device);
        free(o->address);
        free(o->name);
        free(o->derived.parent_path);
        free(o->derived.path_limit);
        free(o->derived.trained_low_below);
        health_state_done(&o->derived.health_state);
        strv_free(o->derived.problems);
        pci_gpu_links_free(o->derived.gpu_links, o->derived.n_gpu_links);
        return mfree(o);
}

void pci_init(Pci *pci, BusPublisher *p, int sysfs_fd) {
        *pci = (Pci) {
                .functions = TABLE_INIT(pci_object_compare),
                .publisher = p,
                .sysfs_fd = sysfs_fd,
        };
}

void pci_done(Pci *pci) {
        PciObject *o;

        TABLE_FOREACH(o, &pci->functions)
                pci_object_free(o);
        table_done(&pci->functions);
        pci->names = pci_names_free(pci->names);
        free(pci->kfd_links);
        pci_affinity_free(pci->affinity, pci->n_affinity);
        *pci = (Pci) {};
}

void pci_names_release(Pci *pci) {
        pci->names = pci_names_free(pci->names);
}

bool pci_any_published(Pci *pci) {
        PciObject *o;

        TABLE_FOREACH(o, &pci->functions)
                if (o->published)
                        return true;
        return false;
}

int pci_object_set_published(PciObject *o, bool published) {
        _cleanup_(freep) char *path = NULL;
        Pci *pci = o->owner;
        int r;

        if (o->published == published)
                return 0;
        if (!published) {
                log_pci_debug(o, "No longer behind a published object; unpublished.");
                bus_object_remove(&o->bus);
                bus_object_done(&o->bus);
                o->published = false;
                return 0;
        }

        r = pci_object_path(o->address, &path);
        if (r < 0)
                return r;
        if (!o->name && o->device->has_vendor_id) {
                if (!pci->names)
                        pci->names = pci_names_new();
                if (!pci->names)
                        return -ENOMEM;
                r = pci_names_lookup(pci->names, o->device->vendor_id, o->device->has_device_id ? o->device->device_id : 0xffff,
                                     &o->name);
                if (r < 0)
                        return r;
        }
        bus_object_init(&o->bus, pci->publisher, &pci_bus_type, TAKE_PTR(path));
        o->published = true;
        log_pci_debug(o, "Published.");
        return 0;
}

/* Takes over d. */
static int pci_object_new(Pci *pci, PciDevice *d) {
        _cleanup_(pci_device_freep) PciDevice *device = d;
        PciObject *o;
        int r;

        o = new0(PciObject, 1);
        if (!o)
                return -ENOMEM;
        o->owner = pci;
        o->address = strdup(device->address);
        if (!o->address) {
                pci_object_free(o);
                return -ENOMEM;
        }
        o->derived.type = _PCI_PORT_TYPE_INVALID;
        o->derived.health_state = HEALTH_STATE_INIT;
        o->watch.gpu_busy_percent = -1;
        for (PciAerSeverity s = 0; s < _PCI_AER_SEVERITY_MAX; s++) {
                o->watch.aer[s] = COUNTER_UNKNOWN;
                o->watch.aer_last[s] = pci->enumerated ? 0 : COUNTER_UNKNOWN;
        }
        o->watch.correctable.total = COUNTER_UNKNOWN;
        r = table_put(&pci->functions, o->address, o);
        if (r < 0) {
                pci_object_free(o);
                return r;
        }
        o->device = TAKE_PTR(device);
        o->seen = true;
        pci->changed = true;
        bus_publisher_schedule(pci->publisher);
        return 0;
}

static void pci_object_remove(PciObject *o) {
        Pci *pci = o->owner;

        log_pci_debug(o, "Removed.");
        /* InterfacesRemoved needs the object still findable. */
        bus_object_remove(&o->bus);
        table_remove(&pci->functions, o->address);
        pci_object_free(o);
        pci->changed = true;
        bus_publisher_schedule(pci->publisher);
}

/* Facts that make a function what it is. If one differs between two reads of the same address,
 * another device took the slot (replugged while we were not listening): a new object. */
static bool pci_identity_differs(const PciDevice *a, const PciDevice *b) {
        return a->has_vendor_id != b->has_vendor_id || a->vendor_id != b->vendor_id ||
               a->has_device_id != b->has_device_id || a->device_id != b->device_id ||
               a->has_class != b->has_class || a->class_code != b->class_code || !streq_ptr(a->syspath, b->syspath);
}

static bool link_equal(const PciLink *a, const PciLink *b) {
        return a->gts == b->gts && a->width == b->width;
}

/* ---- the trained link over time ---- */

static bool link_known(const PciLink *l) {
        return l->gts > 0 && l->width > 0;
}

/* Counts a change between two readings that both knew the link: a VF's "Unknown"/x0, or a device in
 * D3cold that answers nothing, is not a change. */
void pci_object_count_link_change_at(PciObject *o, const PciLink *from, const PciLink *to, uint64_t now,
                                     uint64_t realtime) {
        if (!link_known(from) || !link_known(to) || (from->gts == to->gts && from->width == to->width))
                return;
        o->watch.link_changes++;
        o->watch.last_change_at = realtime;
        bus_object_changed(&o->bus, "LinkChanges");
        bus_object_changed(&o->bus, "LastLinkChangeAt");
        if (from->width != to->width)
                window_add(&o->watch.width_changes, now, 1);
        else if (!health_pci_change_is_power_saving(from, to))
                window_add(&o->watch.speed_changes, now, 1);
        log_pci_debug(o, "Link changed from %.1f GT/s x%u to %.1f GT/s x%u.", from->gts, from->width, to->gts, to->width);
}

void pci_object_count_link_change(PciObject *o, const PciLink *from, const PciLink *to) {
        if (o->published)
                pci_object_count_link_change_at(o, from, to, now_usec(CLOCK_MONOTONIC), now_usec(CLOCK_REALTIME));
}

/* Records which published properties read straight from the function differ, then takes over d. */
static void pci_object_set_device(PciObject *o, PciDevice *d) {
        PciDevice *old = o->device;
        const struct {
                bool differs;
                const char *property;
        } fields[] = {
                { !streq_ptr(old->driver, d->driver), "Driver" },
                { old->numa_node != d->numa_node, "NumaNode" },
                { !streq_ptr(old->local_cpus, d->local_cpus), "LocalCpus" },
                { old->current.gts != d->current.gts, "CurrentLinkSpeed" },
                { old->current.gts != d->current.gts, "CurrentLinkGeneration" },
                { old->current.width != d->current.width, "CurrentLinkWidth" },
                { old->max.gts != d->max.gts, "MaxLinkSpeed" },
                { old->max.gts != d->max.gts, "MaxLinkGeneration" },
                { old->max.width != d->max.width, "MaxLinkWidth" },
        };
        bool changed = !link_equal(&old->current, &d->current) || !link_equal(&old->max, &d->max) ||
                       old->numa_node != d->numa_node || !strv_equal(old->problems, d->problems);

        for (size_t i = 0; i < ELEMENTSOF(fields); i++)
                if (fields[i].differs)
                        bus_object_changed(&o->bus, fields[i].property);
        pci_object_count_link_change(o, &old->current, &d->current);
        if (changed) {
                /* The tree's facts move with these: the pass rebuilds it. */
                o->owner->changed = true;
                bus_publisher_schedule(o->owner->publisher);
        }
        o->device = d;
        pci_device_free(old);
}

/* The one path for enumeration and events: takes over d. */
static int pci_object_update(Pci *pci, PciDevice *d) {
        PciObject *o = pci_object_get(pci, d->address);

        if (o && pci_identity_differs(o->device, d)) {
                log_pci_debug(o, "Another device at the same address; replacing the object.");
                pci_object_remove(o);
                o = NULL;
        }
        if (!o)
                return pci_object_new(pci, d);
        pci_object_set_device(o, d);
        o->seen = true;
        return 0;
}

static void pci_read_function(Pci *pci, const char *address) {
        PciDevice *d = NULL;
        PciObject *o;
        int r;

        r = pci_device_read(pci->sysfs_fd, address, &d);
        if (r == -ENOMEM) {
                log_oom();
                return;
        }
        if (r < 0) {
                /* Gone again, or never a function we can read. */
                log_debug_errno(r, "PCI function %s cannot be read, dropping it: %m", address);
                o = pci_object_get(pci, address);
                if (o)
                        pci_object_remove(o);
                return;
        }
        r = pci_object_update(pci, d);
        if (r < 0)
                log_warning_errno(r, "Failed to add PCI function %s: %m", address);
}

/* Whether the function at syspath is address or below it. */
static bool syspath_is_at_or_below(const char *syspath, const char *address) {
        size_t n = strlen(address);

        for (const char *p = syspath; p && (p = strstr(p, address)); p += n)
                if ((p == syspath || p[-1] == '/') && (p[n] == '/' || p[n] == '\0'))
                        return true;
        return false;
}

void pci_udev_event(void *userdata, struct udev_device *device, const char *action) {
        Pci *pci = userdata;
        const char *address = udev_device_get_sysname(device);
        PciObject *o;

        if (!pci_address_is_valid(address))
                return;
        log_debug("udev: pci %s %s", action, address);
        /* The event says only that something happened: the facts are read from sysfs. A removal is
         * taken at its word (the directory may linger for a moment), and takes the functions below. */
        if (streq(action, "remove")) {
                TABLE_FOREACH_SAFE(o, &pci->functions)
                        if (streq(o->address, address) || syspath_is_at_or_below(o->device->syspath, address))
                                pci_object_remove(o);
                return;
        }
        pci_read_function(pci, address);
}

static void pci_read_kfd(Pci *pci) {
        _cleanup_(strv_freep) char **problems = NULL;
        KfdLink *links = NULL;
        size_t n = 0;
        int r;

        r = kfd_read_links(pci->sysfs_fd, &links, &n, &problems);
        if (r < 0) {
                log_oom();
                return;
        }
        STRV_FOREACH(p, problems)
                log_warning("KFD topology: %s", *p);
        if (n != pci->n_kfd_links || (n > 0 && memcmp(links, pci->kfd_links, n * sizeof(KfdLink)) != 0))
                pci->changed = true;
        free(pci->kfd_links);
        pci->kfd_links = links;
        pci->n_kfd_links = n;
}

int pci_enumerate_all(void *userdata) {
        Pci *pci = userdata;
        PciDevice **devices = NULL;
        size_t n = 0;
        PciObject *o;
        int r;

        r = pci_enumerate(pci->sysfs_fd, &devices, &n);
        if (r < 0)
                return log_warning_errno(r, "Failed to enumerate PCI functions: %m");

        TABLE_FOREACH(o, &pci->functions)
                o->seen = false;
        for (size_t i = 0; i < n; i++) {
                r = pci_object_update(pci, TAKE_PTR(devices[i]));
                if (r < 0)
                        log_warning_errno(r, "Failed to add a PCI function: %m");
        }
        free(devices);
        TABLE_FOREACH_SAFE(o, &pci->functions)
                if (!o->seen)
                        pci_object_remove(o);

        pci_read_kfd(pci);
        pci->enumerated = true;
        bus_publisher_schedule(pci->publisher);
        log_debug("PCI: %zu functions, %zu KFD GPU links.", table_size(&pci->functions), pci->n_kfd_links);
        return 0;
}

int pci_watch(Pci *pci, UdevSource *udev) {
        int r;

        r = udev_source_add_subsystem(udev, "pci", pci_udev_event, pci_enumerate_all, pci);
        if (r < 0)
                return log_error_errno(r, "Failed to watch udev's pci subsystem: %m");
        return 0;
}
