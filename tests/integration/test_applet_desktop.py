# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobe-applet as a person sees it: under Xvfb, with xfce4-panel's systray as the StatusNotifierItem
host and dunst as the notification daemon on a session bus of the test's own, linkprobed on a private
"system" bus in a network namespace (and a umockdev Thunderbolt testbed). The applet runs as nobody: it
needs no privilege. Screenshots are kept in the build directory (applet-*.png) and checked."""

import os
import pathlib
import re
import shutil
import subprocess
import tempfile
import time

import pytest

import desktop as dt
import lp
import tbt_harness as h
from umockdev_testbed import start as start_in_testbed

APPLET = os.path.join(lp.BUILD, "linkprobe-applet")
ICONS = os.path.join(lp.TOP, "src", "applet", "data", "icons")
SHOTS = lp.BUILD
WATCH = "[Watch]\nIntervalSec=100ms\n"
DOCK = "/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1"
# The icon's four backgrounds (src/applet/data/icons/linkprobe-*.svg).
ICON_COLOURS = [(0x2e, 0x9e, 0x5b), (0xd9, 0x8e, 0x04), (0xc6, 0x28, 0x28), (0x6b, 0x6b, 0x6b)]

SKIP = dt.missing_tools() or h.missing_tools(boltd=False)
if not SKIP and not os.access(APPLET, os.X_OK):
    SKIP = f"{APPLET} is not built"
pytestmark = pytest.mark.skipif(bool(SKIP), reason=SKIP or "")


@pytest.fixture(scope="module")
def desktop():
    d = dt.Desktop()
    yield d
    d.close()


@pytest.fixture
def notifications(desktop):
    """dunst, for one test: each test counts the notifications it caused from zero."""
    desktop.start_dunst()
    yield desktop
    lp.stop_process(desktop.dunst)
    desktop.dunst = None


class Applet:
    """linkprobe-applet as nobody on the desktop, reading linkprobed on system_bus."""

    def __init__(self, desktop, system_bus, session_address=None, display=True, config=None, ctl=lp.CTL,
                 bus_from_environment=False):
        self.desktop = desktop
        # The test's private system bus lives in a directory only root may enter (mkdtemp's 0700): opened,
        # or nobody's connect() is refused with EACCES, "Permission denied", however the address is given.
        if not bus_from_environment:
            os.chmod(system_bus.dir, 0o755)
        env = desktop.user_env("nobody")
        if session_address:
            env["DBUS_SESSION_BUS_ADDRESS"] = session_address
        if not display:
            del env["DISPLAY"]
        args = [f"--linkprobectl={ctl}", f"--icon-dir={ICONS}", "--log-level=info"]
        if bus_from_environment:
            env["DBUS_SYSTEM_BUS_ADDRESS"] = system_bus.address
        else:
            args.append(f"--bus-address={system_bus.address}")
        if config is not None:
            path = os.path.join(env["HOME"], "applet.conf")
            with open(path, "w") as f:
                f.write(config)
            os.chmod(path, 0o644)
            args.append(f"--config={path}")
        # A file of its own: several applets can run on one desktop.
        fd, self.log_path = tempfile.mkstemp(prefix="applet-", suffix=".log", dir=os.path.join(env["HOME"], ".."))
        self.log_file = os.fdopen(fd, "w+")
        self.proc = subprocess.Popen(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", APPLET, *args],
                                     stdout=self.log_file, stderr=subprocess.STDOUT, env=env, cwd="/")
        # setpriv executes the applet: same PID, so this is the name it owns.
        self.name = f"org.kde.StatusNotifierItem-{self.proc.pid}-1"

    def log(self):
        self.log_file.flush()
        with open(self.log_path) as f:
            return f.read()

    def wait_log(self, text, timeout=10):
        return lp.wait_for(lambda: text in self.log(), timeout, lambda: f"{text!r} in the applet's log:\n{self.log()}")

    def menu(self):
        return self.desktop.menu_layout(self.name, "/MenuBar")

    def item(self, prop):
        return self.desktop.get(self.name, "/StatusNotifierItem", dt.SNI, prop)

    def stop(self):
        lp.stop_process(self.proc)
        self.log_file.close()
        assert self.proc.returncode == 0, f"the applet exited with {self.proc.returncode}:\n{self.log()}"


@pytest.fixture
def applets():
    started = []

    def start(*args, **kw):
        a = Applet(*args, **kw)
        started.append(a)
        return a

    yield start
    for a in started:
        if a.proc.poll() is None:
            a.stop()


def group(layout, title):
    """The submenu whose label starts with title ("Links"), or None."""
    return next((c for c in layout["children"] if (c["label"] or "").startswith(title + " (")), None)


def bus_links(client):
    return {p[lp.IFACE + "Link"]["Name"]: p[lp.IFACE + "Link"] for p in client.objects().values()
            if lp.IFACE + "Link" in p and p[lp.IFACE + "Link"]["Kind"] != "loopback"}


def colour_near(pixel, colours, tolerance=40):
    return any(sum(abs(a - b) for a, b in zip(pixel, c)) <= tolerance for c in colours)


def icon_box(desktop, png):
    """(x, y, w, h) around the pixels of the applet's icon in the panel, or None."""
    rows = desktop.pixels(png, 0, 0, dt.WIDTH, dt.PANEL)
    hits = [(x, y) for y, row in enumerate(rows) for x, px in enumerate(row) if colour_near(px, ICON_COLOURS)]
    if len(hits) < 30:
        return None
    xs, ys = [x for x, _ in hits], [y for _, y in hits]
    return min(xs), min(ys), max(xs) - min(xs) + 1, max(ys) - min(ys) + 1


