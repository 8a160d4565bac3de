# SPDX-License-Identifier: LGPL-2.1-or-later
"""A desktop for tests of linkprobe-applet: Xvfb, a session bus of our own, a real StatusNotifierItem
host (xfce4-panel with only its systray plugin, which is also the org.kde.StatusNotifierWatcher) and
a real notification daemon (dunst), screenshots (xwd + ImageMagick's convert) and the few reads a test
makes on the session bus (the watcher's items, the item's properties, the menu's layout).

Every name carries the PID; everything started is stopped on close."""

import json
import os
import pwd
import shutil
import subprocess
import tempfile

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

from lp import run, stop_process, wait_for, wait_until  # noqa: E402

XFCONFD = "/usr/lib/x86_64-linux-gnu/xfce4/xfconf/xfconfd"
TOOLS = {"Xvfb": "xvfb", "xfce4-panel": "xfce4-panel", "dunst": "dunst", "dunstctl": "dunst", "xwd": "x11-apps",
         "convert": "imagemagick", "xwininfo": "x11-utils", "xdotool": "xdotool", "dbus-daemon": "dbus",
         "setpriv": "util-linux"}
WATCHER = "org.kde.StatusNotifierWatcher"
SNI = "org.kde.StatusNotifierItem"
MENU = "com.canonical.dbusmenu"

PANEL_XML = """<?xml version="1.0" encoding="UTF-8"?>
<channel name="xfce4-panel" version="1.0">
  <property name="configver" type="int" value="2"/>
  <property name="panels" type="array">
    <value type="int" value="1"/>
    <property name="panel-1" type="empty">
      <property name="position" type="string" value="p=6;x=0;y=0"/>
      <property name="length" type="uint" value="100"/>
      <property name="position-locked" type="bool" value="true"/>
      <property name="size" type="uint" value="{size}"/>
      <property name="plugin-ids" type="array">
        <value type="int" value="1"/>
      </property>
    </property>
  </property>
  <property name="plugins" type="empty">
    <property name="plugin-1" type="string" value="systray">
      <property name="icon-size" type="uint" value="{icon}"/>
      <property name="square-icons" type="bool" value="true"/>
    </property>
  </property>
</channel>
"""

SESSION_BUS = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
  </policy>
