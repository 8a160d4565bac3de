# SPDX-License-Identifier: LGPL-2.1-or-later
"""Measured peer paths in the daemon: Peer objects, the reconciler, persistence, ProbePeer/AddPeer/
RemovePeer and who may call them, discovery of link-local neighbours, and the responder the daemon
serves.

Topology (names carry this process's PID; DAD off so link-local addresses work at once):
    PA: a0 10.212.1.1/24  ===veth===  PB: b0 10.212.1.2/24                 (the direct path)
    PA: a1 10.212.2.1/24  ===veth=== PC: br0 (ca, cb) ===veth=== PB: b1 10.212.2.2/24   (via a bridge)
PB runs linkprobed with [Responder] Listen=[::]:7471 on a bus of its own; the daemon under test runs
in PA, probing with short durations so the whole file stays quick.
"""

import json
import os
import re
import shutil
import signal
import time

import pytest
from gi.repository import GLib

import lp
from linkprobe_net import PROBE_TCP, Namespaces, Responder, connect_from, probe, run, wait_listening
from peers_net import (MANAGER, PEER, DirectoryWatch, InNetns, call_as, call_error, peer_path, peers,
                       age_saved_results, published_results, wait_for, wait_peer)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

DIRECT, BRIDGED = "10.212.1.2", "10.212.2.2"
QUICK = "[Reconciler]\nTickSec=100ms\nTcpDurationSec=100ms\nTcpSamples=10\n"
INVALID_ARGS = "org.freedesktop.DBus.Error.InvalidArgs"


@pytest.fixture(scope="module")
def net():
    ns = Namespaces("PA", "PB", "PC")
    b_bus = b_daemon = None
    try:
        a, b, c = ns["PA"], ns["PB"], ns["PC"]
        for name in (a, b, c):
            lp.sysctl(name, "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")
        ns.veth(a, "a0", b, "b0")
        ns.addr(a, "a0", "10.212.1.1/24")
        ns.addr(b, "b0", "10.212.1.2/24")
        ns.ip(c, "link", "add", "br0", "type", "bridge")
        ns.ip(c, "link", "set", "br0", "up")
        ns.veth(a, "a1", c, "ca")
        ns.veth(b, "b1", c, "cb")
        ns.ip(c, "link", "set", "ca", "master", "br0")
        ns.ip(c, "link", "set", "cb", "master", "br0")
        ns.addr(a, "a1", "10.212.2.1/24")
        ns.addr(b, "b1", "10.212.2.2/24")
        # The far end: another linkprobed serving the responder, as a node of the cluster would. The
        # tests probe it back to back (a TTL of 1 s), far above the per-source rate a node's
        # responder allows by default, which is not what they test.
        b_bus = lp.PrivateBus()
        b_daemon = lp.Daemon(b_bus, netns=InNetns(b),
                             config="[Responder]\nListen=[::]:7471\nRatePerSource=1000\nBurstPerSource=1000\n")
        wait_listening(b, DIRECT, 7471)
        wait_listening(b, BRIDGED, 7471)
        yield {"A": a, "B": b, "C": c, "ns": ns, "in_a": InNetns(a), "in_b": InNetns(b), "b_daemon": b_daemon}
    finally:
        if b_daemon:
            b_daemon.stop()
            assert "runtime error:" not in b_daemon.log_text and "Sanitizer" not in b_daemon.log_text, \
                b_daemon.log_text
        if b_bus:
            b_bus.stop()
        ns.close()


def link_local(ns, ifname):
    out = run("ip", "-n", ns, "-j", "addr", "show", "dev", ifname).stdout
    return next(a["local"] for a in json.loads(out)[0]["addr_info"] if a.get("scope") == "link")


def is_measured(p):
    return p["ProbeState"] == "ok" and p["MeasuredAt"] > 0


