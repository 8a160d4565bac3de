# SPDX-License-Identifier: LGPL-2.1-or-later
"""RDMA ports on D-Bus: the daemon under umockdev publishes every fixture port with its exact values,
follows add/change/remove uevents, keeps the cross-links with Link objects right whichever side
changes first, re-reads a RoCE port when its interface's carrier or speed changes, stays quiet without
RDMA, and survives garbage. The links themselves are real (veths in the test's network namespace,
named and numbered like the fixtures' interfaces); their sysfs facts come from the testbed."""

import json
import os
import signal
import subprocess
import time
import xml.etree.ElementTree as ET

import pytest

import lp

pytest.importorskip("gi")
from lp import path_label as encode_label, wait_until  # noqa: E402
from umockdev_testbed import start  # noqa: E402

RDMA = lp.IFACE + "RdmaPort"
LINK = lp.IFACE + "Link"
FIXTURES = os.path.join(lp.TOP, "tests", "fixtures", "rdma")
GOOD = ["cx3-dual-port", "cx5-roce", "cx6-ib-hdr", "cx6-ib-polling", "iwarp-cxgb4", "mthca-old-kernel",
        "rxe-virtio"]

SYSPATH = {
    "mlx5_0": "/sys/devices/pci0000:80/0000:80:01.1/0000:81:00.0/infiniband/mlx5_0",
    "mlx5_1": "/sys/devices/pci0000:80/0000:80:01.1/0000:81:00.1/infiniband/mlx5_1",
    "rocep59s0f0": "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/rocep59s0f0",
    "enp59s0f0np0": "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/net/enp59s0f0np0",
    "roce.100": "/sys/devices/virtual/net/roce.100",
    "broken0": "/sys/devices/virtual/infiniband/broken0",
}


def port_path(device, port):
    return f"{lp.ROOT}/rdma/{encode_label(f'{device}_{port}')}"


def link_path(ifindex):
    return f"{lp.ROOT}/link/{encode_label(str(ifindex))}"


def gids(*entries):
    return list(entries)  # a(usss) arrives as a list of tuples


ROCE_GIDS = gids(
    (0, "fe80::e42:a1ff:fe2b:3c4d", "roce-v1", "enp59s0f0np0"),
    (1, "fe80::e42:a1ff:fe2b:3c4d", "roce-v2", "enp59s0f0np0"),
    (2, "::ffff:192.168.10.21", "roce-v1", "enp59s0f0np0"),
    (3, "::ffff:192.168.10.21", "roce-v2", "enp59s0f0np0"),
    (4, "2001:db8:10:0:e42:a1ff:fe2b:3c4d", "roce-v1", "enp59s0f0np0"),
    (5, "2001:db8:10:0:e42:a1ff:fe2b:3c4d", "roce-v2", "enp59s0f0np0"),
    (6, "fe80::e42:a1ff:fe2b:3c4d", "roce-v1", "enp59s0f0np0.100"),
    (7, "fe80::e42:a1ff:fe2b:3c4d", "roce-v2", "enp59s0f0np0.100"),
    (8, "::ffff:10.100.0.21", "roce-v1", "enp59s0f0np0.100"),
    (9, "::ffff:10.100.0.21", "roce-v2", "enp59s0f0np0.100"),
)

CX6 = dict(NodeType="ca", SystemImageGuid="b8ce:f603:00a1:b2c2", FirmwareVersion="20.31.1014", HcaType="MT4123",
           BoardId="MT_0000000222", Transport="InfiniBand", LinkLayer="infiniband")
CX3 = dict(NodeType="ca", NodeGuid="0002:c903:00ab:cd10", SystemImageGuid="0002:c903:00ab:cd13",
           FirmwareVersion="2.42.5000", HcaType="MT4103", BoardId="MT_1090111023")
CXGB4 = dict(NodeType="rnic", NodeGuid="0007:433a:1bc0:0000", SystemImageGuid="0007:433a:1bc0:0000",
             FirmwareVersion="1.27.5.0", HcaType="cxgb4", BoardId="1425.6408", Transport="iWARP",
             LinkLayer="ethernet", Lid=0, SmLid=0)

