# SPDX-License-Identifier: LGPL-2.1-or-later
"""The TCP probe against a known truth: each direction of a veth path shaped with tbf on its sender's
egress (200 Mbit/s one way, 800 the other, then the reverse), UploadGbps and DownloadGbps each within
10 % of its own rate; RTT of the same order as sockperf's; parallel streams granted, used and refused."""

import json
import os
import shutil
import statistics
import subprocess

import pytest

from linkprobe_net import PROBE_TCP, RESPONDER, Namespaces, Responder, probe, run, wait_listening

# It compares rates and round trips with iperf3 and sockperf, which a file running beside it would move.
pytestmark = [pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root"), pytest.mark.alone]

A_ADDR, B_ADDR = "10.203.1.1", "10.203.1.2"
# TCP payload per wire byte at MTU 1500 (1448 bytes of payload with timestamps in a 1514-byte frame):
# tbf counts frames, the probe counts goodput.
GOODPUT_PER_WIRE_BYTE = 1448 / 1514


@pytest.fixture(scope="module")
def net():
    ns = Namespaces("A", "B")
    responders = []
    try:
        ns.veth(ns["A"], "a0", ns["B"], "b0")
        ns.addr(ns["A"], "a0", f"{A_ADDR}/24")
        ns.addr(ns["B"], "b0", f"{B_ADDR}/24")
        responders.append(Responder(ns["B"], f"{B_ADDR}:7471"))
        responders.append(Responder(ns["B"], f"{B_ADDR}:7472", "--max-streams=2", port=7472))
        yield ns
    finally:
        for r in responders:
            print(r.stop())
        ns.close()


def shape(ns, ifname, mbit):
    """tbf on ifname's egress: mbit Mbit/s, a burst of 10 ms at that rate (at least 64 KiB, above
    what the kernel's timer granularity needs), a queue of 20 ms."""
    burst = max(mbit * 1_000_000 // 8 // 100, 65536)
    run("ip", "netns", "exec", ns, "tc", "qdisc", "replace", "dev", ifname, "root", "tbf", "rate", f"{mbit}mbit",
        "burst", str(burst), "latency", "20ms")


def expected_gbps(mbit):
    return mbit / 1000 * GOODPUT_PER_WIRE_BYTE


@pytest.mark.parametrize("up_mbit,down_mbit", [(200, 800), (800, 200)])
def test_each_direction_within_ten_percent_of_its_shaped_rate(net, up_mbit, down_mbit):
    # The probe runs in A: upload leaves through a0, download comes back through b0.
    shape(net["A"], "a0", up_mbit)
    shape(net["B"], "b0", down_mbit)
    rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "1s", "--samples", "20", B_ADDR)
    assert rc == 0, err
    up, down = doc["upload_gbps"], doc["download_gbps"]
    print(f"shaped {up_mbit}/{down_mbit} Mbit/s: upload {up * 1000:.1f} Mbit/s "
          f"({(up / expected_gbps(up_mbit) - 1) * 100:+.1f} %), download {down * 1000:.1f} Mbit/s "
          f"({(down / expected_gbps(down_mbit) - 1) * 100:+.1f} %), streams {doc['upload_streams']}/"
          f"{doc['download_streams']}")
    assert up == pytest.approx(expected_gbps(up_mbit), rel=0.10), doc
    assert down == pytest.approx(expected_gbps(down_mbit), rel=0.10), doc
    # A shaped link is full with one stream: the ramp saw no gain worth a second.
    assert doc["upload_streams"] <= 2 and doc["download_streams"] <= 2, doc


def sockperf_rtt_usec(ns, cpu):
    """sockperf's TCP ping-pong for a second: its median one-way figure, doubled."""
    out = run("ip", "netns", "exec", ns, "taskset", "-c", str(cpu), "sockperf", "ping-pong", "--tcp", "-i", B_ADDR,
              "-p", "11111", "-t", "1", "--mps=max").stdout
    for line in out.splitlines():
        if "percentile 50.000 =" in line:
            return 2 * float(line.split("=")[1])
    raise AssertionError(f"no median in sockperf's output:\n{out}")


@pytest.mark.skipif(not shutil.which("sockperf"), reason="sockperf is not installed (make deps)")
def test_rtt_is_of_the_order_sockperf_measures(net):
    """Round trips of a TCP ping-pong between user space on both ends, as sockperf times them. Both
    pairs run on one CPU: on two, a wake-up that crosses CPUs or not makes either tool read 20 or 100
    us from one run to the next."""
    cpu = max(os.sched_getaffinity(0))
    pinned = ["ip", "netns", "exec", net["B"], "taskset", "-c", str(cpu)]
    server = subprocess.Popen([*pinned, "sockperf", "server", "--tcp", "-i", B_ADDR, "-p", "11111"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    responder = subprocess.Popen([*pinned, RESPONDER, "--listen", f"{B_ADDR}:7473", "--rdma=no"],
                                 stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        wait_listening(net["B"], B_ADDR, 11111)
        wait_listening(net["B"], B_ADDR, 7473)
        ours, theirs = [], []
        for _ in range(3):
            theirs.append(sockperf_rtt_usec(net["A"], cpu))
            p = run("ip", "netns", "exec", net["A"], "taskset", "-c", str(cpu), PROBE_TCP, "--tests", "rtt",
                    "--samples", "200", f"{B_ADDR}:7473")
            ours.append(json.loads(p.stdout)["rtt_usec"])
        ratio = statistics.median(ours) / statistics.median(theirs)
        print(f"RTT medians: probe {ours} us, sockperf {theirs} us, ratio {ratio:.2f}")
        assert 0.5 <= ratio <= 2.0, (ours, theirs)
    finally:
        for proc in (server, responder):
            proc.terminate()
            proc.wait()


def figure_warnings(doc):
    """The warnings about the figures themselves: whether a busy CPU capped one depends on the load."""
    return [w for w in doc["warnings"] if "CPUs fully" not in w]


def test_streams_asked_for_are_used_and_fewer_granted_is_said(net):
    run("ip", "netns", "exec", net["A"], "tc", "qdisc", "del", "dev", "a0", "root", check=False)
    run("ip", "netns", "exec", net["B"], "tc", "qdisc", "del", "dev", "b0", "root", check=False)
    rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "300ms", "--streams", "3", B_ADDR)
    assert rc == 0, err
    assert doc["streams_granted"] == 3 and doc["upload_streams"] == 3 and doc["download_streams"] == 3
    assert doc["upload"]["ramp"] == [] and figure_warnings(doc) == [], doc

    rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "300ms", "--streams", "4", f"{B_ADDR}:7472")
    assert rc == 0, err
    assert doc["upload_streams"] == 2 and doc["download_streams"] == 2, doc
    assert figure_warnings(doc) == ["the responder allowed 2 of the 4 streams asked for"], doc

    # Finding the streams: steps of 1, 2, 4, 8 (up to what is granted) while each gains 10 %.
    rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "500ms", f"{B_ADDR}:7472")
    assert rc == 0, err
    for direction in ("upload", "download"):
        steps = [s["streams"] for s in doc[direction]["ramp"]]
        assert steps in ([1], [1, 2]), doc
        assert doc[f"{direction}_streams"] in steps
    assert figure_warnings(doc) == [], doc


@pytest.mark.parametrize("value", ["9", "-1", "two", ""])
def test_bad_stream_counts_are_usage_errors(net, value):
    rc, doc, err = probe(net["A"], PROBE_TCP, f"--streams={value}", B_ADDR)
    assert rc == 2 and doc["error"]["name"] == "usage", doc
