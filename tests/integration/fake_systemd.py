# SPDX-License-Identifier: LGPL-2.1-or-later
"""What of systemd's D-Bus API linkprobed follows for [Inhibit] WhileUnitsActive=, played on a test bus:
org.freedesktop.systemd1 with Manager.GetUnit()/Subscribe() and unit objects whose ActiveState the test
sets (PropertiesChanged, UnitNew and UnitRemoved are sent as systemd sends them, only after somebody
subscribed; GetUnit() of a unit that is not loaded is org.freedesktop.systemd1.NoSuchUnit). It runs on a thread
with a GLib main context of its own, like lp.SignalCollector."""

import threading

from gi.repository import Gio, GLib

from fake_service import FakeService

NAME = "org.freedesktop.systemd1"
PATH = "/org/freedesktop/systemd1"

INTROSPECTION = """
<node>
  <interface name="org.freedesktop.systemd1.Manager">
    <method name="GetUnit"><arg type="s" direction="in"/><arg type="o" direction="out"/></method>
    <method name="Subscribe"/>
  </interface>
  <interface name="org.freedesktop.systemd1.Unit">
    <property name="Id" type="s" access="read"/>
    <property name="ActiveState" type="s" access="read"/>
  </interface>
</node>
"""


def unit_path(name):
    """systemd's escaping of a unit name into its object path (bus_label_escape)."""
    out = []
    for i, c in enumerate(name):
        if c.isalnum() and c.isascii() and not (i == 0 and c.isdigit()):
            out.append(c)
        else:
            out.append(f"_{ord(c):02x}")
    return f"{PATH}/unit/{''.join(out)}"


class FakeSystemd(FakeService):
    def __init__(self, bus, states):
        """states: {unit name: ActiveState} of the units loaded at the start; others are not loaded."""
        self.states = dict(states)
        self.subscribed = False
        self.load_calls = []
        self.lock = threading.Lock()
        super().__init__(bus, NAME, "the fake systemd")

    def register(self, conn):
        info = Gio.DBusNodeInfo.new_for_xml(INTROSPECTION)
        self.manager_iface, self.unit_iface = info.interfaces
        conn.register_object(PATH, self.manager_iface, self._on_manager_call, None, None)
        self.registered = {}

    def _ensure_unit(self, name):
        path = unit_path(name)
        if path not in self.registered:
            self.registered[path] = self.conn.register_object(
                path, self.unit_iface, None, lambda *a, n=name: self._get_property(n, *a), None)
            self.states.setdefault(name, "inactive")
        return path

    def _get_property(self, name, conn, sender, path, interface, prop):
        with self.lock:
            return GLib.Variant("s", name if prop == "Id" else self.states.get(name, "inactive"))

    def _on_manager_call(self, conn, sender, path, interface, method, params, invocation):
        if method == "GetUnit":
            (name,) = params.unpack()
            self.load_calls.append(name)
            if name not in self.states:
                invocation.return_dbus_error("org.freedesktop.systemd1.NoSuchUnit", f"Unit {name} not loaded.")
                return
            invocation.return_value(GLib.Variant("(o)", (self._ensure_unit(name),)))
        elif method == "Subscribe":
            self.subscribed = True
            invocation.return_value(None)

    def set_state(self, name, state, invalidate=False):
        """Sets a unit's ActiveState and announces it (changed, or only invalidated, as systemd may)."""
        def emit():
            path = self._ensure_unit(name)
            with self.lock:
                self.states[name] = state
            if not self.subscribed:
                return
            changed = {} if invalidate else {"ActiveState": GLib.Variant("s", state)}
            self.conn.emit_signal(None, path, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                                  GLib.Variant("(sa{sv}as)", ("org.freedesktop.systemd1.Unit", changed,
                                                              ["ActiveState"] if invalidate else [])))
        self.call(emit)

    def new_unit(self, name, state):
        """A unit loaded anew (a transient one from systemd-run), already in state: systemd's first
        signal for it is UnitNew on the manager, without PropertiesChanged for what came before."""
        def emit():
            path = self._ensure_unit(name)
            with self.lock:
                self.states[name] = state
            if self.subscribed:
                self.conn.emit_signal(None, PATH, "org.freedesktop.systemd1.Manager", "UnitNew",
                                      GLib.Variant("(so)", (name, path)))
        self.call(emit)

    def remove_unit(self, name):
        """The unit is unloaded (garbage-collected once inactive): UnitRemoved."""
        def emit():
            path = self._ensure_unit(name)
            with self.lock:
                self.states.pop(name, None)
            if self.subscribed:
                self.conn.emit_signal(None, PATH, "org.freedesktop.systemd1.Manager", "UnitRemoved",
                                      GLib.Variant("(so)", (name, path)))
        self.call(emit)
