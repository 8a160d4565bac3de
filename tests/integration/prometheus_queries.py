# SPDX-License-Identifier: LGPL-2.1-or-later
"""The queries of contrib/prometheus/: every recording and alerting rule of linkprobe-rules.yml and every
target of linkprobe-dashboard.json, the dashboard's variables substituted, with the metric names each
one reads; a structural check of the dashboard against what Grafana expects of one; and a small model of
what Grafana makes of a Node Graph panel's instant table queries (frames, the transformations the
dashboard uses, the nodes and edges frames the panel draws).

Used by test_prometheus_rules.py (no Prometheus needed), test_fabric.py (against the Prometheus that
scrapes the three-node fabric) and anyone timing the queries (queries() is all they need)."""

import json
import os
import re
from dataclasses import dataclass, field

import yaml

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONTRIB = os.path.join(TOP, "contrib", "prometheus")
RULES = os.path.join(CONTRIB, "linkprobe-rules.yml")
DASHBOARD = os.path.join(CONTRIB, "linkprobe-dashboard.json")
RULES_TEST = os.path.join(TOP, "tests", "prometheus", "linkprobe-rules.test.yml")

# What "All" and Grafana's built-in variables stand for when a query runs outside Grafana.
ALL_VARIABLES = {"job": ".+", "node": ".+", "__rate_interval": "1m", "__interval": "15s", "__range": "1h"}

PANEL_TYPES = {"row", "nodeGraph", "table", "timeseries", "stat"}
TRANSFORMATIONS = {"organize", "calculateField"}
RECORD_NAME = re.compile(r"^[a-z][a-z0-9_]*:[a-z][a-z0-9_]*:[a-z][a-z0-9_]*$")
ALERT_NAME = re.compile(r"^Linkprobe(?:[A-Z][a-z0-9]+)+$")


@dataclass
class Query:
    """One query: kind is "record", "alert" or "panel"; name the rule's name or "PANEL TITLE [refId]"."""
    kind: str
    name: str
    expr: str
    instant: bool = True
    rule: dict = None
    panel: dict = None
    target: dict = None
    variables: set = field(default_factory=set)

    def substituted(self, values=None):
        return substitute(self.expr, {**ALL_VARIABLES, **(values or {})})


def rule_queries(path=RULES):
    with open(path) as f:
        doc = yaml.safe_load(f)
    out = []
    for group in doc["groups"]:
        for rule in group["rules"]:
            kind = "record" if "record" in rule else "alert"
            out.append(Query(kind, rule[kind], rule["expr"].strip(), rule=rule))
    return out


def load_dashboard(path=DASHBOARD):
    with open(path) as f:
        return json.load(f)


def panels(dashboard):
    """Every panel, those inside collapsed rows too."""
    for p in dashboard["panels"]:
        yield p
        yield from p.get("panels", [])


def dashboard_queries(path=DASHBOARD):
    out = []
    for p in panels(load_dashboard(path)):
        for t in p.get("targets", []):
            out.append(Query("panel", f"{p['title']} [{t['refId']}]", t["expr"].strip(),
                             instant=t.get("instant", False) and not t.get("range", False), panel=p, target=t,
                             variables={a or b or c for a, b, c in VARIABLE.findall(t["expr"])}))
    return out


def queries():
    """Every query of both files, rules first."""
    return rule_queries() + dashboard_queries()


# $name, ${name}, ${name:format} and [[name]], as Grafana writes its variables; "$1" in label_replace()
# is no variable (Grafana leaves what names none alone).
VARIABLE = re.compile(r"\$\{([A-Za-z_]\w*)(?::\w+)?\}|\$([A-Za-z_]\w*)|\[\[([A-Za-z_]\w*)\]\]")


def substitute(expr, values):
    def one(m):
        name = m.group(1) or m.group(2) or m.group(3)
        if name not in values:
            raise KeyError(f"no value for the variable ${name}")
        return values[name]
    return VARIABLE.sub(one, expr)


STRING = re.compile(r'"(?:[^"\\]|\\.)*"')
NAME = re.compile(r"(?<![\w:])([a-z_][a-z0-9_]*:[a-z0-9_]+:[a-z0-9_]+|linkprobe_[a-z0-9_]+)(?![\w(])")
NAME_REGEX = re.compile(r'__name__\s*=~\s*"([a-z0-9_]*)\(([a-z0-9_|]+)\)([a-z0-9_]*)"')


def metric_names(expr):
    """The series names (ours and recording rules') a query reads, a name regex over alternatives expanded."""
    names = set()
    for prefix, alternatives, suffix in NAME_REGEX.findall(expr):
        names.update(prefix + a + suffix for a in alternatives.split("|"))
    names.update(NAME.findall(STRING.sub('""', expr)))
    return names


# --- Rules evaluated where they were never loaded ------------------------------------------------------

RECORD = re.compile(r"(?<![\w:])[a-z_][a-z0-9_]*:[a-z0-9_:]*[a-z0-9_](?![\w:(])")


