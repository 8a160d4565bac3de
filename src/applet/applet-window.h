/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* applet-window.h — the details window: one object's line and the node's picture
 * (`linkprobectl topo --svg`, or the text of `linkprobectl topo` where that cannot draw) */
#pragma once

#include <stdbool.h>

typedef struct DetailsWindow DetailsWindow;

/* ctl: the linkprobectl to run, bus_address: its --bus-address= (NULL: the system bus). */
DetailsWindow *details_window_new(const char *ctl, const char *bus_address);
void details_window_free(DetailsWindow *w);

/* Shows the window (raised), header: the object's line or the node's; the picture is redrawn. */
void details_window_present(DetailsWindow *w, const char *header, const char *status);
/* The objects changed: redraw the picture after a moment of quiet, if the window is shown. */
void details_window_objects_changed(DetailsWindow *w, const char *status);