def distinct_colours(desktop, png, box):
    return len({px for row in desktop.pixels(png, *box) for px in row})


def test_icon_menu_and_window(desktop, bus, netns, client, daemon_factory, applets):
    """The icon is registered with the watcher and drawn in the panel; the menu lists the links the bus
    has (a name with markup and an underscore as it is), a thousand of them cut at 25 with a count; a
    menu item opens the details window with the node's picture (or the text of `linkprobectl topo`)."""
    odd = "<b>&_x"
    netns.ip("link", "add", odd, "type", "veth", "peer", "name", lp.unique("apo"))
    # A thousand links: the menu stays a menu.
    netns.batch([f"link add ap{i}a type veth peer name ap{i}b" for i in range(499)])
    daemon_factory(netns)
    # Each look at a thousand objects costs: not every 50 ms.
    links = lp.wait_for(lambda: (lambda l: l if len(l) == 1000 else None)(bus_links(client)), 30,
                        "1000 links on the bus", interval=0.5)

    applet = applets(desktop, bus)
    lp.wait_for(lambda: any(applet.name in item for item in desktop.registered_items()), 15,
                lambda: f"{applet.name} registered with the watcher (it has {desktop.registered_items()}); the "
                        f"applet said:\n{applet.log()}")
    applet.wait_log("linkprobed is running")
    assert applet.item("Menu") == "/MenuBar"
    lp.wait_for(lambda: applet.item("IconName") == "linkprobe-ok", 5, lambda: applet.item("IconName"))

    def menu_mismatch():
        """What in the Links submenu differs from the bus now (Health moves as the daemon judges the new
        links), or None."""
        layout = applet.menu()
        links_menu = group(layout, "Links")
        if not links_menu:
            return "no Links group", layout
        now = bus_links(client)
        labels = [c["label"] for c in links_menu["children"]]
        if links_menu["label"] != f"Links ({len(now)})":
            return links_menu["label"], layout
        if len(labels) != 26 or labels[-1] != f"… and {len(now) - 25} more (linkprobectl link)":
            return labels, layout
        for label in labels[:-1]:
            name = label.split(" — ")[0].replace("__", "_")
            if name not in now or now[name]["ConnectionType"] not in label or \
                    not label.endswith(" — " + now[name]["Health"]):
                return f"{label!r} against {now.get(name)}", layout
        return None, layout

    lp.wait_for(lambda: menu_mismatch()[0] is None, 20, lambda: f"the menu to match the bus: {menu_mismatch()[0]}",
                interval=0.5)
    layout = menu_mismatch()[1]
    labels = [c["label"] for c in group(layout, "Links")["children"]]
    # The odd name is shown as it is, its "_" doubled (no mnemonic); it sorts first among equals ("<").
    now = bus_links(client)
    if all(now[label.split(" — ")[0].replace("__", "_")]["Health"] == now[odd]["Health"] for label in labels[:-1]):
        assert any(label.startswith("<b>&__x — ") for label in labels), labels
    assert len(links) == 1000
    tooltip = applet.item("ToolTip")
    assert tooltip[2] == "linkprobe" and "Fastest link: none" in tooltip[3], tooltip  # veths are virtual

    # The panel draws the icon.
    panel_png = os.path.join(SHOTS, "applet-panel.png")
    box = lp.wait_for(lambda: icon_box(desktop, desktop.screenshot(panel_png)), 15, "the icon in the panel")
    assert box[2] >= 8 and box[3] >= 8 and distinct_colours(desktop, panel_png, box) > 3, box

    # Right click: the panel reads the menu over dbusmenu and shows it.
    cx, cy = box[0] + box[2] // 2, box[1] + box[3] // 2
    lp.run(["xdotool", "mousemove", str(cx), str(cy), "click", "3"], env=desktop.env)
    menu_png = os.path.join(SHOTS, "applet-menu.png")
    below = (max(0, cx - 100), dt.PANEL, 200, 100)
    lp.wait_for(lambda: distinct_colours(desktop, desktop.screenshot(menu_png), below) > 4, 10,
                "the panel's menu under the icon")
    lp.run(["xdotool", "key", "Escape"], env=desktop.env)
    lp.run(["xdotool", "mousemove", str(dt.WIDTH - 1), str(dt.HEIGHT - 1)], env=desktop.env)  # no tooltip

    # "Details…" opens the window; it shows the node's picture or the text of `linkprobectl topo`.
    details = next(c for c in layout["children"] if c["label"] == "Details…")
    desktop.menu_event(applet.name, "/MenuBar", details["id"])
    geometry = lp.wait_for(lambda: desktop.window_geometry("linkprobe — details"), 10, "the details window")
    drawn = applet.wait_log("Details window: the ", 15)
    assert drawn
    time.sleep(0.5)  # the picture is drawn on the next frame
    window_png = desktop.screenshot(os.path.join(SHOTS, "applet-window.png"))
    assert distinct_colours(desktop, window_png, geometry) > 4, geometry
    assert re.search(r"Details window: (the node's picture|the text of linkprobectl topo)", applet.log())