def test_both_paths_measured_and_keyed(net, client, daemon_factory):
    daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={DIRECT} {BRIDGED}:7471\n" + QUICK)
    direct, bridged = peer_path(f"tcp:{DIRECT}"), peer_path(f"tcp:{BRIDGED}")
    before = time.time()
    p1 = wait_peer(client, direct, is_measured)
    p2 = wait_peer(client, bridged, is_measured)
    assert set(peers(client)) == {direct, bridged}
    # GetManagedObjects is answered from our tables; it must say what sd-bus's GetAll says.
    for path, props in peers(client).items():
        assert client.get_all("Peer", path) == props
    links = {name: client.link_by_name(name) for name in ("a0", "a1")}
    for p, address, source, ifname in ((p1, DIRECT, "10.212.1.1", "a0"), (p2, BRIDGED, "10.212.2.1", "a1")):
        assert p["Address"] == address and p["PeerAddress"] == address and p["Transport"] == "tcp"
        assert p["Origins"] == ["config"]
        assert p["SourceAddress"] == source and p["SourceInterfaceName"] == ifname
        assert p["SourceInterface"] == links[ifname]["Path"]
        assert p["ConnectionType"] == links[ifname]["ConnectionType"] == "Virtual"
        # veth moves gigabits even on a loaded machine; a tenth of one is the floor of plausible.
        assert p["UploadGbps"] > 0.1 and p["DownloadGbps"] > 0.1, p
        assert 0 < p["RttUsec"] < 20000 and p["JitterUsec"] >= 0 and p["JitterRfc3550Usec"] >= 0
        assert p["Stale"] is False and p["TtlSec"] == 300 and p["LastError"] == ""
        assert before - 5 < p["MeasuredAt"] / 1e6 <= time.time()
        # Next time comes before this result goes stale, not long before.
        ttl_end = p["MeasuredAt"] + 300e6
        assert ttl_end - 300e6 / 2 <= p["NextProbeAt"] <= ttl_end
        assert 0 < p["ProbeDurationUsec"] < 3e6
        print(f"{address} via {ifname}: up {p['UploadGbps']:.2f} Gbit/s, down {p['DownloadGbps']:.2f} Gbit/s, "
              f"RTT {p['RttUsec']:.0f} us, probe {p['ProbeDurationUsec'] / 1e6:.2f} s")

    # Summary.BestPeerPaths: one row per peer address with its best measured path.
    best = wait_for(lambda: (lambda rows: rows if len(rows) == 2 else None)(client.get_all("Summary")["BestPeerPaths"]))
    assert best, client.get_all("Summary")
    by_address = {row[0]: row for row in best}
    for address, path in ((DIRECT, direct), (BRIDGED, bridged)):
        row = by_address[address]
        current = client.get_all("Peer", path)
        assert row[1] == path and row[5] is False
        assert (row[2], row[3], row[4]) == (current["UploadGbps"], current["DownloadGbps"], current["RttUsec"])

    # And in the metrics, one series per path, labelled so a cluster-wide min() finds the slowest edge.
    text = lp.ctl(client.bus, "metrics").stdout
    import subprocess
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert f'linkprobe_peer_rtt_seconds{{peer="{DIRECT}",path="tcp:{DIRECT}",transport="tcp",source="a0"}}' in text


def test_ttl_expiry_reprobes(net, client, signals, daemon_factory):
    daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={DIRECT}\n" + QUICK + "TcpTtlSec=1s\n")
    path = peer_path(f"tcp:{DIRECT}")
    results = signals.wait(lambda ev: (lambda r: r if len(r) >= 3 else None)(published_results(ev, path)),
                           timeout=8)
    assert results, published_results(signals.events, path)
    summary = [{k: r[k] for k in ("MeasuredAt", "ProbeDurationUsec", "NextProbeAt", "ProbeState")} for r in results]
    for a, b in zip(results, results[1:]):
        gap = b["MeasuredAt"] - a["MeasuredAt"]
        # MeasuredAt is when a probe started. The next starts once half the TTL has passed, never sooner
        # (reconcile.c, next_probe_after()), on the daemon's own clock: no allowance for load.
        assert gap >= 0.5e6, (gap, summary)
        # And it is due before the TTL runs out, unless the probe itself took longer (two busy CPUs): then
        # it starts as soon as that one ended. A tick and a loaded machine's delays on top.
        assert gap <= max(1e6, a["ProbeDurationUsec"]) + 0.6e6, (gap, summary)


def test_probed_once_then_stale(net, client, signals, daemon_factory):
    """An address only ProbePeer() asked for is measured once and then left to go stale.

    MeasuredAt is when the probe started and the TTL counts from there, so a result that took longer than
    its TTL is rightly stale when it arrives; on two busy CPUs a probe here took over a second. The TTL is
    therefore longer than the daemon lets the probe run (its deadline: twice the 100 ms duration and 3 s,
    with one stream no ramp): every result it can publish is fresh when it arrives, busy machine or not."""
    ttl_s = 4
    daemon_factory(netns=net["in_a"], config=QUICK + f"TcpStreams=1\nTcpTtlSec={ttl_s}s\n")
    (adhoc,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (BRIDGED, {}))
    assert adhoc == peer_path(f"tcp:{BRIDGED}")
    results = signals.wait(lambda ev: published_results(ev, adhoc))
    assert results, signals.events
    # What the daemon said when the result came in: fresh, and not scheduled again.
    (p,) = results
    assert p["ProbeState"] == "ok" and p["Stale"] is False and p["NextProbeAt"] == 0, p
    assert p["ProbeDurationUsec"] < ttl_s * 1e6, p
    now = wait_peer(client, adhoc, is_measured)
    assert now["Origins"] == ["probed"] and now["MeasuredAt"] == p["MeasuredAt"]
    stale = wait_peer(client, adhoc, lambda q: q["Stale"], timeout=ttl_s + 3)
    assert stale["MeasuredAt"] == p["MeasuredAt"] and stale["ProbeState"] == "ok" and stale["NextProbeAt"] == 0
    # Stale when its TTL is over, not before (the same clock: CLOCK_REALTIME).
    assert time.time() - p["MeasuredAt"] / 1e6 >= ttl_s - 0.001
    assert len(published_results(signals.events, adhoc)) == 1  # measured once