# Every property of every fixture port, as the kernel's files say (tests/fixtures/rdma/README.md).
EXPECTED = {
    ("mlx5_0", 1): dict(CX6, NodeGuid="b8ce:f603:00a1:b2c2", State="active", PhysState="link-up", RateGbps=200.0,
                        Width="4X", Speed="HDR", Lid=0x1a, SmLid=1, NetDevices=["ibp129s0f0"],
                        Gids=gids((0, "fe80::b8ce:f603:a1:b2c2", "ib", ""))),
    ("mlx5_1", 1): dict(CX6, NodeGuid="b8ce:f603:00a1:b2c3", State="down", PhysState="polling", RateGbps=10.0,
                        Width="4X", Speed="SDR", Lid=0xffff, SmLid=0, NetDevices=["ibp129s0f1"],
                        Gids=gids((0, "fe80::b8ce:f603:a1:b2c3", "ib", ""))),
    ("rocep59s0f0", 1): dict(NodeType="ca", NodeGuid="0c42:a103:002b:3c4d", SystemImageGuid="0c42:a103:002b:3c4d",
                             FirmwareVersion="16.35.2000", HcaType="MT4119", BoardId="MT_0000000012",
                             Transport="RoCE", State="active", PhysState="link-up", LinkLayer="ethernet",
                             RateGbps=100.0, Width="4X", Speed="EDR", Lid=0, SmLid=0,
                             NetDevices=["enp59s0f0np0", "enp59s0f0np0.100"], Gids=ROCE_GIDS),
    ("rxe0", 1): dict(NodeType="ca", NodeGuid="5054:00ff:fe12:3456", SystemImageGuid="5054:00ff:fe12:3456",
                      FirmwareVersion="", HcaType="", BoardId="", Transport="RoCE", State="active",
                      PhysState="link-up", LinkLayer="ethernet", RateGbps=2.5, Width="1X", Speed="SDR", Lid=0,
                      SmLid=0, NetDevices=["enp0s3"],
                      Gids=gids((0, "fe80::5054:ff:fe12:3456", "roce-v1", "enp0s3"),
                                (1, "fe80::5054:ff:fe12:3456", "roce-v2", "enp0s3"),
                                (2, "::ffff:10.0.2.15", "roce-v1", "enp0s3"),
                                (3, "::ffff:10.0.2.15", "roce-v2", "enp0s3"))),
    ("iwp3s0f4", 1): dict(CXGB4, State="active", PhysState="link-up", RateGbps=100.0, Width="4X", Speed="EDR",
                          NetDevices=["enp3s0f4"], Gids=gids((0, "7:433a:1bc0::", "unknown", "enp3s0f4"))),
    ("iwp3s0f4", 2): dict(CXGB4, State="down", PhysState="disabled", RateGbps=2.5, Width="1X", Speed="SDR",
                          NetDevices=["enp3s0f4d1"], Gids=gids((0, "7:433a:1bc8::", "unknown", "enp3s0f4d1"))),
    ("mlx4_0", 1): dict(CX3, Transport="InfiniBand", State="active", PhysState="link-up", LinkLayer="infiniband",
                        RateGbps=56.0, Width="4X", Speed="FDR", Lid=3, SmLid=1, NetDevices=["ibp4s0"],
                        Gids=gids((0, "fe80::2:c903:ab:cd11", "ib", ""))),
    ("mlx4_0", 2): dict(CX3, Transport="RoCE", State="active", PhysState="link-up", LinkLayer="ethernet",
                        RateGbps=40.0, Width="4X", Speed="QDR", Lid=0, SmLid=0, NetDevices=["enp4s0d1"],
                        Gids=gids((0, "fe80::202:c9ff:feab:cd12", "roce-v1", "enp4s0d1"),
                                  (1, "fe80::202:c9ff:feab:cd12", "roce-v2", "enp4s0d1"),
                                  (2, "::ffff:172.16.0.5", "roce-v1", "enp4s0d1"),
                                  (3, "::ffff:172.16.0.5", "roce-v2", "enp4s0d1"))),
    # A 3.x kernel: no speed name (10 Gb/s over 4X is 2.5 per lane: SDR), no gid_attrs (type unknown).
    ("mthca0", 1): dict(NodeType="ca", NodeGuid="0002:c902:0020:1a2c", SystemImageGuid="0002:c902:0020:1a2f",
                        FirmwareVersion="1.2.0", HcaType="MT25204", BoardId="MT_03B0140001", Transport="InfiniBand",
                        State="active", PhysState="link-up", LinkLayer="infiniband", RateGbps=10.0, Width="4X",
                        Speed="SDR", Lid=7, SmLid=1, NetDevices=["ib0"],
                        Gids=gids((0, "fe80::2:c902:20:1a2d", "unknown", ""))),
}


# The watch's properties (links over time), which test_health.py checks.
OVER_TIME = {"SymbolErrors", "LinkErrorRecoveries", "LinkDowned", "RcvErrors", "XmitDiscards", "RxGbps", "TxGbps",
             "Health", "HealthReason"}

