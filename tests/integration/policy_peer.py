#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The processes test_service_files.py puts on its private system bus, each under its own uid.

  policy_peer.py owner ADDRESS
      Requests org.linkprobe.LinkProbe1 and prints "owned" or "error NAME". While it owns the name it
      answers every method call with the string "reached IFACE.MEMBER": a stand-in for linkprobed that
      accepts everything, so whether a call is refused is decided by the bus policy alone. Refresh also
      emits PropertiesChanged on the root object.
  policy_peer.py client ADDRESS JSON
      Runs the operations in JSON (a list) and prints a JSON list of outcomes:
        {"call": [dest, path, iface or null, member, signature or null, [args]]} -> {"ok": str} or {"error": name}
            (an argument {"variant": [signature, value]} is passed as a variant)
        {"own": name} -> {"ok": "owned"}, {"ok": "exists"} (allowed, but someone else has it) or {"error": name}
        {"signal_after_refresh": true} -> {"ok": "signal"} or {"error": "no signal"}
  policy_peer.py systemd ADDRESS LOG UNIT -- OWNER-COMMAND...
      Owns org.freedesktop.systemd1 (run as root) and plays the part systemd has in D-Bus activation:
      each ActivationRequest is logged to LOG; for UNIT it runs OWNER-COMMAND, for any other unit it
      reports an activation failure to the bus. Prints "ready" once it owns the name.