def host_only_fixture(tmp_path, fixture, dock):
    """fixture without the dock and what is behind it: the machine before the dock is plugged in."""
    path = tmp_path / "host-only.umockdev"
    path.write_text(h.fixture_records(fixture, lambda p: not p.startswith(dock)))
    return str(path)


DEGRADED_DOCK = "/devices/pci0000:00/0000:00:07.0/0000:20:00.0/0000:21:00.0/0000:22:00.0/domain0/0-0/0-1"
PLUGS = {
    # A dock with a dock, a peer host and a Mac behind it: one notification, named for the first dock.
    "two-docks": ("peers-two-docks.umockdev", DOCK, 4, ["Thunderbolt 4, 40 Gb/s", "and 3 more behind it:",
                                                        "node03 (peer host): Thunderbolt 4, 40 Gb/s"]),
    # A USB4 v2 dock that came up at 20 Gb/s a lane: the reason is in the notification.
    "degraded": ("degraded-usb4v2.umockdev", DEGRADED_DOCK, 1, ["\ndegraded: ", "USB4 v2"]),
    # The same with Thunderbolt=no in applet.conf: no notification, the menu all the same.
    "off": ("degraded-usb4v2.umockdev", DEGRADED_DOCK, 1, None),
}


@pytest.mark.parametrize("plug", sorted(PLUGS))
def test_dock_plugged_is_one_notification(plug, desktop, notifications, bus, netns, client, daemon_factory,
                                          live_bed, applets, tmp_path):
    """A dock plugged in is one notification with its class and rate (and why it is degraded), however
    many devices come with it; the menu lists each with theirs."""
    fixture, dock, count, wanted = PLUGS[plug]
    bed = live_bed(host_only_fixture(tmp_path, fixture, dock))
    start_in_testbed(daemon_factory, netns, bed)
    applet = applets(desktop, bus, config="[Notifications]\nThunderbolt=no\n" if wanted is None else None)
    applet.wait_log("linkprobed is running")
    lp.wait_for(lambda: applet.menu()["children"][0]["label"].startswith("Fastest link"), 10, "the menu")
    assert group(applet.menu(), "Thunderbolt") is None
    assert desktop.notification_count() == 0

    bed.add_from_string(h.fixture_records(fixture, lambda p: p.startswith(dock)))
    if wanted is None:
        lp.wait_for(lambda: group(applet.menu(), "Thunderbolt"), 10, "the Thunderbolt group")
        time.sleep(1.5)  # past the moment events are merged for
        assert desktop.notification_count() == 0, desktop.notifications()
        return
    lp.wait_for(lambda: desktop.notification_count(), 15, lambda: f"a notification; the applet said:\n{applet.log()}")
    time.sleep(1.5)  # what could come after it (events are merged for 0.7 s)
    desktop.screenshot(os.path.join(SHOTS, f"applet-notification-{plug}.png"))
    shown = desktop.notifications()
    assert len(shown) == 1, shown
    (note,) = shown.values()
    assert note["appname"] == "linkprobe"
    assert note["summary"].startswith("Thunderbolt dock connected: "), note
    for text in wanted:
        assert text in note["body"], note

    tbt = lp.wait_for(lambda: group(applet.menu(), "Thunderbolt"), 5, "the Thunderbolt group")
    assert tbt["label"] == f"Thunderbolt ({count})"
    labels = [c["label"] for c in tbt["children"]]
    assert sum("(dock) — " in label for label in labels) >= 1, labels
    if plug == "degraded":
        assert "degraded" in labels[0], labels
        # One verdict: the dock is Degraded, so its Health is degraded, and so is the icon.
        lp.wait_for(lambda: applet.item("IconName") == "linkprobe-degraded", 5, lambda: applet.item("IconName"))