# The port at the other end of the cable while it is not known.
FAR_END_UNKNOWN = dict(RemoteNodeGuid="", RemoteNodeType="", RemoteNodeDescription="", RemotePort=0, BestWidth="",
                       BestSpeed="", BestRateGbps=0.0, Degraded=False, DegradedReason="", Switch="/")


def load(tb, *names):
    for name in names:
        tb.add_from_file(os.path.join(FIXTURES, name + ".umockdev"))


def load_device(tb, fixture, syspath):
    """Adds just one device of a fixture (umockdev refuses to add a device that exists)."""
    with open(os.path.join(FIXTURES, fixture + ".umockdev")) as f:
        paragraphs = f.read().split("\n\n")
    tb.add_from_string(next(p for p in paragraphs if p.startswith(f"P: {syspath[len('/sys'):]}\n")) + "\n")


def ports(client):
    return {path: dict(props[RDMA]) for path, props in client.objects().items() if RDMA in props}


def port(client, device, number):
    return client.get_all("RdmaPort", port_path(device, number))


def changed(events, path, interface=RDMA):
    return [args[1] for _, p, _, member, args in events
            if p == path and member == "PropertiesChanged" and args[0] == interface]


def added(events, path):
    return [args[1] for _, _, _, member, args in events if member == "InterfacesAdded" and args[0] == path]


def removed(events, path):
    return [args[1] for _, _, _, member, args in events if member == "InterfacesRemoved" and args[0] == path]


def warnings_in(log):
    """Lines logged at warning level or worse (the daemon writes <N> prefixes when JOURNAL_STREAM is set)."""
    return [line for line in log.splitlines() if line[:3] in ("<0>", "<1>", "<2>", "<3>", "<4>")]


JOURNAL = {"JOURNAL_STREAM": "0:0"}


def test_every_fixture_port_is_published_exactly(netns, client, daemon_factory, testbed):
    load(testbed, *GOOD)
    start(daemon_factory, netns, testbed)
    published = ports(client)
    assert sorted(published) == sorted(port_path(d, n) for d, n in EXPECTED)
    for (device, number), expected in EXPECTED.items():
        props = published[port_path(device, number)]
        assert props["Device"] == device and props["Port"] == number
        # Nothing in this namespace is named like the fixtures' interfaces.
        assert props["NetInterface"] == "/"
        for key, value in expected.items():
            assert props[key] == value, (device, number, key)
        # PciDevice: the PCI function, where the fixture has one (test_pci.py checks the values); the
        # counters and health of links over time (test_health.py checks those).
        # The far end is asked over umad, which a fixture tree has not (test_ibsim.py asks ibsim): unknown.
        for key, value in FAR_END_UNKNOWN.items():
            assert props[key] == value, (device, number, key)
        assert set(props) == set(expected) | {"Device", "Port", "NetInterface", "PciDevice"} | OVER_TIME | \
            set(FAR_END_UNKNOWN), (device, number)
    assert client.managed_objects_differing_from_getall() == []


def test_introspection_marks_identity_const(netns, client, daemon_factory, testbed):
    load(testbed, "cx6-ib-hdr")
    start(daemon_factory, netns, testbed)
    (xml,) = client.call(port_path("mlx5_0", 1), "org.freedesktop.DBus.Introspectable", "Introspect")
    iface = next(i for i in ET.fromstring(xml).findall("interface") if i.get("name") == RDMA)
    emits = {}
    for prop in iface.findall("property"):
        note = prop.find("annotation[@name='org.freedesktop.DBus.Property.EmitsChangedSignal']")
        emits[prop.get("name")] = (prop.get("type"), note.get("value") if note is not None else "true")
    const = {name for name, (_, how) in emits.items() if how == "const"}
    assert const == {"Device", "Port", "NodeType", "NodeGuid", "SystemImageGuid", "FirmwareVersion", "HcaType",
                     "BoardId"}
    assert emits["Gids"][0] == "a(usss)" and emits["RateGbps"][0] == "d" and emits["NetInterface"][0] == "o"
    assert all(how == "true" for name, (_, how) in emits.items() if name not in const)