"""

import json
import signal
import subprocess
import sys

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

BUS_NAME = "org.linkprobe.LinkProbe1"
ROOT = "/org/linkprobe/LinkProbe1"
TIMEOUT_MS = 10000


def connect(address):
    flags = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
    return Gio.DBusConnection.new_for_address_sync(address, flags, None, None)


def error_name(e):
    return Gio.DBusError.get_remote_error(e) or f"{e.domain}:{e.code}:{e.message}"


def request_name(conn, name):
    """Returns "owned" or "exists"; raises GLib.Error when the policy refuses."""
    # DBUS_NAME_FLAG_DO_NOT_QUEUE; answers 1 (primary owner) or 3 (exists).
    reply = conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus",
                           "RequestName", GLib.Variant("(su)", (name, 4)), GLib.VariantType("(u)"),
                           Gio.DBusCallFlags.NONE, TIMEOUT_MS, None)
    code = reply.unpack()[0]
    if code not in (1, 3):
        raise RuntimeError(f"RequestName({name}) answered {code}")
    return "owned" if code == 1 else "exists"


def to_variant_args(args):
    return tuple(GLib.Variant(*a["variant"]) if isinstance(a, dict) and set(a) == {"variant"} else a for a in args)


def owner(address):
    conn = connect(address)
    loop = GLib.MainLoop()

    def reply_later(msg):
        reply = Gio.DBusMessage.new_method_reply(msg)
        reply.set_body(GLib.Variant("(s)", (f"reached {msg.get_interface()}.{msg.get_member()}",)))
        conn.send_message(reply, Gio.DBusSendMessageFlags.NONE)
        if msg.get_member() == "Refresh":
            conn.emit_signal(None, ROOT, "org.freedesktop.DBus.Properties", "PropertiesChanged",
                             GLib.Variant("(sa{sv}as)", ("org.linkprobe.LinkProbe1.Manager",
                                                         {"State": GLib.Variant("s", "running")}, [])))
        return GLib.SOURCE_REMOVE

    def on_message(connection, msg, incoming):
        # Filters run in GDBus's worker thread: answer from the main loop, and keep the message from
        # GDBus's own handlers (it would answer Introspect/Peer itself).
        if incoming and msg.get_message_type() == Gio.DBusMessageType.METHOD_CALL:
            GLib.idle_add(reply_later, msg)
            return None
        return msg

    # The filter goes first: after a bus activation, the call that caused it arrives as soon as the name
    # is ours.
    conn.add_filter(on_message)
    try:
        if request_name(conn, BUS_NAME) != "owned":
            print("error name exists", flush=True)
            return 0
    except GLib.Error as e:
        print(f"error {error_name(e)}", flush=True)
        return 0
    conn.connect("closed", lambda *a: loop.quit())
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    print("owned", flush=True)
    loop.run()
    return 0


def client(address, ops):
    conn = connect(address)
    results = []
    for op in ops:
        try:
            if "call" in op:
                dest, path, iface, member, signature, args = op["call"]
                # A message of our own: call_sync() insists on an interface, which the policy must
                # not depend on.
                msg = Gio.DBusMessage.new_method_call(dest, path, iface, member)
                if signature:
                    msg.set_body(GLib.Variant(f"({signature})", to_variant_args(args)))
                reply, _ = conn.send_message_with_reply_sync(msg, Gio.DBusSendMessageFlags.NONE, TIMEOUT_MS, None)
                reply.to_gerror()
                results.append({"ok": str(reply.get_body())})
            elif "own" in op:
                results.append({"ok": request_name(conn, op["own"])})
            elif "signal_after_refresh" in op:
                results.append(signal_after_refresh(conn))
            else:
                results.append({"error": f"unknown operation {op}"})
        except GLib.Error as e:
            results.append({"error": error_name(e)})
        except RuntimeError as e:
            results.append({"error": str(e)})
    print(json.dumps(results), flush=True)
    return 0


def signal_after_refresh(conn):
    loop = GLib.MainLoop()
    seen = []

    def on_signal(*args):
        seen.append(args)
        loop.quit()

    # The match rule goes to the bus, so this is what any unprivileged subscriber gets.
    conn.signal_subscribe(BUS_NAME, "org.freedesktop.DBus.Properties", "PropertiesChanged", ROOT, None,
                          Gio.DBusSignalFlags.NONE, on_signal)
    conn.call_sync(BUS_NAME, ROOT, "org.linkprobe.LinkProbe1.Manager", "Refresh", None, None,
                   Gio.DBusCallFlags.NONE, TIMEOUT_MS, None)
    GLib.timeout_add(5000, loop.quit)
    if not seen:
        loop.run()
    return {"ok": "signal"} if seen else {"error": "no signal"}


def systemd(address, log, unit, owner_cmd):
    conn = connect(address)
    if request_name(conn, "org.freedesktop.systemd1") != "owned":
        raise RuntimeError("org.freedesktop.systemd1 is taken")
    children = []

    def on_request(connection, sender, path, iface, member, params):
        requested = params.unpack()[0]
        with open(log, "a") as f:
            f.write(requested + "\n")
        if requested == unit:
            children.append(subprocess.Popen(owner_cmd, stdout=subprocess.DEVNULL))
        else:
            conn.call_sync("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.systemd1.Activator",
                           "ActivationFailure",
                           GLib.Variant("(sss)", (requested, "org.freedesktop.systemd1.NoSuchUnit", "no such unit")),
                           None, Gio.DBusCallFlags.NONE, TIMEOUT_MS, None)

    conn.signal_subscribe("org.freedesktop.DBus", "org.freedesktop.systemd1.Activator", "ActivationRequest",
                          "/org/freedesktop/DBus", None, Gio.DBusSignalFlags.NONE, on_request)
    loop = GLib.MainLoop()
    conn.connect("closed", lambda *a: loop.quit())
    # SIGTERM ends the loop, so the services started here are stopped with it.
    GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, signal.SIGTERM, loop.quit)
    print("ready", flush=True)
    try:
        loop.run()
    finally:
        for c in children:
            c.terminate()
            c.wait()
    return 0


def main(argv):
    role, address = argv[1], argv[2]
    if role == "owner":
        return owner(address)
    if role == "client":
        return client(address, json.loads(argv[3]))
    if role == "systemd":
        sep = argv.index("--")
        return systemd(address, argv[3], argv[4], argv[sep + 1:])
    print(f"unknown role {role}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
