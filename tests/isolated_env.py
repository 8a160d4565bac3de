# SPDX-License-Identifier: LGPL-2.1-or-later
"""The environment every test runs in, whatever the caller's shell exports.

A test that wants a terminal width, a pager, colour or a locale sets it itself; nothing leaks in from the
shell that ran `make check` (COLUMNS=80 from an interactive bash, PAGER=less, TERM=xterm, LANG=de_DE):
systemd's test runner does the same. The variables below are the ones linkprobectl, the man page
renderers and the daemon's log read; they are removed, and the locale is fixed to C.UTF-8."""

import os

# Read by linkprobectl (width, colour, pager), by man(1)/groff (width, pager), by less itself, and by
# sd-journal/systemd tools the tests run (colour, pager, urlification).
TERMINAL = ("COLUMNS", "LINES", "TERM", "NO_COLOR", "PAGER", "SYSTEMD_PAGER", "SYSTEMD_PAGERSECURE", "LESS",
            "LESSCHARSET", "LESSOPEN", "LESSCLOSE", "MANWIDTH", "MANPAGER", "MANOPT", "SYSTEMD_COLORS",
            "SYSTEMD_LESS", "SYSTEMD_URLIFY", "GREP_OPTIONS", "GREP_COLORS", "TZ")
LOCALE = ("LANGUAGE", "LC_ALL", "LC_CTYPE", "LC_NUMERIC", "LC_TIME", "LC_COLLATE", "LC_MONETARY",
          "LC_MESSAGES", "LC_PAPER", "LC_NAME", "LC_ADDRESS", "LC_TELEPHONE", "LC_MEASUREMENT",
          "LC_IDENTIFICATION")


def isolate(environ=os.environ):
    """Removes what the caller's shell may export that changes what a test sees; returns what was removed
    (name -> value), so a runner can say so."""
    removed = {}
    for name in TERMINAL + LOCALE:
        if name in environ:
            removed[name] = environ.pop(name)
    if environ.get("LANG") != "C.UTF-8":
        if "LANG" in environ:
            removed["LANG"] = environ["LANG"]
        environ["LANG"] = "C.UTF-8"
    return removed