def test_uevents_reach_the_daemon(netns, client, signals, daemon_factory, testbed):
    """add, change and remove uevents sent into the testbed change the objects without any Refresh():
    they travel through umockdev's emulated netlink socket into the daemon's libudev monitor."""
    load(testbed, "cx6-ib-hdr")
    start(daemon_factory, netns, testbed)
    roce = port_path("rocep59s0f0", 1)
    assert roce not in ports(client)

    # umockdev sends "add" for every device it adds.
    load(testbed, "cx5-roce")
    event = signals.wait(lambda ev: added(ev, roce))
    assert event, "no InterfacesAdded for the new RoCE port"
    props = event[0][RDMA]
    for key, value in EXPECTED[("rocep59s0f0", 1)].items():
        assert props[key] == value, key
    # The fixture's PCI function comes after the port; its cross-link follows in a later signal. Wait
    # for that signal itself (not only the property), so it cannot arrive after the clear below.
    assert event[0][RDMA]["PciDevice"] != "/" or signals.wait(
        lambda ev: [c for c in changed(ev, roce) if c.get("PciDevice", "/") != "/"])
    assert port(client, "rocep59s0f0", 1)["PciDevice"] != "/"

    # A change: the cable was pulled and put back at a lower speed. One read, one signal.
    signals.clear()
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/state", "1: DOWN\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/phys_state", "3: Disabled\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/rate", "40 Gb/sec (4X QDR)\n")
    testbed.uevent(SYSPATH["rocep59s0f0"], "change")
    change = signals.wait(lambda ev: changed(ev, roce))
    assert change and len(change) == 1, change
    assert change[0] == {"State": "down", "PhysState": "disabled", "RateGbps": 40.0, "Speed": "QDR"}
    assert port(client, "rocep59s0f0", 1)["Width"] == "4X"

    # A new address on the interface: a GID appears.
    signals.clear()
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/gids/10", "0000:0000:0000:0000:0000:ffff:c0a8:0b15\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/gid_attrs/types/10", "RoCE v2\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/gid_attrs/ndevs/10", "enp59s0f0np0\n")
    testbed.uevent(SYSPATH["rocep59s0f0"], "change")
    change = signals.wait(lambda ev: changed(ev, roce))
    assert change and set(change[0]) == {"Gids"}
    assert change[0]["Gids"][-1] == (10, "::ffff:192.168.11.21", "roce-v2", "enp59s0f0np0")

    # A change event that changes nothing sends nothing; the other device never hears of any of it.
    signals.clear()
    testbed.uevent(SYSPATH["rocep59s0f0"], "change")
    testbed.uevent(SYSPATH["mlx5_0"], "change")
    time.sleep(0.5)
    assert not [e for e in signals.events if e[3] == "PropertiesChanged"]

    # remove, then add again: the event decides, not what sysfs still shows.
    signals.clear()
    testbed.uevent(SYSPATH["rocep59s0f0"], "remove")
    gone = signals.wait(lambda ev: removed(ev, roce))
    assert gone and RDMA in gone[0]
    assert roce not in ports(client)
    testbed.uevent(SYSPATH["rocep59s0f0"], "add")
    assert signals.wait(lambda ev: added(ev, roce))
    assert port(client, "rocep59s0f0", 1)["State"] == "down"

    testbed.uevent(SYSPATH["rocep59s0f0"], "remove")
    testbed.remove_device(SYSPATH["rocep59s0f0"])
    assert wait_until(lambda: roce not in ports(client))
    assert port_path("mlx5_0", 1) in ports(client)


def test_refresh_is_mark_and_sweep(netns, client, signals, daemon_factory, testbed):
    """Refresh() (and a udev overrun, which runs the same enumeration) finds what no uevent announced."""
    load(testbed, "cx6-ib-hdr", "rxe-virtio")
    # rxe0 is in the tree but not listed in class/infiniband yet.
    rxe_class = os.path.join(testbed.sys, "class", "infiniband", "rxe0")
    target = os.readlink(rxe_class)
    os.unlink(rxe_class)
    start(daemon_factory, netns, testbed)
    assert sorted(ports(client)) == [port_path("mlx5_0", 1)]

    os.symlink(target, rxe_class)
    testbed.set_attribute(SYSPATH["mlx5_0"], "ports/1/sm_lid", "0x2\n")
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    assert signals.wait(lambda ev: added(ev, port_path("rxe0", 1)))
    assert signals.wait(lambda ev: changed(ev, port_path("mlx5_0", 1))) == [{"SmLid": 2}]

    signals.clear()
    testbed.remove_device("/sys/devices/virtual/infiniband/rxe0")  # umockdev sends no uevent for this
    time.sleep(0.15)  # Refresh() calls closer than 100 ms apart are answered from the fresh state
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    assert signals.wait(lambda ev: removed(ev, port_path("rxe0", 1)))
    assert sorted(ports(client)) == [port_path("mlx5_0", 1)]
    # Unchanged ports were not announced again.
    assert not [e for e in signals.events if e[1] == port_path("mlx5_0", 1)]