def test_restart_restores_results(net, client, signals, daemon_factory, tmp_path):
    state = str(tmp_path / "state")
    config = f"[Peers]\nAddress={DIRECT}\n" + QUICK
    direct, added = peer_path(f"tcp:{DIRECT}"), peer_path(f"tcp:{BRIDGED}")

    first = daemon_factory(netns=net["in_a"], config=config, state_dir=state)
    client.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (BRIDGED,))
    old = {path: wait_peer(client, path, is_measured) for path in (direct, added)}
    assert old[added]["Origins"] == ["added"]
    assert first.stop() == 0
    with open(os.path.join(state, "peers.json")) as f:
        saved = json.load(f)
    assert saved["version"] == 1 and saved["added"] == [BRIDGED] and len(saved["paths"]) == 2

    # Same TTL: the results come back as they were, fresh, and are not measured again yet.
    second = daemon_factory(netns=net["in_a"], config=config, state_dir=state)
    now = peers(client)
    for path in (direct, added):
        for key in ("MeasuredAt", "UploadGbps", "DownloadGbps", "RttUsec", "SourceInterfaceName", "ProbeState"):
            assert now[path][key] == old[path][key], (path, key)
        assert now[path]["Stale"] is False
    assert now[added]["Origins"] == ["added"]

    # A shorter TTL the results have outlived: republished stale (its InterfacesAdded says so, with the
    # old result), then measured again. The TTL is longer than the daemon lets this probe run (its deadline:
    # 2 x 100 ms + 3 s, and the ramp's 1.36 s), so the new result is fresh when it comes in however long
    # the probe took on busy CPUs; the saved results are made older than it rather than waited for.
    assert second.stop() == 0
    ttl_s = 6
    aged = age_saved_results(state, ttl_s + 2)
    daemon_factory(netns=net["in_a"], config=config + f"TcpTtlSec={ttl_s}s\n", state_dir=state)

    def republished(ev, measured_at, stale):
        return [e for e in ev if e[3] == "InterfacesAdded" and e[4][0] == direct and
                e[4][1][PEER]["MeasuredAt"] == measured_at and e[4][1][PEER]["Stale"] is stale]
    assert signals.wait(lambda ev: republished(ev, aged[direct], True))
    assert len(republished(signals.events, old[direct]["MeasuredAt"], False)) == 1  # the second daemon's, fresh
    # What the daemon published when the new result came in (from its signals: a poll may come late).
    new = signals.wait(lambda ev: [r for r in published_results(ev, direct)
                                   if r["MeasuredAt"] > old[direct]["MeasuredAt"]])
    assert new, published_results(signals.events, direct)
    assert new[0]["ProbeState"] == "ok" and new[0]["Stale"] is False, new[0]


def daemon_pid_under(tracer):
    """The daemon's PID when it runs under strace: strace's only child (ip netns exec execs, never forks)."""
    with open(f"/proc/{tracer.pid}/task/{tracer.pid}/children") as f:
        children = f.read().split()
    assert len(children) == 1, children
    return int(children[0])


