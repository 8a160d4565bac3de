# SPDX-License-Identifier: LGPL-2.1-or-later
"""`make run` (tests/run-local) on an 80-column terminal: it shows every command's output and returns,
never stopping in a pager, and what it shows fits the terminal."""

import os
import pty
import re
import select
import subprocess
import sys
import time

import lp

RUN_LOCAL = os.path.join(lp.TOP, "tests", "run-local")


def on_a_terminal(cmd, env, columns=80, timeout=120):
    """cmd with stdin, stdout and stderr on a pseudo-terminal of the given width; (status, what it showed).
    A pager waiting for a key would hold it until the timeout."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer is gone
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    try:
        status = proc.wait(10)
    except subprocess.TimeoutExpired:
        lp.stop_process(proc)
        status = None
    return status, out.decode(errors="replace").replace("\r\n", "\n")


def test_make_run_never_stops_in_a_pager():
    env = {k: v for k, v in os.environ.items() if k not in ("SYSTEMD_PAGER", "LESS")}
    # A pager that marks what went through it; and no system bus, so the run uses a private one.
    env.update(PAGER="sed s/^/PAGED:/", COLUMNS="80", TERM="xterm",
               DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/system_bus_socket")
    status, shown = on_a_terminal([sys.executable, RUN_LOCAL, "--build", lp.BUILD], env)
    assert status == 0, shown
    assert "PAGED:" not in shown, shown
    for verb in ("status", "list", "thunderbolt", "rdma", "gpu"):
        assert f"$ linkprobectl {verb}\n" in shown, shown
    assert "Stopped linkprobed (exit status 0)." in shown
    # Tables fit the terminal (colour codes are not columns).
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    tables = plain.split("$ busctl tree")[0]
    assert all(len(line) <= 80 for line in tables.splitlines()), tables
