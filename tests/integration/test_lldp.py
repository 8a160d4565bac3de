# SPDX-License-Identifier: LGPL-2.1-or-later
"""LLDP (issue 26): lldpd plays the switch in a namespace at the far end of a veth; linkprobed, beside
another lldpd on its own side, must see what that lldpd sees (lldpcli show neighbors), lose the switch at
its shutdown LLDPDU or at its TTL, and survive bad frames and floods sent with a raw socket."""

import json
import os
import shutil
import signal
import struct
import subprocess
import tempfile
import time

import pytest

import lp
from lldp_net import frame, send_frames, tlv

LLDPD = shutil.which("lldpd") or "/usr/sbin/lldpd"
LLDPCLI = shutil.which("lldpcli") or "/usr/sbin/lldpcli"
SWITCH = lp.IFACE + "Switch"
LINK = lp.IFACE + "Link"

pytestmark = pytest.mark.skipif(not os.access(LLDPD, os.X_OK), reason="lldpd is not installed (Debian package lldpd)")


class Lldpd:
    """lldpd on one interface of a namespace, with a control socket and no configuration of the machine's."""

    def __init__(self, ns, ifname, extra=()):
        self.dir = tempfile.mkdtemp(prefix="lp-lldpd-")
        # lldpd serves its socket from its unprivileged half, which must reach it.
        os.chmod(self.dir, 0o755)
        self.sock = os.path.join(self.dir, "ctl")
        conf = os.path.join(self.dir, "empty.conf")
        open(conf, "w").close()
        # lldpd chroots its unprivileged half there; the package's tmpfiles make it at boot.
        os.makedirs("/run/lldpd", exist_ok=True)
        self.log_path = os.path.join(self.dir, "log")
        self.log = open(self.log_path, "w")
        self.proc = subprocess.Popen(ns.exec_cmd([LLDPD, "-d", "-u", self.sock, "-I", ifname, "-O", conf, *extra]),
                                     stdout=self.log, stderr=subprocess.STDOUT)
        lp.wait_for(lambda: os.path.exists(self.sock) or self.proc.poll() is not None, timeout=20,
                    what="lldpd's control socket")
        if self.proc.poll() is not None:
            raise RuntimeError(f"lldpd exited: {open(self.log_path).read()}")
        # Its socket comes before it has found its interface; until then it neither sends nor hears
        # LLDPDUs, and looks again only at its next interval. `update` makes it look now.
        def found():
            if self.proc.poll() is not None:
                raise RuntimeError(f"lldpd exited: {open(self.log_path).read()}")
            if ifname in self.cli("show", "interfaces"):
                return True
            self.cli("update")
            return False
        lp.wait_for(found, timeout=20, interval=0.5, what=f"lldpd to find {ifname}")

    def cli(self, *args):
        return lp.run([LLDPCLI, "-u", self.sock, *args]).stdout

    def neighbors(self):
        """lldpcli show neighbors details -f json: {interface: entry}."""
        data = json.loads(self.cli("show", "neighbors", "details", "-f", "json"))
        interfaces = data.get("lldp", {}).get("interface", {}) if isinstance(data.get("lldp"), dict) else {}
        if isinstance(interfaces, list):  # several interfaces: a list of one-key objects
            merged = {}
            for item in interfaces:
                merged.update(item)
            interfaces = merged
        return interfaces

    def pids(self):
        """lldpd's processes: its privileged monitor and the unprivileged half that speaks LLDP."""
        try:
            with open(f"/proc/{self.proc.pid}/task/{self.proc.pid}/children") as f:
                return [self.proc.pid, *(int(p) for p in f.read().split())]
        except FileNotFoundError:
            return [self.proc.pid]

    def freeze(self):
        """Stops both halves where they are: no more LLDPDUs, and no shutdown LLDPDU either."""
        for pid in self.pids():
            os.kill(pid, signal.SIGSTOP)

    def stop(self, sig=signal.SIGTERM):
        if self.proc.poll() is None:
            for pid in self.pids():
                os.kill(pid, signal.SIGCONT)
        if self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def lldpds_said(*lldpds):
    """What each lldpd counted and logged, for a failure's message."""
    return "\n".join(f"lldpd {i}: {d.cli('show', 'statistics')}\n{open(d.log_path).read()[-2000:]}"
                     for i, d in enumerate(lldpds))


