# SPDX-License-Identifier: LGPL-2.1-or-later
"""The subnet sweep ([Fabric] Sweep=yes) against a simulated fabric: ibsim runs two leaf switches, one
spine and four CAs (a 1X cable between the leaves); linkprobed, attached to one CA, walks the subnet with
linkprobe-probe-fabric (libibnetdisc) and must publish every switch and every switch-to-switch link
ibnetdiscover (infiniband-diags) prints on the same fabric in the same test: mismatches 0. Then a link
taken down in ibsim's console goes at the next sweep, switch-to-switch cables trained low are judged as
iblinkinfo's "Could be" judges them and carried into `linkprobectl fabric` (verify, topology) and into
the alert the real Prometheus holds on the daemon's metrics, a sweep that times out mid-walk (a spine that drops
every MAD) or runs past its deadline keeps the last complete result and says so, a fabric bigger than [Fabric] MaxSwitches= is
published up to the cap with a warning, Sweep=no publishes no swept switch, and bad [Fabric] values are
refused with their line and reason.

ibsim delivers no port event to a client that is not the subnet manager: the tests trigger the next
sweep with Refresh(), the call that stands in for the port events of real hardware."""

import json
import os
import re
import socket
import subprocess
import time
import urllib.request

import pytest

import lp
import prometheus_queries as pq
from test_ibsim import Fabric, missing_components, refresh, sanitized_build

pytest.importorskip("gi")
from lp import wait_until  # noqa: E402

SWITCH = lp.IFACE + "Switch"
PROBE = os.path.join(os.path.dirname(lp.DAEMON), "linkprobe-probe-fabric")

NET = """\
width=31
speed=7
extspeed=7

Switch	8 "spine1"
[1]	"leaf1"[5]
[2]	"leaf2"[5]

Switch	8 "leaf1"
[1]	"hca-1-1"[1]
[2]	"hca-1-2"[1]
[5]	"spine1"[1]
[6]	"leaf2"[6]	w=1

Switch	8 "leaf2"
[1]	"hca-2-1"[1]
[2]	"hca-2-2"[1]
[5]	"spine1"[2]
[6]	"leaf1"[6]	w=1

Hca	1 "hca-1-1"
[1]	"leaf1"[1]

Hca	1 "hca-1-2"
[1]	"leaf1"[2]

Hca	1 "hca-2-1"
[1]	"leaf2"[1]

Hca	1 "hca-2-2"
[1]	"leaf2"[2]
"""
HOST = "hca-1-1"

pytestmark = [pytest.mark.skipif(missing_components() is not None, reason=str(missing_components())),
              pytest.mark.skipif(not os.path.exists(PROBE), reason=f"{PROBE} is not built"),
              pytest.mark.skipif(os.path.exists(lp.DAEMON) and sanitized_build(),
                                 reason="ibsim's umad2sim overflows a heap buffer of its own in read(), which ASan "
                                        "aborts on: run this file against the ordinary build")]

SWITCH_LINE = re.compile(r'^Switch\s+\d+\s+"S-([0-9a-f]{16})"\s+#\s+"([^"]*)"')
PORT_LINE = re.compile(r'^\[(\d+)\]\s+"([SH])-([0-9a-f]{16})"\[(\d+)\](?:\([0-9a-f]+\))?\s+#.*?(\d+)x(\w+)\s*$')


def colon_guid(hex16):
    return ":".join(hex16[i:i + 4] for i in range(0, 16, 4))


def ibnetdiscover(fabric):
    """{switch GUID: description}, {(switch GUID, port): (remote GUID, remote port, width, speed)} for every
    switch-to-switch link ibnetdiscover prints."""
    switches, links, current = {}, {}, None
    for line in fabric.tool(HOST, "ibnetdiscover").splitlines():
        m = SWITCH_LINE.match(line)
        if m:
            current = colon_guid(m.group(1))
            switches[current] = m.group(2)
            continue
        if not line.strip():
            current = None
            continue
        m = PORT_LINE.match(line)
        if m and current and m.group(2) == "S":
            port, _, remote, rport, width, speed = m.groups()
            links[(current, int(port))] = (colon_guid(remote), int(rport), f"{width}X", speed)
    return switches, links


