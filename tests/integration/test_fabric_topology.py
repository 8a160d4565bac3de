# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobectl fabric topology and fabric verify: the switch tree from nodes' snapshots (bench/
fabric-snapshots writes a fat tree of them: each node's InfiniBand port in a leaf, its eth0 in an
Ethernet top-of-rack switch, the sweeping node's switch-to-switch links) and from a real Prometheus
holding bench/fabric-sim --fat-tree's series; the topology.conf written read by a real slurmctld
(Debian's 22.05, topology/tree), whose `scontrol show topology` must show the same switches and nodes;
verify's one line per difference on edited files; files that do not parse; names Slurm cannot take;
nodes with no switch known."""

import json
import os
import re
import shutil
import socket
import subprocess
import time

import pytest

import lp
import prometheus_queries as pq
import simulated_cluster as sim

SNAPSHOTS = os.path.join(sim.TOP, "bench", "fabric-snapshots")


def ctl(*args):
    return subprocess.run([lp.CTL, "--no-pager", *args], capture_output=True, text=True, timeout=120)


def fat_tree(directory, nodes=45, per_leaf=20, spines=3, plant=False):
    args = [SNAPSHOTS, "--nodes", str(nodes), "--per-leaf", str(per_leaf), "--spines", str(spines), "--list"]
    out = subprocess.run(args + (["--plant"] if plant else []) + [str(directory)], check=True, capture_output=True,
                         text=True)
    return out.stdout.split()


def topology(files, fmt="slurm"):
    out = ctl("fabric", "topology", f"--format={fmt}", "--snapshots", *files)
    assert out.returncode == 0, out.stderr
    return out.stdout, out.stderr


def expand(expr):
    """Slurm's hostlist, as the test reads it (one bracket per name is all the writer uses)."""
    names = []
    for item in re.findall(r"[^,\[]+(?:\[[^\]]*\])?[^,]*", expr):
        m = re.fullmatch(r"([^\[]*)\[([^\]]*)\](.*)", item)
        if not m:
            names.append(item)
            continue
        for part in m.group(2).split(","):
            lo, _, hi = part.partition("-")
            for v in range(int(lo), int(hi or lo) + 1):
                names.append(f"{m.group(1)}{v:0{len(lo)}d}{m.group(3)}")
    return names


def parse_conf(text):
    """{switch: {"Nodes": [...], "Switches": [...], "LinkSpeed": str}} of topology.conf or scontrol's view."""
    out = {}
    for line in text.splitlines():
        line = line.split("#")[0].strip()
        if not line:
            continue
        kv = dict(word.split("=", 1) for word in line.split())
        out[kv["SwitchName"]] = {"Nodes": sorted(expand(kv["Nodes"])) if "Nodes" in kv else [],
                                 "Switches": sorted(expand(kv["Switches"])) if "Switches" in kv else [],
                                 "LinkSpeed": kv.get("LinkSpeed")}
    return out


def test_snapshots_write_the_fat_tree(tmp_path):
    files = fat_tree(tmp_path, plant=True)
    text, err = topology(files)
    assert err == ""
    assert text.startswith("# topology.conf for topology/tree")
    conf = parse_conf(text)
    assert conf["leaf01"] == {"Nodes": [f"node{i:05d}" for i in range(1, 21)], "Switches": [], "LinkSpeed": "200"}
    assert conf["leaf03"]["Nodes"] == [f"node{i:05d}" for i in range(41, 46)]
    for spine in ("spine01", "spine02", "spine03"):
        assert conf[spine] == {"Nodes": [], "Switches": ["leaf01", "leaf02", "leaf03"], "LinkSpeed": "200"}
    assert len(conf) == 6
    # Compressed as Slurm writes its own lists, the management switches (tor*) nowhere: InfiniBand wins.
    assert "Nodes=node[00001-00020]" in text and "Switches=leaf[01-03]" in text and "tor" not in text

    block, _ = topology(files, "slurm-block")
    assert [line for line in block.splitlines() if not line.startswith("#")] == [
        "BlockName=leaf01 Nodes=node[00001-00020]", "BlockName=leaf02 Nodes=node[00021-00040]",
        "BlockName=leaf03 Nodes=node[00041-00045]"]

    labels, _ = topology(files, "k8s-labels")
    lines = labels.splitlines()
    assert len(lines) == 45
    assert lines[0] == ("kubectl label node node00001 --overwrite network.topology.nvidia.com/leaf=leaf01 "
                        "network.topology.nvidia.com/spine=spine01")
    assert all(re.fullmatch(r"kubectl label node node\d{5} --overwrite network\.topology\.nvidia\.com/leaf=leaf0[1-3] "
                            r"network\.topology\.nvidia\.com/spine=spine01", line) for line in lines)

    doc = json.loads(topology(files, "json")[0])
    assert doc["Tiers"] == 2 and doc["Unattached"] == []
    node21 = next(n for n in doc["Nodes"] if n["Hostname"] == "node00021")
    assert node21 == {"Hostname": "node00021", "NodeId": node21["NodeId"], "Leaf": "leaf02", "Interface": "mlx5_0/1",
                      "SwitchPort": "1", "Transport": "infiniband", "RateGbps": 50.0, "BestGbps": 200.0,
                      "Degraded": True}
    spine = next(s for s in doc["Switches"] if s["Name"] == "spine01")
    assert spine["Level"] == "spine" and spine["Switches"] == ["leaf01", "leaf02", "leaf03"]


def test_prometheus_writes_the_same_tree_as_the_simulation(tmp_path):
    if not (shutil.which("promtool") and shutil.which("prometheus")):
        pytest.skip("promtool and prometheus are needed (Debian package prometheus)")
    om, summary = os.path.join(tmp_path, "c.om"), os.path.join(tmp_path, "c.json")
    subprocess.run([sim.SIM, "--nodes", "45", "--fat-tree", "3", "--time", str(int(time.time())), om, summary],
                   check=True)
    with open(summary) as f:
        want = json.load(f)["fat_tree"]
    server = sim.BackfilledPrometheus(str(tmp_path), om)
    try:
        out = ctl("fabric", "topology", f"--prometheus={server.url}")
        assert out.returncode == 0, out.stderr
        conf = parse_conf(out.stdout)
        labels = ctl("fabric", "topology", "--format=k8s-labels", f"--prometheus={server.url}")
        path = tmp_path / "topology.conf"
        path.write_text(out.stdout)
        verify = ctl("fabric", "verify", f"--slurm={path}", f"--prometheus={server.url}")
        with open(summary) as f:
            doc = json.load(f)
        fired = pq.firing(lambda expr: server.query(expr, doc["time"]))
    finally:
        server.close()
    # The fat tree's plants raise their alerts and nothing else fires: the degraded uplink at both ends.
    missing, unexpected = pq.match_alerts(fired, [a for p in doc["plants"] for a in p["alerts"]])
    assert (missing, unexpected) == ([], [])
    assert sum(a["alertname"] == "LinkprobeSwitchLinkDegraded" for a in fired) == 2
    assert {name: s["Nodes"] for name, s in conf.items() if s["Nodes"]} == want["leaves"]
    for spine in want["spines"]:
        assert conf[spine]["Switches"] == sorted(want["leaves"]) and conf[spine]["LinkSpeed"] == "200"
    assert len(conf) == len(want["leaves"]) + len(want["spines"])
    assert labels.returncode == 0 and len(labels.stdout.splitlines()) == 45
    assert "node0044 --overwrite network.topology.nvidia.com/leaf=leaf2 network.topology.nvidia.com/spine=spine1" \
        in labels.stdout
    # The file agrees with the fabric; what the fabric plants is said, one line each.
    assert verify.returncode == 1
    leaf, spine = want["degraded_uplink"]
    assert sorted(verify.stdout.splitlines()) == sorted([
        f"node {want['degraded_node']}: its cable into leaf1 port 1 is degraded (50 Gb/s; both ends could do 200 Gb/s)",
        f"switch link {leaf} port 23 - {spine} port 1: degraded, 50 Gb/s (1X HDR) while both ends could do 200 Gb/s "
        "(1X while both ends support 4X)"]), verify.stdout


def test_verify_says_each_difference(tmp_path):
    files = fat_tree(tmp_path / "snap")
    text, _ = topology(files)
    good = tmp_path / "good.conf"
    good.write_text(text)
    out = ctl("fabric", "verify", f"--slurm={good}", "--snapshots", *files)
    assert (out.returncode, out.stdout) == (0, ""), out.stdout + out.stderr
    assert "agrees with the fabric: 45 nodes, 6 switches" in out.stderr

    # Edited as an administrator might: a node moved, one gone, one that does not exist, a switch
    # that does not exist, a spine that lost a leaf; comments and a continued line are fine.
    edited = tmp_path / "edited.conf"
    edited.write_text("# hand-edited\n"
                      "SwitchName=leaf01 Nodes=node[00001-00019],node00021 LinkSpeed=200\n"
                      "SwitchName=leaf02 \\\n    Nodes=node[00022-00040],node00099   # a node we ordered\n"
                      "SwitchName=leaf03 Nodes=node[00041-00045]\n"
                      "SwitchName=leaf09 Nodes=spare1\n"
                      "SwitchName=spine01 Switches=leaf[01-03]\n"
                      "SwitchName=spine02 Switches=leaf[01-02]\n"
                      "SwitchName=spine03 Switches=leaf[01-03],leaf09\n")
    out = ctl("fabric", "verify", f"--slurm={edited}", "--snapshots", *files)
    assert out.returncode == 1, out.stderr
    assert sorted(out.stdout.splitlines()) == sorted([
        f"node node00020: under leaf01 in the fabric, missing from {edited}",
        f"node node00021: under leaf01 in {edited}, under leaf02 in the fabric (mlx5_0/1 port 1)",
        f"node node00099: under leaf02 in {edited}, not in the fabric",
        f"node spare1: under leaf09 in {edited}, not in the fabric",
        f"switch leaf03: cabled to spine02 in the fabric, not under it in {edited}",
        f"switch leaf09: in {edited} (line 6), not in the fabric"]), out.stdout
    assert "6 differences" in out.stderr

    # Degraded links are differences too, even where the tree agrees.
    planted = fat_tree(tmp_path / "planted", plant=True)
    out = ctl("fabric", "verify", f"--slurm={good}", "--snapshots", *planted)
    assert out.returncode == 1
    assert sorted(out.stdout.splitlines()) == [
        "node node00021: its cable into leaf02 port 1 is degraded (50 Gb/s; both ends could do 200 Gb/s)",
        "switch link leaf01 port 23 - spine03 port 1: degraded, 50 Gb/s (1X HDR) while both ends could do 200 Gb/s "
        "(1X while both ends support 4X)"]

    # Without the sweep's judgement (a daemon from before LinkJudgements), a cable slower than the fastest
    # of its switches' others is what is said.
    with open(planted[0]) as f:
        doc = json.load(f)
    for s in doc["Objects"]["Switch"]:
        s.pop("LinkJudgements", None)
    with open(planted[0], "w") as f:
        json.dump(doc, f)
    out = ctl("fabric", "verify", f"--slurm={good}", "--snapshots", *planted)
    assert out.returncode == 1
    assert sorted(out.stdout.splitlines())[1] == ("switch link leaf01 port 23 - spine03 port 1: degraded, 50 Gb/s "
                                                  "(1X HDR) while the fastest of leaf01 runs at 200 Gb/s")


def doc_switches(name):
    """The Switch objects of a snapshot, written back when the loop over them ends."""
    with open(name) as f:
        doc = json.load(f)
    yield from doc["Objects"]["Switch"]
    with open(name, "w") as f:
        json.dump(doc, f)


def test_judged_switch_links_are_what_verify_goes_by(tmp_path):
    """A switch link the sweep judged at its best is no difference, however slow beside the others (an
    EDR spine in an HDR fabric); one judged degraded is, at any rate; LinkSpeed is what the cables down
    could do, at every tier."""
    files = fat_tree(tmp_path / "snap", nodes=6, per_leaf=3, spines=2)
    text, _ = topology(files)
    good = tmp_path / "good.conf"
    good.write_text(text)
    with open(files[0]) as f:
        doc = json.load(f)
    names = {s["Path"]: s["Name"] for s in doc["Objects"]["Switch"]}
    for s in doc["Objects"]["Switch"]:
        for link, judgement in zip(s["Links"], s.get("LinkJudgements", [])):
            pair = {s["Name"], names[link["Switch"]]}
            if "spine02" in pair:
                # spine02 can do no more than EDR: its cables run 4X EDR, the best both ends support.
                link.update(Speed="EDR", RateGbps=100.0)
                judgement.update(BestSpeed="EDR", BestRateGbps=100.0)
            if pair == {"spine01", "leaf02"}:
                # spine01's cable to leaf02: 2X of 4X, each end says so.
                link.update(Width="2X", RateGbps=100.0)
                judgement.update(Degraded=True, DegradedReason="2X while both ends support 4X")
    with open(files[0], "w") as f:
        json.dump(doc, f)
    out = ctl("fabric", "verify", f"--slurm={good}", "--snapshots", *files)
    assert out.returncode == 1, out.stderr
    assert out.stdout.splitlines() == [
        "switch link leaf02 port 4 - spine01 port 2: degraded, 100 Gb/s (2X HDR) while both ends could do 200 Gb/s "
        "(2X while both ends support 4X)"], out.stdout
    conf = parse_conf(topology(files)[0])
    assert conf["spine01"]["LinkSpeed"] == "200" and conf["spine02"]["LinkSpeed"] == "100", conf
    doc = json.loads(ctl("fabric", "--json", "--snapshots", *files).stdout)
    degraded = [link for link in doc["SwitchLinks"] if link["Degraded"]]
    assert len(degraded) == 1 and degraded[0]["BestGbps"] == 200 and degraded[0]["BestWidth"] == "4X" and \
        degraded[0]["DegradedReason"] == "2X while both ends support 4X", degraded
    human = ctl("fabric", "--snapshots", *files).stdout
    assert "Degraded switch cables:\n  leaf02 port 4 ↔ spine01 port 2: 2X HDR 100 Gb/s, both ends could do 200 Gb/s " \
        "(2X while both ends support 4X)\n" in human, human

    # Judgements that are not ones (a hand-edited or hostile snapshot) judge nothing, and lose nothing else.
    for s in doc_switches(files[0]):
        s["LinkJudgements"] = {"leaf01": "x"} if s["Name"] == "leaf01" else \
            [{"Port": "4", "BestRateGbps": "fast", "Degraded": "yes"}, None, 7]
    out = ctl("fabric", "--json", "--snapshots", *files)
    assert out.returncode == 0, out.stderr
    assert all(link["BestGbps"] is None and link["Degraded"] is False for link in json.loads(out.stdout)["SwitchLinks"])
    assert ctl("fabric", "verify", f"--slurm={good}", "--snapshots", *files).returncode == 1


@pytest.mark.parametrize("text, line, words", [
    ("SwitchName=a Nodes=n[1-\n", 1, "a '[' that is not closed"),
    ("# fine\nSwitchName=a Nodes=n1\nSwitchName=a Nodes=n2\n", 3, "switch a is named twice (first on line 2)"),
    ("SwitchName=a Nodes=n1 Bandwidth=10\n", 1, "unknown parameter Bandwidth="),
    ("\n\nSwitchName=s \\\n  Switches=a Nodes=n1\n", 3, "both Switches= and Nodes="),
    ("Nodes=n1\n", 1, "starts with SwitchName="),
    ("SwitchName=a Nodes=n[9-1]\n", 1, "below its start"),
    ("SwitchName=a Nodes=bad;name\n", 1, "not a name Slurm takes"),
])
def test_verify_refuses_a_file_that_does_not_parse(tmp_path, text, line, words):
    files = fat_tree(tmp_path / "snap", nodes=5)
    bad = tmp_path / "topology.conf"
    bad.write_text(text)
    out = ctl("fabric", "verify", f"--slurm={bad}", "--snapshots", *files)
    assert out.returncode == 2 and out.stdout == ""
    assert out.stderr.startswith(f"{bad}:{line}: ") and words in out.stderr, out.stderr


def test_verify_usage_and_unreadable_files(tmp_path):
    files = fat_tree(tmp_path / "snap", nodes=5)
    out = ctl("fabric", "verify", "--snapshots", *files)
    assert out.returncode == 2 and "--slurm=FILE" in out.stderr
    out = ctl("fabric", "verify", f"--slurm={tmp_path}/missing.conf", "--snapshots", *files)
    assert out.returncode == 2 and "Cannot read" in out.stderr and "missing.conf" in out.stderr
    out = ctl("fabric", "verify", f"--slurm={tmp_path}", "--snapshots", *files)
    assert out.returncode == 2 and "Cannot read" in out.stderr
    (tmp_path / "nul.conf").write_bytes(b"SwitchName=a Nodes=n1\0\n")
    out = ctl("fabric", "verify", f"--slurm={tmp_path}/nul.conf", "--snapshots", *files)
    assert out.returncode == 2 and "NUL" in out.stderr
    out = ctl("fabric", "topology", "--format=yaml", "--snapshots", *files)
    assert out.returncode == 2 and "slurm, slurm-block, k8s-labels or json" in out.stderr
    out = ctl("fabric", "topology", "--json", "--format=slurm", "--snapshots", *files)
    assert out.returncode == 2 and "--json is --format=json" in out.stderr
    assert json.loads(ctl("fabric", "topology", "--json", "--snapshots", *files).stdout)["Tiers"] == 2
    out = ctl("fabric", "ring", "--format=slurm", "--snapshots", *files)
    assert out.returncode == 2 and "--format= belongs to fabric topology" in out.stderr


def test_nodes_with_no_switch_are_counted_and_bad_names_refused(tmp_path):
    files = fat_tree(tmp_path / "snap", nodes=6, per_leaf=3)
    # One node whose snapshot names no switch: said and counted on stderr, never dropped unseen.
    with open(files[-1]) as f:
        doc = json.load(f)
    doc["Objects"]["Switch"] = []
    with open(files[-1], "w") as f:
        json.dump(doc, f)
    text, err = topology(files)
    assert "No switch is known for node00006: 1 node left out of the tree" in err
    assert "node00006" not in text.replace("node[00004-00005]", "")
    assert "nodes with no known switch left out" in text
    doc = json.loads(topology(files, "json")[0])
    assert doc["Unattached"] == ["node00006"]

    # A hostname Slurm would read as two names is refused, with the reason.
    with open(files[0]) as f:
        doc = json.load(f)
    doc["Node"]["Hostname"] = "node 1"
    with open(files[0], "w") as f:
        json.dump(doc, f)
    out = ctl("fabric", "topology", "--snapshots", *files)
    assert out.returncode == 1 and "hostname Slurm cannot take" in out.stderr and "node 1" in out.stderr
    # And so is a switch's.
    files = fat_tree(tmp_path / "snap2", nodes=3, per_leaf=3)
    for name in files:
        with open(name) as f:
            doc = json.load(f)
        for s in doc["Objects"]["Switch"]:
            s["Name"] = s["Name"].replace("leaf01", "leaf 01")
        with open(name, "w") as f:
            json.dump(doc, f)
    out = ctl("fabric", "topology", "--snapshots", *files)
    assert out.returncode == 1 and "\"leaf 01\": not a name Slurm takes" in out.stderr


# --- A real slurmctld -------------------------------------------------------------------------------

def free_ports(n):
    socks, ports = [], []
    for _ in range(n):
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        socks.append(s)
        ports.append(s.getsockname()[1])
    for s in socks:
        s.close()
    return ports


class Slurmctld:
    """slurmctld in the foreground, as root, with a slurm.conf and topology.conf of its own in directory
    (auth/none: no munge key to share, nothing leaves loopback)."""

    def __init__(self, directory, nodes, topology_text):
        self.dir = str(directory)
        os.makedirs(os.path.join(self.dir, "state"), exist_ok=True)
        ctld, slurmd = free_ports(2)
        self.conf = os.path.join(self.dir, "slurm.conf")
        with open(self.conf, "w") as f:
            f.write(f"ClusterName=lptopo\nSlurmctldHost=localhost\nSlurmctldPort={ctld}\nSlurmdPort={slurmd}\n"
                    "AuthType=auth/none\nCredType=cred/none\nSlurmUser=root\n"
                    f"StateSaveLocation={self.dir}/state\nSlurmdSpoolDir={self.dir}/spool\n"
                    f"SlurmctldPidFile={self.dir}/slurmctld.pid\nSlurmctldLogFile={self.dir}/slurmctld.log\n"
                    "TopologyPlugin=topology/tree\nSelectType=select/cons_tres\nProctrackType=proctrack/linuxproc\n"
                    "TaskPlugin=task/none\nMpiDefault=none\nReturnToService=1\n"
                    f"NodeName={nodes} CPUs=1 State=FUTURE\nPartitionName=all Nodes=ALL Default=YES\n")
        with open(os.path.join(self.dir, "topology.conf"), "w") as f:
            f.write(topology_text)
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.proc = subprocess.Popen(["slurmctld", "-D", "-i", "-f", self.conf], env=self.env,
                                     stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)

    def log(self):
        try:
            with open(os.path.join(self.dir, "slurmctld.log")) as f:
                return f.read()[-3000:]
        except OSError:
            return ""

    def topology(self, timeout=60):
        deadline = time.monotonic() + timeout
        last = None
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                return None
            last = subprocess.run(["scontrol", "show", "topology"], env=self.env, capture_output=True, text=True,
                                  timeout=30)
            if last.returncode == 0 and "SwitchName=" in last.stdout:
                return last.stdout
            time.sleep(0.5)
        raise AssertionError(f"scontrol never showed the topology: {last and last.stderr}\n{self.log()}")

    def close(self):
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def test_slurmctld_reads_the_written_topology(tmp_path):
    if not shutil.which("slurmctld") or not shutil.which("scontrol"):
        pytest.skip("slurmctld and scontrol are needed (Debian packages slurmctld, slurm-client)")
    if os.geteuid() != 0:
        pytest.skip("slurmctld runs as SlurmUser=root here: the test needs root")
    files = fat_tree(tmp_path / "snap", nodes=45, per_leaf=20, spines=3)
    text, _ = topology(files)
    ctld = Slurmctld(tmp_path / "slurm", "node[00001-00045]", text)
    try:
        shown = ctld.topology()
        if shown is None:
            pytest.skip(f"slurmctld could not start: {ctld.proc.stdout.read()[-2000:]}\n{ctld.log()}")
    finally:
        ctld.close()
    mine, slurms = parse_conf(text), parse_conf(shown)
    assert set(slurms) == set(mine)
    for name, s in mine.items():
        assert slurms[name]["Switches"] == s["Switches"], name
        assert slurms[name]["LinkSpeed"] == s["LinkSpeed"], name
        if s["Nodes"]:
            assert slurms[name]["Nodes"] == s["Nodes"], name
        else:
            # Slurm lists every node below a spine: all of its leaves' nodes.
            assert slurms[name]["Nodes"] == sorted(n for leaf in s["Switches"] for n in mine[leaf]["Nodes"]), name
    levels = dict(re.findall(r"SwitchName=(\S+) Level=(\d+)", shown))
    assert levels == {"leaf01": "0", "leaf02": "0", "leaf03": "0", "spine01": "1", "spine02": "1", "spine03": "1"}


def test_switches_are_vertices_of_the_picture(tmp_path):
    files = fat_tree(tmp_path, nodes=6, per_leaf=3, spines=2, plant=True)
    out = ctl("fabric", "--dot", "--snapshots", *files)
    assert out.returncode == 0, out.stderr
    for name in ("leaf01", "leaf02", "spine01", "spine02", "tor01", "tor02"):
        assert re.search(rf'^  "[^"]+:[^"]+" \[label="{name}", shape=hexagon\];$', out.stdout, re.M), name
    assert '[label="mlx5_0/1 → port 1\\n50 Gb/s\\ndegraded", color="red", fontcolor="red"];' in out.stdout
    assert '[label="port 5 ↔ port 1\\n1X HDR 50 Gb/s\\ndegraded", style=bold, color="red", fontcolor="red"];' \
        in out.stdout
    assert '[label="port 5 ↔ port 2\\n4X HDR 200 Gb/s", style=bold];' in out.stdout
    svg = ctl("fabric", "--svg", "--snapshots", *files)
    assert svg.returncode == 0 and svg.stdout.count('class="node"') == 12
    doc = json.loads(ctl("fabric", "--json", "--snapshots", *files).stdout)
    assert len(doc["Switches"]) == 6 and len(doc["Attachments"]) == 12 and len(doc["SwitchLinks"]) == 4