def as_list(v):
    return v if isinstance(v, list) else [] if v is None else [v]


@pytest.fixture
def fabric(netns):
    """netns (the daemon's) and a switch namespace joined by a veth: (switch netns, our ifname, its ifname)."""
    sw = lp.NetNS(lp.unique("lpsw"))
    ours, theirs = lp.unique("lla"), lp.unique("llb")
    try:
        lp.run(["ip", "link", "add", ours, "netns", netns.name, "type", "veth", "peer", "name", theirs,
                "netns", sw.name])
        netns.ip("link", "set", ours, "up")
        sw.ip("link", "set", theirs, "up")
        sw.ip("addr", "add", "192.0.2.7/24", "dev", theirs)
        yield sw, ours, theirs
    finally:
        sw.delete()


def switches(client):
    return {path: props[SWITCH] for path, props in client.objects().items() if SWITCH in props}


def start_switch(sw, theirs, name, ttl_hold=30):
    switch = Lldpd(sw, theirs, ["-S", "Test Switch OS 4.2", "-m", "192.0.2.7"])
    try:
        switch.cli("configure", "lldp", "tx-interval", "1")
        switch.cli("configure", "lldp", "tx-hold", str(ttl_hold))
        switch.cli("configure", "ports", theirs, "lldp", "portdescription", "Eth1/7 to node7")
        switch.cli("configure", "system", "capabilities", "enabled", "bridge,router")
        # Last: the tests wait for this name, and then find everything else as configured.
        switch.cli("configure", "system", "hostname", name)
        # lldpd can take commands before it has found its interface and lose them (its first LLDPDU then
        # still names the machine, and the next comes at the default 30 s): until its chassis says the
        # name, configure again; then send at once.
        def configured():
            if name in switch.cli("show", "chassis"):
                return True
            switch.cli("configure", "lldp", "tx-interval", "1")
            switch.cli("configure", "lldp", "tx-hold", str(ttl_hold))
            switch.cli("configure", "ports", theirs, "lldp", "portdescription", "Eth1/7 to node7")
            switch.cli("configure", "system", "capabilities", "enabled", "bridge,router")
            switch.cli("configure", "system", "hostname", name)
            return False
        lp.wait_for(configured, timeout=20, interval=1, what="lldpd to take its configuration")
        switch.cli("update")
    except BaseException:
        switch.stop()
        raise
    return switch