def add_veth(ns, name, index, peer):
    # A deleted interface's index stays busy until the kernel has finished unregistering it.
    for _ in range(100):
        proc = ns.ip("link", "add", name, "index", str(index), "type", "veth", "peer", "name", peer, check=False)
        if proc.returncode == 0:
            return
        assert "busy" in proc.stderr, proc.stderr
        time.sleep(0.05)
    raise AssertionError(f"index {index} stayed busy")


def roce_namespace(ns, testbed):
    """Links named and numbered like cx5-roce's and cx6-ib-hdr's interfaces, with sysfs from the testbed."""
    # The fixture's VLAN "enp59s0f0np0.100" has 16 bytes, one more than the kernel allows in an
    # interface name (IFNAMSIZ), so no link can have it; an upper device named roce.100 takes its GIDs
    # here. It is a macvlan, which is stacked the same way, because this kernel may lack 8021q.
    testbed.add_from_string("P: /devices/virtual/net/roce.100\nE: INTERFACE=roce.100\n"
                            "E: IFINDEX=9\nE: SUBSYSTEM=net\nA: ifindex=9\\n\n")
    for gid in (6, 7, 8, 9):
        testbed.set_attribute(SYSPATH["rocep59s0f0"], f"ports/1/gid_attrs/ndevs/{gid}", "roce.100\n")
    add_veth(ns, "enp59s0f0np0", 4, "rpeer")
    ns.ip("link", "add", "link", "enp59s0f0np0", "name", "roce.100", "index", "9", "type", "macvlan", "mode",
          "bridge")
    # An IPoIB interface cannot be made without an HCA; a veth with its name stands in for the cross-link.
    add_veth(ns, "ibp129s0f0", 5, "ibpeer")
    for dev in ("enp59s0f0np0", "rpeer", "roce.100", "ibp129s0f0", "ibpeer"):
        ns.ip("link", "set", dev, "up")


def cross_linked(client, device, ifname):
    path = port_path(device, 1)
    link = client.link_by_name(ifname)
    if not link or link["RdmaPort"] != path:
        return None
    if client.get_all("RdmaPort", path)["NetInterface"] != link["Path"]:
        return None
    return link


def test_roce_netdev_cross_links(netns, client, signals, daemon_factory, testbed):
    load(testbed, "cx5-roce", "cx6-ib-hdr")
    roce_namespace(netns, testbed)
    start(daemon_factory, netns, testbed)

    link = wait_until(lambda: cross_linked(client, "rocep59s0f0", "enp59s0f0np0"))
    assert link, (client.link_by_name("enp59s0f0np0"), port(client, "rocep59s0f0", 1))
    assert link["Index"] == 4 and link["Path"] == link_path(4)
    assert link["ConnectionType"] == "RoCE"
    # The link exists because netlink says so; its speed is the testbed's sysfs.
    assert link["SpeedMbps"] == 100000
    vlan = client.link_by_name("roce.100")
    assert vlan["RdmaPort"] == port_path("rocep59s0f0", 1) and vlan["ConnectionType"] == "RoCE"
    ib = wait_until(lambda: cross_linked(client, "mlx5_0", "ibp129s0f0"))
    assert ib and ib["ConnectionType"] == "Virtual"  # an InfiniBand port does not make a veth RoCE
    assert client.link_by_name("rpeer")["RdmaPort"] == "/"

    # The link goes first (its VLAN with it): the port points nowhere, and back when it returns.
    roce = port_path("rocep59s0f0", 1)
    signals.clear()
    netns.ip("link", "del", "enp59s0f0np0")
    assert signals.wait(lambda ev: any(c.get("NetInterface") == "/" for c in changed(ev, roce)))
    add_veth(netns, "enp59s0f0np0", 4, "rpeer")
    netns.ip("link", "set", "enp59s0f0np0", "up")
    netns.ip("link", "set", "rpeer", "up")
    assert wait_until(lambda: cross_linked(client, "rocep59s0f0", "enp59s0f0np0"))
    assert client.link_by_name("enp59s0f0np0")["ConnectionType"] == "RoCE"

    # The port goes first: the link loses it and is a plain veth again; then the port returns.
    signals.clear()
    testbed.uevent(SYSPATH["rocep59s0f0"], "remove")
    testbed.remove_device(SYSPATH["rocep59s0f0"])
    assert signals.wait(lambda ev: any(c.get("RdmaPort") == "/" for c in changed(ev, link_path(4), LINK)))
    assert wait_until(lambda: client.link_by_name("enp59s0f0np0")["ConnectionType"] == "Virtual")
    load_device(testbed, "cx5-roce", SYSPATH["rocep59s0f0"])  # umockdev sends "add"
    assert wait_until(lambda: cross_linked(client, "rocep59s0f0", "enp59s0f0np0"))
    assert wait_until(lambda: client.link_by_name("enp59s0f0np0")["ConnectionType"] == "RoCE")

    # A rename takes the link out of the port's interfaces, renaming it back puts it in again.
    netns.ip("link", "set", "enp59s0f0np0", "name", "other0")
    assert wait_until(lambda: port(client, "rocep59s0f0", 1)["NetInterface"] == "/")
    assert client.link_by_name("other0")["RdmaPort"] == "/"
    netns.ip("link", "set", "other0", "name", "enp59s0f0np0")
    assert wait_until(lambda: cross_linked(client, "rocep59s0f0", "enp59s0f0np0"))


