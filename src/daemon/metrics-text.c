/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "metrics-text.h"

void metrics_write_label_value(FILE *f, const char *value) {
        for (const char *p = value ?: ""; *p; p++)
                switch (*p) {
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                default:
                        fputc(*p, f);
                }
}

void metrics_write_family(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

void metrics_write_sample(FILE *f, const char *name, double value, const MetricsLabel *labels, size_t n) {
        fputs(name, f);
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s%s=\"", i == 0 ? "{" : ",", labels[i].key);
                metrics_write_label_value(f, labels[i].value);
                fputc('"', f);
        }
        fprintf(f, "%s %.17g\n", n > 0 ? "}" : "", value);
}
