# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fabric: three nodes, each a network namespace with its own linkprobed, bus, state directory,
responder, machine ID and generated Thunderbolt testbed, cabled in a ring, name each other from the
wire and agree about every edge; a Prometheus server scraping all three draws the ring.

    A ab ══ ba B            link-local only (thunderbolt-net's rule): found by neighbour discovery
    B bc ══ cb C            10.77.2.1/24 ══ 10.77.2.2/24, and link-local
    C ca ══ ac A            10.77.3.1/24 ══ 10.77.3.2/24, and link-local
    C ca2 ══ ac2 A          a second cable, link-local: A and C are joined twice (aggregate capacity)
Thunderbolt: A port 1 ↔ B port 1; B port 3 ↔ C port 1; A port 3 → a dock → C port 3.
Every node: [Peers] Discover=veth, the same pre-shared key for probing and for its responder; C also
probes its neighbours' IPv4 addresses, B C's. A monitor namespace reaches each node's /metrics.
"""

import json
import os
import subprocess
import tempfile
import time

import pytest

import lp
from fabric_net import Cluster, peer_sysname
from linkprobe_net import Responder

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

QUICK = "[Reconciler]\nTickSec=200ms\nTcpDurationSec=100ms\nTcpSamples=10\nTcpTtlSec=30s\n"


def psk_file(directory):
    path = os.path.join(directory, "psk")
    with open(path, "w") as f:
        f.write("fabric-test-key-0123456789abcdef\n")
    os.chmod(path, 0o600)
    return path


@pytest.fixture(scope="module")
def cluster():
    keydir = tempfile.mkdtemp(prefix="lp-fabric-key-")
    key = psk_file(keydir)
    base = (f"[Peers]\nDiscover=veth\nPreSharedKeyFile={key}\n"
            f"[Responder]\nListen=[::]:7471\nPreSharedKeyFile={key}\n" + QUICK)
    c = Cluster(base, dock_degraded=True)
    logs = {}
    try:
        a, b, cc = c.add("A", "node-a"), c.add("B", "node-b"), c.add("C", "node-c")
        c.cable(a, "ab", b, "ba")
        c.cable(b, "bc", cc, "cb", [(b, "bc", "10.77.2.1/24"), (cc, "cb", "10.77.2.2/24")])
        c.cable(cc, "ca", a, "ac", [(cc, "ca", "10.77.3.1/24"), (a, "ac", "10.77.3.2/24")])
        c.cable(cc, "ca2", a, "ac2")
        c.thunderbolt(a, 1, b, 1)
        c.thunderbolt(b, 3, cc, 1)
        c.thunderbolt(a, 3, cc, 3, via_dock=True)
        c.add_monitor()
        b.config = "[Peers]\nAddress=10.77.2.2\n"
        cc.config = "[Peers]\nAddress=10.77.2.1 10.77.3.2\n"
        started = time.monotonic()
        for node in (a, b, cc):
            node.start()
        c.started = started
        c.ids = {role: node.node_id() for role, node in c.nodes.items()}
        yield c
    finally:
        logs = c.close()
        for role, log in logs.items():
            assert "runtime error:" not in log and "Sanitizer" not in log, f"{role}:\n{log}"


def wait_named(node, want, timeout=30):
    """Waits until node's neighbours are exactly want ({NodeId: hostname}) with a live ring path each."""
    def check():
        n = node.neighbors()
        return n if ({k: v["Hostname"] for k, v in n.items()} == want and
                     all(v["RingPath"] != "/" for v in n.values())) else None
    return lp.wait_for(check, timeout, f"{node.role} to name {sorted(want.values())}")


def test_every_node_names_its_neighbours(cluster):
    a, b, c = cluster["A"], cluster["B"], cluster["C"]
    ids = cluster.ids
    assert len(set(ids.values())) == 3 and all(len(i) == 32 for i in ids.values())
    expect = {"A": {"B": ("ab", 1, False), "C": ("ac", 3, True)},
              "B": {"A": ("ba", 1, False), "C": ("bc", 3, False)},
              "C": {"B": ("cb", 1, False), "A": ("ca", 3, False)}}
    for role, node in cluster.nodes.items():
        want = {ids[far]: cluster[far].ns.hostname for far in expect[role]}
        neighbours = wait_named(node, want)
        links = node.links_by_path()
        for far, (ifname, port, dock) in expect[role].items():
            nb = neighbours[ids[far]]
            assert nb["Authenticated"] is True, nb
            assert nb["Problems"] == [], nb
            names = sorted(links[p] for p in nb["Links"])
            assert ifname in names, (role, far, names)
            assert nb["ThunderboltPeers"] == [lp.path_encode(lp.ROOT + "/thunderbolt", peer_sysname(port, dock))], nb
            assert nb["ThunderboltHostUuids"] == [cluster[far].host_uuid]
            assert nb["Paths"] and nb["CoordinatorPath"] != "/"
        print(f"{role} named its neighbours {time.monotonic() - cluster.started:.1f} s after the daemons started")
    # A reaches C over two cables: both count in the aggregate.
    nb = a.neighbors()[ids["C"]]
    assert sorted(a.links_by_path()[p] for p in nb["Links"]) == ["ac", "ac2"]
    lp.wait_for(lambda: a.neighbors()[ids["C"]]["AggregateLinks"] == 2, 20, "both of A's cables to C measured")
    # Who this node is, on its root object.
    node = a.client.get_all("Node")
    assert node["NodeId"] == ids["A"] and node["ThunderboltHostUuids"] == [a.host_uuid]
    summary = a.client.get_all("Summary")
    assert summary["Neighbors"] == 2
    assert sorted(e[1] for e in summary["BestNeighborPaths"]) == ["node-b", "node-c"]
    # Every path says which node it reached.
    for path, p in a.peers().items():
        if p["ProbeState"] == "ok":
            assert p["RemoteNodeId"] in (ids["B"], ids["C"]) and p["RemoteAuthenticated"], p
            assert p["Neighbor"] == a.neighbors()[p["RemoteNodeId"]]["Path"]
