# SPDX-License-Identifier: LGPL-2.1-or-later
"""Never silently stale: a measured path goes Stale, with its StaleReason, in the same flush as the change
of the link under it (carrier, MTU, a Thunderbolt hop retraining), and is measured again once the link has
been quiet for RemeasureSettleSec=, no sooner than RemeasureIntervalSec= after the last such time.

Topology (names carry this process's PID):
    SA: s0 10.213.1.1/24  ===veth===  SB: t0 10.213.1.2/24
    SA: thunderbolt0 10.213.2.1/24  ===vxlan over s1 10.213.3.1 === t1 10.213.3.2===  SB: vx5 10.213.2.2/24
(the thunderbolt-net stand-in: a VXLAN carries traffic and, unlike a veth, is a kind netlink does not
settle, so the daemon reads its device in sysfs, which the Thunderbolt testbed makes an XDomain service)
SB runs linkprobed serving the responder; the daemon under test runs in SA.
"""

import os
import time

import pytest

import lp
import tbt_harness as h
from linkprobe_net import Namespaces, wait_listening
from peers_net import InNetns, peer_path, peers, wait_peer

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

DIRECT, OVER_TBT = "10.213.1.2", "10.213.2.2"
PEER = lp.IFACE + "Peer"
LINK = lp.IFACE + "Link"
TB5 = "tb5-direct-peer.umockdev"
TB5_PEER = "/devices/pci0000:00/0000:00:1c.4/0000:3a:00.0/0000:3b:00.0/0000:3c:00.0/domain0/0-0/0-1"


def config(address, settle="300ms", interval="1s"):
    return (f"[Peers]\nAddress={address}\n[Reconciler]\nTickSec=100ms\nTcpDurationSec=100ms\nTcpSamples=5\n"
            f"RemeasureSettleSec={settle}\nRemeasureIntervalSec={interval}\n")


@pytest.fixture(scope="module")
def net():
    ns = Namespaces("SA", "SB")
    bus = daemon = None
    try:
        a, b = ns["SA"], ns["SB"]
        ns.veth(a, "s0", b, "t0")
        ns.addr(a, "s0", "10.213.1.1/24")
        ns.addr(b, "t0", "10.213.1.2/24")
        ns.veth(a, "s1", b, "t1")
        ns.addr(a, "s1", "10.213.3.1/24")
        ns.addr(b, "t1", "10.213.3.2/24")
        # thunderbolt0 takes the index the Thunderbolt fixture's net device has, so the daemon's sysfs
        # reads (from the testbed) and netlink (from the namespace) describe one link.
        ns.ip(a, "link", "add", "thunderbolt0", "index", "5", "type", "vxlan", "id", "5", "dstport", "4789",
              "local", "10.213.3.1", "remote", "10.213.3.2", "dev", "s1")
        ns.ip(b, "link", "add", "vx5", "type", "vxlan", "id", "5", "dstport", "4789", "local", "10.213.3.2",
              "remote", "10.213.3.1", "dev", "t1")
        ns.ip(a, "link", "set", "thunderbolt0", "up")
        ns.ip(b, "link", "set", "vx5", "up")
        ns.addr(a, "thunderbolt0", "10.213.2.1/24")
        ns.addr(b, "vx5", "10.213.2.2/24")
        bus = lp.PrivateBus()
        daemon = lp.Daemon(bus, netns=InNetns(b), config="[Responder]\nListen=[::]:7471\n")
        wait_listening(b, DIRECT, 7471)
        wait_listening(b, OVER_TBT, 7471)
        yield {"A": a, "B": b, "ns": ns, "in_a": InNetns(a)}
    finally:
        if daemon:
            daemon.stop()
        if bus:
            bus.stop()
        ns.close()


def measured(p):
    return p["ProbeState"] == "ok" and p["MeasuredAt"] > 0 and not p["Stale"]


def changed(events, path, interface):
    """(time, properties) of each PropertiesChanged of interface on path."""
    return [(e[0], e[4][1]) for e in events if e[1] == path and e[3] == "PropertiesChanged" and e[4][0] == interface]


