/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-draw-labels.h — what each box and line of the node's picture says, and its colour */
#pragma once

#include <json-c/json.h>
#include <stdbool.h>

#include "shared/macros.h"

/* The lines (malloc'd, NULL ones left out, all freed) as a DOT label: each wrapped at a space after
 * width characters and escaped (draw_escape), joined by DOT's "\n". NULL when out of memory. */
char *draw_label(char **lines, size_t n, size_t width);
/* A box's lines, and a line's (narrower: the space between two ranks of boxes is as wide as the widest
 * label in it, and a deep PCIe tree must fit a 1920-pixel screen). */
#define DRAW_BOX_WIDTH 32
#define DRAW_LINE_WIDTH 24
#define DRAW_LABEL(...) \
        draw_label((char *[]) { __VA_ARGS__ }, ELEMENTSOF(((char *[]) { __VA_ARGS__ })), DRAW_BOX_WIDTH)
#define DRAW_LINE_LABEL(...) \
        draw_label((char *[]) { __VA_ARGS__ }, ELEMENTSOF(((char *[]) { __VA_ARGS__ })), DRAW_LINE_WIDTH)

/* The colour of an object's Health ("ok" green, "degraded" orange, "errors" and "flapping" red,
 * anything else grey); never the only sign: draw_health_line() says it in words. */
const char *draw_health_colour(json_object *o);
bool draw_health_bad(json_object *o);
/* "Health: degraded: <reason>" for anything but ok; NULL for ok, or for a kind without Health. */
char *draw_health_line(json_object *o);

/* The boxes. */
char *draw_label_pci(json_object *pci);
char *draw_label_link(json_object *link);
char *draw_label_rdma(json_object *port);
char *draw_label_gpu(json_object *gpu);
char *draw_label_tbt(json_object *tbt);
/* The lines: the PCIe link above a function ("Gen5 32.0 GT/s x16"), the Thunderbolt link above a router
 * or peer ("2 × 20 Gb/s"), each with its Health. */
char *draw_label_pci_link(json_object *pci);
char *draw_label_tbt_link(json_object *tbt);
/* "32.0 GT/s x16": what the picture says of a PCIe link, for the tests to find; NULL without figures. */
char *draw_pci_link_text(json_object *pci);