</busconfig>
"""

WIDTH, HEIGHT, PANEL = 1024, 700, 32


def missing_tools():
    """Why the desktop cannot run here, or None."""
    for tool, package in TOOLS.items():
        if not shutil.which(tool):
            return f"{tool} not installed (Debian package {package})"
    if not os.access(XFCONFD, os.X_OK):
        return f"{XFCONFD} not installed (Debian package xfconf): xfce4-panel reads its settings from it"
    return None


class Desktop:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix=f"lp-desktop-{os.getpid()}-")
        os.chmod(self.dir, 0o755)
        self.procs = []
        self.logs = {}
        try:
            self._start()
        except BaseException:
            self.close()
            raise

    def _spawn(self, name, cmd, env=None, **kw):
        log = open(os.path.join(self.dir, f"{name}.log"), "w+")
        self.logs[name] = log
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env or self.env, **kw)
        self.procs.append(proc)
        return proc

    def log(self, name):
        f = self.logs[name]
        f.flush()
        with open(f.name) as r:
            return r.read()

    def _start(self):
        # Xvfb picks a free display and says which (-displayfd): tests running at once never collide.
        # -ac: the applet runs as another user (it needs no privilege) and must reach the display.
        r, w = os.pipe()
        self.xvfb = self._spawn("xvfb", ["Xvfb", "-displayfd", str(w), "-screen", "0", f"{WIDTH}x{HEIGHT}x24",
                                         "-nolisten", "tcp", "-ac"], env=dict(os.environ), pass_fds=(w,))
        os.close(w)
        try:
            number = b""
            while not number.endswith(b"\n"):
                chunk = os.read(r, 16)
                if not chunk:
                    raise RuntimeError(f"Xvfb did not start: {self.log('xvfb')}")
                number += chunk
        finally:
            os.close(r)
        self.display = f":{number.decode().strip()}"

        socket = os.path.join(self.dir, "session-bus")
        config = os.path.join(self.dir, "session-bus.conf")
        with open(config, "w") as f:
            f.write(SESSION_BUS.format(socket=socket))
        r, w = os.pipe()
        # No service directories: nothing is started behind the test's back (dunst, a notifyd).
        self._spawn("dbus", ["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile",
                             f"--print-address={w}"], env=dict(os.environ), pass_fds=(w,))
        os.close(w)
        address = os.read(r, 4096).decode().strip()
        os.close(r)
        if not address:
            raise RuntimeError(f"the session dbus-daemon did not start: {self.log('dbus')}")
        self.address = f"unix:path={socket}"

        home = os.path.join(self.dir, "home")
        self.config_home = os.path.join(home, ".config")
        os.makedirs(os.path.join(self.config_home, "xfce4", "xfconf", "xfce-perchannel-xml"))
        with open(os.path.join(self.config_home, "xfce4", "xfconf", "xfce-perchannel-xml", "xfce4-panel.xml"),
                  "w") as f:
            f.write(PANEL_XML.format(size=PANEL, icon=PANEL - 8))
        runtime = os.path.join(self.dir, "runtime")
        os.mkdir(runtime, 0o700)
        self.env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home, "DISPLAY": self.display,
                    "DBUS_SESSION_BUS_ADDRESS": self.address, "XDG_CONFIG_HOME": self.config_home,
                    "XDG_CACHE_HOME": os.path.join(home, ".cache"), "XDG_RUNTIME_DIR": runtime,
                    "XDG_DATA_HOME": os.path.join(home, ".local", "share"), "LANG": "C.UTF-8",
                    "NO_AT_BRIDGE": "1", "GTK_A11Y": "none"}
        self.bus = Gio.DBusConnection.new_for_address_sync(
            self.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION)

        self._spawn("xfconfd", [XFCONFD])
        wait_for(lambda: self.has_owner("org.xfce.Xfconf"), 10, "xfconfd on the session bus")
        self.panel = self._spawn("panel", ["xfce4-panel", "--disable-wm-check"])
        wait_for(lambda: self.has_owner(WATCHER), 20,
                 lambda: f"xfce4-panel's StatusNotifierWatcher; the panel said:\n{self.log('panel')}")
        self.dunst = None

    def start_dunst(self):
        dunstrc = os.path.join(self.dir, "dunstrc")
        with open(dunstrc, "w") as f:
            # Long timeouts: the notifications stay on the screen for the screenshot; markup as shipped.
            f.write("[global]\nmarkup = full\nfont = Monospace 9\nwidth = 420\norigin = top-right\n"
                    "offset = 10x40\n[urgency_low]\ntimeout = 60\n[urgency_normal]\ntimeout = 60\n"
                    "[urgency_critical]\ntimeout = 60\n")
        self.dunst = self._spawn("dunst", ["dunst", "-config", dunstrc])
        wait_for(lambda: self.has_owner("org.freedesktop.Notifications"), 10,
                 lambda: f"dunst on the session bus; it said:\n{self.log('dunst')}")

    def call(self, name, path, interface, method, args=None, signature=None, timeout_ms=5000):
        reply = self.bus.call_sync(name, path, interface, method,
                                   GLib.Variant(signature, args) if signature else None, None,
                                   Gio.DBusCallFlags.NO_AUTO_START, timeout_ms, None)
        return reply.unpack()

    def has_owner(self, name):
        return self.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "NameHasOwner",
                         (name,), "(s)")[0]

    def get(self, name, path, interface, prop):
        return self.call(name, path, "org.freedesktop.DBus.Properties", "Get", (interface, prop), "(ss)")[0]

    def registered_items(self):
        return list(self.get(WATCHER, "/StatusNotifierWatcher", WATCHER, "RegisteredStatusNotifierItems"))

    def menu_layout(self, name, path):
        """The whole menu as nested dicts: {id, label, enabled, type, children}."""
        revision, layout = self.call(name, path, MENU, "GetLayout", (0, -1, []), "(iias)")

        def convert(node):
            id_, props, children = node
            return {"id": id_, "label": props.get("label"), "enabled": props.get("enabled", True),
                    "type": props.get("type", "standard"), "children": [convert(c) for c in children]}
        return convert(layout)

    def menu_event(self, name, path, item_id):
        self.call(name, path, MENU, "Event", (item_id, "clicked", GLib.Variant("s", ""), 0), "(isvu)")

    def notification_count(self):
        """How many notifications dunst has now (shown, waiting or closed); replacing one adds none."""
        return sum(int(run(["dunstctl", "count", kind], env=self.env).stdout.strip() or 0)
                   for kind in ("displayed", "waiting", "history"))

    def notifications(self):
        """Every notification dunst has shown since it started (displayed, waiting or in its history), by
        id: {"id", "summary", "body", "appname"}."""
        run(["dunstctl", "close-all"], env=self.env)
        history = json.loads(run(["dunstctl", "history"], env=self.env).stdout)
        out = {}
        for entry in history["data"][0]:
            out[entry["id"]["data"]] = {k: entry[k]["data"] for k in ("summary", "body", "appname")}
        return out

    def screenshot(self, path):
        xwd = os.path.join(self.dir, "shot.xwd")
        run(["xwd", "-root", "-silent", "-display", self.display, "-out", xwd])
        run(["convert", xwd, "-define", "png:compression-level=1", path])
        return path

    def pixels(self, png, x, y, w, h):
        """The RGB triples of a region of a screenshot (through a PPM: no imaging module needed)."""
        ppm = subprocess.run(["convert", png, "-crop", f"{w}x{h}+{x}+{y}", "+repage", "-depth", "8", "ppm:-"],
                             capture_output=True, check=True).stdout
        # P6 <width> <height> 255, each after whitespace and maybe a "#" comment line, then the data.
        fields, pos = [], 0
        while len(fields) < 4:
            while ppm[pos:pos + 1].isspace():
                pos += 1
            if ppm[pos:pos + 1] == b"#":
                pos = ppm.index(b"\n", pos) + 1
                continue
            end = pos
            while not ppm[end:end + 1].isspace():
                end += 1
            fields.append(ppm[pos:end])
            pos = end
        width, height = int(fields[1]), int(fields[2])
        data = ppm[pos + 1:]
        return [[tuple(data[(row * width + col) * 3:(row * width + col) * 3 + 3]) for col in range(width)]
                for row in range(height)]

    def window_geometry(self, title):
        """(x, y, width, height) of the top-level window titled title, or None."""
        tree = run(["xwininfo", "-root", "-tree", "-display", self.display]).stdout
        for line in tree.splitlines():
            if f'"{title}"' in line:
                geometry = line.split(")")[-1].split()[0]  # WxH+X+Y
                size, x, y = geometry.split("+")[:3]
                width, height = map(int, size.split("x"))
                return int(x), int(y), width, height
        return None

    def user_env(self, user):
        """The desktop's environment for a process run as user (its own HOME and runtime directory)."""
        entry = pwd.getpwnam(user)
        home = tempfile.mkdtemp(prefix=f"home-{user}-", dir=self.dir)
        os.chmod(home, 0o700)
        os.chown(home, entry.pw_uid, entry.pw_gid)
        env = dict(self.env, HOME=home, XDG_RUNTIME_DIR=home, XDG_CONFIG_HOME=os.path.join(home, ".config"),
                   XDG_CACHE_HOME=os.path.join(home, ".cache"))
        return env

    def close(self):
        if getattr(self, "bus", None) and not self.bus.is_closed():
            self.bus.close_sync(None)
        for proc in reversed(self.procs):
            stop_process(proc)
        for log in self.logs.values():
            log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


__all__ = ["Desktop", "missing_tools", "wait_for", "wait_until"]