def test_switch_as_lldpd_sees_it(bus, client, netns, fabric):
    sw, ours, theirs = fabric
    name = lp.unique("leaf")
    daemon = lp.Daemon(bus, netns=netns)
    local = switch = None
    try:
        # An lldpd on our side too: both receive the same frames, neither takes them from the other.
        local = Lldpd(netns, ours)
        switch = start_switch(sw, theirs, name)
        lp.wait_for(lambda: ours in local.neighbors(), timeout=20, interval=0.5,
                    what=lambda: f"the local lldpd's neighbour; {lldpds_said(local, switch)}")
        lp.wait_for(lambda: any(s["Name"] == name for s in switches(client).values()), timeout=20,
                    what="the Switch object")
        # What lldpcli shows, field by field (it sees the switch's last frame, as we do).
        entry = local.neighbors()[ours]
        (chassis_name, chassis), = entry["chassis"].items()
        (path, s), = switches(client).items()
        link = client.link_by_name(ours)
        assert s["Source"] == ["lldp"]
        assert s["Name"] == chassis_name == name
        assert s["ChassisId"] == chassis["id"]["value"]
        assert s["Description"] == chassis["descr"] == "Test Switch OS 4.2"
        assert s["NodeGuid"] == ""
        enabled = sorted(c["type"].lower() for c in as_list(chassis.get("capability")) if c["enabled"])
        assert sorted(s["Capabilities"]) == enabled == ["bridge", "router"]
        assert s["ManagementAddresses"] == as_list(chassis.get("mgmt-ip")) == ["192.0.2.7"]
        assert s["Ports"] == [(link["Path"], entry["port"]["id"]["value"], entry["port"]["descr"])]
        assert entry["port"]["descr"] == "Eth1/7 to node7"
        assert abs(s["LastSeen"] / 1e6 - time.time()) < 10
        assert link["Switch"] == path
        assert link["LldpWarning"] == ""
        # lldpd on a veth says 10GbaseT, no autonegotiation: the partner runs at 10 Gb/s.
        assert "10GbaseT" in entry["port"]["auto-negotiation"]["current"]
        assert link["LldpPartnerSpeedsMbps"] == [10000]
        # A veth hears no partner by autonegotiation: the switch port's word stands in for it; a veth has
        # no link modes of its own, so nothing is judged from it.
        lp.wait_for(lambda: client.link_by_name(ours)["PartnerSpeedsMbps"] == [10000], timeout=5,
                    what="PartnerSpeedsMbps from the switch port's LLDP")
        assert client.link_by_name(ours)["DegradedReason"] == "unknown: the driver reports no link modes"
        # linkprobectl: switches and its alias lldp, --json, show and list.
        out = lp.ctl(bus, "switches", "--no-pager", env={"COLUMNS": "200"}, check=True).stdout
        lines = out.splitlines()
        assert lines[0].split()[:3] == ["NAME", "CHASSIS", "ID"]
        assert name in lines[1] and s["ChassisId"] in lines[1] and f"{ours}:{s['Ports'][0][1]}" in lines[1]
        assert "Eth1/7 to node7" in lines[1] and "bridge,router" in lines[1] and "192.0.2.7" in lines[1]
        (doc,) = json.loads(lp.ctl(bus, "lldp", "--json", check=True).stdout)
        assert doc["Name"] == name and doc["Path"] == path
        assert doc["Ports"] == [{"Object": link["Path"], "PortId": s["Ports"][0][1],
                                 "PortDescription": "Eth1/7 to node7"}]
        out = lp.ctl(bus, "show", ours, "--no-pager", check=True).stdout
        assert f"Switch port: {name} port {s['Ports'][0][1]} (Eth1/7 to node7), management 192.0.2.7" in out
        assert "Switch port speeds: 10 Gb/s" in out
        out = lp.ctl(bus, "list", "--no-pager", env={"COLUMNS": "200"}, check=True).stdout
        assert "SWITCH PORT" in out.splitlines()[0]
        assert f"{name} {s['Ports'][0][1]}" in next(line for line in out.splitlines() if f" {ours} " in line)
        # Metrics: the switch port joins linkprobe_link_info by device.
        metrics = lp.ctl(bus, "metrics", check=True).stdout
        assert (f'linkprobe_link_switch_info{{device="{ours}",chassis_id="{s["ChassisId"]}",'
                f'port_id="{s["Ports"][0][1]}",switch_name="{name}"}} 1') in metrics

        # What the switch owns changes: the name follows at its next frame.
        switch.cli("configure", "system", "hostname", name + "x")
        lp.wait_for(lambda: switches(client)[path]["Name"] == name + "x", timeout=10, what="the new name")

        # lldpd sends a shutdown LLDPDU (TTL 0) when it stops: gone at once, long before its TTL (30 s).
        stopped = time.monotonic()
        switch.stop()
        switch = None
        lp.wait_for(lambda: not switches(client), timeout=8, what="the switch gone at its shutdown LLDPDU")
        assert time.monotonic() - stopped < 8
        assert client.link_by_name(ours)["Switch"] == "/"
        assert client.link_by_name(ours)["LldpPartnerSpeedsMbps"] == []
        assert daemon.proc.poll() is None
    finally:
        if switch:
            switch.stop()
        if local:
            local.stop()
        daemon.stop()


