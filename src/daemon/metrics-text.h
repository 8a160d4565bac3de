/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* metrics-text.h — the Prometheus text format's pieces, for every file that renders series */
#pragma once

#include <stddef.h>
#include <stdio.h>

typedef struct MetricsLabel {
        const char *key, *value;
} MetricsLabel;

/* Label values: backslash, double quote and newline escaped, as the text format requires. */
void metrics_write_label_value(FILE *f, const char *value);
/* "# HELP name help" and "# TYPE name type". */
void metrics_write_family(FILE *f, const char *name, const char *type, const char *help);
/* name{k1="v1",k2="v2"} value, the labels in the order given. */
void metrics_write_sample(FILE *f, const char *name, double value, const MetricsLabel *labels, size_t n);
