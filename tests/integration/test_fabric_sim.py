# SPDX-License-Identifier: LGPL-2.1-or-later
"""bench/fabric-sim, the simulated cluster bench/bench-fabric times, held against linkprobed and the rules:
it writes every family the daemon's sources can write and no other; each family a running daemon writes
(PCI functions with AER counters, an InfiniBand port, a Thunderbolt dock, a GPU, a measured path to a
neighbour, the watch on) it writes with the same type and labels; promtool loads what it writes; and
over a Prometheus holding it, every condition it plants raises the alerts of
contrib/prometheus/linkprobe-rules.yml it should, nothing else fires, and every other query of the
rules and the dashboard returns series. (test_fabric.py holds the Thunderbolt edges of three real nodes
against it too: no single daemon here has an XDomain neighbour.)"""

import os
import shutil

import pytest

import lp
import prometheus_queries as pq
import simulated_cluster as sim
from linkprobe_net import Responder
from test_gpu import A100, FakeProbe, measurement
from test_health import FIXTURES, HEALTH_LINKS, add_links, metrics

NODES = 40  # the fewest with a pod of RDMA, a full second pod and a node of its own for each plant
# What no single daemon here writes: it has no XDomain neighbour.
THUNDERBOLT_EDGES = {"linkprobe_edge_thunderbolt_rx_bytes", "linkprobe_edge_thunderbolt_tx_bytes",
                     "linkprobe_edge_thunderbolt_degraded"}
# Written with no sample here: no switch sends this daemon LLDP (test_lldp.py checks its samples).
NO_SAMPLE_HERE = {"linkprobe_link_switch_info"}
# No InfiniBand neighbour answers here and no subnet is swept: test_ibsim_sweep.py has these samples.
NO_SAMPLE_HERE |= {"linkprobe_rdma_port_remote_info", "linkprobe_rdma_port_best_rate_bytes",
                   "linkprobe_rdma_port_degraded", "linkprobe_switch_link_info", "linkprobe_switch_link_rate_gbps",
                   "linkprobe_switch_link_best_rate_gbps", "linkprobe_switch_link_degraded"}

pytest.importorskip("prometheus_client", reason="python3-prometheus-client parses the metrics")


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    directory = tmp_path_factory.mktemp("fabric-sim")
    om, summary = sim.simulate(str(directory), NODES)
    with open(om) as f:
        return str(directory), om, sim.families(f.read(), openmetrics=True), summary


def test_every_family_of_the_daemon_sources(simulated):
    _, _, families, _ = simulated
    written = sim.source_names()
    assert len(written) > 80, sorted(written)
    assert set(families) == written, (f"not simulated: {sorted(written - set(families))}; "
                                      f"not the daemon's: {sorted(set(families) - written)}")
    # Nothing simulated is left without a series, and every label the rules join on is there.
    assert [name for name, (_, labels) in families.items() if labels is None] == []


def test_families_match_a_running_daemon(netns, bus, client, daemon_factory, testbed, tmp_path, simulated):
    _, _, families, _ = simulated
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, HEALTH_LINKS)
    # A GPU measured with the copy tests, from the fake probe; the TCP probe beside it, for the path.
    gpu = FakeProbe()
    gpu.set(devices=[A100], measurements={A100["key"]: dict(measurement(fp16=78000.0), host_to_device_gb_s=25.0,
                                                            host_to_device_median_gb_s=24.0, device_to_host_gb_s=26.0,
                                                            device_to_host_median_gb_s=25.5)})
    os.symlink(os.path.join(lp.BUILD, "linkprobe-probe-tcp"), os.path.join(gpu.dir, "linkprobe-probe-tcp"))
    # Another node's responder on loopback: a measured path, and a neighbour with edges.
    identity = tmp_path / "identity.json"
    identity.write_text('{"node_id": "0123456789abcdef0123456789abcdef", "hostname": "other"}')
    responder = Responder(netns.name, "127.0.0.1:7482", f"--identity-file={identity}", port=7482)
    try:
        daemon_factory(netns, prefix=["umockdev-wrapper"], env=dict(testbed.env(), **gpu.env()), gpu=True, watch=True,
                       args=[f"--sysfs-root={testbed.sys}"],
                       config="[Watch]\nIntervalSec=100ms\n[Gpu]\nRandomizedDelaySec=0\nQuick=yes\n"
                              "[Reconciler]\nTickSec=100ms\nTcpDurationSec=100ms\n")
        client.call(lp.ROOT, lp.IFACE + "Manager", "AddPeer", "(s)", ("127.0.0.1:7482",))

        def complete():
            daemon = sim.families(metrics(client))
            return daemon if all(labels is not None for name, (_, labels) in daemon.items()
                                 if name not in NO_SAMPLE_HERE) else None
        daemon = lp.wait_for(complete, 30, "a sample in every family: the watch's rates, the GPU measured, the path",
                             interval=0.5)
    finally:
        responder.stop()
        gpu.remove()
    assert sim.source_names() - set(daemon) == THUNDERBOLT_EDGES
    assert sim.differences(daemon, families) == []


def test_planted_conditions_raise_their_alerts(simulated):
    """Each alerting rule's expression over the simulated cluster gives exactly the alerts planted; every
    other query returns series; and the recording rules, inlined, give what the dashboard shows."""
    if not (shutil.which("promtool") and shutil.which("prometheus")):
        pytest.skip("promtool and prometheus are needed (Debian package prometheus)")
    directory, om, _, summary = simulated
    prom = sim.BackfilledPrometheus(directory, om)
    try:
        at = summary["time"]
        fired = pq.firing(lambda expr: prom.query(expr, at))
        expected = [a for p in summary["plants"] for a in p["alerts"]]
        missing, unexpected = pq.match_alerts(fired, expected)
        silent = []
        for q in pq.queries():
            if q.kind != "alert" and not prom.query(pq.inline_records(q.substituted() if q.kind == "panel" else q.expr), at):
                silent.append(q.name)
        # The last scrape is "now" for a lookback of sim.LOOKBACK: an instant query at the wall clock's
        # now sees the same cluster (what linkprobectl fabric asks).
        now = len(prom.query("linkprobe_node_identity_info"))
    finally:
        prom.close()
    assert len(summary["plants"]) >= 9 and len(expected) > len(summary["plants"])
    assert {a["alertname"] for a in expected} >= {
        "LinkprobePciLinkFlapping", "LinkprobePciLinkErrors", "LinkprobeLinkErrors", "LinkprobePciLinkDegraded",
        "LinkprobeNeighborProblem", "LinkprobeThunderboltLinkDegraded", "LinkprobeMeasurementDisturbed",
        "LinkprobeEdgeEndsDisagree", "LinkprobeRdmaFallbackSuspected", "LinkprobePathStale"}
    assert missing == [], f"planted, not caught: {missing}"
    assert unexpected == [], f"firing, not planted: {unexpected}"
    assert silent == []
    assert now == NODES


def test_bad_arguments(tmp_path):
    out = lp.run([sim.SIM, "--nodes", "5", str(tmp_path / "x.om")], check=False)
    assert out.returncode == 2 and "--nodes must be at least" in out.stderr
    assert not (tmp_path / "x.om").exists()