def test_switch_expires_at_ttl(bus, client, netns, fabric):
    sw, ours, theirs = fabric
    daemon = lp.Daemon(bus, netns=netns)
    name = lp.unique("leaf")
    switch = start_switch(sw, theirs, name, ttl_hold=3)
    try:
        # Its name is configured last: a frame with it has the short TTL (lldpd's first ones have 120 s).
        lp.wait_for(lambda: any(s["Name"] == name for s in switches(client).values()), timeout=20,
                    what="the Switch object with its short TTL")
        # Frozen: no shutdown LLDPDU, so only the TTL (3 s) takes it away.
        killed = time.monotonic()
        switch.freeze()
        lp.wait_for(lambda: not switches(client), timeout=10, what="the switch gone at its TTL")
        assert 2.0 <= time.monotonic() - killed < 10
    finally:
        if switch:
            switch.stop()
        daemon.stop()


def test_bad_frames_and_floods(bus, client, netns, fabric):
    sw, ours, theirs = fabric
    daemon = lp.Daemon(bus, netns=netns)
    try:
        bad = [
            frame(b"\x04\x00\x11\x22\x33\x44\x55")[:20],                      # cut in a TLV
            bytes.fromhex("0180c200000e021122334455") + b"\x88\xcc" + tlv(2, b"\x05p1"),  # no chassis
            frame(b"\x04\x00\x11\x22\x33\x44\x55", extra=tlv(1, b"\x07dup")),  # repeated chassis
            frame(b"\x00bad subtype"),
            frame(b"\x07x", ttl=120)[:-2] + struct.pack("!H", 0x1ff),          # length past the end
        ]
        send_frames(sw, theirs, bad)
        assert daemon.wait_log("Ignoring an LLDP frame", timeout=10), daemon.log()
        assert not switches(client)
        # A good LLDPDU to a unicast address is no LLDP of ours (the socket's filter drops it).
        send_frames(sw, theirs, [frame(b"\x07unicast", dst=bytes.fromhex("020000000001"))])
        time.sleep(1)
        assert not switches(client)

        # A frame that lives 2 s: there, then gone at its TTL.
        send_frames(sw, theirs, [frame(b"\x07short-lived", ttl=2, extra=tlv(5, b"brief"))])
        lp.wait_for(lambda: switches(client), timeout=5, what="the short-lived switch")
        lp.wait_for(lambda: not switches(client), timeout=6, what="the short-lived switch expired")

        # A flood of distinct chassis: bounded per link and rate-limited, each warned of once.
        flood = [frame(b"\x07" + f"chassis-{i}".encode(), extra=tlv(5, f"liar-{i}".encode())) for i in range(400)]
        send_frames(sw, theirs, flood)
        assert daemon.wait_log("LLDP neighbours on this link", timeout=10), daemon.log()
        time.sleep(0.5)
        seen = switches(client)
        assert 0 < len(seen) <= 16
        log = daemon.log()
        assert log.count("LLDP neighbours on this link") == 1
        # The excess was dropped without a word per frame: one warning for the rate as well.
        assert log.count("LLDP frames a second on this link") <= 1
        assert daemon.proc.poll() is None
        # Nothing else was lost: the link is still there and the daemon answers.
        assert client.link_by_name(ours)["Switch"] in seen
    finally:
        daemon.stop()


def test_without_cap_net_raw(bus, client, netns, fabric):
    sw, ours, theirs = fabric
    setpriv = shutil.which("setpriv")
    if not setpriv:
        pytest.skip("setpriv (util-linux) is missing")
    # The capability gone from the bounding set: root without CAP_NET_RAW, as a unit without it runs us.
    daemon = lp.Daemon(bus, netns=netns, prefix=[setpriv, "--bounding-set=-net_raw", "--"])
    switch = start_switch(sw, theirs, lp.unique("leaf"))
    try:
        assert daemon.wait_log("Cannot open a packet socket for LLDP", timeout=5), daemon.log()
        lp.wait_for(lambda: "CAP_NET_RAW" in client.link_by_name(ours)["LldpWarning"], timeout=5,
                    what="the link's LldpWarning")
        time.sleep(2)
        assert not switches(client)
        assert daemon.proc.poll() is None
        assert client.get_all("Manager")["State"] == "running"
        # linkprobectl does not leave it unsaid.
        out = lp.ctl(bus, "switches", "--no-pager", check=True).stdout
        assert "No switches seen." in out and f"{ours}: LLDP is not received" in out
    finally:
        switch.stop()
        daemon.stop()
