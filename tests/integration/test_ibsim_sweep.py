# SPDX-License-Identifier: LGPL-2.1-or-later
"""The subnet sweep ([Fabric] Sweep=yes) against a simulated fabric: ibsim runs two leaf switches, one
spine and four CAs (a 1X cable between the leaves); linkprobed, attached to one CA, walks the subnet with
linkprobe-probe-fabric (libibnetdisc) and must publish every switch and every switch-to-switch link
ibnetdiscover (infiniband-diags) prints on the same fabric in the same test: mismatches 0. Then a link
taken down in ibsim's console goes at the next sweep, a sweep that times out mid-walk (a spine that drops
every MAD) or runs past its deadline keeps the last complete result and says so, a fabric bigger than [Fabric] MaxSwitches= is
published up to the cap with a warning, Sweep=no publishes no swept switch, and bad [Fabric] values are
refused with their line and reason.

ibsim delivers no port event to a client that is not the subnet manager: the tests trigger the next
sweep with Refresh(), the call that stands in for the port events of real hardware."""

import os
import re
import time

import pytest

import lp
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
])
def test_bad_fabric_values_are_refused(tmp_path, line, why):
    conf = tmp_path / "fabric.conf"
    conf.write_text(f"# comment\n[Fabric]\n{line}\n")
    proc = lp.run([lp.DAEMON, f"--config={conf}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78
    assert f"{conf}:3:" in proc.stderr and why in proc.stderr and "[Fabric]" in proc.stderr