def test_link_with_the_name_of_another_namespace_is_not_linked(netns, client, daemon_factory, testbed):
    """An RDMA device in shared mode lists interfaces of every namespace; only the one sysfs shows with
    the link's index is ours."""
    load(testbed, "cx5-roce")
    add_veth(netns, "enp59s0f0np0", 7, "rpeer")
    netns.ip("link", "set", "enp59s0f0np0", "up")
    start(daemon_factory, netns, testbed)
    link = wait_until(lambda: client.link_by_name("enp59s0f0np0"))
    time.sleep(0.3)
    assert client.link_by_name("enp59s0f0np0")["RdmaPort"] == "/"
    assert port(client, "rocep59s0f0", 1)["NetInterface"] == "/"
    assert link["ConnectionType"] == "Virtual"


def test_carrier_and_speed_reread_the_port(netns, client, signals, daemon_factory, testbed):
    """The kernel sends no uevent when a RoCE port follows its Ethernet link down: netlink's carrier and
    speed changes of that link re-read the port."""
    load(testbed, "cx5-roce")
    roce_namespace(netns, testbed)
    start(daemon_factory, netns, testbed)
    assert wait_until(lambda: cross_linked(client, "rocep59s0f0", "enp59s0f0np0"))

    # sysfs changes without a uevent; nothing polls, so nothing is seen ...
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/state", "1: DOWN\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/phys_state", "3: Disabled\n")
    time.sleep(0.5)
    assert port(client, "rocep59s0f0", 1)["State"] == "active"
    # ... until the interface loses its carrier.
    netns.ip("link", "set", "rpeer", "down")
    assert wait_until(lambda: port(client, "rocep59s0f0", 1)["State"] == "down")
    assert port(client, "rocep59s0f0", 1)["PhysState"] == "disabled"

    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/state", "4: ACTIVE\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/phys_state", "5: LinkUp\n")
    netns.ip("link", "set", "rpeer", "up")
    assert wait_until(lambda: port(client, "rocep59s0f0", 1)["State"] == "active")

    # The link renegotiated to 25 Gb/s: the next netlink event reads the new speed and the port.
    signals.clear()
    testbed.set_attribute(SYSPATH["enp59s0f0np0"], "speed", "25000\n")
    testbed.set_attribute(SYSPATH["rocep59s0f0"], "ports/1/rate", "25 Gb/sec (1X EDR)\n")
    netns.ip("link", "set", "enp59s0f0np0", "mtu", "4000")
    assert wait_until(lambda: port(client, "rocep59s0f0", 1)["RateGbps"] == 25.0)
    assert port(client, "rocep59s0f0", 1)["Width"] == "1X"
    assert client.link_by_name("enp59s0f0np0")["SpeedMbps"] == 25000


def test_no_rdma_is_quiet_under_umockdev(netns, client, daemon_factory, testbed):
    testbed.add_from_string("P: /devices/virtual/net/dummy9\nE: INTERFACE=dummy9\nE: SUBSYSTEM=net\n")
    daemon = start(daemon_factory, netns, testbed, "--log-level=debug", env=JOURNAL)
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    assert ports(client) == {}
    manager = client.get_all("Manager")
    assert manager["State"] == "running" and manager["DegradedReasons"] == []
    assert daemon.proc.poll() is None
    log = daemon.log()
    assert warnings_in(log) == [], log
    assert not [line for line in log.splitlines() if "rdma" in line.lower() or "infiniband" in line.lower()], log


def test_no_rdma_is_quiet_on_this_machine(netns, client, daemon_factory):
    if os.path.isdir("/sys/class/infiniband") and os.listdir("/sys/class/infiniband"):
        pytest.skip("this machine has RDMA devices; the quiet no-RDMA state cannot be seen here")
    daemon = daemon_factory(netns, args=["--log-level=debug"], env=JOURNAL)
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    assert ports(client) == {}
    assert client.get_all("Manager")["DegradedReasons"] == []
    log = daemon.log()
    assert warnings_in(log) == [], log
    assert not [line for line in log.splitlines() if "rdma" in line.lower() or "verbs" in line.lower()], log


