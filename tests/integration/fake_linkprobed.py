# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobed as the applet reads it, played on a test bus so that a test says when each thing happens:
org.linkprobe.LinkProbe1 with GetManagedObjects (links with Name, Kind, Health and HealthReason), the
root object's Manager.WatchIntervalUSec, and PropertiesChanged for Health sent when the test sets it,
each batch in one go as the daemon's publisher sends what one watch sample judged. It runs on a thread
with a GLib main context of its own, like fake_systemd.FakeSystemd."""

import threading

from gi.repository import Gio, GLib

from fake_service import FakeService

NAME = "org.linkprobe.LinkProbe1"
PATH = "/org/linkprobe/LinkProbe1"
IFACE = "org.linkprobe.LinkProbe1."

INTROSPECTION = """
<node>
  <interface name="org.freedesktop.DBus.ObjectManager">
    <method name="GetManagedObjects"><arg type="a{oa{sa{sv}}}" direction="out"/></method>
  </interface>
  <interface name="org.linkprobe.LinkProbe1.Manager">
    <property name="WatchIntervalUSec" type="t" access="read"/>
  </interface>
  <interface name="org.linkprobe.LinkProbe1.Link">
    <property name="Name" type="s" access="read"/>
    <property name="Kind" type="s" access="read"/>
    <property name="Health" type="s" access="read"/>
    <property name="HealthReason" type="s" access="read"/>
  </interface>
</node>
"""


class FakeLinkprobed(FakeService):
    def __init__(self, bus, names, watch_usec):
        """names: the links, all ok at the start; watch_usec: the Manager's WatchIntervalUSec."""
        self.watch_usec = watch_usec
        self.links = {f"{PATH}/link/{i + 1}": {"Name": n, "Kind": "ether", "Health": "ok", "HealthReason": ""}
                      for i, n in enumerate(names)}
        self.manager_read = threading.Event()
        self.lock = threading.Lock()
        super().__init__(bus, NAME, "the fake linkprobed")

    def register(self, conn):
        info = Gio.DBusNodeInfo.new_for_xml(INTROSPECTION)
        om, manager, link = info.interfaces
        conn.register_object(PATH, om, self._on_call, None, None)
        conn.register_object(PATH, manager, None, self._get_manager, None)
        for path in self.links:
            conn.register_object(path, link, None, self._get_link, None)

    def _props(self, path):
        return {k: GLib.Variant("s", v) for k, v in self.links[path].items()}

    def _on_call(self, conn, sender, path, interface, method, params, invocation):
        with self.lock:
            objects = {p: {IFACE + "Link": self._props(p)} for p in self.links}
        invocation.return_value(GLib.Variant("(a{oa{sa{sv}}})", (objects,)))

    def _get_manager(self, conn, sender, path, interface, prop):
        self.manager_read.set()
        return GLib.Variant("t", self.watch_usec)

    def _get_link(self, conn, sender, path, interface, prop):
        with self.lock:
            return GLib.Variant("s", self.links[path][prop])

    def set_health(self, names, health, reason):
        """What one watch sample judged: the links named go to health, a PropertiesChanged each, sent
        together and flushed before this returns."""
        def emit():
            for path, link in self.links.items():
                if link["Name"] not in names:
                    continue
                with self.lock:
                    link.update(Health=health, HealthReason=reason)
                self.conn.emit_signal(None, path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                      GLib.Variant("(sa{sv}as)", (IFACE + "Link", {
                                          "Health": GLib.Variant("s", health),
                                          "HealthReason": GLib.Variant("s", reason)}, [])))
            self.conn.flush_sync(None)
        self.call(emit)
