# SPDX-License-Identifier: LGPL-2.1-or-later
"""The simulated cluster of bench/fabric-sim, for bench/bench-fabric and test_fabric_sim.py: running the
generator, a Prometheus filled from its blocks (`promtool tsdb create-blocks-from openmetrics`) and
served on loopback, and the families of a metrics text (name, type, label names) to hold the simulation
against linkprobed: those the daemon's sources can write, and those a running daemon writes.

Needs no D-Bus (the benchmark imports it); families() needs python3-prometheus-client, whose parsers
read both the daemon's text format and the generator's OpenMetrics."""

import glob
import json
import os
import re
import shutil
import socket
import subprocess
import time
import urllib.error
import urllib.parse
import urllib.request

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SIM = os.path.join(TOP, "bench", "fabric-sim")
SCRAPE_LABELS = frozenset({"instance", "job"})
# The samples end at the simulated last scrape; a lookback this long keeps it the newest sample for
# queries run at any time in the next minutes (linkprobectl fabric asks for "now").
LOOKBACK = "15m"


def simulate(directory, nodes, at=None, seed=1):
    """Runs fabric-sim: (the OpenMetrics file's path, the summary as a dict)."""
    om, summary = os.path.join(directory, "cluster.om"), os.path.join(directory, "cluster.json")
    subprocess.run([SIM, "--nodes", str(nodes), "--seed", str(seed), "--time", str(int(at or time.time())), om, summary],
                   check=True)
    with open(summary) as f:
        return om, json.load(f)


class BackfilledPrometheus:
    """A Prometheus server on a free loopback port whose only data are the blocks made from an OpenMetrics
    file; close() stops it. Raises RuntimeError when promtool refuses the file or the server fails."""

    def __init__(self, directory, openmetrics):
        data = os.path.join(directory, "data")
        started = time.monotonic()
        out = subprocess.run(["promtool", "tsdb", "create-blocks-from", "openmetrics", "--quiet", openmetrics, data],
                             capture_output=True, text=True)
        if out.returncode != 0:
            raise RuntimeError(f"promtool refused {openmetrics}: {(out.stdout + out.stderr)[-1000:]}")
        self.blocks_seconds = time.monotonic() - started
        config = os.path.join(directory, "prometheus.yml")
        with open(config, "w") as f:
            f.write("global:\n  scrape_interval: 1h\n")
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            port = s.getsockname()[1]
        self.url = f"http://127.0.0.1:{port}"
        self.proc = subprocess.Popen([shutil.which("prometheus") or "prometheus", f"--config.file={config}",
                                      f"--storage.tsdb.path={data}", f"--web.listen-address=127.0.0.1:{port}",
                                      "--storage.tsdb.retention.time=30d", f"--query.lookback-delta={LOOKBACK}"],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            self.wait_ready()
        except RuntimeError:
            self.close()
            raise

    def wait_ready(self, timeout=60):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"prometheus exited ({self.proc.returncode})")
            try:
                with urllib.request.urlopen(self.url + "/-/ready", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)
        raise RuntimeError("prometheus did not become ready")

    def query(self, expr, at=None):
        """The result of an instant query at a Unix time (or now); one Prometheus refuses raises RuntimeError."""
        params = {"query": expr, **({"time": str(at)} if at is not None else {})}
        try:
            with urllib.request.urlopen(f"{self.url}/api/v1/query?{urllib.parse.urlencode(params)}", timeout=120) as r:
                doc = json.load(r)
        except urllib.error.HTTPError as e:
            doc = json.load(e)
        if doc.get("status") != "success":
            raise RuntimeError(f"Prometheus refused {expr[:200]!r}: {doc.get('error')}")
        return doc["data"]["result"]

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()


# --- Families ----------------------------------------------------------------------------------------

def families(text, openmetrics=False):
    """{series name (a counter's with _total): (type, the label names of its samples, or None without
    samples)} of the daemon's text format, or of OpenMetrics as scraped (instance and job left out)."""
    if openmetrics:
        from prometheus_client.openmetrics.parser import text_string_to_metric_families
    else:
        from prometheus_client.parser import text_string_to_metric_families
    out = {}
    for f in text_string_to_metric_families(text):
        labels = {k for s in f.samples for k in s.labels} - (SCRAPE_LABELS if openmetrics else set())
        out[f.name + "_total" if f.type == "counter" else f.name] = (f.type, frozenset(labels) if f.samples else None)
    return out


def source_names():
    """Every series name src/daemon/metrics*.c can write."""
    names = set()
    for path in glob.glob(os.path.join(TOP, "src", "daemon", "metrics*.c")):
        with open(path) as f:
            names.update(re.findall(r'"(linkprobe_[a-z0-9_]+)"', f.read()))
    return names


def differences(daemon, simulated):
    """Where the simulation's families differ from the daemon's, as sentences: a family missing, another
    type, other labels (where the daemon wrote samples to tell)."""
    out = []
    for name, (kind, labels) in sorted(daemon.items()):
        if name not in simulated:
            out.append(f"{name} is not simulated")
            continue
        sim_kind, sim_labels = simulated[name]
        if sim_kind != kind:
            out.append(f"{name} is a {sim_kind} in the simulation, a {kind} in the daemon")
        if labels is not None and sim_labels != labels:
            out.append(f"{name} has labels {sorted(sim_labels or ())} in the simulation, {sorted(labels)} in the daemon")
    return out