def daemon_state(pid):
    """The state letter of /proc/PID/stat (R, S, t, Z, ...), or None when the process is gone."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return None


@pytest.mark.skipif(not shutil.which("strace"), reason="strace is not installed (make deps installs it)")
def test_kill9_during_save_leaves_a_readable_file(net, client, daemon_factory, tmp_path):
    """A save interrupted by kill -9 leaves the last complete file. The moment is made, not waited for:
    the second daemon runs under strace, which holds its fchmod() for a minute. write_file_atomic_at()
    calls fchmod() once the temporary file is written and before the rename, and nothing else this
    daemon does calls it, so the first save stops exactly there; the test kills it then."""
    state = tmp_path / "state"
    state.mkdir()
    config = f"[Peers]\nAddress={DIRECT}\n" + QUICK

    # A first, complete save to fall back on.
    daemon = daemon_factory(netns=net["in_a"], config=config, state_dir=str(state))
    wait_peer(client, peer_path(f"tcp:{DIRECT}"), is_measured)
    wait_for(lambda: (state / "peers.json").exists())
    daemon.stop()
    saved = (state / "peers.json").read_bytes()
    assert json.loads(saved)["paths"], saved

    # The same node, probing again, frozen in the middle of its next save.
    held = ["strace", "-qq", "-f", "-o", "/dev/null", "-e", "trace=fchmod", "-e",
            "inject=fchmod:delay_enter=60000000"]
    tracer = daemon_factory(netns=net["in_a"], config=config + "TcpTtlSec=10ms\n", state_dir=str(state),
                            prefix=held)

    def written_and_held():
        for name in os.listdir(state):
            if name.startswith(".#peers.json."):
                try:
                    return json.loads((state / name).read_bytes())["version"] == 1
                except (OSError, ValueError):
                    return False  # still being written
        return False

    wait_for(written_and_held, timeout=30, what="a save held between its write and its rename")
    pid = daemon_pid_under(tracer.proc)
    os.kill(pid, signal.SIGKILL)
    # A traced process dies of SIGKILL once its tracer lets go: strace is killed too (it may also be
    # tracing a probe the daemon had started), and the daemon is gone, or a zombie, soon after.
    tracer.proc.kill()
    tracer.proc.wait(10)
    wait_for(lambda: daemon_state(pid) in (None, "Z", "X"), what=lambda: f"the daemon killed ({daemon_state(pid)})")
    assert (state / "peers.json").read_bytes() == saved, "the interrupted save reached the file"
    assert [f for f in os.listdir(state) if f.startswith(".#peers.json.")], "the interrupted save left nothing?"

    # The next start reads the file without complaint and cleans up after the crash.
    daemon = daemon_factory(netns=net["in_a"], config=config, state_dir=str(state))
    wait_for(lambda: peer_path(f"tcp:{DIRECT}") in peers(client))
    wait_for(lambda: not [f for f in os.listdir(state) if f.startswith(".#peers.json.")])
    assert "Ignoring" not in daemon.log() and "ignored" not in daemon.log()


def test_corrupt_state_file_is_set_aside(net, client, daemon_factory, tmp_path):
    state = tmp_path / "state"
    state.mkdir()
    (state / "peers.json").write_bytes(b'{"version": 1, "paths": [{"transport": "tcp", "addr')
    daemon = daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={DIRECT}\n" + QUICK, state_dir=str(state))
    wait_peer(client, peer_path(f"tcp:{DIRECT}"), is_measured)
    assert "Ignoring peers.json" in daemon.log() and (state / "peers.json.corrupt").exists()
    assert json.loads((state / "peers.json").read_text())["version"] == 1
    daemon.stop()

    # Valid JSON, hostile content: each bad entry is skipped, the good one kept.
    good = json.loads((state / "peers.json").read_text())["paths"][0]
    bad_entries = [{"transport": "udp", "address": DIRECT, "peer": DIRECT, "state": "ok"},
                   dict(good, address="host.example.org"), dict(good, address="x" * 10000),
                   dict(good, peer=None), dict(good, transport="rdma", source_device="../../etc", source_port=1),
                   dict(good, state="exploded"), 42, "string", None]
    (state / "peers.json").write_text(json.dumps({"version": 1, "added": ["10.0.0.1", "127.1", 7, "fe80::1%/x"],
                                                  "paths": [*bad_entries, dict(good, upload_gbps=-1e308)]}))
    daemon = daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={DIRECT}\n" + QUICK + "TcpTtlSec=1h\n",
                            state_dir=str(state))
    # Results are restored just after READY=1.
    wait_for(lambda: "ignored 12 entries that are not valid" in daemon.log())
    objects = peers(client)
    assert objects[peer_path(f"tcp:{DIRECT}")]["UploadGbps"] == 0
    assert objects[peer_path("tcp:10.0.0.1")]["Origins"] == ["added"]


def test_unwritable_state_directory_keeps_results_in_memory(net, client, daemon_factory, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("not a directory\n")
    daemon = daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={DIRECT}\n" + QUICK,
                            state_dir=str(blocker / "state"))
    client.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (BRIDGED,))
    for path in (peer_path(f"tcp:{DIRECT}"), peer_path(f"tcp:{BRIDGED}")):
        wait_peer(client, path, is_measured)
    assert "Cannot create the state directory" in daemon.log()
    assert daemon.log().count("Cannot create the state directory") == 1  # said once, not per save
    assert client.get_all("Manager")["State"] == "running"


BAD_ADDRESSES = [
    ("", "no address given"),
    ("not-an-address", "host names are not supported"),
    ("peer.example.org:7471", "host names are not supported"),
    ("127.1", "host names are not supported"),
    ("10.212.1.2:0", "port"),
    ("10.212.1.2:99999", "port"),
    ("10.212.1.2 ", "spaces"),
    ("10.212.1.2\x07", "control characters"),
    ("1" * 100000, "too long"),
    ("\u00e9\u00e9\u00e9", "non-ASCII"),
    ("fe80::1%", "empty zone"),
    ("fe80::1%%a0", "not an interface name"),
    ("fe80::1%a0%a0", "not an interface name"),
    ("fe80::1%../etc", "not an interface name"),
    ("fe80::1%../../etc/passwd", "longer than any interface name"),
    ("fe80::1%" + "a" * 300, "too long"),
    ("fe80::1%" + "a" * 20, "longer than any interface name"),
    ("fe80::1%nosuchif0", "no interface has the name"),
    ("10.212.1.2%a0", "only on IPv6 link-local"),
    ("2001:db8::1%a0", "only on IPv6 link-local"),
    ("[10.212.1.2]:7471", "brackets are for IPv6"),
    ("0.0.0.0", "unspecified"),
    ("::", "unspecified"),
    ("224.0.0.1", "multicast"),
    ("ff02::1", "multicast"),
    ("ff02::1%a0", "only on IPv6 link-local"),
    ("255.255.255.255", "broadcast"),
    ("::ffff:10.212.1.2", "IPv4-mapped"),
]


def test_bad_input(net, client, daemon_factory):
    daemon = daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={DIRECT}\n" + QUICK)
    for address, why in BAD_ADDRESSES:
        for method, signature, args in (("ProbePeer", "(sa{sv})", (address, {})), ("AddPeer", "(s)", (address,))):
            name, message = call_error(client, method, signature, args)
            assert name == INVALID_ARGS and "Invalid peer address" in message and why in message, \
                (method, address[:40], message)
            assert len(message) < 300
    v = GLib.Variant
    for options, why in (({"Frobnicate": v("s", "x")}, "Unknown option \"Frobnicate\""),
                         ({"Transport": v("u", 1)}, "must be of type s"),
                         ({"Transport": v("s", "udp")}, "\"tcp\" or \"rdma\""),
                         ({"DurationUsec": v("u", 100)}, "must be of type t"),
                         ({"DurationUsec": v("t", 1)}, "from 10000"),
                         ({"Samples": v("u", 0)}, "from 1 to 10000"),
                         ({"Interface": v("s", "a0")}, "link-local addresses only"),
                         ({"Device": v("s", "mlx5_0")}, "Transport \"rdma\" only"),
                         ({"Streams": v("u", 9)}, "from 0 (as many as raise goodput) to 8"),
                         ({"Streams": v("i", 2)}, "must be of type u"),
                         ({"Streams": v("u", 2), "Transport": v("s", "rdma")}, "Transport \"tcp\" only")):
        name, message = call_error(client, "ProbePeer", "(sa{sv})", (DIRECT, options))
        assert name == INVALID_ARGS and why in message, (options, message)
    name, message = call_error(client, "ProbePeer", "(sa{sv})", ("fe80::1", {}))
    assert name == INVALID_ARGS and "needs a zone" in message
    name, message = call_error(client, "ProbePeer", "(sa{sv})", ("fe80::1", {"Interface": v("s", "nosuchif0")}))
    assert name == INVALID_ARGS and "no interface" in message
    name, message = call_error(client, "ProbePeer", "(sa{sv})", ("fe80::1%a0", {"Interface": v("s", "a1")}))
    assert name == INVALID_ARGS and "another" in message
    name, message = call_error(client, "ProbePeer", "(sa{sv})", (DIRECT, {"Transport": v("s", "rdma")}))
    assert name == "org.linkprobe.LinkProbe1.Error.NotSupported" and "RDMA" in message
    name, _ = call_error(client, "ProbePeer", "(s)", (DIRECT,))
    assert name == INVALID_ARGS
    name, message = call_error(client, "RemovePeer", "(s)", ("10.9.9.9",))
    assert name == "org.linkprobe.LinkProbe1.Error.NoSuchPeer"
    name, message = call_error(client, "RemovePeer", "(s)", (DIRECT,))
    assert name == INVALID_ARGS and "linkprobed.conf" in message
    # Nothing was created by any of it, and the daemon is fine.
    assert set(peers(client)) == {peer_path(f"tcp:{DIRECT}")}
    assert daemon.proc.poll() is None and client.get_all("Manager")["State"] == "running"


def test_parallel_streams_asked_for_and_granted(net, client, daemon_factory):
    """Streams: what ProbePeer() or TcpStreams= ask for is what the measurement uses; a responder that
    allows fewer is measured with what it allows, and Warnings says so (also after a restart)."""
    responder = Responder(net["B"], f"{DIRECT}:7474", "--max-streams=2", port=7474)
    try:
        daemon_factory(netns=net["in_a"], config=f"[Peers]\nAddress={BRIDGED}\n" + QUICK + "TcpStreams=2\n")
        p = wait_peer(client, peer_path(f"tcp:{BRIDGED}"), is_measured)
        assert p["Streams"] == (2, 2) and p["Warnings"] == [], p

        v = GLib.Variant
        (path,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (DIRECT, {"Streams": v("u", 3)}))
        p = wait_peer(client, path, is_measured)
        assert p["Streams"] == (3, 3) and p["Warnings"] == [], p

        (path,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (f"{DIRECT}:7474", {"Streams": v("u", 4)}))
        p = wait_peer(client, path, is_measured)
        assert p["Streams"] == (2, 2), p
        assert p["Warnings"] == ["the responder allowed 2 of the 4 streams asked for"], p
        shown = lp.ctl(client.bus, "--json=short", "peers", check=True).stdout
        assert "the responder allowed 2 of the 4 streams" in shown
    finally:
        print(responder.stop())


def test_add_and_remove(net, client, daemon_factory):
    daemon_factory(netns=net["in_a"], config=QUICK)
    assert peers(client) == {}
    client.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (f"{BRIDGED}:7471",))
    client.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (BRIDGED,))  # the same peer: nothing new
    path = peer_path(f"tcp:{BRIDGED}")
    wait_peer(client, path, is_measured)
    assert list(peers(client)) == [path]
    client.call(lp.ROOT, MANAGER, "RemovePeer", "(s)", (BRIDGED,))
    assert peers(client) == {}
    name, _ = call_error(client, "RemovePeer", "(s)", (BRIDGED,))
    assert name == "org.linkprobe.LinkProbe1.Error.NoSuchPeer"
    # A link-local address without a zone is measured on every link that can reach it.
    ll = link_local(net["B"], "b0")
    client.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (ll,))
    direct = wait_peer(client, peer_path(f"tcp:{ll}%a0"), is_measured)
    assert direct["PeerAddress"] == ll and direct["SourceInterfaceName"] == "a0"
    assert peer_path(f"tcp:{ll}%a1") in peers(client)  # a1 has a link-local address too; nobody answers there
    wait_peer(client, peer_path(f"tcp:{ll}%a1"), lambda p: p["ProbeState"] == "failed" and p["LastError"])
    client.call(lp.ROOT, MANAGER, "RemovePeer", "(s)", (ll,))
    assert peers(client) == {}


def test_only_privileged_callers(net, bus, client, daemon_factory):
    os.chmod(bus.dir, 0o755)  # let other users reach the bus socket
    daemon_factory(netns=net["in_a"], config="[Daemon]\nPrivilegedGroup=users\n" + QUICK)
    calls = [("ProbePeer", "(sa{sv})", (DIRECT, {})), ("AddPeer", "(s)", (DIRECT,)), ("RemovePeer", "(s)", (DIRECT,))]
    nobody = call_as(bus, ["--reuid=65534", "--regid=65534", "--clear-groups"], calls)
    assert len(nobody) == 3
    for line in nobody:
        assert line.startswith("org.freedesktop.DBus.Error.AccessDenied") and "\"users\"" in line, line
    # Reading stays open to everyone.
    assert call_as(bus, ["--reuid=65534", "--regid=65534", "--clear-groups"],
                   [("GetManagedObjects", None, ())], interface="org.freedesktop.DBus.ObjectManager") == ["OK"]
    assert peers(client) == {}
    # A member of the privileged group may.
    member = call_as(bus, ["--reuid=65534", "--regid=65534", "--groups=100"], calls[1:2])
    assert member == ["OK"]
    assert peer_path(f"tcp:{DIRECT}") in peers(client)


def test_floods_are_rate_limited(net, client, daemon_factory):
    daemon = daemon_factory(netns=net["in_a"], config=QUICK)
    errors = []
    for _ in range(60):
        try:
            client.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (BRIDGED,))
        except GLib.Error as e:
            errors.append(e.message)
    assert errors and all("Too many requests" in m and "try again" in m for m in errors), errors[:3]
    # 20 at once, then 5 a second: most of a quick burst of 60 is refused, however slow the machine.
    assert len(errors) >= 10, len(errors)
    # Another sender is not affected.
    other = lp.Client(client.bus)
    try:
        other.call(lp.ROOT, MANAGER, "AddPeer", "(s)", (DIRECT,))
    finally:
        other.close()
    assert daemon.proc.poll() is None


def test_linkprobectl_probe_and_peers(net, bus, client, daemon_factory):
    daemon_factory(netns=net["in_a"], config=QUICK)
    start = time.monotonic()
    r = lp.ctl(bus, "probe", DIRECT)
    wall = time.monotonic() - start
    assert r.returncode == 0, r.stderr
    print(r.stdout)
    assert re.search(r"Upload: \d+\.\d\d Gb/s", r.stdout) and "Via: a0 from 10.212.1.1" in r.stdout, r.stdout
    assert re.search(r"Streams: \d up, \d down", r.stdout), r.stdout
    print(f"linkprobectl probe {DIRECT}: {wall:.2f} s (100 ms per direction)")

    r = lp.ctl(bus, "--json", "probe", f"[fe80::1%a0]:7471", "--timeout", "10s")  # nobody there
    assert r.returncode == 1 and "Probe failed for" in r.stderr, (r.stdout, r.stderr)
    doc = json.loads(r.stdout)
    assert doc["ProbeState"] == "failed" and doc["LastError"]

    # An address the CLI can judge itself is a usage error, found before any call.
    r = lp.ctl(bus, "probe", "not-an-address")
    assert r.returncode == 2 and "Invalid peer address" in r.stderr
    assert lp.ctl(bus, "probe").returncode == 2
    assert lp.ctl(bus, "probe", DIRECT, "--transport=udp").returncode == 2

    r = lp.ctl(bus, "peers")
    print(r.stdout)
    assert r.returncode == 0 and DIRECT in r.stdout and "fe80::1%a0" in r.stdout and "2 peer paths listed" in r.stdout
    rows = json.loads(lp.ctl(bus, "--json", "peers").stdout)
    assert {row["Address"] for row in rows} == {DIRECT, "fe80::1%a0"}
    direct = next(row for row in rows if row["Address"] == DIRECT)
    assert set(direct["Streams"]) == {"Upload", "Download"} and direct["Streams"]["Upload"] >= 1, direct
    assert all(row["Path"].startswith(lp.ROOT + "/peer/") for row in rows)


def test_discovery_of_link_local_neighbours(net, client, daemon_factory):
    daemon_factory(netns=net["in_a"], config="[Peers]\nDiscover=veth\n" + QUICK)
    b0, b1 = link_local(net["B"], "b0"), link_local(net["B"], "b1")
    for address, ifname in ((b0, "a0"), (b1, "a1")):
        p = wait_peer(client, peer_path(f"tcp:{address}%{ifname}"), is_measured)
        assert p["Origins"] == ["discovered"] and p["SourceInterfaceName"] == ifname
    # Unplugged: the neighbour goes, and with it the peer.
    net["ns"].ip(net["A"], "link", "set", "a0", "down")
    try:
        wait_for(lambda: peer_path(f"tcp:{b0}%a0") not in peers(client))
    finally:
        net["ns"].ip(net["A"], "link", "set", "a0", "up")


def test_discovery_off_by_default(net, client, daemon_factory):
    daemon = daemon_factory(netns=net["in_a"], config=QUICK)
    run("ip", "netns", "exec", net["A"], "ping", "-6", "-c1", "-W1", f"{link_local(net['B'], 'b0')}%a0", check=False)
    time.sleep(0.3)
    assert peers(client) == {}
    assert "Discovering" not in daemon.log()


def responder_pids(daemon):
    return [int(p) for p in re.findall(r"Started linkprobe-responder \(pid (\d+)\)", daemon.log())]


def test_served_responder_is_restarted(net, daemon_factory):
    b_bus = lp.PrivateBus()
    try:
        daemon = lp.Daemon(b_bus, netns=net["in_b"], config=f"[Responder]\nListen={DIRECT}:7473\n")
        try:
            wait_listening(net["B"], DIRECT, 7473)
            (first,) = wait_for(lambda: responder_pids(daemon))
            rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "100ms", "--samples", "5", f"{DIRECT}:7473")
            assert rc == 0, (doc, err)
            os.kill(first, signal.SIGKILL)
            # The daemon holds the socket: connections are queued while the responder is away.
            connect_from(net["A"], None, DIRECT, 7473).close()
            pids = wait_for(lambda: (lambda p: p if len(p) >= 2 else None)(responder_pids(daemon)), timeout=5)
            assert "killed by SIGKILL, restarting in 1 s" in daemon.log()
            rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "100ms", "--samples", "5", f"{DIRECT}:7473")
            assert rc == 0, (doc, err)
        finally:
            assert daemon.stop() == 0
        # Stopping the daemon stops its responder.
        with pytest.raises(ProcessLookupError):
            os.kill(pids[-1], 0)
        assert "Exiting:" in daemon.log_text  # the responder's own last words: it got SIGTERM
    finally:
        b_bus.stop()


def test_responder_config_error_is_not_retried(net, daemon_factory, tmp_path):
    b_bus = lp.PrivateBus()
    try:
        daemon = lp.Daemon(b_bus, netns=net["in_b"],
                           config=f"[Responder]\nListen={DIRECT}:7474\nPreSharedKeyFile={tmp_path}/missing\n")
        try:
            wait_for(lambda: "not restarting" in daemon.log(), timeout=5)
            b_client = lp.Client(b_bus)
            manager = b_client.get_all("Manager")
            b_client.close()
            assert manager["State"] == "degraded" and "responder-failed" in manager["DegradedReasons"]
            time.sleep(1.5)
            assert len(responder_pids(daemon)) == 1
        finally:
            daemon.stop()
    finally:
        b_bus.stop()


def test_socket_activation(net, daemon_factory):
    tool = shutil.which("systemd-socket-activate")
    if not tool:
        pytest.skip("systemd-socket-activate is not installed")
    b_bus = lp.PrivateBus()
    try:
        # The tool hands its program a fresh environment: pass on what the test harness set.
        keep = [f"--setenv={k}" for k in ("NOTIFY_SOCKET", "LINKPROBE_PROBE_DIR", "ASAN_OPTIONS", "UBSAN_OPTIONS",
                                          "LSAN_OPTIONS") if k in os.environ or k in ("NOTIFY_SOCKET", "LINKPROBE_PROBE_DIR")]
        daemon = lp.Daemon(b_bus, wait=False, prefix=["ip", "netns", "exec", net["B"], tool, "-l", f"{DIRECT}:7475",
                                                      "--fdname=responder", *keep])
        try:
            wait_listening(net["B"], DIRECT, 7475)  # the first connection starts the daemon, if it waits for one
            daemon.wait_ready()
            (pid,) = wait_for(lambda: responder_pids(daemon))
            rc, doc, err = probe(net["A"], PROBE_TCP, "--duration", "100ms", "--samples", "5", f"{DIRECT}:7475")
            assert rc == 0, (doc, err)
            assert "on 1 socket(s)" in daemon.log()
        finally:
            daemon.stop()
    finally:
        b_bus.stop()


def test_rdma_paths_for_local_rdma_ports(net, client, daemon_factory):
    gi = pytest.importorskip("gi")
    gi.require_version("UMockdev", "1.0")
    from gi.repository import UMockdev
    # This machine has no RDMA hardware; a testbed gives the daemon's sysfs reader an active RoCE port.
    testbed = UMockdev.Testbed.new()
    testbed.add_from_file(os.path.join(lp.TOP, "tests", "fixtures", "rdma", "cx5-roce.umockdev"))
    daemon_factory(netns=net["in_a"], args=[f"--sysfs-root={testbed.get_sys_dir()}"],
                   config=f"[Peers]\nAddress={DIRECT}\n" + QUICK)
    rdma_path = peer_path(f"rdma:rocep59s0f0/1:{DIRECT}")
    wait_peer(client, peer_path(f"tcp:{DIRECT}"), is_measured)
    # The probe runs for real: neither this host nor the responder has a device, which is an answer.
    p = wait_peer(client, rdma_path, lambda q: q["ProbeState"] == "unsupported", timeout=15)
    assert p["Transport"] == "rdma" and p["SourceDevice"] == "rocep59s0f0" and p["SourcePort"] == 1
    assert p["Address"] == DIRECT and p["PeerAddress"] == DIRECT and p["TtlSec"] == 6 * 3600
    assert p["LastError"] == "unsupported" and "does not serve RDMA" in p["LastErrorMessage"], p
    assert p["MeasuredAt"] == 0 and p["Stale"] is True
    assert p["NextProbeAt"] > p["LastAttemptAt"] + 3 * 3600e6
    (path,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (DIRECT, {"Transport": GLib.Variant("s", "rdma")}))
    assert path == rdma_path
    name, message = call_error(client, "ProbePeer", "(sa{sv})",
                               (DIRECT, {"Transport": GLib.Variant("s", "rdma"), "Device": GLib.Variant("s", "mlx5_9")}))
    assert name == "org.linkprobe.LinkProbe1.Error.NotSupported" and "mlx5_9" in message
    del testbed


def context_switches(pid):
    with open(f"/proc/{pid}/status") as f:
        return sum(int(line.split()[1]) for line in f if "ctxt_switches" in line)


def test_idle_daemon_sleeps(net, client, daemon_factory):
    # No peers: nothing to wake for. Fresh results: nothing until the next one is due.
    for config in ("[Memory]\nPollIntervalSec=0\n",
                   f"[Memory]\nPollIntervalSec=0\n[Peers]\nAddress={DIRECT}\n" + QUICK + "TcpTtlSec=1h\n"):
        daemon = daemon_factory(netns=net["in_a"], config=config)
        if "Address" in config:
            wait_peer(client, peer_path(f"tcp:{DIRECT}"), is_measured)
        # The kernel's own follow-ups (IPv6 duplicate address detection finishing on fresh links) are
        # events the daemon must take; wait until there are none left to come.
        deadline = time.monotonic() + 10
        while lp.run(["ip", "-n", net["in_a"].name, "-6", "addr", "show", "tentative"]).stdout.strip() \
                and time.monotonic() < deadline:
            time.sleep(0.1)
        time.sleep(0.3)
        before = context_switches(daemon.proc.pid)
        time.sleep(2)
        woke = context_switches(daemon.proc.pid) - before
        assert woke <= 2, (config, woke)
        daemon.stop()
