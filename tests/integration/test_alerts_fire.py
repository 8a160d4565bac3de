# SPDX-License-Identifier: LGPL-2.1-or-later
"""Alerts that can fire (contrib/prometheus/linkprobe-rules.yml): one real linkprobed, on the health
testbed with veths, is driven into every state an alert about one node is for; the real Prometheus
scrapes its /metrics and evaluates the real rules, and each of those alerts must be held (pending, as
its `for:` runs, or firing) at some point. An alert that reads a series, or a label value, the exporter
never sets in that state cannot pass here. The alerts about several nodes are driven by test_fabric.py's
three real daemons; the few that need hardware no test machine has are named below with where they
are exercised instead, and every alert of the file must be in one list or the other."""

import os
import re
import shutil
import subprocess
import time

import pytest
import yaml

import fabric_queries
import lp
import prometheus_queries as pq
from test_health import FIXTURES, FLAP_NIC, FLAP_PORT, GEN1_NIC, HCA_PORT, add_veth, aer, far, iperf3_client, \
    iperf3_result, iperf3_server  # noqa: F401 (far is a fixture)
from umockdev_testbed import start

# alone: its RDMA fallback is iperf3 traffic at a set rate, judged against the port's counters in time
# for Prometheus' evaluation; a file beside it slows both.
pytestmark = [pytest.mark.skipif(not os.access("/usr/bin/prometheus", os.X_OK),
                                 reason="no Prometheus server installed (Debian package prometheus)"),
              pytest.mark.alone]

METRICS_PORT, PROMETHEUS_PORT = 9479, 9090
ROUTER = "/sys/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1"

# Driven here, each by what the test does to the daemon's testbed and links.
DRIVEN = {
    "LinkprobeLinkFlapping": "a veth's far end goes down and up three times",
    "LinkprobePciLinkDegraded": "the HCA of hca-trained-low.umockdev at x8 of x16",
    "LinkprobePciLinkErrors": "37 correctable AER errors on the Gen1 NIC",
    "LinkprobePciLinkFlapping": "the NIC's link retrains 16 -> 8 -> 16 GT/s, five times",
    "LinkprobePciAerFatal": "a fatal AER error on the Gen1 NIC",
    "LinkprobeRdmaPortErrors": "250 symbol errors on mlx5_0 port 1",
    "LinkprobeRdmaPortFlapping": "mlx5_0 port 1's link went down once",
    "LinkprobeRdmaFallbackSuspected": "3 Gb/s of iperf3 over the IPoIB interface, nothing over RDMA",
    "LinkprobeThunderboltLinkDegraded": "the dock 0-1 comes back on one lane",
    "LinkprobeThunderboltLinkFlapping": "the dock 0-1 changes lanes five times",
}
# Not driven here: where they are, and why not here.
ELSEWHERE = {
    "LinkprobeLinkErrors": "CRC errors come from a NIC's statistics, which no virtual link has: "
                           "test_fabric_sim.py plants them",
    "LinkprobeLinkDegraded": "test_ethtool.py::test_link_degraded_alert_is_held: a replayed NIC below both ends",
    "LinkprobeRdmaPortDegraded": "test_ibsim.py::test_link_down_and_up: a port at 1X where both ends do 12X, "
                                 "its neighbour asked over ibsim's MADs (the series the alert reads is checked there)",
    "LinkprobeSwitchLinkDegraded": "test_ibsim_sweep.py::test_degraded_switch_links_verify_and_alert: a daemon "
                                   "sweeping ibsim's fabric with switch-to-switch cables trained low, scraped by "
                                   "the real Prometheus",
    "LinkprobePathStale": "test_fabric.py: a cable goes down under a measured path",
    "LinkprobeEdgeEndsDisagree": "test_fabric_sim.py: two ends of a cable that measured differently",
    "LinkprobeMeasurementDisturbed": "test_fabric_sim.py, and test_peer_cross_traffic.py on a real daemon",
    "LinkprobeNeighborProblem": "test_fabric.py: a responder claims another node's NodeId",
    "LinkprobeNodeIdCloned": "test_fabric_sim.py: two nodes with one machine ID",
    "LinkprobeDaemonDegraded": "test_fabric.py: daemons without systemd",
}


def alert_names():
    with open(pq.RULES) as f:
        rules = yaml.safe_load(f)
    return {r["alert"] for group in rules["groups"] for r in group["rules"] if "alert" in r}


def test_every_alert_is_driven_somewhere():
    names = alert_names()
    assert set(DRIVEN) | set(ELSEWHERE) == names, (names - set(DRIVEN) - set(ELSEWHERE), set(DRIVEN) - names)
    assert not set(DRIVEN) & set(ELSEWHERE)
    # A test named as where an alert is driven exists.
    here = os.path.dirname(os.path.abspath(__file__))
    for alert, where in ELSEWHERE.items():
        for name, test in re.findall(r"(test_\w+\.py)::(test_\w+)", where):
            with open(os.path.join(here, name)) as f:
                assert re.search(rf"^def {test}\(", f.read(), re.M), f"{alert}: {name} has no {test}"


