# SPDX-License-Identifier: LGPL-2.1-or-later
"""thunderbolt-net: the network Link and the Thunderbolt peer point at each other.

The testbed has a net device below each XDomain service (class/net/<if>/device is the service); the
test creates a real link of the same name and index in its network namespace, so the daemon's netlink
sees the link while its sysfs reads come from the testbed. ifb stands in for thunderbolt-net: it is
always available and its kind says nothing, so the bus behind it decides (as for the real driver)."""

import json
import time

import lp
import tbt_harness as h
from test_tbt_daemon import object_path, remove_devices, start, tbt_objects, wait_until

LINK = lp.IFACE + "Link"
SKIP_REASON = h.missing_tools(boltd=False)
TWO_DOCKS = "peers-two-docks.umockdev"
DOCK = "/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1"
NODE03 = DOCK + "/0-301/0-30301"


def add_link(ns, name, index, up=True):
    ns.ip("link", "add", name, "index", str(index), "type", "ifb")
    if up:
        ns.ip("link", "set", name, "up")


def link_state(client, name):
    link = client.link_by_name(name)
    if link is None:
        return None
    return {k: link[k] for k in ("Path", "Kind", "ConnectionType", "ThunderboltPeer", "SpeedMbps")}


def wait_link(client, name, **want):
    def check():
        state = link_state(client, name)
        return state if state and all(state[k] == v for k, v in want.items()) else None
    return wait_until(check, what=f"{name} to have {want} (now {link_state(client, name)})")


def wait_peer(client, sysname, net_interface):
    return wait_until(lambda: tbt_objects(client).get(sysname, {}).get("NetInterface") == net_interface,
                      what=f"{sysname}'s NetInterface {net_interface}")


def test_cross_linked_at_start(live_bed, netns, client, daemon_factory):
    """TB5 peer directly on the host: the link is Thunderbolt 5 at the path's 80 Gb/s."""
    bed = live_bed("tb5-direct-peer.umockdev")
    add_link(netns, "thunderbolt0", 5)
    start(daemon_factory, netns, bed)
    link = wait_link(client, "thunderbolt0", ThunderboltPeer=object_path("0-1"))
    assert link["Kind"] == "thunderbolt"
    assert link["ConnectionType"] == "Thunderbolt 5"
    assert link["SpeedMbps"] == 80000
    assert tbt_objects(client)["0-1"]["NetInterface"] == link["Path"]


def test_either_side_first(live_bed, netns, client, signals, daemon_factory):
    bed = live_bed(TWO_DOCKS)
    # node03 is not plugged in yet; the Mac on the first dock is.
    remove_devices(bed, TWO_DOCKS, NODE03)
    start(daemon_factory, netns, bed)
    assert "0-30301" not in tbt_objects(client)

    # Peer first, link second: the Mac runs Thunderbolt 3 (its dock port says "tbt").
    add_link(netns, "thunderbolt1", 7)
    mac = wait_link(client, "thunderbolt1", ThunderboltPeer=object_path("0-501"))
    assert (mac["Kind"], mac["ConnectionType"], mac["SpeedMbps"]) == ("thunderbolt", "Thunderbolt 3", 40000)
    wait_peer(client, "0-501", mac["Path"])
    # The link goes away: the peer no longer names it.
    netns.ip("link", "del", "thunderbolt1")
    wait_peer(client, "0-501", "/")

    # Link first, peer second: the link exists before its service and sysfs directory do. Kept down,
    # so no later netlink event makes the daemon look at its sysfs again: the Thunderbolt side must.
    add_link(netns, "thunderbolt0", 6, up=False)
    wait_until(lambda: client.link_by_name("thunderbolt0"), what="thunderbolt0")
    time.sleep(0.5)
    assert link_state(client, "thunderbolt0")["ThunderboltPeer"] == "/"
    records = h.fixture_records(TWO_DOCKS, lambda path: path.startswith(NODE03))
    bed.add_from_string(records)  # sends "add" for each device, the net device too
    node03 = wait_link(client, "thunderbolt0", ThunderboltPeer=object_path("0-30301"))
    assert (node03["Kind"], node03["ConnectionType"], node03["SpeedMbps"]) == ("thunderbolt", "Thunderbolt 4", 40000)
    wait_peer(client, "0-30301", node03["Path"])

    # A hop on the way slows down: SpeedMbps follows the path, announced as a change of the link.
    signals.clear()
    bed.set_attribute(DOCK, "rx_speed", "10.0 Gb/s\n")
    bed.set_attribute(DOCK, "tx_speed", "10.0 Gb/s\n")
    bed.uevent(DOCK, "change")
    wait_link(client, "thunderbolt0", SpeedMbps=20000, ConnectionType="Thunderbolt 4")
    assert signals.wait(lambda ev: any(p == node03["Path"] and m == "PropertiesChanged" and a[0] == LINK and
                                       "SpeedMbps" in a[1] for _, p, _, m, a in ev))

    # The second dock's port now runs Thunderbolt 3 to node03: so does the link.
    bed.set_attribute(DOCK + "/0-301", "usb4_port3/link", "tbt\n")
    bed.uevent(DOCK + "/0-301", "change")
    wait_link(client, "thunderbolt0", ConnectionType="Thunderbolt 3")

    # The peer goes first: the link stays, pointing nowhere, its generation unknown.
    bed.uevent(NODE03, "remove")
    wait_link(client, "thunderbolt0", ThunderboltPeer="/", ConnectionType="Thunderbolt", SpeedMbps=0)
    assert "0-30301" not in tbt_objects(client)


