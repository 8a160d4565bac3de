# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every query of contrib/prometheus/ against the real Prometheus that scrapes test_fabric.py's three
nodes, and what each must return there. test_fabric.py sets the scene first: the dock between A and C
trained one lane (a degraded Thunderbolt hop), the cable between A's ac and C's ca is down (C's path to
A's address over it stays, stale, and so does C's edge over ca), and a responder claims B's NodeId on A
without the key (a neighbour problem).

Each query is declared SOME (it must return series on that fabric), NONE (an alert that must stay
silent, or a panel with nothing to show there: no RDMA, no errors) or ANY (it must parse and run; what
it returns depends on timing the test cannot hold, with the reason)."""

import json
import time
import urllib.error
import urllib.parse
import urllib.request

import prometheus_queries as pq
from linkprobe_net import in_netns

SOME, NONE, ANY = "some", "none", "any"

NO_RDMA = "the fabric has no RDMA port"
NO_ERRORS = "veths count no errors and nothing flaps"
NHI = "the only PCI function is each node's Thunderbolt controller, which the testbed leaves alone"
NHI_AER = "the testbed's Thunderbolt controller has no AER counter files, which linkprobed may export or not"
STALE = "C's path to A's address runs over the cable that is down"
EXPECT = {
    # Recording rules.
    "instance_device:linkprobe_link_errors:rate5m": (SOME, "every link has error counters, at 0"),
    "instance_pci_address:linkprobe_pci_aer_errors:rate5m": (ANY, NHI_AER),
    "instance_device_port:linkprobe_rdma_port_errors:rate5m": (NONE, NO_RDMA),
    "instance_kind_health:linkprobe_health:count": (SOME, "every link and Thunderbolt object has a health"),
    "node_neighbor_transport:linkprobe_edge_upload_bytes:max": (SOME, "every edge is measured"),
    "node_neighbor_transport:linkprobe_edge_download_bytes:max": (SOME, "every edge is measured"),
    "node_neighbor_transport:linkprobe_edge_upload_per_far_download:ratio": (SOME, "every edge is seen from both ends"),
    # Alerts.
    "LinkprobeLinkErrors": (NONE, NO_ERRORS),
    "LinkprobeLinkFlapping": (NONE, "a cable went down once"),
    "LinkprobeLinkDegraded": (NONE, "a veth runs at what it can"),
    "LinkprobePciLinkDegraded": (NONE, NHI),
    "LinkprobePciLinkErrors": (NONE, NHI),
    "LinkprobePciLinkFlapping": (NONE, NHI),
    "LinkprobePciAerFatal": (NONE, NHI),
    "LinkprobeRdmaPortDegraded": (NONE, NO_RDMA),
    "LinkprobeRdmaPortErrors": (NONE, NO_RDMA),
    "LinkprobeRdmaPortFlapping": (NONE, NO_RDMA),
    "LinkprobeRdmaFallbackSuspected": (NONE, NO_RDMA),
    "LinkprobeSwitchLinkDegraded": (NONE, "no node sweeps an InfiniBand subnet"),
    "LinkprobeThunderboltLinkDegraded": (SOME, "the dock between A and C trained one lane"),
    "LinkprobeThunderboltLinkFlapping": (NONE, "each Thunderbolt peer was replugged once at most"),
    "LinkprobePathStale": (SOME, STALE),
    "LinkprobeEdgeEndsDisagree": (ANY, "veths are as fast as two busy shared CPUs let them be, at each end"),
    "LinkprobeMeasurementDisturbed": (ANY, "a probe may share an interface with another node's probe"),
    "LinkprobeNeighborProblem": (SOME, "a responder claims B's NodeId on A without the key"),
    "LinkprobeNodeIdCloned": (NONE, "each node has its own machine ID"),
    "LinkprobeDaemonDegraded": (ANY, "the daemons run without systemd, which [Inhibit] may count"),
    # The dashboard.
    "Fabric: measured goodput between nodes [A]": (SOME, "three nodes"),
    "Fabric: measured goodput between nodes [B]": (SOME, "every edge, both ways"),
    "Links, PCIe functions, RDMA ports and Thunderbolt hops that are not ok [A]": (SOME, "the dock's hop"),
    "Each direction from both of its ends [A]": (SOME, "every edge is seen from both ends"),
    "Neighbour problems [A]": (SOME, "the spoofed NodeId"),
    "Stale paths [A]": (SOME, STALE),
    "RDMA ports: bytes through RDMA and through the IP stack [A]": (NONE, NO_RDMA),
    "RDMA ports: bytes through RDMA and through the IP stack [B]": (NONE, NO_RDMA),
    "Error rates [A]": (SOME, "every link has error counters, at 0"),
    "Error rates [B]": (ANY, NHI_AER),
    "Error rates [C]": (NONE, NO_RDMA),
    "Goodput to each neighbour [A]": (SOME, "every edge is measured"),
    "Round-trip time to each neighbour [A]": (SOME, "every edge is measured"),
    "Other traffic during measurements [A]": (SOME, "every measured path says how much, 0 when none"),
    "Network links [A]": (SOME, "every node has links"),
    "Thunderbolt / USB4 [A]": (SOME, "every node has Thunderbolt peers"),
    "RDMA ports [A]": (NONE, NO_RDMA),
    "PCIe functions [A]": (SOME, "each node's Thunderbolt controller"),
    "GPUs [A]": (ANY, "the host's OpenCL platforms, if any, are what the GPU probe finds"),
    "Neighbours [A]": (SOME, "every node has two neighbours"),
}


class Prometheus:
    """Prometheus' HTTP API, reached inside the network namespace it listens in."""

    def __init__(self, ns, url="http://127.0.0.1:9090"):
        self.ns, self.url = ns, url

    def get(self, path, **params):
        """The answer's data; a query Prometheus refuses raises ValueError with its error."""
        url = f"{self.url}{path}?{urllib.parse.urlencode(params)}"
        with in_netns(self.ns):
            try:
                with urllib.request.urlopen(url, timeout=30) as answer:
                    doc = json.load(answer)
            except urllib.error.HTTPError as e:
                doc = json.load(e)
        if doc.get("status") != "success":
            raise ValueError(f"{doc.get('errorType')}: {doc.get('error')}")
        return doc["data"]

    def query(self, expr):
        return self.get("/api/v1/query", query=expr)["result"]

    def query_range(self, expr, seconds=30, step=2):
        end = time.time()
        return self.get("/api/v1/query_range", query=expr, start=end - seconds, end=end, step=step)["result"]

    def names(self):
        return set(self.get("/api/v1/label/__name__/values"))


