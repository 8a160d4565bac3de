# SPDX-License-Identifier: LGPL-2.1-or-later
"""A D-Bus service faked in the test process: its own GLib main loop on a thread of its own, connected to
a private bus, owning a well-known name. The fakes (fake_linkprobed.py, fake_systemd.py) say what they
export in register(), and change their state on that thread through call()."""

import threading

from gi.repository import Gio, GLib


class FakeService:
    def __init__(self, bus, name, what):
        """bus: an lp.PrivateBus; name: the well-known name to own; what: for errors ("the fake
        systemd"). Returns once the name is owned."""
        self.address = bus.address
        self.name = name
        self.what = what
        self.ready = threading.Event()
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError(f"{what} did not start")

    def register(self, conn):
        """Exports the fake's objects on conn; called on the fake's thread before the name is owned."""
        raise NotImplementedError

    def _run(self):
        self.context = GLib.MainContext.new()
        self.context.push_thread_default()
        self.conn = Gio.DBusConnection.new_for_address_sync(
            self.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)
        self.register(self.conn)
        self.loop = GLib.MainLoop.new(self.context, False)
        self.owner = Gio.bus_own_name_on_connection(self.conn, self.name, Gio.BusNameOwnerFlags.NONE,
                                                    lambda *a: self.ready.set(), None)
        self.loop.run()

    def call(self, fn):
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
            raise RuntimeError(f"{self.what} is stuck")

    def stop(self):
        def quit_():
            Gio.bus_unown_name(self.owner)
            self.conn.flush_sync(None)
            self.loop.quit()
        self.call(quit_)
        self.thread.join(5)
