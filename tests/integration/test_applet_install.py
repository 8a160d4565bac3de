# SPDX-License-Identifier: LGPL-2.1-or-later
"""make install and make uninstall of linkprobe-applet: the program, its autostart and applications
entries and its icons in the hicolor theme."""

import os
import shutil

import pytest

import lp

# It builds in or installs from the shared build directory, which the files beside it run from.
pytestmark = pytest.mark.alone


@pytest.mark.skipif(not shutil.which("rsvg-convert"), reason="rsvg-convert is not installed (Debian package "
                    "librsvg2-bin): it checks that each installed icon draws")
def test_install_and_uninstall(tmp_path):
    """make install puts the applet, its autostart file and its icons (with -symbolic variants) where a
    desktop looks for them; make uninstall takes them away again."""
    # The build's own prefix (/usr/local): nothing is compiled again for other paths.
    root = tmp_path / "root"
    make = ["make", "--no-print-directory", "-s", "-C", lp.TOP, f"BUILD={os.path.relpath(lp.BUILD, lp.TOP)}",
            f"DESTDIR={root}"]
    lp.run([*make, "install"])
    icons = "usr/local/share/icons/hicolor/scalable"
    wanted = ["usr/local/bin/linkprobe-applet", "usr/local/etc/xdg/autostart/linkprobe-applet.desktop",
              "usr/local/share/applications/linkprobe-applet.desktop", "usr/local/share/man/man1/linkprobe-applet.1",
              f"{icons}/apps/linkprobe.svg", f"{icons}/apps/linkprobe-symbolic.svg"]
    for state in ("ok", "degraded", "bad", "offline"):
        wanted += [f"{icons}/status/linkprobe-{state}.svg", f"{icons}/status/linkprobe-{state}-symbolic.svg"]
    for path in wanted:
        assert (root / path).is_file(), f"make install did not install /{path}"
    desktop_file = (root / "usr/local/etc/xdg/autostart/linkprobe-applet.desktop").read_text()
    assert "\nExec=linkprobe-applet\n" in desktop_file and "\nIcon=linkprobe\n" in desktop_file
    # Every icon is an SVG librsvg draws (what the applet does with it for the pixmaps).
    for path in wanted:
        if path.endswith(".svg"):
            lp.run(["rsvg-convert", "-w", "24", "-o", str(tmp_path / "icon.png"), str(root / path)])
    lp.run([*make, "uninstall"])
    left = [os.path.join(d, f) for d, _, files in os.walk(root) for f in files]
    assert not left, left
