# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobe-applet tells when a link recovers, in the notification that said it went bad: a link flaps,
then stays still past the daemon's flapping window (its shortest, 15 s), and the one notification
becomes "recovered" (replaces_id), so dunst still holds one.

The daemon counts link changes in 15 s buckets of CLOCK_MONOTONIC (src/daemon/counter.h). The flap is
played 1.5 s before a bucket ends, the moment where a window counted in whole buckets from now back held
the flapping verdict for a few hundred milliseconds only: ok again before the applet's merge window
(700 ms) was over, so nobody was told (CI saw it once by chance). A file of its own: it waits up to 15 s
for that moment, then the 15 s window."""

import time

import lp
from test_applet_desktop import WATCH, applets, desktop, notifications, pytestmark  # noqa: F401

BUCKET_SEC = 15  # WINDOW_BUCKET_USEC
FLAP_WINDOW_SEC = 15


def sleep_until_a_bucket_ends_in(lead):
    """Sleeps until CLOCK_MONOTONIC (the daemon's clock too: no time namespace) is lead seconds before a
    multiple of BUCKET_SEC."""
    time.sleep((-time.monotonic() - lead) % BUCKET_SEC)


def test_recovery_replaces_the_notification(desktop, notifications, bus, netns, client, daemon_factory,  # noqa: F811
                                            applets):  # noqa: F811
    name, peer = lp.unique("rf"), lp.unique("rp")
    far = lp.NetNS()
    try:
        netns.ip("link", "add", name, "type", "veth", "peer", "name", peer, "netns", far.name)
        netns.ip("link", "set", name, "up")
        far.ip("link", "set", peer, "up")
        daemon = daemon_factory(netns, config=WATCH + f"[Health]\nFlapWindowSec={FLAP_WINDOW_SEC}s\n")
        lp.wait_for(lambda: client.link_by_name(name), 10, name)
        applet = applets(desktop, bus, config="[Notifications]\nIntervalSec=2\n")
        applet.wait_log("linkprobed is running")

        def said():
            return f"linkprobed said:\n{daemon.log()[-3000:]}\nthe applet said:\n{applet.log()}"

        # 1.5 s before the bucket ends: the next sample (100 ms) records the 20 changes in it, even under load.
        sleep_until_a_bucket_ends_in(1.5)
        flapped = time.monotonic()
        far.batch([f"link set {peer} {state}" for _ in range(10) for state in ("down", "up")])
        lp.wait_for(lambda: client.link_by_name(name)["Health"] == "flapping", 10, lambda: f"flapping; {said()}")
        lp.wait_for(lambda: desktop.notification_count(), 10, lambda: f"a notification; {said()}")
        lp.wait_for(lambda: client.link_by_name(name)["Health"] == "ok", 40,
                    lambda: f"the link judged ok again; {said()}")
        # Each change counts for the whole window after the sample that read it, wherever in its bucket.
        held = time.monotonic() - flapped
        assert held >= FLAP_WINDOW_SEC, f"flapping for {held:.1f} s only; {said()}"
        applet.wait_log(f"Notification: link {name} recovered", 10)
        time.sleep(1)
        shown = desktop.notifications()
        assert len(shown) == 1, f"{shown}; {said()}"
        (note,) = shown.values()
        assert note["summary"] == f"link {name} recovered", note
    finally:
        far.delete()