def run_query(prom, q, values=None):
    expr = q.substituted(values) if q.kind == "panel" else q.expr
    return prom.query(expr) if q.instant else prom.query_range(expr)


class Report:
    def __init__(self):
        self.failures, self.checked = [], 0

    def fail(self, q, why):
        self.failures.append(f"{q.kind} {q.name}: {why}")


def check_all(prom):
    """Runs every query; returns a Report and the Node Graph panel's results {refId: result}."""
    report, names = Report(), prom.names()
    graph = {}
    for q in pq.queries():
        if q.name not in EXPECT:
            report.fail(q, "no expectation declared in fabric_queries.EXPECT")
            continue
        want, why = EXPECT[q.name]
        try:
            result = run_query(prom, q)
        except ValueError as e:
            report.fail(q, f"Prometheus refused it: {e}")
            continue
        report.checked += 1
        if q.panel and q.panel["type"] == "nodeGraph":
            graph[q.target["refId"]] = result
        if want == SOME and not result:
            missing = pq.metric_names(q.expr) - names
            report.fail(q, f"returned nothing, though {why}" +
                        (f" (no scrape has {', '.join(sorted(missing))})" if missing else ""))
        elif want == NONE and result:
            report.fail(q, f"returned {len(result)} series, though {why}: {[s['metric'] for s in result][:3]}")
        if q.kind == "panel" and "node" in q.variables:
            check_one_node(prom, q, result, report)
    return report, graph


def check_one_node(prom, q, every, report):
    """With $node at one node, the panel shows that node's rows only, and no more than with All."""
    try:
        one = run_query(prom, q, {"node": "node-a"})
    except ValueError as e:
        return report.fail(q, f"Prometheus refused it with node=node-a: {e}")
    others = [s["metric"] for s in one if s["metric"].get("nodename", "node-a") != "node-a"]
    if others or len(one) > len(every):
        report.fail(q, f"with node=node-a it shows other nodes: {others[:3]}")


def rules_healthy(prom):
    """Each rule as Prometheus evaluates it: its health, and the alerts it holds."""
    out = {}
    for group in prom.get("/api/v1/rules")["groups"]:
        for rule in group["rules"]:
            out[rule["name"]] = (rule.get("health"), rule.get("lastError", ""), rule.get("alerts", []))
    return out