def published(client):
    """The same two tables from the daemon's Switch objects that the sweep found, and the objects."""
    objects = {path: props[SWITCH] for path, props in client.objects().items() if SWITCH in props}
    switches, links = {}, {}
    for path, s in objects.items():
        if "sweep" not in s["Source"]:
            continue
        switches[s["NodeGuid"]] = s["Description"]
        for port, rpath, rguid, rport, width, speed, rate in s["Links"]:
            assert rpath in objects, f"{path} links to {rpath}, which is not published"
            links[(s["NodeGuid"], port)] = (rguid, rport, width, speed)
    return switches, links, objects


def daemon(fabric, bus, config="[Fabric]\nSweep=yes\n"):
    return lp.Daemon(bus, env=fabric.env(HOST), prefix=["env", "-C", fabric.dir], args=["--log-level=debug"],
                     config=config)


@pytest.fixture
def fabric():
    f = Fabric(NET)
    yield f
    f.stop()


@pytest.fixture
def bus():
    b = lp.PrivateBus()
    yield b
    b.stop()


def settle(client, predicate, timeout=20, refreshing=True):
    """published(client) once predicate holds for it, calling Refresh() each second meanwhile."""
    last = [0.0]

    def check():
        if refreshing and time.monotonic() - last[0] >= 1.0:
            refresh(client)
            last[0] = time.monotonic()
        p = published(client)
        return p if predicate(p) else None
    return wait_until(check, timeout, interval=0.2)


def metrics(client):
    (text,) = client.call(lp.ROOT, lp.IFACE + "Manager", "GetMetrics")
    return text


def test_sweep_matches_ibnetdiscover(fabric, bus):
    theirs_switches, theirs_links = ibnetdiscover(fabric)
    assert len(theirs_switches) == 3 and len(theirs_links) == 6, (theirs_switches, theirs_links)
    d = daemon(fabric, bus)
    client = lp.Client(bus)
    try:
        got = settle(client, lambda p: len(p[0]) == 3 and len(p[1]) == 6, refreshing=False)
        assert got, f"the sweep never published the fabric: {published(client)}\n{d.log()[-3000:]}"
        switches, links, objects = got
        mismatches = [(k, v, switches.get(k)) for k, v in theirs_switches.items() if switches.get(k) != v]
        mismatches += [(k, v, links.get(k)) for k, v in theirs_links.items() if links.get(k) != v]
        mismatches += [(k, None, v) for k, v in links.items() if k not in theirs_links]
        assert mismatches == []
        # The 1X cable between the leaves reads 1X on both ends, the rest 12X HDR at 12 x 50 Gb/s.
        rates = {(s["NodeGuid"], port): rate for s in objects.values() for port, _, _, _, _, _, rate in s["Links"]}
        assert sorted(set(rates.values())) == [50.0, 600.0], rates
        # One object for the leaf we are cabled to: the neighbour query and the sweep name it alike.
        leaf = next(s for s in objects.values() if s["Description"] == "leaf1")
        assert wait_until(lambda: published(client)[2][next(p for p, s in published(client)[2].items()
                                                             if s["Description"] == leaf["Description"])]
                          ["Source"] == ["infiniband", "sweep"], 15), published(client)[2]
        assert len(objects) == 3
        # linkprobectl lists them all, the sweep as their source.
        out = lp.ctl(bus, "switches", "--no-pager", check=True, env={"COLUMNS": "200"}).stdout
        assert all(name in out for name in ("spine1", "leaf1", "leaf2")) and "sweep" in out, out
        text = metrics(client)
        info = re.findall(r'^linkprobe_switch_link_info\{([^}]*)\} 1$', text, re.M)
        assert len(info) == 6, text
        assert 'switch_name="leaf1"' in text and 'remote_name="spine1"' in text
        assert len(re.findall(r'^linkprobe_switch_link_rate_gbps\{[^}]*\} (?:600|50)$', text, re.M)) == 6
        remote = re.findall(r'^linkprobe_rdma_port_remote_info\{([^}]*)\} 1$', text, re.M)
        assert len(remote) == 1 and 'remote_type="switch"' in remote[0] and 'switch_name="leaf1"' in remote[0]
        best = re.search(r"^linkprobe_rdma_port_best_rate_bytes\{device=\"ibsim0\",port=\"1\"\} (\S+)$", text, re.M)
        assert best and float(best.group(1)) == 600 * 1.25e8, text
    finally:
        client.close()
        d.stop()


