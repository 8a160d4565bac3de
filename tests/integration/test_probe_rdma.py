# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobe-probe-rdma against linkprobe-responder, end to end, over the fake libibverbs (tests/fake-ibverbs/):
both directions and the round trips, and the failures that hardware causes: a wrong rkey, a queue pair that
goes to error, the responder killed mid-test, a device that vanishes. Each gives a named error in the probe's
document and exit code 1, well before the deadline; no device here, or the port down, is "unsupported" with
the reason.

Topology: A a0 10.203.1.1/24 ===veth=== B b0 10.203.1.2/24; the control connection runs over the veth, the RDMA
traffic over the fake's fabric file. Both ends see the same umockdev sysfs tree (one host's HCA, looped back)."""

import json
import os
import signal
import struct
import subprocess
import tempfile
import time

import pytest

import lp
from fake_rdma import FIXTURES, Fabric, memory_registered
from linkprobe_net import (PROBE_RDMA, UPLOAD_READY, UPLOAD_START, Namespaces, Responder, connect_from, frame,
                           hello_frame, recv_frame)
from umockdev_testbed import Testbed

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

A_ADDR, B_ADDR, PORT = "10.203.1.1", "10.203.1.2", 7471
FAST = ["--duration", "200ms", "--iterations", "200"]
DEADLINE_S = 10  # the probe's default --deadline
ROCE_SYSPATH = "/sys/devices/pci0000:3a/0000:3a:00.0/0000:3b:00.0/infiniband/rocep59s0f0"


@pytest.fixture(scope="module")
def net():
    ns = Namespaces("A", "B")
    try:
        ns.veth(ns["A"], "a0", ns["B"], "b0")
        ns.addr(ns["A"], "a0", f"{A_ADDR}/24")
        ns.addr(ns["B"], "b0", f"{B_ADDR}/24")
        yield ns
    finally:
        ns.close()


def make_testbed(*fixtures):
    return Testbed(*(os.path.join(FIXTURES, f + ".umockdev") for f in fixtures))


@pytest.fixture(scope="module")
def testbed():
    tb = make_testbed("cx6-ib-hdr", "cx5-roce")
    yield tb
    tb.close()


@pytest.fixture
def fabric():
    f = Fabric()
    yield f
    f.close()


@pytest.fixture
def responders():
    started = []
    yield started
    for r in started:
        print(r.stop())


def start_responder(net, responders, env, *args):
    """linkprobe-responder in B with the fake library."""
    r = Responder(net["B"], f"{B_ADDR}:{PORT}", "--log-level=debug", *args, env=env)
    responders.append(r)
    return r


def probe_cmd(net, *args):
    return lp.netns_exec_cmd(net["A"], [PROBE_RDMA, *args, f"{B_ADDR}:{PORT}"])


def parse(stdout, stderr):
    lines = [line for line in stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON document, got {stdout!r} (stderr {stderr!r})"
    return json.loads(lines[0])


def run_probe(net, env, *args):
    """Runs the probe in A; returns (exit code, document, wall seconds)."""
    start = time.monotonic()
    p = subprocess.run(probe_cmd(net, *args), capture_output=True, text=True, timeout=60, env=dict(os.environ, **env))
    return p.returncode, parse(p.stdout, p.stderr), time.monotonic() - start


def assert_failed(rc, doc, wall, name, *phrases):
    assert rc == 1 and doc["status"] == "error", doc
    assert doc["error"]["name"] == name, doc
    for phrase in phrases:
        assert phrase in doc["error"]["message"], doc
    # Named by what happened, not by running into the deadline.
    assert wall < DEADLINE_S / 2, (wall, doc)


def check_measured(doc, device, gid_index):
    assert doc["status"] == "ok", doc
    assert doc["probe"] == "rdma" and doc["device"] == device and doc["port"] == 1
    assert doc["gid_index"] == gid_index
    assert doc["sink"] == f"{B_ADDR}:{PORT}" and doc["source"] == A_ADDR
    for direction, timed_by in (("upload", "probe"), ("download", "responder")):
        d = doc[direction]
        assert d["timed_by"] == timed_by
        assert d["bytes"] >= 64 * 1024 and 0 < d["duration_usec"] < 2_000_000, doc
        assert d["gbps"] > 0 and doc[f"{direction}_gbps"] == d["gbps"]
    lat = doc["latency"]
    # As many of the 200 round trips as fit the time (on two busy CPUs, fewer; then a warning says so).
    assert 16 <= lat["iterations"] <= 200 and lat["message_size"] == 64
    assert (lat["iterations"] == 200) == ("warnings" not in doc), doc
    assert 0 < lat["min_usec"] <= lat["median_usec"] <= lat["max_usec"]
    assert doc["rtt_usec"] == lat["rtt_median_usec"] == 2 * doc["latency_usec"]
    assert doc["jitter_usec"] >= 0


def test_infiniband_both_directions_and_rtt(net, testbed, fabric, responders):
    env = fabric.env(testbed.sys)
    start_responder(net, responders, env, "--rdma-device=mlx5_0")
    rc, doc, _ = run_probe(net, env, *FAST, "--device=mlx5_0")
    assert rc == 0, doc
    check_measured(doc, "mlx5_0", 0)
    print(f"InfiniBand over the fake: up {doc['upload_gbps']:.1f} Gb/s, down {doc['download_gbps']:.1f} Gb/s, "
          f"RTT {doc['rtt_usec']:.1f} us")


def test_round_trips_fit_the_time_left(net, testbed, fabric, responders):
    """100,000 round trips do not fit 200 ms: the probe times as many as fit after a warm-up, says so, and
    keeps its bandwidth figures, instead of running into the deadline."""
    env = fabric.env(testbed.sys)
    start_responder(net, responders, env, "--rdma-device=mlx5_0")
    rc, doc, wall = run_probe(net, env, "--duration", "200ms", "--iterations", "100000", "--device=mlx5_0")
    assert rc == 0 and doc["status"] == "ok", doc
    assert 16 <= doc["latency"]["iterations"] < 100000 and doc["upload_gbps"] > 0 and doc["download_gbps"] > 0
    (warning,) = doc["warnings"]
    assert f"{doc['latency']['iterations']} of the 100000 round trips asked for fit the time left" in warning
    assert wall < DEADLINE_S / 2, (wall, doc)


def test_roce_uses_a_routable_gid(net, testbed, fabric, responders):
    """RoCE addresses by GID; of cx5-roce's table (v1 and v2 of each address) both ends take RoCE v2 over IPv4,
    index 3, as perftest does."""
    env = fabric.env(testbed.sys)
    start_responder(net, responders, env, "--rdma-device=rocep59s0f0")
    rc, doc, _ = run_probe(net, env, *FAST, "--device=rocep59s0f0")
    assert rc == 0, doc
    check_measured(doc, "rocep59s0f0", 3)
    # An empty slot of the table is no address to use.
    rc, doc, _ = run_probe(net, env, *FAST, "--device=rocep59s0f0", "--gid-index=12")
    assert rc == 1 and doc["error"]["name"] == "EADDRNOTAVAIL", doc


def test_wrong_rkey(net, testbed, fabric, responders):
    """The rkey one end advertises is not the one it registered: the other end's writes are refused, and its
    queue pair goes to error, as on hardware."""
    start_responder(net, responders, fabric.env(testbed.sys, fault="rkey"), "--rdma-device=mlx5_0")
    rc, doc, wall = run_probe(net, fabric.env(testbed.sys), *FAST, "--device=mlx5_0")
    assert_failed(rc, doc, wall, "remote-access", "upload: RDMA write failed", "remote access error")


def test_wrong_rkey_of_the_probe(net, testbed, fabric, responders):
    start_responder(net, responders, fabric.env(testbed.sys), "--rdma-device=mlx5_0")
    rc, doc, wall = run_probe(net, fabric.env(testbed.sys, fault="rkey"), *FAST, "--device=mlx5_0",
                              "--tests=download")
    assert_failed(rc, doc, wall, "internal", "download: responder: RDMA write failed (remote-access)")


@pytest.mark.parametrize("tests,name,phrases", [
    # The responder's queue pair stops answering: the probe's writes are retried, then fail.
    ("upload", "retry-exceeded", ["upload: RDMA write failed", "transport retry counter exceeded"]),
    # Its own writes are flushed, and it says so.
    ("download", "internal", ["download: responder: RDMA write failed (qp-error)"]),
    # The probe waits for an answer that cannot come: the responder's word ends the wait.
    ("latency", "internal", ["latency: responder: RDMA send/receive failed (qp-error)"]),
])
def test_responder_queue_pair_forced_to_error(net, testbed, fabric, responders, tests, name, phrases):
    start_responder(net, responders, fabric.env(testbed.sys, fault="qp-error=20"), "--rdma-device=mlx5_0")
    rc, doc, wall = run_probe(net, fabric.env(testbed.sys), *FAST, "--device=mlx5_0", f"--tests={tests}")
    assert_failed(rc, doc, wall, name, *phrases)


def test_probe_queue_pair_forced_to_error(net, testbed, fabric, responders):
    start_responder(net, responders, fabric.env(testbed.sys), "--rdma-device=mlx5_0")
    rc, doc, wall = run_probe(net, fabric.env(testbed.sys, fault="qp-error=20"), *FAST, "--device=mlx5_0")
    assert_failed(rc, doc, wall, "qp-error", "upload: RDMA write failed", "Work Request Flushed Error")


@pytest.mark.parametrize("tests", ["upload", "download", "latency"])
def test_responder_killed_mid_test(net, testbed, fabric, responders, tests):
    """The responder dies in the middle of a phase. A phase may end in a few milliseconds (the round trips
    are as many as fit the time the warm-up predicts, a few hundred on busy CPUs), so the moment is made,
    not waited for: the responder's queue pair stops dead at its 50th work request (after the latency
    warm-up's 32), holding the phase there while the responder lives, and the responder is killed then."""
    env = fabric.env(testbed.sys)
    r = start_responder(net, responders, fabric.env(testbed.sys, fault="stall=50"), "--rdma-device=mlx5_0")
    proc = subprocess.Popen(probe_cmd(net, "--device=mlx5_0", f"--tests={tests}", "--duration=5s",
                                      "--iterations=100000"),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=dict(os.environ, **env))
    try:
        lp.wait_for(fabric.stalled, timeout=10, what="the responder's queue pair to stop in the phase")
        assert proc.poll() is None, proc.communicate()
        killed = time.monotonic()
        r.proc.send_signal(signal.SIGKILL)
        stdout, stderr = proc.communicate(timeout=30)
        wall = time.monotonic() - killed
    finally:
        lp.stop_process(proc)
    doc = parse(stdout, stderr)
    print(f"{tests}: {doc.get('error')} after {wall:.2f} s")
    assert proc.returncode == 1 and doc["status"] == "error", doc
    # The control connection goes with the process; an RDMA operation that notices first says the peer
    # stopped answering.
    assert doc["error"]["name"] in ("ECONNRESET", "retry-exceeded"), doc
    assert doc["error"]["message"].startswith(f"{tests}: "), doc
    assert wall < 3, (wall, doc)