def recording_rules(path=RULES):
    """{name: expression} of every recording rule."""
    return {q.name: q.expr for q in rule_queries(path) if q.kind == "record"}


def inline_records(expr, records=None):
    """expr with every recording rule it reads replaced by that rule's expression in parentheses, for a
    Prometheus that never evaluated the rules (one filled from blocks): a recorded series carries its
    expression's labels, so the result is the same. String literals are left alone."""
    records = recording_rules() if records is None else records

    def one(m):
        name = m.group(0)
        if name not in records:
            return name
        if m.string[m.end():m.end() + 1] in ("{", "["):
            raise ValueError(f"{name} is read with matchers or a range, which inlining cannot express")
        return "(" + inline_records(records[name], records) + ")"
    parts = re.split(f"({STRING.pattern})", expr)
    return "".join(p if k % 2 else RECORD.sub(one, p) for k, p in enumerate(parts))


def firing(query, rules=None, records=None):
    """The alerts each alerting rule's expression gives now, once its for: has passed: a list of their
    label sets (alertname and the rule's own labels included). query(expr) returns Prometheus' result."""
    out = []
    for q in rule_queries() if rules is None else rules:
        if q.kind != "alert":
            continue
        for series in query(inline_records(q.expr, records)):
            labels = {k: v for k, v in series["metric"].items() if k != "__name__"}
            labels.update(q.rule.get("labels", {}), alertname=q.name)
            out.append(labels)
    return out


def match_alerts(fired, expected):
    """(expected alerts that nothing fired for, fired alerts that nothing expected). An expected alert is a
    dict of labels, alertname among them, that one fired alert must carry."""
    def carries(alert, want):
        return all(alert.get(k) == v for k, v in want.items())
    missing = [w for w in expected if not any(carries(a, w) for a in fired)]
    unexpected = [a for a in fired if not any(carries(a, w) for w in expected)]
    return missing, unexpected


# --- The dashboard as Grafana reads it --------------------------------------------------------------

def check_dashboard(d):
    """What Grafana would refuse or silently break on, as a list of sentences (empty: none found)."""
    problems = []
    for key, kind in (("uid", str), ("title", str), ("schemaVersion", int), ("panels", list),
                      ("templating", dict), ("time", dict)):
        if not isinstance(d.get(key), kind):
            problems.append(f"the dashboard has no {key} of type {kind.__name__}")
    if isinstance(d.get("schemaVersion"), int) and not 36 <= d["schemaVersion"] <= 41:
        problems.append(f"schemaVersion {d['schemaVersion']} is not one Grafana 9.0-12 writes (36-41)")
    variables = {v.get("name"): v for v in d.get("templating", {}).get("list", [])}
    ds = variables.get("datasource")
    if not ds or ds.get("type") != "datasource" or ds.get("query") != "prometheus":
        problems.append("no template variable 'datasource' of type datasource for Prometheus")
    for name, v in variables.items():
        if v.get("type") == "query":
            if v.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
                problems.append(f"variable {name} does not query the chosen data source")
            q = v.get("query")
            if not (isinstance(q, str) or isinstance(q, dict) and isinstance(q.get("query"), str)):
                problems.append(f"variable {name} has no query")
    known = set(variables) | {"__rate_interval", "__interval", "__range"}
    ids, grid = set(), []
    for p in panels(d):
        what = f"panel {p.get('id')} ({p.get('title')!r})"
        if p.get("type") not in PANEL_TYPES:
            problems.append(f"{what} has type {p.get('type')!r}, not one of {sorted(PANEL_TYPES)}")
        if not isinstance(p.get("id"), int) or p["id"] in ids:
            problems.append(f"{what} has no id of its own")
        ids.add(p.get("id"))
        g = p.get("gridPos", {})
        if not all(isinstance(g.get(k), int) for k in "xywh") or g["x"] < 0 or g["w"] < 1 or g["x"] + g["w"] > 24:
            problems.append(f"{what} has a gridPos outside the 24 columns: {g}")
        else:
            for other, og in grid:
                if g["x"] < og["x"] + og["w"] and og["x"] < g["x"] + g["w"] and \
                        g["y"] < og["y"] + og["h"] and og["y"] < g["y"] + g["h"]:
                    problems.append(f"{what} overlaps {other}")
            grid.append((what, g))
        if p.get("type") == "row":
            continue
        if p.get("datasource") != {"type": "prometheus", "uid": "${datasource}"}:
            problems.append(f"{what} does not use the chosen data source")
        refs = [t.get("refId") for t in p.get("targets", [])]
        if not refs or len(set(refs)) != len(refs):
            problems.append(f"{what} has no targets, or two with one refId")
        for t in p.get("targets", []):
            if not isinstance(t.get("expr"), str) or t.get("datasource", p["datasource"]) != p["datasource"]:
                problems.append(f"{what} target {t.get('refId')} has no expr or another data source")
                continue
            for m in VARIABLE.finditer(t["expr"]):
                name = m.group(1) or m.group(2) or m.group(3)
                if name not in known:
                    problems.append(f"{what} target {t['refId']} uses ${name}, which is not defined")
            if p["type"] in ("table", "nodeGraph") and not (t.get("instant") and t.get("format") == "table"):
                problems.append(f"{what} target {t['refId']} should be an instant query in table format")
        for tr in p.get("transformations", []):
            if tr.get("id") not in TRANSFORMATIONS:
                problems.append(f"{what} uses transformation {tr.get('id')!r}, which this check does not model")
        if p["type"] == "nodeGraph" and len(refs) != 2:
            problems.append(f"{what} needs exactly two targets, nodes and edges")
    return problems