# Four switch-to-switch cables, each trained low in one way iblinkinfo names with "Could be" (the
# attributes on both ends, as ibsim wants them): leaf1-spine1 12X HDR, nothing to say; leaf2-spine1
# extended speeds FDR only; leaf1[6]-leaf2[6] enabled for 1X only; leaf1[7]-leaf2[7] SDR only and no
# extended speed (judged by SDR..QDR).
NET_DEGRADED = """\
width=31
speed=7
extspeed=7

Switch	8 "spine1"
[1]	"leaf1"[5]
[2]	"leaf2"[5]	e=1

Switch	8 "leaf1"
[1]	"hca-1-1"[1]
[5]	"spine1"[1]
[6]	"leaf2"[6]	w=1
[7]	"leaf2"[7]	s=1 e=0

Switch	8 "leaf2"
[1]	"hca-2-1"[1]
[5]	"spine1"[2]	e=1
[6]	"leaf1"[6]	w=1
[7]	"leaf1"[7]	s=1 e=0

Hca	1 "hca-1-1"
[1]	"leaf1"[1]

Hca	1 "hca-2-1"
[1]	"leaf2"[1]
"""
LANE_RATE = {"SDR": "2.5 Gbps", "DDR": "5.0 Gbps", "QDR": "10.0 Gbps", "FDR": "14.0625 Gbps",
             "EDR": "25.78125 Gbps", "HDR": "53.125 Gbps", "NDR": "106.25 Gbps", "XDR": "212.5 Gbps"}


def iblinkinfo_could_be(fabric):
    """{(switch GUID, port): (could-be width, could-be lane rate)} for every switch-to-switch port
    iblinkinfo lists (None where it says nothing)."""
    out, current, could = fabric.tool(HOST, "iblinkinfo", "--switches-only"), None, {}
    for line in out.splitlines():
        m = re.match(r"^Switch: (0x[0-9a-f]+) ", line)
        if m:
            current = colon_guid(m.group(1)[2:].rjust(16, "0"))
            continue
        m = re.match(r'^\s*(?:0x[0-9a-f]+\s+)?\d+\s+(\d+)\[\s*\].*==>\s+\d+\s+\d+\[\s*\]\s+"([^"]*)"\s+\((.*)\)\s*$',
                     line)
        if not m or not m.group(2).startswith(("leaf", "spine")):
            continue
        tail = m.group(3)
        width = re.search(r"Could be (\d+X)", tail)
        rate = re.search(r"Could be (?:\d+X )?([\d.]+ Gbps)", tail)
        could[(current, int(m.group(1)))] = (width and width.group(1), rate and rate.group(1))
    return could


