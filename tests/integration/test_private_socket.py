# SPDX-License-Identifier: LGPL-2.1-or-later
"""The private socket (linkprobed --private-socket=, linkprobed-private.socket): D-Bus peer to peer with
the daemon, for root. It must answer as the bus does, send the same signals, keep everyone else out (by
the socket's mode and by the kernel's credentials), bound its clients, and clean up after itself."""

import os
import stat
import subprocess
import tempfile

import pytest
from gi.repository import Gio, GLib

import lp

ROOT = lp.ROOT
MANAGER = lp.IFACE + "Manager"
NOBODY = 65534


@pytest.fixture
def sock_dir():
    d = tempfile.mkdtemp(prefix="lp-private-")
    yield d
    subprocess.run(["rm", "-rf", d], check=False)


def start(bus, netns, path, extra_args=()):
    d = lp.Daemon(bus, netns=netns, args=[f"--private-socket={path}", *extra_args])
    # Served right after READY=1 (a socket left by a killed daemon is there before).
    lp.wait_for(lambda: try_ping(path), 10, "the private socket")
    return d


def direct(path):
    """A peer-to-peer Gio connection: no bus, so no Hello and no bus name in calls."""
    return Gio.DBusConnection.new_for_address_sync(f"unix:path={path}", Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT,
                                                   None, None)


def call(conn, path, interface, method, signature=None, args=(), name=None):
    params = GLib.Variant(signature, tuple(args)) if signature else None
    return conn.call_sync(name, path, interface, method, params, None, Gio.DBusCallFlags.NONE, 20000, None).unpack()


