# SPDX-License-Identifier: LGPL-2.1-or-later
"""Measurements that know they were disturbed: traffic of others on the interface during a test is
flagged (cross_traffic_gbps and a warning), and a node's probe and its responder take turns through
the node's measure lock (--lock-file), so two nodes never measure each other at once.

Topology: A a0 10.205.1.1/24 ===veth=== B b0 10.205.1.2/24; a responder in each, each with its
node's lock file.
"""

import fcntl
import json
import os
import subprocess
import sys
import tempfile
import time

import pytest

from linkprobe_net import PROBE_TCP, Namespaces, Responder, probe, run

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

A_ADDR, B_ADDR = "10.205.1.1", "10.205.1.2"
FAST = ["--duration", "400ms", "--samples", "20"]

# A plain socket blasting UDP through the same veth (to a port nobody listens on: the packets still
# cross both interfaces) for a number of seconds.
BLASTER = """
import socket, sys, time
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
payload = b"x" * 1400
end = time.monotonic() + float(sys.argv[2])
while time.monotonic() < end:
    for _ in range(1000):
        try:
            s.sendto(payload, (sys.argv[1], 9))
        except OSError:
            pass
"""


@pytest.fixture(scope="module")
def net():
    ns = Namespaces("A", "B")
    locks = tempfile.mkdtemp(prefix="lp-locks-")
    responders = []
    try:
        ns.veth(ns["A"], "a0", ns["B"], "b0")
        ns.addr(ns["A"], "a0", f"{A_ADDR}/24")
        ns.addr(ns["B"], "b0", f"{B_ADDR}/24")
        lock_a, lock_b = os.path.join(locks, "a.lock"), os.path.join(locks, "b.lock")
        # The per-source rate limit is not under test here: every test asks again at once.
        unlimited = ["--rate", "1000", "--burst", "1000"]
        responders.append(Responder(ns["A"], f"{A_ADDR}:7471", "--lock-file", lock_a, *unlimited))
        responders.append(Responder(ns["B"], f"{B_ADDR}:7471", "--lock-file", lock_b, *unlimited))
        yield {"A": ns["A"], "B": ns["B"], "lock_a": lock_a, "lock_b": lock_b, "responders": responders}
    finally:
        logs = [r.stop() for r in responders]
        for f in os.listdir(locks):
            os.unlink(os.path.join(locks, f))
        os.rmdir(locks)
        ns.close()
        for log in logs:
            print(log)


def test_undisturbed_run_says_so(net):
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, B_ADDR)
    assert rc == 0, err
    assert doc["cross_traffic_gbps"] == 0, doc
    assert doc["upload"]["cross_traffic_gbps"] == 0 and doc["download"]["cross_traffic_gbps"] == 0, doc
    assert not [w for w in doc["warnings"] if "other traffic" in w], doc


def test_cross_traffic_is_flagged(net):
    blaster = subprocess.Popen(["ip", "netns", "exec", net["A"], sys.executable, "-c", BLASTER, B_ADDR, "5"])
    try:
        time.sleep(0.3)
        rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--tests", "upload,download", "--streams", "1", B_ADDR)
    finally:
        blaster.kill()
        blaster.wait()
    assert rc == 0, err
    # The blaster leaves through a0 and arrives at b0: the upload shares the wire with it.
    up = doc["upload"]["cross_traffic_gbps"]
    print(f"cross traffic during the upload: {up:.2f} Gbit/s (upload {doc['upload_gbps']:.2f} Gbit/s); "
          f"warnings {doc['warnings']}")
    assert up > 0.05, doc
    assert doc["cross_traffic_gbps"] >= up, doc
    assert any(w.startswith("upload: ") and "Gbit/s of other traffic" in w for w in doc["warnings"]), doc


def test_responder_is_busy_while_its_node_measures(net):
    # The node's probe holds the lock (here: this test, standing in for it).
    with open(net["lock_b"], "a") as f:
        fcntl.flock(f, fcntl.LOCK_EX)
        rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--tests", "upload", "--busy-retries", "0", B_ADDR)
        assert rc == 1 and doc["error"]["name"] == "busy", doc
        assert "measuring another node" in doc["error"]["message"], doc
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--tests", "upload", "--busy-retries", "0", B_ADDR)
    assert rc == 0, doc


def test_probe_waits_while_its_responder_serves(net):
    f = open(net["lock_a"], "a")
    fcntl.flock(f, fcntl.LOCK_EX)
    p = subprocess.Popen(["ip", "netns", "exec", net["A"], PROBE_TCP, *FAST, "--lock-file", net["lock_a"], B_ADDR],
                         stdout=subprocess.PIPE, text=True)
    time.sleep(0.5)
    assert p.poll() is None
    fcntl.flock(f, fcntl.LOCK_UN)
    f.close()
    out, _ = p.communicate(timeout=30)
    doc = json.loads(out)
    assert doc["status"] == "ok", doc
    assert doc["lock_wait_usec"] >= 400_000, doc


def test_two_nodes_probing_each_other_take_turns(net):
    """Both start at once; each holds its node's lock while it measures, so the responder of a node
    that is measuring answers busy and the other probe tries again after a random back-off."""
    procs = [subprocess.Popen(["ip", "netns", "exec", net[src], PROBE_TCP, *FAST, "--lock-file", net[lock],
                               "--busy-retries", "10", dst], stdout=subprocess.PIPE, text=True)
             for src, lock, dst in (("A", "lock_a", B_ADDR), ("B", "lock_b", A_ADDR))]
    docs = [json.loads(p.communicate(timeout=30)[0]) for p in procs]
    for doc in docs:
        assert doc["status"] == "ok", doc
    # Each probe's tests ran while both locks were held for it (its own, and the far responder's),
    # so the two measurements, started together and longer than a second each, could not overlap:
    # one of the probes waited for its node's responder to finish serving the other.
    print(f"lock waits {[d['lock_wait_usec'] for d in docs]} us; upload/download "
          f"{[(round(d['upload_gbps'], 1), round(d['download_gbps'], 1)) for d in docs]} Gbit/s")
    assert max(doc["lock_wait_usec"] for doc in docs) >= 100_000, docs


def test_a_lock_file_that_cannot_be_opened_is_said_and_not_fatal(net):
    missing = "/nonexistent-linkprobe-dir/measure.lock"
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--tests", "upload", "--lock-file", missing, B_ADDR)
    assert rc == 0, doc
    assert any(w.startswith(f"cannot open the lock file {missing}") for w in doc["warnings"]), doc
    assert "lock_wait_usec" not in doc, doc


def test_a_node_measuring_itself_does_not_wait_for_itself(net):
    # The sink is an address of this host: its responder is the node's own, and serves the probe.
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--lock-file", net["lock_a"], "--busy-retries", "0", A_ADDR)
    assert rc == 0, doc
    assert "lock_wait_usec" not in doc, doc
