# SPDX-License-Identifier: LGPL-2.1-or-later
"""The introspection XML we install (systemd/interfaces/, one file per interface, for
/usr/share/dbus-1/interfaces) must say exactly what the running daemon says. The daemon here has an
object of every kind: links (netlink), a Thunderbolt tree and RDMA ports (a umockdev testbed), a GPU
(PoCL), a peer (AddPeer), the neighbour whose responder answers it, and a switch (an LLDPDU sent over a
veth). LINKPROBE_UPDATE_INTERFACES=1 (make update-interfaces) rewrites the
files from the daemon instead of comparing.

The shipped files also carry an org.gtk.GDBus.DocString for every interface and member, merged from
systemd/interfaces/docstrings.txt (interface_docs.py): the comparison is with the daemon's XML once those
are stripped, and the annotations must be exactly what that file says, for every member."""

import os
import re
import time
import xml.etree.ElementTree as ET

import pytest

import interface_docs
import lp
import tbt_harness as h
from linkprobe_net import Responder
from lldp_net import frame, send_frames, tlv

INTERFACES_DIR = os.path.join(lp.TOP, "systemd", "interfaces")
RDMA_FIXTURE = os.path.join(lp.TOP, "tests", "fixtures", "rdma", "cx5-roce.umockdev")
KINDS = ["Manager", "Node", "Memory", "Summary", "Link", "Thunderbolt", "RdmaPort", "Gpu", "Peer", "Neighbor", "Pci",
         "Switch"]
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
def live(netns, client, daemon_factory, tmp_path):
    reason = h.missing_tools(boltd=False)
    if reason:
        pytest.skip(reason)
    bed = h.LiveTestbed("tb4-dock-peer.umockdev", RDMA_FIXTURE)
    # Another node's responder, so that the peer names a neighbour.
    identity = tmp_path / "identity.json"
    identity.write_text('{"node_id": "0123456789abcdef0123456789abcdef", "hostname": "other"}')
    responder = None
    try:
        responder = Responder(netns.name, "127.0.0.1:7482", f"--identity-file={identity}", port=7482)
        daemon_factory(netns, prefix=["umockdev-wrapper"], env=bed.env(), gpu=True,
                       args=[f"--sysfs-root={bed.sys}"],
                       config="[Gpu]\nQuick=yes\n[Reconciler]\nTickSec=100ms\nTcpDurationSec=100ms\n")
        client.call(lp.ROOT, lp.IFACE + "Manager", "AddPeer", "(s)", ("127.0.0.1:7482",))
        # A switch: one LLDPDU from one end of a veth, heard at the other.
        netns.ip("link", "add", "lpsw0", "type", "veth", "peer", "name", "lpsw1")
        netns.ip("link", "set", "lpsw0", "up")
        netns.ip("link", "set", "lpsw1", "up")
        wait_for(lambda: client.link_by_name("lpsw1"))
        send_frames(netns, "lpsw0", [frame(b"\x07leaf", extra=tlv(5, b"leaf"))])
        yield client
    finally:
        if responder:
            responder.stop()
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
    docs = interface_docs.load()
    stale = []
    undocumented = []
    described = set()
    for kind in KINDS:
        name = lp.IFACE + kind
        (xml,) = client.call(paths[kind], "org.freedesktop.DBus.Introspectable", "Introspect")
        live_xml = interface_xml(xml, name)
        assert live_xml, f"{name} missing from the introspection of {paths[kind]}"
        document = HEADER + "<node>\n" + live_xml + "</node>\n"
        ET.fromstring(document.split("\n", 2)[2])  # well-formed
        annotated = interface_docs.annotate(document, docs)
        live_members = interface_docs.members(annotated)
        described |= set(live_members)
        undocumented += [m for m, text in live_members.items() if not text]
        path = os.path.join(INTERFACES_DIR, name + ".xml")
        if update:
            os.makedirs(INTERFACES_DIR, exist_ok=True)
            with open(path, "w") as f:
                f.write(annotated)
            continue
        with open(path) as f:
            shipped = f.read()
        # What the daemon says, and the descriptions the file holds, both exactly.
        if interface_docs.strip(shipped) != document or shipped != annotated:
            stale.append(name)
    assert not undocumented, f"no DocString in {interface_docs.DOCS_FILE} for {sorted(undocumented)}"
    assert not stale, f"{stale} differ from the daemon: run make update-interfaces and review the diff"
    unknown = set(docs) - described
    assert not unknown, f"{interface_docs.DOCS_FILE} describes what the daemon does not have: {sorted(unknown)}"

    # Nothing shipped that the daemon does not have.
    shipped = {f[:-len(".xml")] for f in os.listdir(INTERFACES_DIR) if f.endswith(".xml")}
    assert shipped == {lp.IFACE + k for k in KINDS}


def test_shipped_xml_is_documented_for_gdbus_codegen(tmp_path):
    """Every interface, method, property and signal in the installed XML has a DocString, and
    gdbus-codegen turns them into documentation."""
    import shutil
    import subprocess
    files = sorted(os.path.join(INTERFACES_DIR, f) for f in os.listdir(INTERFACES_DIR) if f.endswith(".xml"))
    for path in files:
        with open(path) as f:
            found = interface_docs.members(f.read())
        assert found and all(found.values()), f"{path}: no DocString for {[m for m, t in found.items() if not t]}"
    if not shutil.which("gdbus-codegen"):
        pytest.skip("gdbus-codegen is not installed (libglib2.0-dev-bin)")
    proc = subprocess.run(["gdbus-codegen", "--interface-prefix", "org.linkprobe.LinkProbe1.", "--generate-docbook",
                           str(tmp_path / "doc"), *files], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "doc-org.linkprobe.LinkProbe1.Link.xml") as f:
        assert "The interface name." in f.read()