def test_a_carrier_flap_is_stale_at_once_and_measured_again_after_it_settles(net, client, signals, daemon_factory):
    daemon_factory(netns=net["in_a"], config=config(DIRECT))
    path = peer_path(f"tcp:{DIRECT}")
    first = wait_peer(client, path, measured)
    assert first["StaleReason"] == "" and first["SourceInterfaceName"] == "s0"
    link = client.link_by_name("s0")["Path"]

    signals.clear()
    down_at = time.monotonic()  # the signals are timed on this clock
    net["ns"].ip(net["B"], "link", "set", "t0", "down")  # s0 loses its carrier
    stale = signals.wait(lambda ev: [c for c in changed(ev, path, PEER) if c[1].get("Stale") is True])
    assert stale, signals.events
    carrier = [c for c in changed(signals.events, link, LINK) if c[1].get("Carrier") is False]
    assert carrier, signals.events
    # The same flush: the link's signal and the path's leave together.
    assert abs(stale[0][0] - carrier[0][0]) < 0.05, (stale, carrier)
    p = peers(client)[path]
    assert p["Stale"] and p["StaleReason"] == "carrier lost on s0", p
    assert p["MeasuredAt"] == first["MeasuredAt"]  # the old figures stay, marked

    time.sleep(0.5)  # down longer than the settle time: nothing is measured over a dead link
    back_at = time.time()
    net["ns"].ip(net["B"], "link", "set", "t0", "up")
    again = wait_peer(client, path, lambda q: measured(q) and q["MeasuredAt"] > first["MeasuredAt"], timeout=10)
    assert again["StaleReason"] == ""
    fresh_at = (again["MeasuredAt"] + again["ProbeDurationUsec"]) / 1e6
    print(f"carrier down -> Stale: {(stale[0][0] - down_at) * 1000:.0f} ms; carrier up -> "
          f"measured again: {(fresh_at - back_at) * 1000:.0f} ms (settle 300 ms, probe {again['ProbeDurationUsec'] / 1000:.0f} ms)")
    # Measured once the link was quiet for RemeasureSettleSec=, not before.
    assert again["MeasuredAt"] / 1e6 >= back_at + 0.25, (again["MeasuredAt"] / 1e6, back_at)


ONE_OFF = "a one-off result (ProbePeer) that is not kept fresh: AddPeer() or [Peers] Address= keeps a path measured"


def test_a_one_off_result_says_it_is_not_kept_fresh(net, bus, client, daemon_factory):
    """A path measured once with ProbePeer() (nobody wants it: no [Peers], no AddPeer()) goes stale with
    the change under it like any other, but is never measured again: StaleReason and linkprobectl peers
    say so, and how to keep it measured, for as long as that holds; AddPeer() makes it an ordinary path."""
    daemon_factory(netns=net["in_a"], config=config("192.0.2.99", settle="300ms"))
    path = peer_path(f"tcp:{DIRECT}")
    client.call(lp.ROOT, lp.IFACE + "Manager", "ProbePeer", "(sa{sv})", (DIRECT, {}), timeout_ms=30000)
    first = wait_peer(client, path, measured)
    assert first["StaleReason"] == "" and list(first["Origins"]) == ["probed"]
    try:
        net["ns"].ip(net["B"], "link", "set", "t0", "down")
        p = wait_peer(client, path, lambda q: q["Stale"])
        assert p["StaleReason"] == f"carrier lost on s0; {ONE_OFF}", p
    finally:
        net["ns"].ip(net["B"], "link", "set", "t0", "up")
    # The carrier is back, and the result still is what it was: stale, and saying why it stays so.
    lp.wait_for(lambda: client.link_by_name("s0")["Carrier"], what="s0's carrier")
    time.sleep(1)  # three settle times: a wanted path would have been measured again by now
    p = peers(client)[path]
    assert p["Stale"] and p["MeasuredAt"] == first["MeasuredAt"] and p["StaleReason"].endswith(ONE_OFF), p
    table = lp.ctl(bus, "peers").stdout
    assert f"One-off results (linkprobectl probe), not kept fresh: {DIRECT}.\n" in table, table
    assert "[Peers] Address= (linkprobed.conf) or AddPeer() keeps a path measured." in table
    assert "One-off" not in lp.ctl(bus, "--no-legend", "peers").stdout

    # Wanted from now on: no longer one-off, and measured again like any path.
    client.call(lp.ROOT, lp.IFACE + "Manager", "AddPeer", "(s)", (DIRECT,))
    again = wait_peer(client, path, lambda q: measured(q) and q["MeasuredAt"] > first["MeasuredAt"], timeout=15)
    assert again["StaleReason"] == "" and "added" in again["Origins"]
    assert "One-off" not in lp.ctl(bus, "peers").stdout