def test_flapping_link_is_one_notification(desktop, notifications, bus, netns, client, daemon_factory, applets):
    """A link whose carrier flaps twenty times is one notification (its Health went bad), and the
    tooltip names it, escaped for markup."""
    name, peer = "<i>f&0", lp.unique("flp")
    # The far end in a namespace of its own: the daemon sees one link, whose carrier the far end moves.
    far = lp.NetNS()
    try:
        check_flapping(desktop, bus, netns, far, client, daemon_factory, applets, name, peer)
    finally:
        far.delete()


def check_flapping(desktop, bus, netns, far, client, daemon_factory, applets, name, peer):
    netns.ip("link", "add", name, "type", "veth", "peer", "name", peer, "netns", far.name)
    netns.ip("link", "set", name, "up")
    daemon_factory(netns, config=WATCH)
    lp.wait_for(lambda: client.link_by_name(name), 10, name)
    applet = applets(desktop, bus)
    applet.wait_log("linkprobed is running")

    # Twenty carrier changes in one go (the kernel counts each; the daemon's watch samples the count).
    far.batch([f"link set {peer} {state}" for _ in range(10) for state in ("up", "down")])
    lp.wait_for(lambda: client.link_by_name(name)["Health"] == "flapping", 10, "flapping")
    lp.wait_for(lambda: desktop.notification_count(), 10, lambda: f"a notification; the applet said:\n{applet.log()}")
    time.sleep(1.5)
    shown = desktop.notifications()
    assert len(shown) == 1, shown
    (note,) = shown.values()
    assert "f&" in note["summary"] and "health went bad" in note["summary"], note
    assert "flapping" in note["body"] and "carrier changes" in note["body"], note

    tooltip = lp.wait_for(lambda: (lambda t: t if "flapping" in t[3] else None)(applet.item("ToolTip")), 5, "tooltip")
    assert "link &lt;i&gt;f&amp;0: flapping" in tooltip[3], tooltip
    assert applet.item("IconName") == "linkprobe-bad"