def test_garbage_is_published_as_unknown(netns, client, daemon_factory, testbed):
    load(testbed, "broken", "cx6-ib-hdr")
    daemon = start(daemon_factory, netns, testbed, env=JOURNAL)
    published = ports(client)
    # broken1 has no ports/ at all; the port directory "abc" is no port.
    assert sorted(p for p in published if "broken" in p) == [port_path("broken0", n) for n in (1, 2, 3)]

    p1 = published[port_path("broken0", 1)]
    assert (p1["NodeType"], p1["NodeGuid"], p1["SystemImageGuid"], p1["BoardId"], p1["FirmwareVersion"]) == \
        ("unknown", "", "", "", "1.0")
    assert (p1["State"], p1["PhysState"], p1["LinkLayer"], p1["RateGbps"], p1["Width"], p1["Speed"]) == \
        ("unknown", "unknown", "unknown", 0.0, "unknown", "unknown")
    assert (p1["Transport"], p1["Lid"], p1["NetDevices"], p1["NetInterface"]) == ("Unknown", 0, [], "/")
    # The unparsable GID 0 is left out; "RoCE v3" is no type we know; an empty ndevs entry is no interface.
    assert p1["Gids"] == [(1, "fe80::1", "unknown", ""), (2, "fe80::2", "roce-v2", "")]

    p2 = published[port_path("broken0", 2)]  # numbers from a future kernel, an impossible width
    assert (p2["State"], p2["PhysState"], p2["LinkLayer"], p2["RateGbps"], p2["Width"]) == \
        ("unknown", "unknown", "unknown", 0.0, "unknown")
    p3 = published[port_path("broken0", 3)]  # a rate that does not match its speed name
    assert (p3["State"], p3["LinkLayer"], p3["RateGbps"], p3["Speed"]) == ("active", "ethernet", 0.0, "unknown")

    # Garbage arriving with a change event is published the same way.
    testbed.set_attribute(SYSPATH["mlx5_0"], "ports/1/rate", "\xff\xfe garbage\n")
    testbed.set_attribute(SYSPATH["mlx5_0"], "ports/1/state", "\n")
    testbed.uevent(SYSPATH["mlx5_0"], "change")
    assert wait_until(lambda: port(client, "mlx5_0", 1)["RateGbps"] == 0.0)
    assert port(client, "mlx5_0", 1)["State"] == "unknown"
    assert port(client, "mlx5_0", 1)["Width"] == "unknown"

    assert daemon.proc.poll() is None
    assert client.get_all("Manager")["State"] == "running"
    assert warnings_in(daemon.log()) == [], daemon.log()


def test_device_that_vanishes_before_it_is_read(netns, client, signals, daemon_factory, testbed):
    load(testbed, "cx6-ib-hdr", "cx6-ib-polling")
    # Listed in class/infiniband but gone when read: enumeration leaves it out.
    os.symlink("../../devices/virtual/infiniband/ghost0", os.path.join(testbed.sys, "class", "infiniband", "ghost0"))
    daemon = start(daemon_factory, netns, testbed, env=JOURNAL)
    assert sorted(ports(client)) == [port_path("mlx5_0", 1), port_path("mlx5_1", 1)]

    # An event for a device whose class entry is already gone: its port goes, nothing else happens.
    os.unlink(os.path.join(testbed.sys, "class", "infiniband", "mlx5_1"))
    testbed.uevent(SYSPATH["mlx5_1"], "change")
    assert signals.wait(lambda ev: removed(ev, port_path("mlx5_1", 1)))
    assert sorted(ports(client)) == [port_path("mlx5_0", 1)]
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    assert sorted(ports(client)) == [port_path("mlx5_0", 1)]
    assert daemon.proc.poll() is None
    assert warnings_in(daemon.log()) == [], daemon.log()


