# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers for the peer tests: running linkprobed inside a namespace of linkprobe_net.Namespaces,
reading Peer objects (and each result from the signals), waiting for them, ageing saved results,
calling methods as another user, and watching a directory."""

import ctypes
import json
import os
import select
import struct
import subprocess

from gi.repository import Gio, GLib

import lp
from lp import path_encode, wait_for  # noqa: F401 (the peer tests take them from here)

PEER = lp.IFACE + "Peer"
MANAGER = lp.IFACE + "Manager"

_libc = ctypes.CDLL(None, use_errno=True)


def InNetns(name):  # noqa: N802 (called like the class it was)
    """A namespace of linkprobe_net.Namespaces as lp.Daemon and lp.ctl take one."""
    return lp.NetNS(name, create=False)


def peer_path(key):
    return path_encode(lp.ROOT + "/peer", key)


def peers(client):
    """Peer objects as {object path: properties}."""
    return {path: dict(ifaces[PEER]) for path, ifaces in client.objects().items() if PEER in ifaces}


def published_results(events, path):
    """Each result the daemon published for path, in order, from its signals (a poll can miss one):
    the Peer properties as they stood once the signal that brought a new MeasuredAt was applied."""
    state, results = {}, []
    for _, opath, _, member, args in events:
        if member == "InterfacesAdded" and args[0] == path and PEER in args[1]:
            changed = args[1][PEER]
        elif member == "PropertiesChanged" and opath == path and args[0] == PEER:
            changed = args[1]
        else:
            continue
        before = state.get("MeasuredAt", 0)
        state.update(changed)
        if state.get("MeasuredAt", 0) not in (0, before):
            results.append(dict(state))
    return results


def age_saved_results(state, seconds):
    """Moves every result in a stopped daemon's peers.json (in state) back by seconds, so that a test need not
    wait for them to outlive a TTL; returns {Peer path: its MeasuredAt now}."""
    name = os.path.join(state, "peers.json")
    with open(name) as f:
        saved = json.load(f)
    aged = {}
    for o in saved["paths"]:
        if o.get("measured_at"):
            o["measured_at"] -= int(seconds * 1e6)
            port = f"{o['source_device']}/{o['source_port']}:" if o["transport"] == "rdma" else ""
            aged[peer_path(f"{o['transport']}:{port}{o['address']}")] = o["measured_at"]
    with open(name + ".tmp", "w") as f:
        json.dump(saved, f)
    os.replace(name + ".tmp", name)
    return aged


def wait_peer(client, path, predicate, timeout=10.0):
    def check():
        p = peers(client).get(path)
        return p if p and predicate(p) else None

    def state():
        p = peers(client).get(path)
        if not p:
            return f"{path} (there is no such Peer)"
        return f"{path} (it has " + ", ".join(f"{k}={p.get(k)!r}" for k in (
            "ProbeState", "LastError", "MeasuredAt", "NextProbeAt", "Stale", "StaleReason", "Warnings")) + ")"
    return wait_for(check, timeout, what=state)


def call_error(client, method, signature, args, timeout_ms=20000):
    """Calls a Manager method expecting an error; returns (D-Bus error name, message)."""
    try:
        client.call(lp.ROOT, MANAGER, method, signature, args, timeout_ms=timeout_ms)
    except GLib.Error as e:
        return Gio.DBusError.get_remote_error(e), e.message
    raise AssertionError(f"{method}{args!r} succeeded")


_AS_USER = r"""
import sys
from gi.repository import Gio, GLib
conn = Gio.DBusConnection.new_for_address_sync(
    sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
    None, None)
for method, signature, args in eval(sys.argv[2]):
    try:
        params = GLib.Variant(signature, args) if signature else None
        conn.call_sync("org.linkprobe.LinkProbe1", "/org/linkprobe/LinkProbe1", sys.argv[3], method, params, None,
                       Gio.DBusCallFlags.NONE, 10000, None)
        print("OK")
    except GLib.Error as e:
        print(Gio.DBusError.get_remote_error(e) or "?", e.message)
"""


def call_as(bus, setpriv_args, calls, interface=MANAGER):
    """Runs calls [(method, signature, args)] on a connection of its own as another user (setpriv);
    returns one line per call: "OK" or "ERROR_NAME message". The code is all in the command line and starts
    in /: the checkout may be where that user cannot go."""
    proc = subprocess.run(["setpriv", *setpriv_args, "/usr/bin/python3", "-c", _AS_USER, bus.address, repr(calls),
                           interface], capture_output=True, text=True, timeout=60, cwd="/",
                          env=dict(os.environ, PYTHONDONTWRITEBYTECODE="1", HOME="/"))
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.splitlines()


class DirectoryWatch:
    """inotify on one directory, for files created in it."""

    IN_CREATE = 0x100
    IN_MOVED_TO = 0x80

    def __init__(self, path):
        self.fd = _libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        if self.fd < 0:
            raise OSError(ctypes.get_errno(), "inotify_init1")
        if _libc.inotify_add_watch(self.fd, os.fsencode(path), self.IN_CREATE | self.IN_MOVED_TO) < 0:
            raise OSError(ctypes.get_errno(), "inotify_add_watch")

    def next_created(self, timeout):
        """Names created (or renamed into place) within timeout, in order; [] on timeout."""
        r, _, _ = select.select([self.fd], [], [], timeout)
        if not r:
            return []
        data = os.read(self.fd, 65536)
        names, i = [], 0
        while i + 16 <= len(data):
            _, mask, _, length = struct.unpack_from("iIII", data, i)
            name = data[i + 16:i + 16 + length].rstrip(b"\0").decode(errors="replace")
            names.append((mask, name))
            i += 16 + length
        return names

    def close(self):
        os.close(self.fd)
