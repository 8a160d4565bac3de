# SPDX-License-Identifier: LGPL-2.1-or-later
"""Two nodes that measure each other at the same moment take turns: each linkprobed runs its responder
and its TCP probe with the node's measure lock, so the responder of a node that is measuring answers
busy, and the probe of a node whose responder serves waits; both paths are measured, and the daemon
says what its probe waited.

Topology (names carry this process's PID): NA: n0 10.214.1.1/24 ===veth=== NB: m0 10.214.1.2/24,
a linkprobed in each, each listening for the other's probes and measuring the other.
"""

import os
import threading

import pytest

import lp
from linkprobe_net import Namespaces, wait_listening
from peers_net import MANAGER, InNetns, peer_path, wait_peer

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

A_ADDR, B_ADDR = "10.214.1.1", "10.214.1.2"


def config(peer):
    # Long first-probe spreads and TTLs are not what is tested: the test asks both at once.
    return (f"[Peers]\nAddress={peer}\n[Responder]\nListen=[::]:7471\nRatePerSource=1000\nBurstPerSource=1000\n"
            "[Reconciler]\nTickSec=100ms\nTcpDurationSec=400ms\nTcpSamples=5\n")


def measured_after(t):
    return lambda p: p["ProbeState"] == "ok" and p["MeasuredAt"] > t


def test_two_nodes_measuring_each_other_take_turns(bus, client):
    ns = Namespaces("NA", "NB")
    bus_b = daemon_a = daemon_b = client_b = None
    try:
        ns.veth(ns["NA"], "n0", ns["NB"], "m0")
        ns.addr(ns["NA"], "n0", f"{A_ADDR}/24")
        ns.addr(ns["NB"], "m0", f"{B_ADDR}/24")
        bus_b = lp.PrivateBus()
        daemon_a = lp.Daemon(bus, netns=InNetns(ns["NA"]), config=config(B_ADDR))
        daemon_b = lp.Daemon(bus_b, netns=InNetns(ns["NB"]), config=config(A_ADDR))
        client_b = lp.Client(bus_b)
        wait_listening(ns["NA"], A_ADDR, 7471)
        wait_listening(ns["NB"], B_ADDR, 7471)
        path_a, path_b = peer_path(f"tcp:{B_ADDR}"), peer_path(f"tcp:{A_ADDR}")
        first_a = wait_peer(client, path_a, measured_after(0), timeout=30)
        first_b = wait_peer(client_b, path_b, measured_after(0), timeout=30)
        assert first_a and first_b, (daemon_a.log()[-3000:], daemon_b.log()[-3000:])

        # Both at once, again and again: every time one probe waits for its node's responder.
        for _ in range(2):
            since_a, since_b = first_a["MeasuredAt"], first_b["MeasuredAt"]
            asks = [threading.Thread(target=c.call, args=(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (addr, {})))
                    for c, addr in ((client, B_ADDR), (client_b, A_ADDR))]
            for t in asks:
                t.start()
            for t in asks:
                t.join()
            first_a = wait_peer(client, path_a, measured_after(since_a), timeout=30)
            first_b = wait_peer(client_b, path_b, measured_after(since_b), timeout=30)
            assert first_a and first_b, (daemon_a.log()[-3000:], daemon_b.log()[-3000:])
        waits = daemon_a.log().count("for this node's responder to finish serving") + \
            daemon_b.log().count("for this node's responder to finish serving")
        print(f"probes that waited for their node's responder: {waits}; figures "
              f"{first_a['UploadGbps']:.1f}/{first_a['DownloadGbps']:.1f} and "
              f"{first_b['UploadGbps']:.1f}/{first_b['DownloadGbps']:.1f} Gbit/s")
        assert waits >= 1, (daemon_a.log()[-3000:], daemon_b.log()[-3000:])
    finally:
        for c in (client_b,):
            if c:
                c.close()
        for d in (daemon_a, daemon_b):
            if d:
                d.stop()
        if bus_b:
            bus_b.stop()
        ns.close()
