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

# Short probes of few bytes (the veths are as fast as the CPUs, which other work shares), and a TTL
# short enough that a path left behind goes stale within the test.
QUICK = "[Reconciler]\nTickSec=200ms\nTcpDurationSec=100ms\nTcpSamples=10\nTcpTtlSec=10s\n"


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
            f"[Responder]\nListen=[::]:7471\nPreSharedKeyFile={key}\nMaxTestBytes=16M\n" + QUICK)
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
        wait_named(node, want)
        links = node.links_by_path()
        for far, (ifname, port, dock) in expect[role].items():
            # Named by whichever path was measured first; the expected cable's follows.
            nb = lp.wait_for(lambda: (lambda n: n if ifname in [links.get(p) for p in n["Links"]] else None)(
                node.neighbors()[ids[far]]), 20, f"{role} to reach {far} over {ifname}")
            assert nb["Authenticated"] is True, nb
            assert nb["Problems"] == [], nb
            assert nb["ThunderboltPeers"] == [lp.path_encode(lp.ROOT + "/thunderbolt", peer_sysname(port, dock))], nb
            assert nb["ThunderboltHostUuids"] == [cluster[far].host_uuid]
            assert nb["Paths"] and nb["CoordinatorPath"] != "/"
        print(f"{role} named its neighbours {time.monotonic() - cluster.started:.1f} s after the daemons started")
    # A reaches C over two cables: both count in the aggregate.
    lp.wait_for(lambda: a.neighbors()[ids["C"]]["AggregateLinks"] == 2, 20, "both of A's cables to C measured")
    nb = a.neighbors()[ids["C"]]
    assert sorted(a.links_by_path()[p] for p in nb["Links"]) == ["ac", "ac2"]
    assert nb["AggregateUploadGbps"] > 0 and nb["AggregateDownloadGbps"] > 0
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


