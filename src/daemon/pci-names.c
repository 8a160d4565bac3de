/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* Names of PCI functions from the PCI ID database (pci.ids) through
 * libpci, as lspci shows them. Nothing is copied into linkprobe: a machine without the database
 * publishes no names. The database is loaded on the first lookup and let go after each pass, so the
 * daemon does not keep megabytes of names it needs only when something is plugged in. */
/* A file of its own: libpci's header claims pci_init() and friends, names the Pci kind uses too. */
#include <pci/pci.h>
#include <stdarg.h>

#include "pci-names.h"
#include "shared/log.h"
#include "shared/string-util.h"

/* Names only (NULL when unknown, never a number), and from pci.ids itself: libpci's udev hwdb lookup
 * holds nothing pci.ids does not, and leaks its udev context where no hwdb.bin exists (libpci 3.9). */
#define LOOKUP_FLAGS (PCI_LOOKUP_NO_NUMBERS | PCI_LOOKUP_NO_HWDB)

struct PciNames {
        struct pci_access *access;
};

/* libpci reports through these; none of what it says is worth more than a debug line to us. */
_printf_(1, 2) static void names_message(char *format, ...) {
        char buf[256];
        va_list ap;

        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        log_debug("libpci: %s", buf);
}

/* libpci calls this only when it cannot go on (out of memory) and does not expect it to return. */
_noreturn_ _printf_(1, 2) static void names_fatal(char *format, ...) {
        char buf[256];
        va_list ap;

        va_start(ap, format);
        vsnprintf(buf, sizeof(buf), format, ap);
        va_end(ap);
        log_error("libpci: %s", buf);
        abort();
}

PciNames *pci_names_new(void) {
        PciNames *n = new0(PciNames, 1);

        if (!n)
                return NULL;
        n->access = pci_alloc();
        if (!n->access)
                return mfree(n);
        n->access->error = names_fatal;
        n->access->warning = names_message;
        n->access->debug = names_message;
        /* Never a cache in $HOME, never DNS: the local database or nothing. */
        n->access->id_lookup_mode = 0;
        return n;
}

PciNames *pci_names_free(PciNames *n) {
        if (!n)
                return NULL;
        pci_cleanup(n->access);
        return mfree(n);
}

int pci_names_lookup(PciNames *n, uint32_t vendor_id, uint32_t device_id, char **ret) {
        char buf[512];
        const char *s;

        if (!n)
                return -EINVAL;
        s = pci_lookup_name(n->access, buf, sizeof(buf), PCI_LOOKUP_VENDOR | PCI_LOOKUP_DEVICE | LOOKUP_FLAGS,
                            (int) vendor_id, (int) device_id);
        if (!s)
                /* The vendor alone is still a true name. */
                s = pci_lookup_name(n->access, buf, sizeof(buf), PCI_LOOKUP_VENDOR | LOOKUP_FLAGS, (int) vendor_id);
        if (!s) {
                *ret = NULL;
                return 0;
        }
        /* pci.ids is UTF-8, but a local file may hold anything. */
        *ret = utf8_escape_invalid(s);
        return *ret ? 1 : -ENOMEM;
}
