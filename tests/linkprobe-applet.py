#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
# What an applet needs: the Summary, and every link as it comes and
# changes. The example in org.linkprobe.LinkProbe1(5); make check runs it.
import sys

import gi
gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib

NAME = "org.linkprobe.LinkProbe1"
ROOT = "/org/linkprobe/LinkProbe1"
FLAGS = Gio.DBusConnectionFlags


def connect(address):
    if not address:
        return Gio.bus_get_sync(Gio.BusType.SYSTEM)
    flags = FLAGS.AUTHENTICATION_CLIENT | FLAGS.MESSAGE_BUS_CONNECTION
    return Gio.DBusConnection.new_for_address_sync(address, flags)


def show_summary(proxy, *_):
    fastest = proxy.get_cached_property("FastestLink")
    path, name, kind, mbps = fastest.unpack() if fastest else ("/",) * 4
    print("fastest link:", f"{name} ({kind}, {mbps} Mb/s)"
          if path != "/" else "none", flush=True)
    peers = proxy.get_cached_property("ThunderboltPeers")
    print("thunderbolt peers:", len(peers) if peers else 0, flush=True)


def link_changed(manager, obj, proxy, changed, invalidated):
    if proxy.get_interface_name() != NAME + ".Link":
        return
    name = proxy.get_cached_property("Name").unpack()
    for key, value in changed.unpack().items():
        print(f"link {name}: {key} = {value}", flush=True)


def link_added(manager, obj):
    link = obj.get_interface(NAME + ".Link")
    if link:
        print("link added:", link.get_cached_property("Name").unpack(),
              flush=True)


bus = connect(sys.argv[1] if len(sys.argv) > 1 else None)
summary = Gio.DBusProxy.new_sync(bus, Gio.DBusProxyFlags.NONE, None,
                                 NAME, ROOT, NAME + ".Summary")
summary.connect("g-properties-changed", show_summary)
show_summary(summary)
objects = Gio.DBusObjectManagerClient.new_sync(
    bus, Gio.DBusObjectManagerClientFlags.NONE, NAME, ROOT)
objects.connect("object-added", link_added)
objects.connect("interface-proxy-properties-changed", link_changed)
GLib.MainLoop().run()
