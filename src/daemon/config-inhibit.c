/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "config-inhibit.h"
#include "config-peers.h"
#include "inhibit.h"
#include "shared/string-util.h"

void inhibit_config_init(InhibitConfig *c) {
        *c = (InhibitConfig) { .what = INHIBIT_GPU | INHIBIT_RDMA };
}

void inhibit_config_done(InhibitConfig *c) {
        c->units = strv_free(c->units);
}

bool unit_name_is_valid(const char *s) {
        static const char *const suffixes[] = {
                ".service", ".socket", ".target", ".device", ".mount", ".automount",
                ".swap", ".timer", ".path", ".slice", ".scope",
        };
        const char *dot;
        size_t n;

        if (isempty(s) || (n = strlen(s)) > 255)
                return false;
        for (const char *p = s; *p; p++)
                if (!((*p >= 'a' && *p <= 'z') || (*p >= 'A' && *p <= 'Z') || (*p >= '0' && *p <= '9') ||
                      strchr(":_.-@\\", *p)))
                        return false;
        dot = strrchr(s, '.');
        if (!dot || dot == s)
                return false;
        for (size_t i = 0; i < ELEMENTSOF(suffixes); i++)
                if (streq(dot, suffixes[i])) {
                        const char *at = strchr(s, '@');
                        /* "name@instance.type": a template without an instance never runs. */
                        return !at || (at != s && at + 1 < dot && !strchr(at + 1, '@'));
                }
        return false;
}

static int add_unit_name(char ***list, const char *word, char *why, size_t n) {
        if (!unit_name_is_valid(word)) {
                snprintf(why, n, "\"%.64s\" is not a unit name (such as inference.service)", word);
                return -EINVAL;
        }
        return strv_extend_unique(list, word);
}

int config_parse_unit_names(const char *value, void *field, char *why, size_t n) {
        return config_parse_word_list(value, field, add_unit_name, why, n);
}

int config_parse_inhibit_what(const char *value, void *field, char *why, size_t n) {
        int mask = inhibit_what_from_string(value);

        if (mask <= 0) {
                snprintf(why, n, "expected gpu, rdma or gpu:rdma");
                return -EINVAL;
        }
        *(unsigned *) field = (unsigned) mask;
        return 0;
}