def test_device_vanishes_under_the_probe(net, testbed, fabric, responders):
    start_responder(net, responders, fabric.env(testbed.sys), "--rdma-device=mlx5_0")
    rc, doc, wall = run_probe(net, fabric.env(testbed.sys, fault="vanish=20"), *FAST, "--device=mlx5_0")
    assert_failed(rc, doc, wall, "device-failed", "upload: RDMA write failed", "the RDMA device failed or was removed")


def test_device_removed_from_sysfs_mid_test(net, fabric, responders):
    """The device leaves sysfs (hot unplug) while the responder writes into the probe's buffer: both ends
    see it go, the responder's writes are flushed and it tells the probe."""
    tb = make_testbed("cx5-roce")
    try:
        env = fabric.env(tb.sys)
        # As in test_responder_killed_mid_test, the responder's queue pair stops dead inside the phase
        # and the device goes then; a queue pair in error is flushed all the same.
        start_responder(net, responders, fabric.env(tb.sys, fault="stall=50"), "--rdma-device=rocep59s0f0")
        proc = subprocess.Popen(probe_cmd(net, "--device=rocep59s0f0", "--tests=download", "--duration=5s"),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, **env))
        try:
            lp.wait_for(fabric.stalled, timeout=10, what="the responder's queue pair to stop in the phase")
            assert proc.poll() is None, proc.communicate()
            removed = time.monotonic()
            tb.remove_device(ROCE_SYSPATH)
            stdout, stderr = proc.communicate(timeout=30)
            wall = time.monotonic() - removed
        finally:
            lp.stop_process(proc)
    finally:
        tb.close()
    doc = parse(stdout, stderr)
    assert_failed(proc.returncode, doc, wall, "internal", "download: responder: RDMA write failed (device-failed)")
    assert wall < 2, wall