def test_linkprobectl_rdma(netns, bus, client, daemon_factory, testbed):
    load(testbed, "cx6-ib-hdr", "cx6-ib-polling", "cx5-roce", "rxe-virtio")
    start(daemon_factory, netns, testbed)

    out = lp.ctl(bus, "rdma", check=True).stdout
    lines = out.splitlines()
    assert lines[0].split() == ["DEVICE", "PORT", "STATE", "PHYS", "STATE", "TRANSPORT", "RATE", "LINK", "COULD",
                                "BE", "NETDEV", "REMOTE", "GIDS"]
    # Without umad the far end is unknown: COULD BE and REMOTE say "-" (test_ibsim.py fills them).
    rows = {line.split()[0]: [w for w in line.split() if w != "-"] for line in lines[1:]
            if line and not line.endswith("listed.")}
    assert rows["mlx5_0"] == ["mlx5_0", "1", "active", "link-up", "InfiniBand", "200", "Gb/s", "4X", "HDR",
                              "ibp129s0f0", "fe80::b8ce:f603:a1:b2c2"]
    assert rows["mlx5_1"][2:4] == ["down", "polling"]
    # RoCE lists each address once per GID type; the table shows distinct ones.
    assert rows["rocep59s0f0"][4:] == ["RoCE", "100", "Gb/s", "4X", "EDR", "enp59s0f0np0",
                                       "fe80::e42:a1ff:fe2b:3c4d", "::ffff:192.168.10.21", "+2"]
    assert rows["rxe0"][5:9] == ["2.5", "Gb/s", "1X", "SDR"]
    assert out.rstrip().endswith("4 RDMA ports listed.")
    assert lp.ctl(bus, "--no-legend", "rdma", check=True).stdout.splitlines()[0].startswith("mlx5_0 ")

    doc = json.loads(lp.ctl(bus, "rdma", "--json", check=True).stdout)
    assert [(p["Device"], p["Port"]) for p in doc] == [("mlx5_0", 1), ("mlx5_1", 1), ("rocep59s0f0", 1), ("rxe0", 1)]
    roce = doc[2]
    assert roce["Path"] == port_path("rocep59s0f0", 1)
    assert roce["Gids"][3] == {"Index": 3, "Gid": "::ffff:192.168.10.21", "Type": "roce-v2",
                               "NetDevice": "enp59s0f0np0"}
    for key, value in EXPECTED[("rocep59s0f0", 1)].items():
        if key != "Gids":
            assert roce[key] == value, key
    assert lp.ctl(bus, "rdma", "extra").returncode == 2


def test_linkprobectl_rdma_without_daemon(bus):
    proc = lp.ctl(bus, "rdma")
    assert proc.returncode == 1 and "not running" in proc.stderr


def rdma_dump_verbs():
    dump = os.path.join(lp.BUILD, "rdma-dump")
    proc = subprocess.run([dump, "--verbs"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)["verbs"]


def test_verbs_live_state(netns, client, daemon_factory):
    """With RDMA hardware, the published live state is what libibverbs reports."""
    verbs = rdma_dump_verbs()
    if verbs["availability"] != "available":
        pytest.skip(f"libibverbs path not exercised: {verbs['availability']}")
    daemon_factory(netns, args=["--log-level=debug"])
    published = ports(client)
    checked = 0
    for device in verbs["devices"]:
        if "error" in device:
            continue  # the daemon cannot open it either (permissions) and publishes sysfs values
        for p in device["ports"]:
            props = published[port_path(device["name"], p["port"])]
            assert props["State"] == (p["state"] or "unknown").lower().replace("_", "-"), (device["name"], p)
            if p["rate_gbps"] is not None:
                assert props["RateGbps"] == p["rate_gbps"], (device["name"], p)
            checked += 1
    if checked == 0:
        pytest.skip("libibverbs lists devices but cannot open any of them")


def test_sighup_rereads_rdma(netns, client, signals, daemon_factory, testbed):
    load(testbed, "cx6-ib-hdr")
    daemon = start(daemon_factory, netns, testbed)
    testbed.set_attribute(SYSPATH["mlx5_0"], "ports/1/lid", "0x2b\n")
    daemon.signal(signal.SIGHUP)
    assert signals.wait(lambda ev: any(c.get("Lid") == 0x2b for c in changed(ev, port_path("mlx5_0", 1))))


def test_rdma_metrics(netns, bus, daemon_factory, testbed):
    import subprocess
    load(testbed, *GOOD)
    start(daemon_factory, netns, testbed)
    out = lp.ctl(bus, "metrics")
    assert out.returncode == 0, out.stderr
    check = subprocess.run(["promtool", "check", "metrics"], input=out.stdout, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    text = out.stdout
    assert 'linkprobe_rdma_port_active{device="mlx5_0",port="1"} 1' in text, text
    assert 'linkprobe_rdma_port_rate_bytes{device="mlx5_0",port="1"} 25000000000' in text
    assert 'linkprobe_rdma_port_info{device="mlx5_0",port="1",transport="InfiniBand",link_layer="infiniband",' \
           'width="4X",speed="HDR",' in text
