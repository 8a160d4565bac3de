# SPDX-License-Identifier: LGPL-2.1-or-later
"""`make run` (tests/run-local) on an 80-column terminal: it shows every command's output and returns,
never stopping in a pager, and what it shows fits the terminal; it draws the node's picture into the
build directory and says where."""

import os
import re
import sys

import lp
import pytest

# It builds in or installs from the shared build directory, which the files beside it run from.
pytestmark = pytest.mark.alone

RUN_LOCAL = os.path.join(lp.TOP, "tests", "run-local")


def test_make_run_never_stops_in_a_pager():
    env = {k: v for k, v in os.environ.items() if k not in ("SYSTEMD_PAGER", "LESS")}
    # A pager that marks what went through it; and no system bus, so the run uses a private one.
    env.update(PAGER="sed s/^/PAGED:/", COLUMNS="80", TERM="xterm",
               DBUS_SYSTEM_BUS_ADDRESS="unix:path=/nonexistent/system_bus_socket")
    status, shown = lp.on_a_terminal([sys.executable, RUN_LOCAL, "--build", lp.BUILD], env, timeout=120)
    assert status == 0, shown
    assert "PAGED:" not in shown, shown
    for verb in ("status", "list", "thunderbolt", "rdma", "gpu"):
        assert f"$ linkprobectl {verb}\n" in shown, shown
    assert "Stopped linkprobed (exit status 0)." in shown
    # The node's picture, in the build directory, and the run says where.
    svg, png = (os.path.join(os.path.abspath(lp.BUILD), f"node.{fmt}") for fmt in ("svg", "png"))
    assert f"The node's picture was written to {svg} and {png}." in shown.replace("\n", ""), shown
    assert lp.run(["xmllint", "--noout", svg], check=False).returncode == 0
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    # Tables fit the terminal (colour codes are not columns).
    plain = re.sub(r"\x1b\[[0-9;]*m", "", shown)
    tables = plain.split("$ busctl tree")[0]
    assert all(len(line) <= 80 for line in tables.splitlines()), tables
