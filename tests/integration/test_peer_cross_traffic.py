# SPDX-License-Identifier: LGPL-2.1-or-later
"""A measurement that other traffic disturbed says so on the bus (CrossTrafficGbps, the probe's warning),
in the metric linkprobe_peer_cross_traffic_bytes and in the saved state, and the path is measured again
after RemeasureIntervalSec=, a bounded number of times in a row; a node that serves tests hands its probes
and its responder the same measure lock. The TCP probe is a stand-in (faults.FakeProbes), so the figures
are exact; test_probe_disturbed.py has the real probe seeing real cross traffic."""

import json
import os
import shutil
import time

import pytest

import faults
import lp
from peers_net import MANAGER, peer_path, wait_peer

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

PEER_ADDRESS = "10.77.0.2"
TCP = "linkprobe-probe-tcp"
CONFIG = (f"[Peers]\nAddress={PEER_ADDRESS}\n[Reconciler]\nTickSec=100ms\nTcpDurationSec=10ms\n"
          "RemeasureIntervalSec=1s\n")


@pytest.fixture
def probes():
    p = faults.FakeProbes()
    # The real responder beside the stand-in probes: the daemon runs it when it serves tests.
    shutil.copy(os.path.join(lp.BUILD, "linkprobe-responder"), p.dir)
    yield p
    p.remove()


def cross_metric(bus, netns):
    samples = faults.metrics(bus, netns)
    return [v for k, v in samples.items() if k.startswith("linkprobe_peer_cross_traffic_bytes{")]


def test_cross_traffic_is_published_and_measured_again_a_bounded_number_of_times(netns, bus, client, probes,
                                                                                daemon_factory):
    probes.set_figures(TCP, 3.5, 3.0, 40, cross=2.5)
    daemon = daemon_factory(netns, env=probes.env(), config=CONFIG)
    path = peer_path(f"tcp:{PEER_ADDRESS}")
    p = wait_peer(client, path, lambda q: q["ProbeState"] == "ok" and q["CrossTrafficGbps"] == 2.5)
    assert p, client.objects()
    assert p["Warnings"] == ["upload: s0 carried 2.5 Gbit/s of other traffic during the test: the figure may be low"]
    assert cross_metric(bus, netns) == [2.5 * 1.25e8]

    # Measured again after the interval (1 s), twice in a row at most, then left for its TTL.
    assert faults.wait_for(lambda: len(probes.calls(TCP)) >= 3, timeout=10), probes.calls(TCP)
    time.sleep(2.5)
    assert len(probes.calls(TCP)) == 3, probes.calls(TCP)
    assert "Measuring again in 1 s: 2.50 Gbit/s of cross traffic." in daemon.log()

    # Saved with the rest of the result.
    with open(os.path.join(daemon.state_dir, "peers.json")) as f:
        saved = [x for x in json.load(f)["paths"] if x["address"] == PEER_ADDRESS]
    assert saved and saved[0]["cross_traffic_gbps"] == 2.5, saved

    # A quiet measurement clears it.
    probes.set_figures(TCP, 3.5, 3.0, 40)
    client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (PEER_ADDRESS, {}), timeout_ms=20000)
    p = wait_peer(client, path, lambda q: q["CrossTrafficGbps"] == 0 and q["Warnings"] == [])
    assert p, client.objects()
    assert cross_metric(bus, netns) == [0.0]


def test_probe_and_responder_share_the_nodes_measure_lock(netns, client, probes, daemon_factory):
    daemon = daemon_factory(netns, env=probes.env(), config=CONFIG + "[Responder]\nListen=127.0.0.1:7479\n")
    assert faults.wait_for(lambda: probes.calls(TCP)), daemon.log()
    lock = os.path.join(os.path.realpath(daemon.state_dir), "measure.lock")
    assert f"--lock-file {lock}" in probes.calls(TCP)[0], probes.calls(TCP)
    pids = faults.wait_for(lambda: [pid for pid in os.listdir("/proc") if pid.isdigit() and
                                    _cmdline(pid).startswith(os.path.join(probes.dir, "linkprobe-responder"))])
    assert pids, daemon.log()
    assert f"--lock-file={lock}" in _cmdline(pids[0]).split(" "), _cmdline(pids[0])


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""
