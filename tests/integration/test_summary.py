# SPDX-License-Identifier: LGPL-2.1-or-later
"""The Summary interface: what an applet shows, derived from every published object and kept current
with PropertiesChanged. One live umockdev testbed holds a Thunderbolt dock with a peer host and three
RDMA devices (an active InfiniBand port, a RoCE port, and a port trained without a subnet manager);
the test's namespace has the links of the same names and indexes."""

import os
import time

import pytest

import lp
import tbt_harness as h
from lp import wait_until as wait_for
from umockdev_testbed import start

SUMMARY = lp.IFACE + "Summary"
RDMA_FIXTURES = os.path.join(lp.TOP, "tests", "fixtures", "rdma")
SKIP_REASON = h.missing_tools(boltd=False)


def summary(client):
    return client.get_all("Summary")


@pytest.fixture
def bed():
    if SKIP_REASON:
        pytest.skip(SKIP_REASON)
    b = h.LiveTestbed("tb4-dock-peer.umockdev", *(os.path.join(RDMA_FIXTURES, f + ".umockdev")
                                                  for f in ("cx5-roce", "cx6-ib-hdr", "ib-no-sm")))
    yield b
    b.close()


def test_summary(bed, netns, client, signals, daemon_factory):
    # The RoCE port's netdev (index 4 in the fixture) as a veth: RoCE, 100 Gb/s from the testbed's sysfs.
    netns.ip("link", "add", "enp59s0f0np0", "index", "4", "type", "veth", "peer", "name", "rpeer")
    for dev in ("enp59s0f0np0", "rpeer"):
        netns.ip("link", "set", dev, "up")
    # The Thunderbolt peer's thunderbolt-net interface (index 7), with ifb standing in for the driver.
    netns.ip("link", "add", "thunderbolt0", "index", "7", "type", "ifb")
    netns.ip("link", "set", "thunderbolt0", "up")
    start(daemon_factory, netns, bed)

    s = wait_for(lambda: (lambda v: v if v["FastestLink"][1] == "enp59s0f0np0" and v["ThunderboltPeers"]
                          and v["ThunderboltPeers"][0][5] else None)(summary(client)))
    assert s, summary(client)
    path, name, kind, speed = s["FastestLink"]
    assert (name, kind, speed) == ("enp59s0f0np0", "RoCE", 100000)
    assert path == client.link_by_name("enp59s0f0np0")["Path"]

    (peer,) = s["ThunderboltPeers"]
    assert peer[1:] == ("peerhost", 40.0, 40.0, "Thunderbolt 4", "thunderbolt0")
    assert peer[0].endswith("/thunderbolt/_30_2d301")

    # mlx5_0 (InfiniBand) and the RoCE port are active; mlx5_2 trained without a subnet manager.
    assert s["RdmaPortsActive"] == 2
    degraded = {d[1]: d for d in s["DegradedLinks"]}
    assert list(degraded) == ["mlx5_2_1"], s["DegradedLinks"]
    assert "no subnet manager" in degraded["mlx5_2_1"][2]
    assert s["BestPeerPaths"] == []

    # A change below flows up: the RoCE link goes down, so FastestLink falls back; one signal says so.
    signals.clear()
    netns.ip("link", "set", "enp59s0f0np0", "down")
    assert signals.wait(lambda ev: [e for e in ev if e[3] == "PropertiesChanged" and e[4][0] == SUMMARY
                                    and "FastestLink" in e[4][1]])
    s = summary(client)
    assert s["FastestLink"][1] == "thunderbolt0" and s["FastestLink"][2] == "Thunderbolt 4"

    # ... and back: a link that is not the fastest coming up faster than it takes its place (FastestLink
    # is not recomputed from every link on every change, only when one could move it).
    netns.ip("link", "set", "enp59s0f0np0", "up")
    # Speed follows Carrier (read off the loop): wait for the whole answer.
    assert wait_for(lambda: summary(client)["FastestLink"][1:] == ("enp59s0f0np0", "RoCE", 100000))
    # The signal that said so goes to the collector's own connection and may still be on its way: let it
    # arrive before judging what follows.
    assert signals.wait(lambda ev: [e for e in ev if e[3] == "PropertiesChanged" and e[4][0] == SUMMARY
                                    and e[4][1].get("FastestLink", ("", ""))[1] == "enp59s0f0np0"])
    # A slower link moving leaves it be.
    signals.clear()
    netns.ip("link", "set", "thunderbolt0", "mtu", "9000")
    assert wait_for(lambda: client.link_by_name("thunderbolt0")["Mtu"] == 9000)
    time.sleep(0.2)
    assert not [e for e in signals.events if e[3] == "PropertiesChanged" and e[4][0] == SUMMARY
                and "FastestLink" in e[4][1]]
    assert summary(client)["FastestLink"][1] == "enp59s0f0np0"

    # The subnet manager shows up: the port becomes active and leaves DegradedLinks.
    ib = "/sys/devices/pci0000:80/0000:80:01.2/0000:82:00.0/infiniband/mlx5_2"
    bed.set_attribute(ib, "ports/1/state", "4: ACTIVE\n")
    bed.uevent(ib, "change")
    assert wait_for(lambda: summary(client)["RdmaPortsActive"] == 3)
    assert summary(client)["DegradedLinks"] == []


def test_summary_when_there_is_nothing(netns, client, daemon_factory):
    daemon_factory(netns)
    s = summary(client)
    assert s == {"FastestLink": ("/", "", "", 0), "ThunderboltPeers": [], "RdmaPortsActive": 0,
                 "DegradedLinks": [], "BestPeerPaths": [], "Neighbors": 0, "BestNeighborPaths": []}