def test_an_mtu_change_is_stale_with_its_reason(net, client, daemon_factory):
    daemon_factory(netns=net["in_a"], config=config(DIRECT, settle="10s"))
    path = peer_path(f"tcp:{DIRECT}")
    wait_peer(client, path, measured)
    try:
        net["ns"].ip(net["A"], "link", "set", "s0", "mtu", "1400")
        p = wait_peer(client, path, lambda q: q["Stale"])
        assert p["StaleReason"] == "s0's MTU changed from 1500 to 1400", p
    finally:
        net["ns"].ip(net["A"], "link", "set", "s0", "mtu", "1500")


def test_a_flapping_link_is_not_a_probe_storm(net, client, daemon_factory):
    daemon_factory(netns=net["in_a"], config=config(DIRECT, settle="100ms", interval="2s"))
    path = peer_path(f"tcp:{DIRECT}")
    first = wait_peer(client, path, measured)
    attempts = set()
    started = time.time()
    while time.time() - started < 4:
        net["ns"].ip(net["B"], "link", "set", "t0", "down")
        time.sleep(0.1)
        net["ns"].ip(net["B"], "link", "set", "t0", "up")
        time.sleep(0.15)
        p = peers(client).get(path)
        if p and p["LastAttemptAt"] > first["LastAttemptAt"]:
            attempts.add(p["LastAttemptAt"])
    # Quiet now: the last re-measurement comes, and then no more.
    last = wait_peer(client, path, measured, timeout=10)
    attempts.add(last["LastAttemptAt"])
    # 4 s of flaps with one re-measurement per 2 s at most: 3 at the very most (one at each end and one
    # in between), where a probe per flap would be 16.
    assert 1 <= len(attempts) <= 3, sorted(attempts)


@pytest.mark.skipif(bool(h.missing_tools(boltd=False)), reason=h.missing_tools(boltd=False) or "-")
def test_a_thunderbolt_hop_retraining_under_the_path_makes_it_stale(net, client, live_bed, daemon_factory):
    bed = live_bed(TB5)
    daemon_factory(netns=net["in_a"], prefix=["umockdev-wrapper"], env=bed.env(),
                   args=[f"--sysfs-root={bed.sys}"], config=config(OVER_TBT, settle="10s"))
    path = peer_path(f"tcp:{OVER_TBT}")
    p = wait_peer(client, path, measured)
    assert p["SourceInterfaceName"] == "thunderbolt0" and p["ConnectionType"] == "Thunderbolt 5", p
    assert client.link_by_name("thunderbolt0")["SpeedMbps"] == 80000

    # The peer's link retrains on one lane each way: half the rate, and the path's result is stale.
    bed.set_attribute(TB5_PEER, "rx_lanes", "1\n")
    bed.set_attribute(TB5_PEER, "tx_lanes", "1\n")
    bed.uevent(TB5_PEER, "change")
    p = wait_peer(client, path, lambda q: q["Stale"])
    assert p["StaleReason"] == "thunderbolt0's speed changed from 80000 to 40000 Mb/s", p
