/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* linkprobectl-terminal.h — the terminal linkprobectl writes to: width, colour, pager */
#pragma once

#include <stdbool.h>
#include <stddef.h>

bool ctl_stdout_is_tty(void);
/* The width tables must fit: $COLUMNS, else the terminal's; 0 (no limit) with --full or for a pipe. */
size_t ctl_table_width(void);
/* Whether to colour: --color=, then $NO_COLOR, TERM=dumb and whether stdout is a terminal. */
bool ctl_colour(void);
/* Starts the pager when stdout is a terminal and --no-pager was not given: 1 if started. */
int ctl_pager_open(void);
/* Waits for the pager to show everything and quit. */
void ctl_pager_close(void);