def test_switch_links_could_be_matches_iblinkinfo(bus):
    """Every switch-to-switch link's best width and speed, and its Degraded reason, against iblinkinfo's
    "Could be" on the same fabric: mismatches 0; the metrics say the same."""
    fabric = Fabric(NET_DEGRADED)
    d = None
    client = lp.Client(bus)
    try:
        theirs = iblinkinfo_could_be(fabric)
        assert len(theirs) == 8, (theirs, fabric.tool(HOST, "iblinkinfo", "--switches-only"))
        d = daemon(fabric, bus)
        got = settle(client, lambda p: len(p[1]) == 8, refreshing=False)
        assert got, f"the sweep never published the fabric: {published(client)}\n{d.log()[-3000:]}"
        _, links, objects = got
        ours, reasons = {}, {}
        for s in objects.values():
            if "sweep" not in s["Source"]:
                continue
            active = {port: (width, speed) for port, _, _, _, width, speed, _ in s["Links"]}
            assert [j[0] for j in s["LinkJudgements"]] == list(active), s
            for port, best_width, best_speed, best_rate, degraded, reason in s["LinkJudgements"]:
                width, speed = active[port]
                ours[(s["NodeGuid"], port)] = (best_width if best_width != width else None,
                                               LANE_RATE[best_speed] if best_speed != speed else None)
                reasons[(s["Description"], port)] = reason
                assert degraded == bool(reason) and best_rate > 0, s
        mismatches = [(k, v, ours.get(k)) for k, v in theirs.items() if ours.get(k) != v]
        mismatches += [(k, None, v) for k, v in ours.items() if k not in theirs]
        assert mismatches == []
        assert reasons == {("spine1", 1): "", ("spine1", 2): "FDR while both ends support HDR",
                           ("leaf1", 5): "", ("leaf2", 5): "FDR while both ends support HDR",
                           ("leaf1", 6): "1X while both ends support 12X", ("leaf2", 6): "1X while both ends support 12X",
                           ("leaf1", 7): "SDR while both ends support QDR",
                           ("leaf2", 7): "SDR while both ends support QDR"}, reasons
        text = metrics(client)
        degraded = re.findall(r'^linkprobe_switch_link_degraded\{([^}]*)\} 1$', text, re.M)
        assert len(degraded) == 6 and any('reason="1X while both ends support 12X"' in d for d in degraded), text
        assert len(re.findall(r'^linkprobe_switch_link_degraded\{[^}]*\} 0$', text, re.M)) == 2, text
        # 12X HDR but for the SDR-only pair (12X QDR: 120 Gb/s).
        best = re.findall(r'^linkprobe_switch_link_best_rate_gbps\{[^}]*\} (\S+)$', text, re.M)
        assert sorted(best) == ["120"] * 2 + ["600"] * 6, best
        out = lp.ctl(bus, "switches", "--no-pager", check=True, env={"COLUMNS": "200"}).stdout
        assert "1X while both ends support 12X" in out, out
    finally:
        client.close()
        if d:
            d.stop()
        fabric.stop()


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_degraded_switch_links_verify_and_alert(bus, tmp_path):
    """The daemon sweeping NET_DEGRADED: `linkprobectl fabric` from it carries the judgement of every
    switch-to-switch cable (json, the table's notes), `fabric topology` writes LinkSpeed from what the cables
    could do, and `fabric verify` says each degraded cable between the tree's switches, one line each, exit
    1; the real Prometheus scraping the same daemon holds LinkprobeSwitchLinkDegraded for each degraded
    end with the labels the exporter wrote, and `fabric verify --prometheus` says what the daemon said."""
    if not os.access("/usr/bin/prometheus", os.X_OK):
        pytest.skip("no Prometheus server installed (Debian package prometheus)")
    fabric = Fabric(NET_DEGRADED)
    metrics_port, prometheus_port = free_port(), free_port()
    d, prom = None, None
    client = lp.Client(bus)
    try:
        d = daemon(fabric, bus, config=f"[Fabric]\nSweep=yes\n[Metrics]\nListenAddress=127.0.0.1:{metrics_port}\n")
        assert settle(client, lambda p: len(p[1]) == 8, refreshing=False), d.log()[-3000:]
        doc = json.loads(lp.ctl(bus, "fabric", "--json=short", check=True).stdout)
        names = {s["Key"]: s["Name"] for s in doc["Switches"]}
        cables = {frozenset({(names[link["From"]], link["FromPort"]), (names[link["To"]], link["ToPort"])}):
                  (link["BestGbps"], link["Degraded"], link["DegradedReason"]) for link in doc["SwitchLinks"]}
        assert cables == {frozenset({("leaf1", "5"), ("spine1", "1")}): (600, False, None),
                          frozenset({("leaf1", "6"), ("leaf2", "6")}): (600, True, "1X while both ends support 12X"),
                          frozenset({("leaf1", "7"), ("leaf2", "7")}): (120, True, "SDR while both ends support QDR"),
                          frozenset({("leaf2", "5"), ("spine1", "2")}): (600, True, "FDR while both ends support HDR")}, \
            cables
        table = lp.ctl(bus, "fabric", "--no-pager", check=True, env={"COLUMNS": "200"}).stdout
        assert "Degraded switch cables:" in table and table.count("both ends could do") == 3, table

        conf = lp.ctl(bus, "fabric", "topology", check=True).stdout
        # leaf2's cables down to leaf1 run at 50 (1X HDR) and 30 Gb/s (12X SDR), could do 600 and 120.
        assert re.search(r"^SwitchName=leaf2 Switches=leaf1 LinkSpeed=600$", conf, re.M), conf
        path = tmp_path / "topology.conf"
        path.write_text(conf)
        out = lp.ctl(bus, "fabric", "verify", f"--slurm={path}", check=False)
        lines = sorted(out.stdout.splitlines())
        assert out.returncode == 1 and len(lines) == 3, out.stdout + out.stderr
        for line, rate, reason in zip(lines, ("50 Gb/s (1X HDR) while both ends could do 600 Gb/s",
                                              "30 Gb/s (12X SDR) while both ends could do 120 Gb/s",
                                              "168 Gb/s (12X FDR) while both ends could do 600 Gb/s"),
                                      ("1X while both ends support 12X", "SDR while both ends support QDR",
                                       "FDR while both ends support HDR")):
            assert line.startswith("switch link ") and f": degraded, {rate} ({reason})" in line, lines
        assert "3 differences" in out.stderr

        config = tmp_path / "prometheus.yml"
        config.write_text("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                          f"rule_files: [{pq.RULES!r}]\n"
                          "scrape_configs:\n  - job_name: linkprobe\n"
                          f"    static_configs:\n      - targets: ['127.0.0.1:{metrics_port}']\n")
        prom = subprocess.Popen(["/usr/bin/prometheus", f"--config.file={config}", f"--storage.tsdb.path={tmp_path}/data",
                                 f"--web.listen-address=127.0.0.1:{prometheus_port}"],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = f"http://127.0.0.1:{prometheus_port}"

        def held():
            try:
                with urllib.request.urlopen(f"{url}/api/v1/alerts", timeout=10) as answer:
                    alerts = json.load(answer)["data"]["alerts"]
            except (OSError, ValueError):
                return None
            mine = [a["labels"] for a in alerts if a["labels"]["alertname"] == "LinkprobeSwitchLinkDegraded"]
            return mine if len(mine) == 6 else None
        alerts = wait_until(held, 60, interval=0.5)
        assert alerts, f"Prometheus never held LinkprobeSwitchLinkDegraded for the 6 degraded ends: {held()}"
        ends = sorted((a["switch_name"], a["port"], a["reason"]) for a in alerts)
        assert ends == [("leaf1", "6", "1X while both ends support 12X"), ("leaf1", "7", "SDR while both ends support QDR"),
                        ("leaf2", "5", "FDR while both ends support HDR"), ("leaf2", "6", "1X while both ends support 12X"),
                        ("leaf2", "7", "SDR while both ends support QDR"),
                        ("spine1", "2", "FDR while both ends support HDR")], ends
        # No other alert of the file is held: the fine cable's series is 0.
        assert {a["severity"] for a in alerts} == {"warning"}
        out = lp.run([lp.CTL, "fabric", "verify", f"--slurm={path}", f"--prometheus={url}"], check=False)
        assert out.returncode == 1 and sorted(out.stdout.splitlines()) == lines, out.stdout + out.stderr
    finally:
        if prom:
            lp.stop_process(prom, 10)
        client.close()
        if d:
            d.stop()
        fabric.stop()


def test_probe_walks_each_subnet_once(fabric):
    """The probe walks from each subnet's first port (ibsim gives a client one CA with one port: one walk;
    the choice among several is tests/unit/test-fabric-subnets.c's), and prints where it started."""
    proc = lp.run([PROBE, "--outstanding-smps", "4"], env={**os.environ, **fabric.env(HOST)}, cwd=fabric.dir,
                  check=True)
    doc = json.loads(proc.stdout)
    assert doc["subnets"] == [{"ca": "ibsim0", "port": 1, "switches": 3}], doc["subnets"]
    assert doc["subnets_not_walked"] == 0 and doc["total_switches"] == 3
    assert all("cap_info" in s and len(s["cap_info"]) == 128 for s in doc["switches"]), doc


def test_link_down_goes_at_the_next_sweep(fabric, bus):
    d = daemon(fabric, bus)
    client = lp.Client(bus)
    try:
        assert settle(client, lambda p: len(p[1]) == 6, refreshing=False), d.log()[-3000:]
        fabric.console('Unlink "leaf2"[6]')
        got = settle(client, lambda p: len(p[1]) == 4)
        assert got, f"the link stayed: {published(client)[1]}\n{d.log()[-3000:]}"
        _, theirs = ibnetdiscover(fabric)
        assert got[1] == theirs
        assert len(got[0]) == 3
    finally:
        client.close()
        d.stop()


def test_sweep_off_publishes_no_swept_switch(fabric, bus):
    d = daemon(fabric, bus, config="")
    client = lp.Client(bus)
    try:
        # The neighbour query still names our leaf; nothing else comes.
        assert wait_until(lambda: published(client)[2], 15), d.log()[-3000:]
        time.sleep(1)
        switches, links, objects = published(client)
        assert switches == {} and links == {}
        assert [s["Source"] for s in objects.values()] == [["infiniband"]]
        assert [s["Links"] for s in objects.values()] == [[]]
        assert "linkprobe_switch_link_info{" not in metrics(client)
        assert "linkprobe-probe-fabric" not in d.log()
    finally:
        client.close()
        d.stop()


def test_failed_sweep_keeps_the_last_result(fabric, bus):
    d = daemon(fabric, bus)
    client = lp.Client(bus)
    try:
        first = settle(client, lambda p: len(p[1]) == 6, refreshing=False)
        assert first, d.log()[-3000:]
        # The spine drops every MAD: the walk times out there, mid-sweep.
        fabric.console('Error "spine1" 100')
        assert wait_until(lambda: refresh(client) or "Fabric sweep failed, keeping the last complete result"
                          in d.log(), 20), d.log()[-3000:]
        assert "got no answer from their far end" in d.log()
        assert published(client)[:2] == first[:2]
        fabric.console('Error "spine1" 0')
        assert wait_until(lambda: refresh(client) or "Fabric sweep works again" in d.log(), 20), d.log()[-3000:]
        assert published(client)[:2] == first[:2]
    finally:
        client.close()
        d.stop()


def test_sweep_past_its_deadline_keeps_the_last_result(fabric, bus, tmp_path):
    """The walk hangs (a stand-in for the probe that sleeps once a file exists): killed at SweepTimeoutSec=
    plus the grace, the last complete result stays, and the next sweep that finishes replaces it."""
    probe = tmp_path / "linkprobe-probe-fabric"
    hang = tmp_path / "hang"
    probe.write_text(f"#!/bin/sh\n[ -e {hang} ] && exec sleep 60\nexec {PROBE} \"$@\"\n")
    probe.chmod(0o755)
    d = lp.Daemon(bus, env={**fabric.env(HOST), "LINKPROBE_PROBE_DIR": str(tmp_path)},
                  prefix=["env", "-C", fabric.dir], args=["--log-level=debug"],
                  config="[Fabric]\nSweep=yes\nSweepTimeoutSec=1\n")
    client = lp.Client(bus)
    try:
        first = settle(client, lambda p: len(p[1]) == 6, refreshing=False)
        assert first, d.log()[-3000:]
        hang.touch()
        fabric.console('Unlink "leaf2"[6]')
        assert wait_until(lambda: refresh(client) or "Fabric sweep failed, keeping the last complete result"
                          in d.log(), 20), d.log()[-3000:]
        assert "timeout" in d.log()
        assert published(client)[:2] == first[:2]
        hang.unlink()
        got = settle(client, lambda p: len(p[1]) == 4)
        assert got, d.log()[-3000:]
        assert "Fabric sweep works again" in d.log()
    finally:
        client.close()
        d.stop()


def test_fabric_bigger_than_the_cap(fabric, bus):
    d = daemon(fabric, bus, config="[Fabric]\nSweep=yes\nMaxSwitches=2\n")
    client = lp.Client(bus)
    try:
        assert wait_until(lambda: "The fabric has 3 switches: publishing the first 2" in d.log(), 20), d.log()[-3000:]
        time.sleep(0.5)
        switches, _, objects = published(client)
        assert len(switches) == 2
        # Our own leaf is there whether the sweep kept it or not (the neighbour query names it).
        assert any(s["Description"] == "leaf1" for s in objects.values())
        assert len(objects) <= 3
    finally:
        client.close()
        d.stop()


@pytest.mark.parametrize("line, why", [
    ("Sweep=maybe", "expected yes or no"),
    ("SweepIntervalSec=5", "expected whole seconds from 10s to 86400s"),
    ("SweepIntervalSec=2days", "expected whole seconds from 10s to 86400s"),
    ("SweepTimeoutSec=0", "expected whole seconds from 1s to 3600s"),
    ("MaxSwitches=0", "expected a number of switches from 1 to 8192"),
    ("MaxSwitches=100000", "expected a number of switches from 1 to 8192"),
    ("OutstandingSmps=0", "expected a number of SMPs from 1 to 64"),
    ("OutstandingSmps=65", "expected a number of SMPs from 1 to 64"),
])
def test_bad_fabric_values_are_refused(tmp_path, line, why):
    conf = tmp_path / "fabric.conf"
    conf.write_text(f"# comment\n[Fabric]\n{line}\n")
    proc = lp.run([lp.DAEMON, f"--config={conf}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78
    assert f"{conf}:3:" in proc.stderr and why in proc.stderr and "[Fabric]" in proc.stderr
