# SPDX-License-Identifier: LGPL-2.1-or-later
"""The introspection XML we install (systemd/interfaces/, one file per interface, for
/usr/share/dbus-1/interfaces) must say exactly what the running daemon says. The daemon here has an
object of every kind: links (netlink), a Thunderbolt tree and RDMA ports (a umockdev testbed), a GPU
(PoCL) and a peer (AddPeer). LINKPROBE_UPDATE_INTERFACES=1 (make update-interfaces) rewrites the
files from the daemon instead of comparing."""

import os
import re
import time
import xml.etree.ElementTree as ET

import pytest

import lp
import tbt_harness as h

INTERFACES_DIR = os.path.join(lp.TOP, "systemd", "interfaces")
RDMA_FIXTURE = os.path.join(lp.TOP, "tests", "fixtures", "rdma", "cx5-roce.umockdev")
KINDS = ["Manager", "Node", "Memory", "Summary", "Link", "Thunderbolt", "RdmaPort", "Gpu", "Peer", "Pci"]
HEADER = ('<!DOCTYPE node PUBLIC "-//freedesktop//DTD D-BUS Object Introspection 1.0//EN"\n'
          ' "http://www.freedesktop.org/standards/dbus/1.0/introspect.dtd">\n')


def interface_xml(xml, name):
    """The <interface> element named name, as text, from an Introspect() answer."""
    match = re.search(rf' <interface name="{re.escape(name)}">.*? </interface>\n', xml, re.S)
    return match.group(0) if match else None


def wait_for(predicate, timeout=30.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        result = predicate()
        if result:
            return result
        time.sleep(0.1)
    return None


@pytest.fixture
def live(netns, client, daemon_factory):
    reason = h.missing_tools(boltd=False)
    if reason:
        pytest.skip(reason)
    bed = h.LiveTestbed("tb4-dock-peer.umockdev", RDMA_FIXTURE)
    try:
        daemon_factory(netns, prefix=["umockdev-wrapper"], env=bed.env(), gpu=True,
                       args=[f"--sysfs-root={bed.sys}"], config="[Gpu]\nQuick=yes\n")
        client.call(lp.ROOT, lp.IFACE + "Manager", "AddPeer", "(s)", ("127.0.0.1",))
        yield client
    finally:
        bed.close()


def test_shipped_xml_matches_the_daemon(live):
    client = live

    def paths_by_kind():
        found = {"Manager": lp.ROOT, "Node": lp.ROOT, "Memory": lp.ROOT, "Summary": lp.ROOT}
        for path, interfaces in client.objects().items():
            for interface in interfaces:
                found.setdefault(interface[len(lp.IFACE):], path)
        return found if all(k in found for k in KINDS) else None

    paths = wait_for(paths_by_kind)
    assert paths, f"not every kind appeared: {sorted(paths_by_kind() or {})}"

    update = os.environ.get("LINKPROBE_UPDATE_INTERFACES") == "1"
    stale = []
    for kind in KINDS:
        name = lp.IFACE + kind
        (xml,) = client.call(paths[kind], "org.freedesktop.DBus.Introspectable", "Introspect")
        live_xml = interface_xml(xml, name)
        assert live_xml, f"{name} missing from the introspection of {paths[kind]}"
        document = HEADER + "<node>\n" + live_xml + "</node>\n"
        ET.fromstring(document.split("\n", 2)[2])  # well-formed
        path = os.path.join(INTERFACES_DIR, name + ".xml")
        if update:
            os.makedirs(INTERFACES_DIR, exist_ok=True)
            with open(path, "w") as f:
                f.write(document)
            continue
        with open(path) as f:
            if f.read() != document:
                stale.append(name)
    assert not stale, f"{stale} differ from the daemon: run make update-interfaces and review the diff"

    # Nothing shipped that the daemon does not have.
    shipped = {f[:-len(".xml")] for f in os.listdir(INTERFACES_DIR) if f.endswith(".xml")}
    assert shipped == {lp.IFACE + k for k in KINDS}
