# SPDX-License-Identifier: LGPL-2.1-or-later
"""contrib/prometheus/ without a running Prometheus: promtool checks and unit-tests the rules
(tests/prometheus/linkprobe-rules.test.yml), every rule is tested there and follows node_exporter's mixin
style, every query of the rules and of the dashboard parses and reads only series linkprobed documents,
and the dashboard is what Grafana expects of one. test_fabric.py runs the same queries against the
Prometheus that scrapes the three-node fabric."""

import os
import re
import shutil
import subprocess
import tempfile

import pytest
import yaml

import prometheus_queries as pq

pytestmark = pytest.mark.skipif(not shutil.which("promtool"), reason="no promtool (Debian package prometheus)")


def promtool(*args):
    return subprocess.run(["promtool", *args], capture_output=True, text=True, cwd=pq.TOP)


def test_promtool_checks_the_rules():
    out = promtool("check", "rules", pq.RULES)
    assert out.returncode == 0 and "SUCCESS" in out.stdout, out.stdout + out.stderr


def test_promtool_unit_tests_pass():
    out = promtool("test", "rules", pq.RULES_TEST)
    assert out.returncode == 0 and "SUCCESS" in out.stdout, out.stdout + out.stderr


def test_the_unit_tests_can_fail():
    """A rule file whose thresholds moved fails the same unit tests (so they test the rules at all)."""
    with open(pq.RULES) as f:
        text = f.read()
    broken = text.replace("< 0.75", "< 0.25").replace("> 1 / 0.75", "> 1 / 0.25").replace("for: 10m", "for: 20m")
    assert broken != text
    directory = tempfile.mkdtemp(prefix="lp-rules-")
    try:
        os.makedirs(os.path.join(directory, "contrib", "prometheus"))
        os.makedirs(os.path.join(directory, "tests", "prometheus"))
        with open(os.path.join(directory, "contrib", "prometheus", "linkprobe-rules.yml"), "w") as f:
            f.write(broken)
        shutil.copy(pq.RULES_TEST, os.path.join(directory, "tests", "prometheus"))
        out = subprocess.run(["promtool", "test", "rules", os.path.join(directory, "tests", "prometheus",
                                                                        os.path.basename(pq.RULES_TEST))],
                             capture_output=True, text=True)
    finally:
        shutil.rmtree(directory)
    assert out.returncode != 0
    for alert in ("LinkprobeEdgeEndsDisagree", "LinkprobePciLinkDegraded", "LinkprobeThunderboltLinkDegraded"):
        assert f"alertname: {alert}," in out.stdout + out.stderr, out.stdout + out.stderr


def test_every_rule_is_unit_tested_both_ways():
    with open(pq.RULES_TEST) as f:
        doc = yaml.safe_load(f)
    fired, silent, recorded = set(), set(), set()
    for test in doc["tests"]:
        for case in test.get("alert_rule_test", []):
            (fired if case.get("exp_alerts") else silent).add(case["alertname"])
            for alert in case.get("exp_alerts") or []:
                assert set(alert.get("exp_annotations", {})) == {"summary", "description"}, \
                    f"{case['alertname']} at {case['eval_time']}: give both annotations, as written"
        for case in test.get("promql_expr_test", []):
            recorded.update(pq.metric_names(case["expr"]))
    for q in pq.rule_queries():
        if q.kind == "alert":
            assert q.name in fired, f"{q.name} is never shown firing in {pq.RULES_TEST}"
        else:
            assert q.name in recorded, f"recording rule {q.name} is never evaluated in {pq.RULES_TEST}"
    # Silence: each test's input holds series that must not fire, which exp_alerts (an exact list)
    # checks; before its for: has passed every alert with one is checked to be silent too.
    for q in pq.rule_queries():
        if q.kind == "alert" and q.rule.get("for", "0m") not in ("0m", "0s", "1m"):
            assert q.name in silent, f"{q.name} is never shown silent before its for: ({q.rule['for']})"


def test_rules_follow_the_mixin_style():
    names = [q.name for q in pq.rule_queries()]
    assert len(names) == len(set(names)), "a rule name is used twice"
    for q in pq.rule_queries():
        if q.kind == "record":
            assert pq.RECORD_NAME.match(q.name) and ":linkprobe_" in q.name, \
                f"recording rule {q.name} is not named level:linkprobe_metric:operation"
            continue
        r = q.rule
        assert pq.ALERT_NAME.match(q.name), f"alert {q.name} is not CamelCase with the Linkprobe prefix"
        assert re.fullmatch(r"\d+[smh]", r.get("for", "")), f"{q.name} has no for:"
        assert r.get("labels", {}).get("severity") in ("warning", "critical"), f"{q.name} has no severity"
        annotations = r.get("annotations", {})
        assert set(annotations) == {"summary", "description"}, f"{q.name}: annotations {sorted(annotations)}"
        assert annotations["summary"].endswith(".") and "{{" not in annotations["summary"], q.name
        assert "{{ $labels." in annotations["description"], f"{q.name}'s description names nothing"