def test_no_host_no_daemon_and_reconnect(desktop, bus, netns, daemon_factory, applets):
    """No tray host, no display and linkprobed not running: the applet says each once and keeps running;
    when linkprobed starts it loads the objects, when it stops it says so again, and when the bus itself
    goes away it keeps running too."""
    bare = lp.PrivateBus()
    try:
        os.chmod(bare.dir, 0o755)
        applet = applets(desktop, bus, session_address=bare.address, display=False)
        applet.wait_log("linkprobed is not running")
        applet.wait_log("No tray host")
        applet.wait_log("details window is not available")
        daemon = daemon_factory(netns)
        applet.wait_log("linkprobed is running")
        daemon.stop()
        lp.wait_for(lambda: applet.log().count("linkprobed is not running") == 2, 10,
                    lambda: f"a second 'not running'; the applet said:\n{applet.log()}")
        assert applet.log().count("No tray host") == 1
        # The bus itself goes away: said, and the applet tries again (every 5 s) instead of ending.
        lp.stop_process(bus.proc)
        applet.wait_log("The system bus went away")
        time.sleep(0.5)
        assert applet.proc.poll() is None
    finally:
        bare.stop()


FAKE_CTL = """#!/bin/sh
# linkprobectl as the details window runs it: `topo --svg` writes an SVG document (exit 0).
echo "$*" >> {log}
case "$*" in
*--svg*) cat <<'SVG'
<svg xmlns="http://www.w3.org/2000/svg" width="480" height="300" viewBox="0 0 480 300">
<rect x="10" y="10" width="460" height="280" fill="#3465a4"/>
<text x="30" y="60" font-size="28" fill="#ffffff">node picture</text>
</svg>
SVG
;;
*) echo "text of topo";;
esac
"""


def test_window_draws_the_svg_and_redraws_when_objects_change(desktop, bus, netns, client, daemon_factory, applets):
    """`linkprobectl topo --svg` (here a stand-in that writes a known picture) is drawn in the details window
    with librsvg; a burst of changes redraws it once they stop, not once per change."""
    # Where nobody (the applet's user) may run it and write its log.
    ctl_dir = pathlib.Path(tempfile.mkdtemp(prefix="ctl-", dir=desktop.dir))
    os.chmod(ctl_dir, 0o777)
    log = ctl_dir / "runs"
    fake = ctl_dir / "linkprobectl"
    fake.write_text(FAKE_CTL.format(log=log))
    os.chmod(fake, 0o755)
    daemon_factory(netns)
    applet = applets(desktop, bus, ctl=str(fake))
    applet.wait_log("linkprobed is running")
    details = lp.wait_for(lambda: next((c for c in applet.menu()["children"] if c["label"] == "Details…"), None), 5,
                          "Details…")
    desktop.menu_event(applet.name, "/MenuBar", details["id"])
    applet.wait_log("Details window: the node's picture")
    geometry = lp.wait_for(lambda: desktop.window_geometry("linkprobe — details"), 10, "the details window")
    time.sleep(0.5)
    png = desktop.screenshot(os.path.join(SHOTS, "applet-window-svg.png"))
    blue = [px for row in desktop.pixels(png, *geometry) for px in row if colour_near(px, [(0x34, 0x65, 0xa4)])]
    assert len(blue) > 460 * 280 // 2, "the SVG's rectangle is not in the window"

    runs = len(log.read_text().splitlines())
    netns.batch([f"link add wr{i}a type veth peer name wr{i}b" for i in range(10)])
    lp.wait_for(lambda: len(log.read_text().splitlines()) > runs, 10, "a redraw after the links came")
    time.sleep(1.5)
    redraws = len(log.read_text().splitlines()) - runs
    assert 1 <= redraws <= 2, log.read_text()
    assert all("topo --svg" in line for line in log.read_text().splitlines()), log.read_text()
    desktop.menu_event(applet.name, "/MenuBar", next(c for c in applet.menu()["children"] if c["label"] == "Quit")["id"])
    lp.wait_for(lambda: applet.proc.poll() is not None, 5, "the applet to quit")
    assert applet.proc.returncode == 0


