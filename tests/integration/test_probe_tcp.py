# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobe-probe-tcp and linkprobe-probe-rdma against responders in network namespaces.

Topology (names carry this process's PID):
    A: a0 10.201.1.1/24 + 10.201.1.3/24, fd00:201:1::1/64  ===veth===  B: b0 10.201.1.2/24, fd00:201:1::2/64
    A: a1 10.201.2.1/24  ===veth=== C: br0 (ca, cb) ===veth===  B: b1 10.201.2.2/24
A responder runs in A and in B; a third one in B requires a pre-shared key (port 7472).
"""

import os
import socket
import stat
import struct
import tempfile
import time

import pytest

from linkprobe_net import (PORT, PROBE_RDMA, PROBE_TCP, RESPONDER, Namespaces, Responder, connect_from, frame,
                           hello_frame, probe, recv_frame, run, UPLOAD_START, UPLOAD_READY)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

FAST = ["--duration", "300ms", "--samples", "20"]


@pytest.fixture(scope="module")
def net():
    if not os.path.exists(PROBE_TCP):
        pytest.fail(f"{PROBE_TCP} is not built")
    ns = Namespaces("A", "B", "C")
    responders = []
    keydir = tempfile.mkdtemp(prefix="lp-psk-")
    try:
        a, b, c = ns["A"], ns["B"], ns["C"]
        ns.veth(a, "a0", b, "b0")
        ns.addr(a, "a0", "10.201.1.1/24")
        ns.addr(a, "a0", "10.201.1.3/24")
        ns.addr(b, "b0", "10.201.1.2/24")
        ns.addr(a, "a0", "fd00:201:1::1/64")
        ns.addr(b, "b0", "fd00:201:1::2/64")
        ns.ip(c, "link", "add", "br0", "type", "bridge")
        ns.ip(c, "link", "set", "br0", "up")
        ns.veth(a, "a1", c, "ca")
        ns.veth(b, "b1", c, "cb")
        ns.ip(c, "link", "set", "ca", "master", "br0")
        ns.ip(c, "link", "set", "cb", "master", "br0")
        ns.addr(a, "a1", "10.201.2.1/24")
        ns.addr(b, "b1", "10.201.2.2/24")

        key = os.path.join(keydir, "psk")
        with open(key, "w") as f:
            f.write("correct horse battery staple\n")
        os.chmod(key, stat.S_IRUSR | stat.S_IWUSR)
        wrong = os.path.join(keydir, "wrong")
        with open(wrong, "w") as f:
            f.write("incorrect horse battery staple\n")
        os.chmod(wrong, stat.S_IRUSR | stat.S_IWUSR)

        responders.append(Responder(a, "[::]:7471", wait_address="10.201.1.1"))
        responders.append(Responder(b, "[::]:7471", wait_address="10.201.1.2"))
        responders.append(Responder(b, "10.201.1.2:7472", "--psk-file", key, port=7472))
        yield {"ns": ns, "A": a, "B": b, "C": c, "key": key, "wrong_key": wrong, "responders": responders}
    finally:
        logs = [r.stop() for r in responders]
        ns.close()
        for f in os.listdir(keydir):
            os.unlink(os.path.join(keydir, f))
        os.rmdir(keydir)
        for log in logs:
            print(log)


def tx_bytes(ns, ifname):
    out = run("ip", "netns", "exec", ns, "cat", f"/sys/class/net/{ifname}/statistics/tx_bytes").stdout
    return int(out)


def check_plausible(doc, source):
    assert doc["status"] == "ok", doc
    assert doc["probe"] == "tcp" and doc["version"] == 1
    assert doc["source"] == source and doc["observed_source"] == source
    assert 0 < doc["rtt_usec"] < 20000
    assert doc["rtt"]["min_usec"] <= doc["rtt_usec"] <= doc["rtt"]["max_usec"]
    assert doc["jitter_usec"] >= 0 and doc["jitter_rfc3550_usec"] >= 0
    for direction in ("upload", "download"):
        d = doc[direction]
        # veth moves gigabits even on a loaded machine; a tenth of one is the floor of plausible.
        assert d["gbps"] > 0.1, doc
        assert d["bytes"] > 1_000_000
        assert 100_000 < d["duration_usec"] < 2_000_000
        assert abs(d["gbps"] - d["bytes"] * 8 / d["duration_usec"] / 1000) < 1e-6 * d["gbps"] + 1e-9
        assert doc[f"{direction}_gbps"] == d["gbps"]
    assert doc["upload"]["timed_by"] == "responder" and doc["download"]["timed_by"] == "probe"


def test_both_directions(net):
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "10.201.1.2")
    assert rc == 0, err
    check_plausible(doc, "10.201.1.1")
    assert doc["sink"] == "10.201.1.2:7471" and doc["interface"] is None
    rc, doc, err = probe(net["B"], PROBE_TCP, *FAST, "10.201.1.1:7471")
    assert rc == 0, err
    check_plausible(doc, "10.201.1.2")


def test_source_address_honoured(net):
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--source", "10.201.1.3", "10.201.1.2")
    assert rc == 0, err
    check_plausible(doc, "10.201.1.3")


def test_interface_and_bridge_path(net):
    a = net["A"]
    before = {i: tx_bytes(a, i) for i in ("a0", "a1")}
    rc, doc, err = probe(a, PROBE_TCP, *FAST, "--interface", "a1", "10.201.2.2")
    assert rc == 0, err
    check_plausible(doc, "10.201.2.1")
    assert doc["interface"] == "a1"
    after = {i: tx_bytes(a, i) for i in ("a0", "a1")}
    # The upload left through a1 (the bridge path), not a0.
    assert after["a1"] - before["a1"] >= doc["upload"]["bytes"]
    assert after["a0"] - before["a0"] < 1_000_000
    # Bound to a0 the same sink is reached over the direct veth instead (a0 has no route to the bridge
    # subnet, so the kernel takes the sink as on-link and B answers ARP for it on b0): the binding
    # decides the path, not the routing table.
    rc, doc, err = probe(a, PROBE_TCP, *FAST, "--interface", "a0", "10.201.2.2")
    assert rc == 0, err
    assert doc["interface"] == "a0"
    final = {i: tx_bytes(a, i) for i in ("a0", "a1")}
    assert final["a0"] - after["a0"] >= doc["upload"]["bytes"]
    assert final["a1"] - after["a1"] < 1_000_000


def test_ipv6(net):
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "[fd00:201:1::2]:7471")
    assert rc == 0, err
    check_plausible(doc, "fd00:201:1::1")
    assert doc["sink"] == "[fd00:201:1::2]:7471"


@pytest.mark.alone  # a time budget: a file beside it would spend some of it
def test_default_run_within_three_seconds(net):
    start = time.monotonic()
    rc, doc, err = probe(net["A"], PROBE_TCP, "10.201.1.2")
    wall = time.monotonic() - start
    assert rc == 0, err
    check_plausible(doc, "10.201.1.1")
    assert doc["rtt"]["samples"] == 50
    assert doc["wall_usec"] <= 3_000_000
    # The ramp's steps were read in slices as TCP took the data (a step that a busy host starved of
    # its slices counts for its total instead, so not every step need have them).
    for direction in ("upload", "download"):
        steps = doc[direction]["ramp"]
        assert steps and steps[0]["streams"] == 1, doc[direction]
        assert any(s["steady_gbps"] is not None for s in steps), steps
        assert all(s["steady_gbps"] is None or s["steady_gbps"] > 0 for s in steps), steps
    print(f"default probe: wall {wall:.2f}s (probe says {doc['wall_usec'] / 1e6:.2f}s), "
          f"up {doc['upload_gbps']:.2f} Gbit/s, down {doc['download_gbps']:.2f} Gbit/s, rtt {doc['rtt_usec']:.1f} us")


def test_pre_shared_key(net):
    b_sink = "10.201.1.2:7472"
    rc, doc, _ = probe(net["A"], PROBE_TCP, *FAST, b_sink)
    assert rc == 1 and doc["error"]["name"] == "auth-required"
    rc, doc, _ = probe(net["A"], PROBE_TCP, *FAST, "--psk-file", net["wrong_key"], b_sink)
    assert rc == 1 and doc["error"]["name"] == "auth-failed"
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--psk-file", net["key"], b_sink)
    assert rc == 0, err
    assert doc["authenticated"] is True
    check_plausible(doc, "10.201.1.1")


def test_errors_are_named(net):
    a = net["A"]
    rc, doc, _ = probe(a, PROBE_TCP, "10.201.1.2:1")
    assert rc == 1 and doc["error"]["name"] == "ECONNREFUSED"
    # Not a bet on a slow link: a bulk phase needs 150 ms of the deadline to itself (PHASE_OVERHEAD_USEC),
    # so a 100 ms deadline cannot be met however fast the link is.
    rc, doc, _ = probe(a, PROBE_TCP, "--deadline", "100ms", "10.201.1.2")
    assert rc == 1 and doc["error"]["name"] == "deadline"
    # Nobody answers at all: the connect timeout, then a named error, well within the deadline.
    rc, doc, _ = probe(a, PROBE_TCP, "--connect-timeout", "300ms", "10.201.1.99")
    assert rc == 1 and doc["error"]["name"] in ("deadline", "EHOSTUNREACH"), doc
    for bad in (["not-an-address"], ["10.201.1.2:0"], ["--samples", "0", "10.201.1.2"], ["--tests", "x", "10.201.1.2"],
                ["--interface", "nosuchif0", "10.201.1.2"], ["--source", "fd00::1", "10.201.1.2"], []):
        rc, doc, _ = probe(a, PROBE_TCP, *bad)
        assert rc == 2 and doc["status"] == "error" and doc["error"]["name"] == "usage", (bad, doc)
    rc, doc, err = probe(a, PROBE_TCP, "--tests", "rtt", "10.201.1.2")
    assert rc == 0 and "upload" not in doc and "download" not in doc and doc["rtt_usec"] > 0


def test_busy(net):
    # Hold the responder's single bulk slot with a slow upload of our own.
    s = connect_from(net["A"], None, "10.201.1.2")
    try:
        s.sendall(hello_frame())
        assert recv_frame(s)[0] == 2
        s.sendall(frame(UPLOAD_START, struct.pack(">QQII", 1 << 30, 3_000_000, 65536, 0)))
        assert recv_frame(s)[0] == UPLOAD_READY
        rc, doc, _ = probe(net["A"], PROBE_TCP, *FAST, "--busy-retries", "0", "--source", "10.201.1.3", "10.201.1.2")
        assert rc == 1 and doc["error"]["name"] == "busy", doc
    finally:
        s.close()
    # Released when the holder goes away.
    time.sleep(0.1)
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--source", "10.201.1.3", "10.201.1.2")
    assert rc == 0, err


def test_probe_rdma_unsupported(net):
    rc, doc, err = probe(net["A"], PROBE_RDMA, "10.201.1.2")
    assert rc == 0, err
    assert doc["probe"] == "rdma" and doc["status"] == "unsupported"
    # Both ends lack a device here; the reason names both.
    assert "this host" in doc["reason"] and "10.201.1.2:7471 does not serve RDMA" in doc["reason"], doc
    rc, doc, _ = probe(net["A"], PROBE_RDMA, "--psk-file", net["key"], "10.201.1.2:7472")
    assert rc == 0 and doc["status"] == "unsupported"
    rc, doc, _ = probe(net["A"], PROBE_RDMA, "10.201.1.2:7472")
    assert rc == 1 and doc["error"]["name"] == "auth-required"
    rc, doc, _ = probe(net["A"], PROBE_RDMA, "10.201.1.2:1")
    assert rc == 1 and doc["error"]["name"] == "ECONNREFUSED"
    for bad in (["--iterations", "0", "x"], ["--port", "0", "10.201.1.2"], ["--message-size", "1G", "10.201.1.2"],
                ["--tests", "bogus", "10.201.1.2"], []):
        rc, doc, _ = probe(net["A"], PROBE_RDMA, *bad)
        assert rc == 2 and doc["error"]["name"] == "usage", (bad, doc)


def test_responders_survived(net):
    for r in net["responders"]:
        assert r.alive()