def test_unsupported_without_a_device_here(net, testbed, fabric, responders):
    start_responder(net, responders, fabric.env(testbed.sys), "--rdma-device=mlx5_0")
    empty = tempfile.mkdtemp(prefix="lp-nosys-")
    try:
        rc, doc, _ = run_probe(net, fabric.env(empty), *FAST)
    finally:
        os.rmdir(empty)
    assert rc == 0 and doc["status"] == "unsupported", doc
    assert doc["reason"].startswith("this host: no RDMA device"), doc


def test_unsupported_with_the_port_down(net, fabric, responders):
    tb = make_testbed("cx6-ib-hdr", "cx6-ib-polling")
    try:
        start_responder(net, responders, fabric.env(tb.sys), "--rdma-device=mlx5_0")
        rc, doc, _ = run_probe(net, fabric.env(tb.sys), *FAST, "--device=mlx5_1")
    finally:
        tb.close()
    assert rc == 0 and doc["status"] == "unsupported", doc
    assert doc["reason"] == "this host: RDMA device mlx5_1 port 1 is not active", doc


def test_iwarp_is_passed_over(net, fabric, responders):
    """An iWARP queue pair reaches RTS only through the RDMA connection manager: iwp3s0f4 (sorted first) is
    not taken by default, and asked for by name it is "unsupported", not a failed connection."""
    tb = make_testbed("iwarp-cxgb4", "cx6-ib-hdr")
    try:
        env = fabric.env(tb.sys)
        start_responder(net, responders, env)
        rc, doc, _ = run_probe(net, env, *FAST)
        assert rc == 0 and doc["status"] == "ok" and doc["device"] == "mlx5_0", doc
        rc, doc, _ = run_probe(net, env, *FAST, "--device=iwp3s0f4")
        assert rc == 0 and doc["status"] == "unsupported", doc
        assert doc["reason"] == "this host: RDMA device iwp3s0f4 is iWARP, which connects through the RDMA CM " \
                                "(not used)", doc
    finally:
        tb.close()