def test_link_of_another_device_is_not_claimed(live_bed, netns, client, daemon_factory):
    """A link with the testbed interface's name but another index is a different interface: sysfs says
    so (ifindex), and it must not be cross-linked."""
    bed = live_bed("tb4-dock-peer.umockdev")
    add_link(netns, "thunderbolt0", 9)  # the testbed's thunderbolt0 has index 7
    start(daemon_factory, netns, bed)
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    link = wait_until(lambda: link_state(client, "thunderbolt0"), what="thunderbolt0")
    assert link["ThunderboltPeer"] == "/" and link["Kind"] != "thunderbolt"
    assert tbt_objects(client)["0-301"]["NetInterface"] == "/"


def test_ctl_tree(live_bed, netns, bus, client, daemon_factory):
    """linkprobectl thunderbolt (and its alias tree): host -> dock -> dock -> peer, indented, with
    classes, rates, hostnames and the net interface; --json is the same tree, nested."""
    bed = live_bed(TWO_DOCKS)
    add_link(netns, "thunderbolt0", 6)
    start(daemon_factory, netns, bed)
    wait_peer(client, "0-30301", client.link_by_name("thunderbolt0")["Path"])

    text = lp.ctl(bus, "thunderbolt")
    assert text.returncode == 0, text.stderr
    assert lp.ctl(bus, "tree").stdout == text.stdout
    lines = text.stdout.splitlines()
    assert lines[0].split() == ["DEVICE", "TYPE", "NAME", "CLASS", "LINK", "RX/TX", "PATH", "RX/TX", "NOTES"]
    rows = lines[1:7]
    assert [r.split()[0] for r in rows] == ["domain0", "└─", "└─", "├─", "│", "└─"]
    order = [r.replace("└─", " ").replace("├─", " ").replace("│", " ").split()[0] for r in rows]
    assert order == ["domain0", "0-0", "0-1", "0-301", "0-30301", "0-501"]
    # Indentation grows by one level per hop.
    indent = [len(r) - len(r.lstrip(" │├└─")) for r in rows]
    assert indent[1] < indent[2] < indent[3] < indent[4] and indent[5] == indent[3]
    node03 = rows[4]
    assert "node03" in node03 and "Thunderbolt 4" in node03 and "40/40 Gb/s" in node03
    assert "net thunderbolt0" in node03
    assert "Mac mini" in rows[5] and "Thunderbolt 3" in rows[5]
    assert "security user" in rows[0]
    assert lines[-1] == "6 devices, 2 peers."

    js = lp.ctl(bus, "--json", "thunderbolt")
    assert js.returncode == 0, js.stderr
    roots = json.loads(js.stdout)
    assert [r["SysfsName"] for r in roots] == ["domain0"]
    chain = roots[0]["Children"][0]["Children"][0]
    assert chain["SysfsName"] == "0-1" and [c["SysfsName"] for c in chain["Children"]] == ["0-301", "0-501"]
    peer = chain["Children"][0]["Children"][0]
    assert peer["SysfsName"] == "0-30301" and peer["NetInterfaceName"] == "thunderbolt0"
    assert peer["Name"] == "node03" and peer["PathRxGbps"] == 40 and peer["Children"] == []
    assert peer["NetInterface"] == client.link_by_name("thunderbolt0")["Path"]


def test_ctl_tree_without_thunderbolt(netns, bus, daemon_factory, tmp_path):
    sys_dir = tmp_path / "sys"
    sys_dir.mkdir()
    daemon_factory(netns, args=[f"--sysfs-root={sys_dir}"])
    out = lp.ctl(bus, "thunderbolt")
    assert out.returncode == 0 and out.stdout == "No Thunderbolt/USB4 devices.\n"
    assert lp.ctl(bus, "--json", "tree").stdout.strip() == "[]"
    assert lp.ctl(bus, "thunderbolt", "extra").returncode == 2