def table_frames(panel, results):
    """The frames Grafana's Prometheus data source makes of instant queries in table format: one per
    target, a Time field, one string field per label (sorted), and the value, named "Value" or, when the
    panel has several targets, "Value #<refId>". results: {refId: Prometheus result list}."""
    targets = panel["targets"]
    frames = []
    for t in targets:
        series = results.get(t["refId"], [])
        labels = sorted({k for s in series for k in s["metric"]})
        value = "Value" if len(targets) == 1 else f"Value #{t['refId']}"
        fields = {"Time": [float(s["value"][0]) for s in series]}
        for k in labels:
            fields[k] = [s["metric"].get(k, "") for s in series]
        fields[value] = [float(s["value"][1]) for s in series]
        frames.append({"refId": t["refId"], "fields": fields})
    return frames


BINARY = {"+": lambda a, b: a + b, "-": lambda a, b: a - b, "*": lambda a, b: a * b, "/": lambda a, b: a / b}


def _operand(fields, spec, n):
    if spec in fields:
        return fields[spec]
    try:
        return [float(spec)] * n
    except ValueError:
        return None


def transform(frames, transformations):
    """Grafana's organize and calculateField (binary mode), as far as the dashboard uses them."""
    for tr in transformations:
        options = tr["options"]
        out = []
        for frame in frames:
            fields = dict(frame["fields"])
            n = len(next(iter(fields.values()), []))
            if tr["id"] == "calculateField":
                if options["mode"] != "binary":
                    raise ValueError(f"calculateField mode {options['mode']} is not modelled")
                # Unless told the data is no time series, Grafana first joins every frame into one by
                # time (ensureColumns), which would make one frame of the nodes and the edges.
                if options.get("timeSeries") is not False and len(frames) > 1:
                    raise ValueError("calculateField without timeSeries: false joins all frames into one")
                b = options["binary"]
                left, right = _operand(fields, b["left"], n), _operand(fields, b["right"], n)
                if left is not None and right is not None:  # Grafana leaves a frame without them alone
                    fields[options["alias"]] = [BINARY[b["operator"]](x, y) for x, y in zip(left, right)]
            elif tr["id"] == "organize":
                fields = {options.get("renameByName", {}).get(k) or k: v for k, v in fields.items()
                          if not options.get("excludeByName", {}).get(k)}
            else:
                raise ValueError(f"transformation {tr['id']} is not modelled")
            out.append({**frame, "fields": fields})
        frames = out
    return frames


def node_graph(frames):
    """What the Node Graph panel reads: the frame with a "source" field is the edges, the other the nodes
    (field names matched case-insensitively). Raises AssertionError where the panel would fail or draw
    nonsense; returns (nodes, edges) as lists of dicts."""
    lowered = [{k.lower(): v for k, v in f["fields"].items()} for f in frames]
    edges = [f for f in lowered if "source" in f]
    nodes = [f for f in lowered if "source" not in f]
    assert len(nodes) == 1 and len(edges) == 1, f"expected one nodes and one edges frame, got {frames}"
    nodes, edges = nodes[0], edges[0]
    for frame, required in ((nodes, ("id", "title", "mainstat")), (edges, ("id", "source", "target", "mainstat",
                                                                          "thickness"))):
        missing = [k for k in required if k not in frame]
        assert not missing, f"the {'edges' if frame is edges else 'nodes'} frame lacks {missing}: {list(frame)}"
    rows = lambda f: [dict(zip(f, values)) for values in zip(*f.values())]  # noqa: E731
    nodes, edges = rows(nodes), rows(edges)
    ids = {n["id"] for n in nodes}
    for e in edges:
        # processEdges() looks both ends up among the nodes, and fails on one it does not find.
        assert e["source"] in ids and e["target"] in ids, f"edge {e['id']} has an end that is not a node: {e}"
        assert isinstance(e["thickness"], float) and e["thickness"] >= 1, f"edge {e['id']}: thickness {e['thickness']}"
        assert isinstance(e["mainstat"], float), e
        assert e.get("strokedasharray", "") in ("", "6 4"), e
    assert len({e["id"] for e in edges}) == len(edges), "two edges with one id"
    return nodes, edges