def objects(conn, name=None):
    (objs,) = call(conn, ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects", name=name)
    return objs


def test_answers_as_the_bus_does(bus, netns, client, sock_dir):
    path = os.path.join(sock_dir, "private")
    netns.batch(["link add pv0 type veth peer name pv1", "link set pv0 up"])
    d = start(bus, netns, path)
    try:
        st = os.stat(path)
        assert stat.S_ISSOCK(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o600, oct(st.st_mode)
        conn = direct(path)
        via_bus, via_socket = client.objects(), objects(conn)
        assert via_socket.keys() == via_bus.keys()
        for obj, interfaces in via_bus.items():
            assert via_socket[obj].keys() == interfaces.keys(), obj
            for interface, props in interfaces.items():
                assert via_socket[obj][interface].keys() == props.keys(), (obj, interface)
        names = {interfaces[lp.IFACE + "Link"]["Name"] for interfaces in via_socket.values()
                 if lp.IFACE + "Link" in interfaces}
        assert {"lo", "pv0", "pv1"} <= names
        (version,) = call(conn, ROOT, "org.freedesktop.DBus.Properties", "Get", "(ss)", (MANAGER, "Version"))
        assert version
        # linkprobectl on the socket lists what it lists on the bus.
        on_bus = lp.ctl(bus, "list", "--no-legend", check=True).stdout
        on_socket = lp.run([lp.CTL, f"--private-socket={path}", "list", "--no-legend"], check=True).stdout
        assert sorted(on_socket.split("\n")) == sorted(on_bus.split("\n"))
        conn.close_sync(None)
    finally:
        d.stop()
    # Removed when the daemon stops: nothing stale for the next one.
    assert not os.path.exists(path)


def test_signals_and_privileged_calls_reach_direct_clients(bus, netns, sock_dir):
    path = os.path.join(sock_dir, "private")
    netns.batch(["link add ps0 type veth peer name ps1", "link set ps0 up", "link set ps1 up"])
    d = start(bus, netns, path)
    try:
        conn = direct(path)
        seen = []
        conn.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged", None, None,
                              Gio.DBusSignalFlags.NONE, lambda *a: seen.append((a[2], a[5].unpack())))
        context = GLib.MainContext.default()
        netns.ip("link", "set", "ps1", "down")

        def carrier_lost():
            while context.iteration(False):
                pass
            return any("OperState" in props or "Carrier" in props for _, (iface, props, _) in seen
                       if iface == lp.IFACE + "Link")
        lp.wait_for(carrier_lost, 10, "PropertiesChanged on the private socket")

        # Root is privileged there: the kernel's credentials stand in for the bus's.
        _, fds = conn.call_with_unix_fd_list_sync(None, ROOT, MANAGER, "Inhibit",
                                                  GLib.Variant("(sss)", ("gpu", "test", "private socket")),
                                                  GLib.VariantType("(h)"), Gio.DBusCallFlags.NONE, 10000, None, None)
        (fd,) = fds.steal_fds()
        os.close(fd)
        conn.close_sync(None)
    finally:
        d.stop()


UNPRIVILEGED_CONNECT = """
import sys
from gi.repository import Gio, GLib
try:
    conn = Gio.DBusConnection.new_for_address_sync("unix:path=" + sys.argv[1],
                                                   Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT, None, None)
    conn.call_sync(None, "/org/linkprobe/LinkProbe1", "org.freedesktop.DBus.Properties", "Get",
                   GLib.Variant("(ss)", ("org.linkprobe.LinkProbe1.Manager", "Version")), None,
                   Gio.DBusCallFlags.NONE, 10000, None)
    print("got through")
except GLib.Error as e:
    print("refused:", e.message)
"""


def test_only_root_gets_in(bus, netns, sock_dir):
    path = os.path.join(sock_dir, "private")
    d = start(bus, netns, path)
    try:
        os.chmod(sock_dir, 0o755)
        nobody = ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
        # The socket's mode keeps others out...
        proc = subprocess.run([*nobody, lp.CTL, f"--private-socket={path}", "status"], capture_output=True,
                              text=True, timeout=30, cwd="/")
        assert proc.returncode == 1 and "Permission denied" in proc.stderr, proc
        # ...and where the mode was opened, the kernel's credentials still do.
        os.chmod(path, 0o666)
        proc = subprocess.run([*nobody, "/usr/bin/python3", "-c", UNPRIVILEGED_CONNECT, path], capture_output=True,
                              text=True, timeout=30, cwd="/")
        assert proc.stdout.startswith("refused"), (proc.stdout, proc.stderr)
        assert d.wait_log(f"Refused uid {NOBODY}")
        # Nothing else was lost: root still reads.
        conn = direct(path)
        assert objects(conn)
        conn.close_sync(None)
    finally:
        d.stop()


def test_clients_are_bounded(bus, netns, sock_dir):
    path = os.path.join(sock_dir, "private")
    d = start(bus, netns, path)
    try:
        conns = [direct(path) for _ in range(16)]
        for conn in conns:
            call(conn, ROOT, "org.freedesktop.DBus.Peer", "Ping")
        assert not try_ping(path)
        assert d.wait_log("16 clients are connected already")
        conns.pop().close_sync(None)
        # A slot is free again once the daemon saw the close.
        lp.wait_for(lambda: try_ping(path), 10, "a client after one left")
        for conn in conns:
            conn.close_sync(None)
        # The bus was never affected.
        assert lp.Client(bus).objects()
    finally:
        d.stop()


def try_ping(path):
    conn = None
    try:
        conn = direct(path)
        call(conn, ROOT, "org.freedesktop.DBus.Peer", "Ping")
        return True
    except GLib.Error:
        return False
    finally:
        if conn:
            conn.close_sync(None)


def test_socket_path_is_checked(bus, netns, sock_dir):
    path = os.path.join(sock_dir, "private")
    # A socket a killed daemon left is replaced...
    d = start(bus, netns, path)
    d.signal(9)
    d.proc.wait(10)
    d.stop()
    assert stat.S_ISSOCK(os.stat(path).st_mode)
    d = start(bus, netns, path)
    try:
        conn = direct(path)
        assert objects(conn)
        conn.close_sync(None)
    finally:
        d.stop()
    # ...any other file is not ours to remove: a clear error, and the file is kept.
    with open(path, "w") as f:
        f.write("not a socket\n")
    d = lp.Daemon(bus, netns=netns, args=[f"--private-socket={path}"], wait=False)
    try:
        assert d.proc.wait(20) != 0
        assert "Failed to create the private socket" in d.log()
        assert open(path).read() == "not a socket\n"
    finally:
        d.stop()
    proc = lp.run([lp.DAEMON, "--private-socket=relative"], check=False)
    assert proc.returncode == 2 and "absolute path" in proc.stderr


def test_heap_is_given_back_after_work(bus, netns, sock_dir):
    """A large answer's pages stay for the next call, and are handed back 10 s after the work."""
    path = os.path.join(sock_dir, "private")
    d = start(bus, netns, path, extra_args=["--log-level=debug"])
    try:
        conn = direct(path)
        for _ in range(3):
            objects(conn)
        conn.close_sync(None)
        assert d.wait_log("Gave the heap's free pages back", timeout=20)
    finally:
        d.stop()