@pytest.mark.parametrize("config,error", [
    ("[Notifications]\nHealth=maybe\n", "Health=maybe is not valid"),
    ("[Notifications]\nIntervalSec=-1\n", "IntervalSec=-1 is not valid"),
    ("[Notifications\n", "line 1 cannot be read"),
])
def test_bad_configuration_is_refused(tmp_path, config, error):
    """A configuration the applet cannot read is an error that names the file and the key (exit 1)."""
    path = tmp_path / "applet.conf"
    path.write_text(config)
    proc = lp.run([APPLET, f"--config={path}"], check=False, env={"PATH": os.environ.get("PATH", "")}, timeout=10)
    assert proc.returncode == 1, proc
    assert str(path) in proc.stderr and error in proc.stderr, proc.stderr


def test_system_bus_from_the_environment(desktop, bus, applets):
    """Without --bus-address=, the applet running as nobody reads linkprobed on the bus that
    DBUS_SYSTEM_BUS_ADDRESS names (sd_bus_open_system() honours it); while the socket's directory is closed
    to nobody it says "Permission denied" (EACCES from connect(), not a refusal of the address) and
    tries again every 5 s, and it connects once the directory is opened."""
    from fake_linkprobed import FakeLinkprobed

    os.chmod(bus.dir, 0o700)
    fake = FakeLinkprobed(bus, ["envlink0"], 2_000_000)
    try:
        applet = applets(desktop, bus, bus_from_environment=True)
        applet.wait_log("Cannot connect to the system bus: Permission denied; trying again every 5 s.")
        assert "linkprobed is running" not in applet.log()
        os.chmod(bus.dir, 0o755)
        applet.wait_log("linkprobed is running: 1 objects.", timeout=20)
        applet.wait_log("notifications merge over 3000 ms")
    finally:
        fake.stop()


@pytest.mark.skipif(not shutil.which("setcap"), reason="setcap is not installed (Debian package libcap2-bin)")
def test_file_capabilities_are_said(desktop, bus):
    """A copy of the applet given a file capability runs in secure-execution mode, where sd-bus ignores
    DBUS_SESSION_BUS_ADDRESS, DBUS_SYSTEM_BUS_ADDRESS and XDG_RUNTIME_DIR (secure_getenv()): it says so
    rather than failing without a word, then cannot reach the session bus they named and exits 1."""
    os.chmod(bus.dir, 0o755)
    directory = tempfile.mkdtemp(prefix="capapplet-", dir=desktop.dir)
    os.chmod(directory, 0o755)
    program = os.path.join(directory, "linkprobe-applet")
    shutil.copy(APPLET, program)
    lp.run(["setcap", "cap_net_raw+ep", program])
    env = desktop.user_env("nobody")
    env["DBUS_SYSTEM_BUS_ADDRESS"] = bus.address
    env.pop("DISPLAY", None)
    proc = subprocess.run(["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups", program,
                           f"--icon-dir={ICONS}"], capture_output=True, text=True, env=env, cwd="/", timeout=30)
    assert "secure-execution mode" in proc.stderr and "DBUS_SYSTEM_BUS_ADDRESS" in proc.stderr, proc.stderr
    assert proc.returncode == 1 and "Cannot connect to the session bus" in proc.stderr, proc