def test_metrics_join_into_edges(cluster):
    ids = cluster.ids
    for role, node in cluster.nodes.items():
        wait_named(node, {i: cluster[r].ns.hostname for r, i in ids.items() if r != role})
        out = node.ctl("metrics")
        assert out.returncode == 0, out.stderr
        check = subprocess.run(["promtool", "check", "metrics"], input=out.stdout, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        text = out.stdout
        assert f'linkprobe_node_identity_info{{node_id="{ids[role]}",nodename="{node.ns.hostname}"}} 1' in text
        for far, far_id in ids.items():
            if far == role:
                continue
            assert (f'linkprobe_neighbor_info{{node_id="{ids[role]}",neighbor_id="{far_id}",'
                    f'neighbor_hostname="{cluster[far].ns.hostname}",authenticated="true"}} 1') in text
            assert f'linkprobe_edge_rtt_seconds{{node_id="{ids[role]}",neighbor_id="{far_id}",transport="tcp",' in text
            assert f'linkprobe_edge_thunderbolt_rx_bytes{{node_id="{ids[role]}",neighbor_id="{far_id}",' in text
    # The dock between A and C trained one lane: that edge is degraded, on both of A's cables to C.
    text = cluster["A"].ctl("metrics").stdout
    assert (f'linkprobe_edge_thunderbolt_degraded{{node_id="{ids["A"]}",neighbor_id="{ids["C"]}",sysname="0-303",'
            f'interface=""}} 1') in text


def edge_interfaces(node, far_id):
    """{transport: local interface} of node's edges to far_id, from its metrics."""
    out = {}
    for line in node.ctl("metrics").stdout.splitlines():
        if line.startswith("linkprobe_edge_rtt_seconds{") and f'neighbor_id="{far_id}"' in line:
            labels = dict(kv.split("=", 1) for kv in line[line.index("{") + 1:line.index("}")].split(","))
            out.setdefault(labels["transport"].strip('"'), set()).add(labels["interface"].strip('"'))
    return out


def test_both_ends_agree_about_each_edge(cluster):
    """Each cable is seen from both of its ends: A names B over ab and B names A over ba, and so on."""
    ids = cluster.ids
    pairs = {("A", "B"): ({"ab"}, {"ba"}), ("B", "C"): ({"bc"}, {"cb"}), ("A", "C"): ({"ac", "ac2"}, {"ca", "ca2"})}

    def agree():
        return all(edge_interfaces(cluster[x], ids[y]).get("tcp") == mine and
                   edge_interfaces(cluster[y], ids[x]).get("tcp") == theirs
                   for (x, y), (mine, theirs) in pairs.items())
    lp.wait_for(agree, 30, "every edge measured from both ends")


class Stranger:
    """A namespace cabled to a node by a link-local veth pair, where the test runs a responder of its own."""

    def __init__(self, node, ifname):
        self.ns = lp.NetNS()
        self.node, self.ifname = node, ifname
        lp.run(self.ns.exec_cmd(["sysctl", "-qw", "net.ipv6.conf.all.accept_dad=0",
                                 "net.ipv6.conf.default.accept_dad=0"]))
        lp.run(["ip", "link", "add", ifname, "netns", node.name, "type", "veth", "peer", "name", "x0", "netns",
                self.ns.name])
        self.ns.ip("link", "set", "x0", "up")
        node.ns.ip("link", "set", ifname, "up")
        self.dir = tempfile.mkdtemp(prefix="lp-stranger-")
        self.responder = None

    def serve(self, identity, *args):
        path = os.path.join(self.dir, "identity.json")
        with open(path, "w") as f:
            json.dump(identity, f)
        self.responder = Responder(self.ns.name, "[::]:7471", f"--identity-file={path}", *args, wait_address="::1")

    def close(self):
        if self.responder:
            self.responder.stop()
        self.ns.delete()  # the veth pair goes with it


def paths_over(node, ifname):
    return {path: p for path, p in node.peers().items() if p["SourceInterfaceName"] == ifname}


def test_spoofed_identity_is_a_problem_never_merged(cluster):
    """A responder without the key claims to be B: B's object says so, and its path is not B's."""
    a, ids = cluster["A"], cluster.ids
    wait_named(a, {ids["B"]: "node-b", ids["C"]: "node-c"})
    stranger = Stranger(a, "ax")
    try:
        stranger.serve({"node_id": ids["B"], "hostname": "node-b", "thunderbolt_host_uuids": [cluster["B"].host_uuid]})

        def flagged():
            nb = a.neighbors().get(ids["B"])
            return nb if nb and any("without proving it" in p for p in nb["Problems"]) else None
        nb = lp.wait_for(flagged, 30, "A to flag the spoofed NodeId")
        rogue = lp.wait_for(lambda: [p for p in paths_over(a, "ax").values() if p["ProbeState"] == "ok"], 10)
        assert rogue[0]["RemoteNodeId"] == ids["B"] and rogue[0]["RemoteAuthenticated"] is False
        assert rogue[0]["Neighbor"] == "/"
        assert not set(paths_over(a, "ax")) & set(nb["Paths"])
        assert sorted(a.links_by_path()[p] for p in nb["Links"]) == ["ab"]
        assert nb["Authenticated"] is True and nb["Hostname"] == "node-b"
        assert set(a.neighbors()) == {ids["B"], ids["C"]}
    finally:
        stranger.close()
    lp.wait_for(lambda: a.neighbors()[ids["B"]]["Problems"] == [], 10, "the problem to go with the stranger")


# Valid, so accepted and published, but every character some output format gives a meaning to.
HOSTILE = 'evil"} <b>\\ ]]>{{x}} \'\u2014'


def test_hostile_hostname_is_escaped_everywhere(cluster):
    a = cluster["A"]
    stranger = Stranger(a, "ay")
    stranger_id = "5ca1ab1e" * 4
    try:
        stranger.serve({"node_id": stranger_id, "hostname": HOSTILE})
        nb = lp.wait_for(lambda: a.neighbors().get(stranger_id), 30, "A to name the stranger")
        assert nb["Hostname"] == HOSTILE and nb["Authenticated"] is False
        # Unproved, though we hold a key: it says so.
        assert any("not proved" in p for p in nb["Problems"]), nb
        text = a.ctl("metrics").stdout
        check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
        assert check.returncode == 0, check.stdout + check.stderr
        assert 'neighbor_hostname="evil\\"} <b>\\\\ ]]>{{x}} \'\u2014"' in text
    finally:
        stranger.close()
    lp.wait_for(lambda: stranger_id not in a.neighbors(), 10, "the stranger to be forgotten")


class BadIdentityResponder:
    """Speaks the handshake, offers an identity, and answers IDENTITY_REQUEST with what it is given."""

    def __init__(self, ns, answer):
        import socket
        import threading
        from linkprobe_net import in_netns

        with in_netns(ns):
            self.sock = socket.socket(socket.AF_INET6, socket.SOCK_STREAM)
        self.sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.sock.bind(("::", 7471))
        self.sock.listen(8)
        self.answer = answer
        self.served = 0
        self.thread = threading.Thread(target=self._serve, daemon=True)
        self.thread.start()

    def _serve(self):
        import struct
        from linkprobe_net import frame, recv_frame

        while True:
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            with conn:
                try:
                    conn.settimeout(5)
                    ftype, _ = recv_frame(conn)
                    assert ftype == 1
                    reply = struct.pack(">HHII", 1, 0, 0x1F, 1 << 20) + bytes(32) + bytes(16) + struct.pack(">HH", 0, 0)
                    conn.sendall(frame(2, reply))
                    ftype, _ = recv_frame(conn)
                    assert ftype == 21
                    conn.sendall(self.answer)
                    self.served += 1
                    conn.recv(1)  # until the probe hangs up
                except (OSError, AssertionError, ConnectionError):
                    pass

    def close(self):
        self.sock.close()


def test_bad_identity_closes_the_connection_and_loses_nothing(cluster):
    import struct
    from linkprobe_net import frame

    a, ids = cluster["A"], cluster.ids
    wait_named(a, {ids["B"]: "node-b", ids["C"]: "node-c"})
    before = {k: (v["Hostname"], v["Paths"]) for k, v in a.neighbors().items()}
    oversized = b"LP" + bytes([22, 0]) + struct.pack(">I", 10240) + b"x" * 10240
    body = bytes(range(1, 17)) + bytes(16) + bytes(8) + bytes([4, 3, 0, 0]) + b"liar" + bytes(32)  # 3 UUIDs claimed, none sent
    control = bytes(range(1, 17)) + bytes(16) + bytes(8) + bytes([5, 0, 0, 0]) + b"a\x1b[2J" + bytes(32)
    for i, answer in enumerate((oversized, frame(22, body), frame(22, control))):
        ifname = f"az{i}"
        stranger = Stranger(a, ifname)
        fake = BadIdentityResponder(stranger.ns.name, answer)
        try:
            def failed():
                return [p for p in paths_over(a, ifname).values() if p["ProbeState"] == "failed"]
            bad = lp.wait_for(failed, 30, f"A's probe over {ifname} to fail")
            assert bad[0]["LastError"] == "protocol" and bad[0]["RemoteNodeId"] == "", bad[0]
            assert fake.served >= 1
        finally:
            fake.close()
            stranger.close()
        assert a.daemon.proc.poll() is None
        assert {k: (v["Hostname"], v["Paths"]) for k, v in a.neighbors().items()} == before


def test_cable_away_and_back(cluster):
    """The figures: from a cable (veth, and the Thunderbolt peers at its ends) going away to the
    neighbour objects being removed at both ends, and from it coming back to both being named again."""
    a, b, ids = cluster["A"], cluster["B"], cluster.ids
    wait_named(a, {ids["B"]: "node-b", ids["C"]: "node-c"})
    wait_named(b, {ids["A"]: "node-a", ids["C"]: "node-c"})

    # The Thunderbolt peers at the cable's ends go first (they alone name a neighbour that has a path
    # at all), then the clock starts with the veth.
    a.unplug_thunderbolt(b)
    b.unplug_thunderbolt(a)
    lp.wait_for(lambda: not a.neighbors()[ids["B"]]["ThunderboltPeers"] and not b.neighbors()[ids["A"]]["ThunderboltPeers"],
                10, "the Thunderbolt peers at both ends to go")
    # The kernel tells of a carrier change at most once a second per device (linkwatch): let the last
    # one pass, so the figure is the daemons' and not that window's.
    time.sleep(1.1)
    start = time.monotonic()
    a.ns.ip("link", "set", "ab", "down")
    gone = {}

    def parted():
        for node, far in ((a, "B"), (b, "A")):
            if node.role not in gone and ids[far] not in node.neighbors():
                gone[node.role] = time.monotonic() - start
        return len(gone) == 2
    lp.wait_for(parted, 10, "A and B to part", interval=0.01)
    removed = max(gone.values())
    print("removed at", {k: f"{v * 1000:.0f} ms" for k, v in gone.items()})
    assert set(a.neighbors()) == {ids["C"]} and set(b.neighbors()) == {ids["C"]}

    start = time.monotonic()
    a.ns.ip("link", "set", "ab", "up")
    lp.wait_for(lambda: ids["B"] in a.neighbors() and ids["A"] in b.neighbors(), 20, "A and B to name each other",
                interval=0.01)
    named = time.monotonic() - start
    a.plug_thunderbolt(b)
    b.plug_thunderbolt(a)
    wait_named(a, {ids["B"]: "node-b", ids["C"]: "node-c"})
    wait_named(b, {ids["A"]: "node-a", ids["C"]: "node-c"})
    print(f"FIGURES: cable away -> both neighbour objects removed: {removed * 1000:.0f} ms; "
          f"cable back -> both ends named again: {named * 1000:.0f} ms")
    lp.wait_for(lambda: a.neighbors()[ids["B"]]["ThunderboltPeers"], 10, "A's Thunderbolt peer B to come back")


def test_a_neighbour_vanishes(cluster):
    """C goes away for good (its daemon stops, its cables and Thunderbolt peers go): A and B remove it
    and keep each other; what they still want to measure of C no longer names it, and goes stale."""
    a, b, c, ids = cluster["A"], cluster["B"], cluster["C"], cluster.ids
    wait_named(a, {ids["B"]: "node-b", ids["C"]: "node-c"})
    wait_named(b, {ids["A"]: "node-a", ids["C"]: "node-c"})
    start = time.monotonic()
    a.unplug_thunderbolt(c)
    b.unplug_thunderbolt(c)
    log = c.stop()
    assert "runtime error:" not in log and "Sanitizer" not in log, log
    c.ns.delete()
    try:
        lp.wait_for(lambda: ids["C"] not in a.neighbors() and ids["C"] not in b.neighbors(), 20, "C to be removed")
    except AssertionError:
        print(json.dumps({"A": a.neighbors(), "B": b.neighbors(), "A paths": a.peers(), "B paths": b.peers()},
                         indent=1, default=str))
        raise
    print(f"C removed by A and B {(time.monotonic() - start) * 1000:.0f} ms after it went")
    assert set(a.neighbors()) == {ids["B"]} and set(b.neighbors()) == {ids["A"]}
    # B still wants C's configured address: the path stays, reaches nobody, and is stale within its TTL.
    left = [p for p in b.peers().values() if p["Address"] == "10.77.2.2"]
    assert left and all(p["Neighbor"] == "/" for p in left)
    lp.wait_for(lambda: all(p["Stale"] for p in b.peers().values() if p["Address"] == "10.77.2.2"), 15,
                "B's path to C's address to go stale")
    assert b.client.get_all("Summary")["Neighbors"] == 1
    assert a.daemon.proc.poll() is None and b.daemon.proc.poll() is None