def start_prometheus(netns, directory):
    config = os.path.join(directory, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"rule_files: [{pq.RULES!r}]\n"
                "scrape_configs:\n  - job_name: linkprobe\n"
                f"    static_configs:\n      - targets: ['127.0.0.1:{METRICS_PORT}']\n")
    return subprocess.Popen(netns.exec_cmd([
        "/usr/bin/prometheus", f"--config.file={config}", f"--storage.tsdb.path={directory}/data",
        f"--web.listen-address=127.0.0.1:{PROMETHEUS_PORT}"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


class Held:
    """The alerts Prometheus has held (pending or firing) at any of the times it was asked."""

    def __init__(self, api):
        self.api, self.names = api, set()

    def poll(self):
        try:
            rules = fabric_queries.rules_healthy(self.api)
        except (OSError, ValueError):
            return self.names
        for name, (health, error, alerts) in rules.items():
            assert health in ("ok", "unknown"), (name, error)
            if alerts:
                self.names.add(name)
        return self.names

    def wait(self, *names, timeout=30):
        return lp.wait_for(lambda: set(names) <= self.poll(), timeout,
                           lambda: f"Prometheus to hold {sorted(set(names) - self.names)} (held: {sorted(self.names)})")


def test_every_alert_of_one_node_fires(netns, far, client, daemon_factory, testbed, tmp_path):
    if not shutil.which("iperf3"):
        pytest.skip("iperf3 is not installed (make deps installs it)")
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    testbed.add_from_file(os.path.join(FIXTURES, "hca-trained-low.umockdev"))
    for name, index in {"hnic0": 61, "hflap0": 62, "hvf0": 63, "htb0": 65, "hcanarrow0": 75}.items():
        netns.ip("link", "add", name, "index", str(index), "type", "ifb")
        netns.ip("link", "set", name, "up")
    add_veth(netns, far, "hib0", 64, "10.77.9")
    netns.ip("link", "add", "alflap0", "type", "veth", "peer", "name", "alflap1")
    netns.ip("link", "set", "alflap0", "up")
    start(daemon_factory, netns, testbed,
          config=f"[Watch]\nIntervalSec=100ms\n[Metrics]\nListenAddress=127.0.0.1:{METRICS_PORT}\n")
    prom = start_prometheus(netns, str(tmp_path))
    try:
        api = fabric_queries.Prometheus(netns.name, f"http://127.0.0.1:{PROMETHEUS_PORT}")

        def scraped_twice():
            try:
                series = api.query_range("up == 1", seconds=10, step=1)
            except (OSError, ValueError):
                return False
            return bool(series) and len(series[0]["values"]) >= 2

        # Two scrapes of the calm node first: increase() needs a value to rise from.
        lp.wait_for(scraped_twice, 30, "two scrapes of the daemon")
        held = Held(api)
        held.wait("LinkprobePciLinkDegraded")

        testbed.set_attribute(GEN1_NIC, "aer_dev_correctable", aer(37, receiver=30))
        testbed.set_attribute(GEN1_NIC, "aer_dev_fatal", aer(1, severity="FATAL"))
        for i in range(1, 6):
            speed = "8.0 GT/s PCIe\n" if i % 2 else "16.0 GT/s PCIe\n"
            testbed.set_attribute(FLAP_PORT, "current_link_speed", speed)
            testbed.set_attribute(FLAP_NIC, "current_link_speed", speed)
            time.sleep(0.3)
        for _ in range(3):
            netns.ip("link", "set", "alflap1", "up")
            time.sleep(0.2)
            netns.ip("link", "set", "alflap1", "down")
            time.sleep(0.2)
        # A port that went down once is flapping; errors, once they come, are the graver health.
        testbed.set_attribute(HCA_PORT + "/ports/1/counters", "link_downed", "1\n")
        held.wait("LinkprobePciLinkErrors", "LinkprobePciAerFatal", "LinkprobePciLinkFlapping",
                  "LinkprobeLinkFlapping", "LinkprobeRdmaPortFlapping")
        testbed.set_attribute(HCA_PORT + "/ports/1/counters", "symbol_error", "250\n")
        held.wait("LinkprobeRdmaPortErrors")

        # The dock on one lane (degraded), then changing lanes until it flaps. Each change is waited for
        # until the daemon published it: two uevents read in one pass would be one change, not two.
        def dock_lanes():
            for interfaces in client.objects().values():
                tb = interfaces.get(lp.IFACE + "Thunderbolt")
                if tb and tb["SysfsName"] == os.path.basename(ROUTER):
                    return tb["RxLanes"], tb["TxLanes"]
            return None

        for lanes in ("1", "2", "1", "2", "1"):
            testbed.set_attribute(ROUTER, "rx_lanes", lanes + "\n")
            testbed.set_attribute(ROUTER, "tx_lanes", lanes + "\n")
            testbed.uevent(ROUTER, "change")
            lp.wait_for(lambda: dock_lanes() == (int(lanes), int(lanes)), 10, f"the dock on {lanes} lanes")
            if lanes == "1" and "LinkprobeThunderboltLinkDegraded" not in held.names:
                held.wait("LinkprobeThunderboltLinkDegraded")
        held.wait("LinkprobeThunderboltLinkFlapping")

        server = iperf3_server(far, "10.77.9.2")
        try:
            proc = iperf3_client(netns, "10.77.9.2", "3G", 8)
            held.wait("LinkprobeRdmaFallbackSuspected", timeout=25)
            iperf3_result(proc)
        finally:
            lp.stop_process(server)
    finally:
        lp.stop_process(prom, 10)
    assert set(DRIVEN) <= held.names, sorted(set(DRIVEN) - held.names)
    print(f"held by Prometheus from one real daemon: {sorted(held.names)}")
