# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobe-applet tells when a link recovers, in the notification that said it went bad: a link flaps,
then stays still past the daemon's flapping window (its shortest, 15 s), and the one notification
becomes "recovered" (replaces_id), so dunst still holds one. A file of its own: it waits ~20 s."""

import time

import lp
from test_applet_desktop import WATCH, applets, desktop, notifications, pytestmark  # noqa: F401


def test_recovery_replaces_the_notification(desktop, notifications, bus, netns, client, daemon_factory,  # noqa: F811
                                            applets):  # noqa: F811
    name, peer = lp.unique("rf"), lp.unique("rp")
    far = lp.NetNS()
    try:
        netns.ip("link", "add", name, "type", "veth", "peer", "name", peer, "netns", far.name)
        netns.ip("link", "set", name, "up")
        far.ip("link", "set", peer, "up")
        daemon_factory(netns, config=WATCH + "[Health]\nFlapWindowSec=15s\n")
        lp.wait_for(lambda: client.link_by_name(name), 10, name)
        applet = applets(desktop, bus, config="[Notifications]\nIntervalSec=2\n")
        applet.wait_log("linkprobed is running")

        far.batch([f"link set {peer} {state}" for _ in range(10) for state in ("down", "up")])
        lp.wait_for(lambda: client.link_by_name(name)["Health"] == "flapping", 10, "flapping")
        lp.wait_for(lambda: desktop.notification_count(), 10, lambda: f"a notification; the applet said:\n{applet.log()}")
        lp.wait_for(lambda: client.link_by_name(name)["Health"] == "ok", 40, "the link judged ok again")
        applet.wait_log(f"Notification: link {name} recovered", 10)
        time.sleep(1)
        shown = desktop.notifications()
        assert len(shown) == 1, shown
        (note,) = shown.values()
        assert note["summary"] == f"link {name} recovered", note
    finally:
        far.delete()