@pytest.mark.parametrize("here,there,reason", [
    ("rocep59s0f0", "mlx5_0", "responder: mlx5_0 port 1 is InfiniBand, the other end's port is RoCE: no path joins "
                              "the two"),
    ("mlx5_0", "rocep59s0f0", "responder: rocep59s0f0 port 1 is RoCE, the other end's port is InfiniBand: no path "
                              "joins the two"),
])
def test_infiniband_and_roce_do_not_meet(net, testbed, fabric, responders, here, there, reason):
    """The daemon probes from every active port; one of another fabric than the responder's is unsupported, with
    the reason, not a failure to retry."""
    env = fabric.env(testbed.sys)
    start_responder(net, responders, env, f"--rdma-device={there}")
    rc, doc, wall = run_probe(net, env, *FAST, f"--device={here}")
    assert rc == 0 and doc["status"] == "unsupported", doc
    assert doc["reason"] == reason
    assert wall < DEADLINE_S / 2


def test_busy_responder_is_asked_again(net, testbed, fabric, responders):
    """The responder serves one test at a time (here held by a TCP upload of our own, as this node's TCP probe or
    another node's probe would): busy is asked again a few times, then it is the error."""
    env = fabric.env(testbed.sys)
    start_responder(net, responders, env, "--rdma-device=mlx5_0")
    s = connect_from(net["A"], None, B_ADDR, PORT)
    try:
        s.sendall(hello_frame())
        assert recv_frame(s)[0] == 2
        s.sendall(frame(UPLOAD_START, struct.pack(">QQII", 1 << 30, 5_000_000, 65536, 0)))
        assert recv_frame(s)[0] == UPLOAD_READY
        rc, doc, wall = run_probe(net, env, *FAST, "--busy-retries=0")
        assert rc == 1 and doc["error"]["name"] == "busy", doc
        # Released while the probe waits: its next try gets the slot. The probe asks right after registering
        # its buffer, so the slot is released after that, once the first answer (busy) is surely out.
        proc = subprocess.Popen(probe_cmd(net, *FAST), stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env=dict(os.environ, **env))
        try:
            lp.wait_for(lambda: memory_registered(proc.pid), timeout=10, what="the probe's registered buffer")
            time.sleep(0.05)
            s.close()
            stdout, stderr = proc.communicate(timeout=30)
        finally:
            lp.stop_process(proc)
        doc = parse(stdout, stderr)
        assert proc.returncode == 0 and doc["status"] == "ok", doc
    finally:
        s.close()
