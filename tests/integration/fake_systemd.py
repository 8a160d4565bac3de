# SPDX-License-Identifier: LGPL-2.1-or-later
"""What of systemd's D-Bus API linkprobed follows for [Inhibit] WhileUnitsActive=, played on a test bus:
org.freedesktop.systemd1 with Manager.GetUnit()/Subscribe() and unit objects whose ActiveState the test
sets (PropertiesChanged, UnitNew and UnitRemoved are sent as systemd sends them, only after somebody
subscribed; GetUnit() of a unit that is not loaded is org.freedesktop.systemd1.NoSuchUnit). It runs on a thread
with a GLib main context of its own, like lp.SignalCollector."""

import threading

from gi.repository import Gio, GLib

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


class FakeSystemd:
    def __init__(self, bus, states):
        """states: {unit name: ActiveState} of the units loaded at the start; others are not loaded."""
        self.address = bus.address
        self.states = dict(states)
        self.subscribed = False
        self.load_calls = []
        self.lock = threading.Lock()
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("the fake systemd did not start")

    def _run(self):
        self.context = GLib.MainContext.new()
        self.context.push_thread_default()
        self.conn = Gio.DBusConnection.new_for_address_sync(
            self.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)
        info = Gio.DBusNodeInfo.new_for_xml(INTROSPECTION)
        self.manager_iface, self.unit_iface = info.interfaces
        self.conn.register_object(PATH, self.manager_iface, self._on_manager_call, None, None)
        self.registered = {}
        self.loop = GLib.MainLoop.new(self.context, False)
        self.owner = Gio.bus_own_name_on_connection(self.conn, NAME, Gio.BusNameOwnerFlags.NONE,
                                                    lambda *a: self.ready.set(), None)
        self.loop.run()

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

    def _call(self, fn):
        """Runs fn on the fake's thread and waits for it."""
        done = threading.Event()

        def run(*_):
            fn()
            done.set()
            return False
        source = GLib.idle_source_new()
        source.set_callback(run)
        source.attach(self.context)
        if not done.wait(10):
            raise RuntimeError("the fake systemd is stuck")

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
        self._call(emit)

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
        self._call(emit)

    def remove_unit(self, name):
        """The unit is unloaded (garbage-collected once inactive): UnitRemoved."""
        def emit():
            path = self._ensure_unit(name)
            with self.lock:
                self.states.pop(name, None)
            if self.subscribed:
                self.conn.emit_signal(None, PATH, "org.freedesktop.systemd1.Manager", "UnitRemoved",
                                      GLib.Variant("(so)", (name, path)))
        self._call(emit)

    def stop(self):
        def quit_():
            Gio.bus_unown_name(self.owner)
            self.conn.flush_sync(None)
            self.loop.quit()
        self._call(quit_)
        self.thread.join(5)