def flapping_in_two_samples(desktop, bus, applets, watch_usec):
    """Five links judged flapping by two watch samples of a linkprobed that watches every watch_usec
    (played by fake_linkprobed, so the samples are exactly 2 s apart whatever the load): three at the
    first, two at the second. The notifications dunst shows, by id."""
    from fake_linkprobed import FakeLinkprobed

    names = [f"fl{i}" for i in range(5)]
    fake = FakeLinkprobed(bus, names, watch_usec)
    try:
        applet = applets(desktop, bus)
        applet.wait_log("linkprobed is running")
        merge = notification_merge_msec(watch_usec)
        applet.wait_log(f"notifications merge over {merge} ms")
        fake.set_health(names[:3], "flapping", "7 carrier changes in the last 2 min")
        time.sleep(2.0)
        fake.set_health(names[3:], "flapping", "7 carrier changes in the last 2 min")
        lp.wait_for(lambda: desktop.notification_count(), 20, lambda: f"a notification; the applet said:\n{applet.log()}")
        # Whatever else is coming comes within a window of the last event.
        time.sleep(merge / 1000 + 1.5)
        return names, desktop.notifications()
    finally:
        fake.stop()


def notification_merge_msec(watch_usec):
    """The applet's merge window (applet-notify.c, linkprobe-applet(1)): 700 ms, or one and a half watch
    intervals where that is longer."""
    return max(700, watch_usec // 1000 * 3 // 2)


def test_links_judged_at_two_watch_samples_are_one_notification(desktop, notifications, bus, applets):
    """Links judged flapping at two consecutive watch samples (2 s apart, the daemon watching every 2 s):
    the applet's merge window follows WatchIntervalUSec, so they are one notification naming all five."""
    names, shown = flapping_in_two_samples(desktop, bus, applets, 2_000_000)
    assert len(shown) == 1, shown
    (note,) = shown.values()
    assert note["summary"] == "Health changed for 5 objects (5 bad)", note
    assert all(f"link {n}: flapping" in note["body"] for n in names), note


def test_merge_window_is_the_watch_interval(desktop, notifications, bus, applets):
    """The same two batches from a daemon that watches every 100 ms are two moments to a person (2 s is
    twenty samples apart): each batch is told apart, and as neither is more than three links, each link
    in its own notification (five), so the window is the daemon's and not merely long."""
    names, shown = flapping_in_two_samples(desktop, bus, applets, 100_000)
    assert sorted(n["summary"] for n in shown.values()) == [f"link {n}: health went bad" for n in names], shown


def test_many_links_going_bad_at_once_are_one_notification(desktop, notifications, bus, netns, client,
                                                           daemon_factory, applets):
    """Five links that start flapping together are one notification that names them, not five: the real
    daemon, real carrier changes. The daemon watches every second, so the applet merges what comes
    within 1.5 s of the last event (the two tests above play the samples exactly)."""
    far = lp.NetNS()
    try:
        names = [lp.unique("mf") for _ in range(5)]
        peers = [lp.unique("mp") for _ in names]
        for name, peer in zip(names, peers):
            netns.ip("link", "add", name, "type", "veth", "peer", "name", peer, "netns", far.name)
            netns.ip("link", "set", name, "up")
        daemon_factory(netns, config="[Watch]\nIntervalSec=1s\n")
        lp.wait_for(lambda: all(client.link_by_name(n) for n in names), 10, "the links")
        applet = applets(desktop, bus)
        applet.wait_log("linkprobed is running")
        applet.wait_log("notifications merge over 1500 ms")
        far.batch([f"link set {peer} {state}" for _ in range(10) for state in ("up", "down") for peer in peers])
        lp.wait_for(lambda: all(client.link_by_name(n)["Health"] == "flapping" for n in names), 10, "flapping")
        lp.wait_for(lambda: desktop.notification_count(), 10, lambda: f"a notification; the applet said:\n{applet.log()}")
        time.sleep(3)
        shown = desktop.notifications()
        assert len(shown) == 1, shown
        (note,) = shown.values()
        assert note["summary"] == "Health changed for 5 objects (5 bad)", note
        assert all(f"link {n}: flapping" in note["body"] for n in names), note
    finally:
        far.delete()
