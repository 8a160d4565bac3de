# SPDX-License-Identifier: LGPL-2.1-or-later
"""make install and make uninstall of linkprobe-applet: the program, its autostart and applications
entries and its icons in the hicolor theme; the .desktop files as the freedesktop.org Desktop Entry
Specification wants them (desktop-file-validate)."""

import os
import shutil

import pytest

import lp

# It builds in or installs from the shared build directory, which the files beside it run from.
pytestmark = pytest.mark.alone


DESKTOP_FILES = sorted(os.path.join(d, f) for d, _, files in os.walk(os.path.join(lp.TOP, "src", "applet"))
                       for f in files if f.endswith(".desktop"))


def validate(path):
    """desktop-file-validate's word on a .desktop file: no error and no warning (it prints both; hints,
    which are advice, are let through)."""
    if not shutil.which("desktop-file-validate"):
        pytest.fail("desktop-file-validate is not installed (Debian package desktop-file-utils): run make deps")
    out = lp.run(["desktop-file-validate", "--no-hints", str(path)], check=False)
    assert out.returncode == 0 and not out.stdout.strip() and not out.stderr.strip(), (path, out.stdout, out.stderr)


@pytest.mark.parametrize("path", DESKTOP_FILES, ids=os.path.basename)
def test_desktop_files_valid(path, tmp_path):
    """Each of the applet's .desktop files passes desktop-file-validate; copies with mistakes a person
    makes (no Name, a key the specification does not have, a misspelt Type) do not, so the check is a
    real one."""
    validate(path)
    with open(path) as f:
        text = f.read()
    for mistake, words in ((text.replace("\nName=", "\nNom="), '"Name"'),
                           (text + "Colour=blue\n", '"Colour"'),
                           (text.replace("Type=Application", "Type=Aplication"), "Aplication")):
        broken = tmp_path / "broken.desktop"
        broken.write_text(mistake)
        out = lp.run(["desktop-file-validate", str(broken)], check=False)
        assert out.returncode != 0 and words in out.stdout, (words, out.stdout)


def test_desktop_files_found():
    """The list above is not empty: the applet ships its autostart entry."""
    assert [p for p in DESKTOP_FILES if p.endswith("linkprobe-applet.desktop")], DESKTOP_FILES


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
    for entry in ("usr/local/etc/xdg/autostart", "usr/local/share/applications"):
        validate(root / entry / "linkprobe-applet.desktop")
    desktop_file = (root / "usr/local/etc/xdg/autostart/linkprobe-applet.desktop").read_text()
    assert "\nExec=linkprobe-applet\n" in desktop_file and "\nIcon=linkprobe\n" in desktop_file
    # Every icon is an SVG librsvg draws (what the applet does with it for the pixmaps).
    for path in wanted:
        if path.endswith(".svg"):
            lp.run(["rsvg-convert", "-w", "24", "-o", str(tmp_path / "icon.png"), str(root / path)])
    lp.run([*make, "uninstall"])
    left = [os.path.join(d, f) for d, _, files in os.walk(root) for f in files]
    assert not left, left
