/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* config-inhibit.h — linkprobed.conf's [Inhibit] section: probes held off while systemd units run */
#pragma once

#include "shared/macros.h"

typedef struct InhibitConfig {
        char **units;  /* WhileUnitsActive=: unit names, in order, without duplicates */
        unsigned what; /* What=: the InhibitWhat bits they hold off; gpu:rdma unless set */
} InhibitConfig;

void inhibit_config_init(InhibitConfig *c);
void inhibit_config_done(InhibitConfig *c);

/* Whether s is a unit name systemd would take: a name of at most 255 bytes of [A-Za-z0-9:_.\-@\\]
 * with a unit type suffix; a template (foo@.service) is not a unit that can run. */
bool unit_name_is_valid(const char *s) _pure_;

/* Parsers for config.c's table: 0, or -EINVAL with why filled in (-ENOMEM). */
int config_parse_unit_names(const char *value, void *field, char *why, size_t why_size);
int config_parse_inhibit_what(const char *value, void *field, char *why, size_t why_size);