def all_queries():
    """Every query, the dashboard's with its variables both at All and at one value."""
    out = [(q.name, q.expr) for q in pq.rule_queries()]
    for q in pq.dashboard_queries():
        out.append((q.name, q.substituted()))
        if q.variables - {"__rate_interval"}:
            out.append((q.name + " (one node)", q.substituted({"node": "node-a", "job": "linkprobe"})))
    return out


def test_every_query_parses():
    """promtool parses each query as the expression of a recording rule of a file written for it."""
    groups = [{"name": "parse", "rules": [{"record": f"parse:query:n{i}", "expr": expr}
                                          for i, (_, expr) in enumerate(all_queries())]}]
    with tempfile.NamedTemporaryFile("w", suffix=".yml") as f:
        yaml.safe_dump({"groups": groups}, f)
        f.flush()
        out = promtool("check", "rules", f.name)
    assert out.returncode == 0, "\n".join(
        [out.stdout + out.stderr] + [f"n{i}: {name}" for i, (name, _) in enumerate(all_queries())])


def documented_metrics():
    with open(os.path.join(pq.TOP, "man", "linkprobed.8")) as f:
        return set(re.findall(r"\blinkprobe_[a-z0-9_]+", f.read().replace("\\-", "-")))


def test_every_series_read_is_documented():
    """Every series a query reads is one linkprobed(8) documents or a recording rule of the file."""
    records = {q.name for q in pq.rule_queries() if q.kind == "record"}
    documented = documented_metrics()
    unknown = {}
    for q in pq.queries():
        for name in pq.metric_names(q.expr) - records - documented:
            unknown.setdefault(name, []).append(q.name)
    assert not unknown, f"series neither documented in linkprobed(8) nor recorded: {unknown}"


def test_the_dashboard_is_what_grafana_expects():
    d = pq.load_dashboard()
    assert pq.check_dashboard(d) == []
    types = {p["type"] for p in pq.panels(d)}
    assert {"nodeGraph", "table", "timeseries"} <= types
    # The check finds what it looks for: a broken copy is refused on each count.
    broken = pq.load_dashboard()
    tables = [p for p in broken["panels"] if p["type"] == "table"]
    broken["schemaVersion"] = "39"
    tables[0]["type"] = "graph-old"
    tables[1]["targets"][0]["expr"] += ' and on() vector($nosuch)'
    tables[2]["gridPos"]["w"] = 30
    broken["templating"]["list"] = [v for v in broken["templating"]["list"] if v["name"] != "datasource"]
    problems = "\n".join(pq.check_dashboard(broken))
    for what in ("schemaVersion", "graph-old", "$nosuch", "24 columns", "'datasource'"):
        assert what in problems, problems


def test_the_node_graph_panel_gets_two_frames_it_can_draw():
    """The Node Graph panel's queries, answered as Prometheus answers them and turned into frames as
    Grafana does: nodes with id/title/mainstat, edges with id/source/target/mainstat/thickness, stale
    edges dashed, degraded ones red, every edge between two nodes."""
    (panel,) = [p for p in pq.panels(pq.load_dashboard()) if p["type"] == "nodeGraph"]
    a, b = "a" * 32, "b" * 32
    results = {
        "A": [{"metric": {"id": a, "node_id": a, "nodename": "node-a", "title": "node-a"}, "value": [1, "1"]},
              {"metric": {"id": b, "neighbor_id": b, "neighbor_hostname": "node-b", "title": "node-b"},
               "value": [1, "1"]}],
        "B": [{"metric": {"id": f"{a}:{b}:tcp:ab", "source": a, "target": b, "node_id": a, "neighbor_id": b,
                          "transport": "tcp", "interface": "ab", "strokedasharray": "6 4"}, "value": [1, "25"]},
              {"metric": {"id": f"{a}:{b}:tcp:ab2", "source": a, "target": b, "node_id": a, "neighbor_id": b,
                          "transport": "tcp", "interface": "ab2", "color": "#e02f44"}, "value": [1, "0"]}],
    }
    nodes, edges = pq.node_graph(pq.transform(pq.table_frames(panel, results), panel["transformations"]))
    assert [n["title"] for n in nodes] == ["node-a", "node-b"] and all(n["mainstat"] == 1 for n in nodes)
    by_id = {e["interface"]: e for e in edges}
    assert by_id["ab"]["thickness"] == 3.5 and by_id["ab"]["mainstat"] == 25 and by_id["ab"]["strokedasharray"] == "6 4"
    assert by_id["ab2"]["thickness"] == 1 and by_id["ab2"]["color"] == "#e02f44" and by_id["ab2"]["strokedasharray"] == ""
    # An edge to a node the nodes frame lacks is what would break the panel.
    results["A"].pop()
    with pytest.raises(AssertionError, match="not a node"):
        pq.node_graph(pq.transform(pq.table_frames(panel, results), panel["transformations"]))
