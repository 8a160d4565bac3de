# SPDX-License-Identifier: LGPL-2.1-or-later
"""The example applet client (tests/linkprobe-applet.py, printed in org.linkprobe.LinkProbe1(5)
EXAMPLES) runs against the daemon: it shows the Summary and follows links as they come and change.
The manual page shows exactly this file, so the example cannot rot."""

import os
import re
import select
import subprocess
import time

import lp

APPLET = os.path.join(lp.TOP, "tests", "linkprobe-applet.py")
MANPAGE = os.path.join(lp.TOP, "man", "org.linkprobe.LinkProbe1.5")


def read_until(proc, want, timeout=15.0):
    seen = ""
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    while want not in seen:
        left = deadline - time.monotonic()
        assert left > 0, f"no {want!r} from the applet; it said:\n{seen}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536).decode()
            assert chunk, f"the applet ended; it said:\n{seen}"
            seen += chunk
    return seen


def test_applet_follows_the_daemon(netns, bus, daemon_factory):
    daemon_factory(netns)
    proc = subprocess.Popen(["/usr/bin/python3", APPLET, bus.address], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        out = read_until(proc, "thunderbolt peers: 0")
        assert "fastest link: none" in out
        time.sleep(0.5)  # the object manager client has its objects
        netns.ip("link", "add", "ap0", "type", "veth", "peer", "name", "ap1")
        read_until(proc, "link added: ap0")
        netns.ip("link", "set", "ap0", "mtu", "1400")
        read_until(proc, "link ap0: Mtu = 1400")
    finally:
        proc.terminate()
        proc.wait(5)


def roff_unescape(text):
    for roff, plain in (("\\-", "-"), ("\\(aq", "'"), ("\\(dq", '"'), ("\\e", "\\"), ("\\&", "")):
        text = text.replace(roff, plain)
    return text


def test_manual_shows_the_applet():
    with open(MANPAGE) as f:
        page = f.read()
    examples = page[page.index(".SH EXAMPLES"):page.index(".SH SEE ALSO")]
    blocks = [roff_unescape(b) for b in re.findall(r"^\.EX\n(.*?)^\.EE$", examples, re.S | re.M)]
    with open(APPLET) as f:
        script = f.read()
    assert script in blocks, "org.linkprobe.LinkProbe1(5) EXAMPLES must show tests/linkprobe-applet.py as it is"
