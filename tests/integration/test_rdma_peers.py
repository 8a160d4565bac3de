# SPDX-License-Identifier: LGPL-2.1-or-later
"""RDMA paths through the daemon as TCP paths go: expanded from a wanted address for each active RDMA port
(key rdma:DEV/PORT:ADDRESS), measured by the real linkprobe-probe-rdma against a real responder, kept for the
RDMA TTL (6 h) and measured again when it runs out, Stale past it, skipped while an inhibitor covers rdma and
killed when one arrives, and republished after a restart.

The daemon (namespace PA) lives in a umockdev testbed with cx6-ib-hdr (mlx5_0, InfiniBand) and cx5-roce
(rocep59s0f0, RoCE) and reads it as /sys itself: no --sysfs-root, so libibverbs is allowed, and libibverbs is
the fake (tests/fake-ibverbs/), which under the same preload reads the same /sys. The daemon publishes the
verbs view of the ports, and the probes it runs find the same devices. The responder (PB, 10.214.1.2) serves
mlx5_0 over the same fabric, so the RoCE path is "unsupported" (another fabric), with the reason.
"""

import os
import time

import pytest
from gi.repository import GLib

import lp
from fake_rdma import FIXTURES, LIBRARY_DIR, Fabric
from linkprobe_net import Namespaces, Responder
from peers_net import (MANAGER, PEER, InNetns, age_saved_results, peer_path, peers, published_results, wait_for,
                       wait_peer)
from test_gpu import inhibit
from umockdev_testbed import Testbed

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

ADDRESS, OTHER = "10.214.1.2", "10.214.1.3"
IB_PATH, ROCE_PATH, TCP_PATH = (peer_path(f"rdma:mlx5_0/1:{ADDRESS}"), peer_path(f"rdma:rocep59s0f0/1:{ADDRESS}"),
                                peer_path(f"tcp:{ADDRESS}"))
QUICK = ("[Reconciler]\nTickSec=100ms\nTcpDurationSec=100ms\nTcpSamples=10\nRdmaDurationSec=100ms\n")
RDMA_TTL_SEC = 6 * 3600


@pytest.fixture(scope="module")
def rig():
    ns = Namespaces("PA", "PB")
    tb = Testbed(*(os.path.join(FIXTURES, f + ".umockdev") for f in ("cx6-ib-hdr", "cx5-roce")))
    fabric = Fabric()
    responder = None
    try:
        a, b = ns["PA"], ns["PB"]
        ns.veth(a, "a0", b, "b0")
        ns.addr(a, "a0", "10.214.1.1/24")
        ns.addr(b, "b0", f"{ADDRESS}/24")
        ns.addr(b, "b0", f"{OTHER}/24")
        responder = Responder(b, "0.0.0.0:7471", "--rdma-device=mlx5_0", "--log-level=debug", wait_address=ADDRESS,
                              env=fabric.env(tb.sys))
        yield {"A": a, "testbed": tb, "fabric": fabric}
    finally:
        if responder:
            print(responder.stop())
        fabric.close()
        tb.close()
        ns.close()


def start_daemon(rig, daemon_factory, config, **kw):
    env = {**rig["testbed"].env(), "LD_LIBRARY_PATH": LIBRARY_DIR, "FAKE_IBVERBS_FABRIC": rig["fabric"].path}
    return daemon_factory(netns=InNetns(rig["A"]), prefix=["umockdev-wrapper"], env=env,
                          args=["--log-level=debug"], config=f"[Peers]\nAddress={ADDRESS}\n" + config, **kw)


def is_measured(p):
    return p["ProbeState"] == "ok" and p["MeasuredAt"] > 0


def rdma_probes(fabric, program="linkprobe-probe-rdma"):
    """PIDs of the program's processes (run by this test's daemon: on its fabric)."""
    found = []
    for pid in (d for d in os.listdir("/proc") if d.isdigit()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if not f.read().split(b"\0")[0].endswith(program.encode()):
                    continue
            with open(f"/proc/{pid}/environ", "rb") as f:
                if f"FAKE_IBVERBS_FABRIC={fabric.path}".encode() in f.read().split(b"\0"):
                    found.append(int(pid))
        except OSError:
            pass
    return found


def test_rdma_path_measured_like_a_tcp_one(rig, client, daemon_factory):
    daemon = start_daemon(rig, daemon_factory, QUICK)
    before = time.time()
    ib = wait_peer(client, IB_PATH, is_measured, timeout=30)
    assert ib["Transport"] == "rdma" and ib["Address"] == ADDRESS and ib["PeerAddress"] == ADDRESS
    assert ib["SourceDevice"] == "mlx5_0" and ib["SourcePort"] == 1 and ib["Origins"] == ["config"]
    assert ib["UploadGbps"] > 0 and ib["DownloadGbps"] > 0 and ib["RttUsec"] > 0 and ib["JitterUsec"] >= 0, ib
    assert ib["Streams"] == (0, 0) and ib["LastError"] == "" and ib["Stale"] is False
    assert before - 5 < ib["MeasuredAt"] / 1e6 <= time.time()
    # Six hours, measured again before they are up, never in their first half.
    assert ib["TtlSec"] == RDMA_TTL_SEC
    assert ib["MeasuredAt"] + RDMA_TTL_SEC * 1e6 / 2 <= ib["NextProbeAt"] <= ib["MeasuredAt"] + RDMA_TTL_SEC * 1e6
    print(f"rdma:mlx5_0/1 through the daemon: up {ib['UploadGbps']:.1f} Gbit/s, down {ib['DownloadGbps']:.1f} "
          f"Gbit/s, RTT {ib['RttUsec']:.1f} us, probe {ib['ProbeDurationUsec'] / 1e6:.2f} s")

    # The RoCE port is a path too; the responder's port is InfiniBand, so it cannot be measured, and says why.
    roce = wait_peer(client, ROCE_PATH, lambda p: p["ProbeState"] == "unsupported", timeout=30)
    assert roce["LastError"] == "unsupported"
    assert roce["LastErrorMessage"] == ("responder: mlx5_0 port 1 is InfiniBand, the other end's port is RoCE: no "
                                        "path joins the two"), roce
    assert roce["MeasuredAt"] == 0
    # The TCP path beside them.
    assert wait_peer(client, TCP_PATH, is_measured, timeout=30)["Transport"] == "tcp"

    # What the daemon publishes of the ports is libibverbs' view (the fake, reading the same sysfs), and it
    # agrees with sysfs.
    ports = {p["Device"]: p for p in (dict(o[lp.IFACE + "RdmaPort"]) for o in client.objects().values()
                                      if lp.IFACE + "RdmaPort" in o)}
    assert (ports["mlx5_0"]["State"], ports["mlx5_0"]["RateGbps"], ports["mlx5_0"]["Lid"]) == ("active", 200.0, 0x1a)
    assert (ports["rocep59s0f0"]["State"], ports["rocep59s0f0"]["RateGbps"]) == ("active", 100.0)
    log = daemon.log()
    assert "RDMA device mlx5_0: live port state from libibverbs (1 ports)." in log, log
    assert "RDMA device rocep59s0f0: live port state from libibverbs (1 ports)." in log, log
    assert "disagree" not in log, log


def test_tcp_and_rdma_probes_take_turns(rig, client, daemon_factory):
    """One probe per transport runs at a time, but the responder serves one test at a time: a TCP and an RDMA
    probe to the same responder take turns instead of one of them meeting "busy" and failing."""
    daemon = start_daemon(rig, daemon_factory, QUICK.replace("TcpDurationSec=100ms", "TcpDurationSec=500ms"))
    fabric, both = rig["fabric"], 0
    end = time.monotonic() + 30
    while time.monotonic() < end:
        objects = peers(client)
        if all(path in objects and is_measured(objects[path]) for path in (IB_PATH, TCP_PATH)):
            break
        both += bool(rdma_probes(fabric) and rdma_probes(fabric, "linkprobe-probe-tcp"))
        time.sleep(0.02)
    objects = peers(client)
    assert is_measured(objects[IB_PATH]) and is_measured(objects[TCP_PATH]), (
        {p: {k: objects[p].get(k) for k in ("ProbeState", "LastError", "MeasuredAt")} for p in (IB_PATH, TCP_PATH)
         if p in objects}, daemon.log()[-6000:])
    assert both == 0
    assert objects[IB_PATH]["LastError"] == objects[TCP_PATH]["LastError"] == ""


def test_ttl_expiry_stale_and_reprobe(rig, client, daemon_factory):
    start_daemon(rig, daemon_factory, QUICK + "RdmaTtlSec=1s\n")
    seen = set()

    def three_results():
        p = peers(client).get(IB_PATH)
        if p and p["MeasuredAt"]:
            seen.add(p["MeasuredAt"])
        return len(seen) >= 3
    wait_for(three_results, timeout=30)
    assert client.get_all("Peer", IB_PATH)["TtlSec"] == 1

    # An RDMA path only ProbePeer() asked for is measured once, then goes stale and stays.
    (adhoc,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})",
                           (OTHER, {"Transport": GLib.Variant("s", "rdma"), "Device": GLib.Variant("s", "mlx5_0")}))
    assert adhoc == peer_path(f"rdma:mlx5_0/1:{OTHER}")
    p = wait_peer(client, adhoc, is_measured, timeout=30)
    assert p["Origins"] == ["probed"] and p["NextProbeAt"] == 0
    stale = wait_peer(client, adhoc, lambda q: q["Stale"], timeout=5)
    assert stale["MeasuredAt"] == p["MeasuredAt"] and stale["ProbeState"] == "ok" and stale["StaleReason"]


def test_inhibitor_skips_and_stops_rdma_probes(rig, client, daemon_factory):
    # A longer RDMA probe, so that one is running when the inhibitor comes.
    start_daemon(rig, daemon_factory, QUICK + "RdmaDurationSec=3s\n")
    fabric = rig["fabric"]
    wait_peer(client, IB_PATH, lambda p: p["ProbeState"] == "probing", timeout=30)
    running = wait_for(lambda: rdma_probes(fabric), timeout=10)
    # A TCP measurement asked for now waits for the RDMA probe to the same responder to end.
    tcp_before = peers(client).get(TCP_PATH, {}).get("MeasuredAt", 0)
    (tcp,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})", (ADDRESS, {}))
    assert tcp == TCP_PATH and client.get_all("Peer", TCP_PATH)["ProbeState"] == "queued"

    fd = inhibit(client.conn, "rdma", "test_rdma_peers", "a job holds the fabric")
    try:
        # "Inhibit" means now: the probe is killed, nothing of it published.
        wait_for(lambda: not any(os.path.exists(f"/proc/{pid}") for pid in running), timeout=5,
                 what=f"the probes {running} to be killed")
        p = wait_peer(client, IB_PATH, lambda q: q["ProbeState"] == "skipped-inhibited", timeout=5)
        assert p["MeasuredAt"] == 0 and p["UploadGbps"] == 0
        # While it is held no RDMA probe starts; the TCP one that waited for the killed probe goes on.
        assert wait_peer(client, TCP_PATH, lambda q: is_measured(q) and q["MeasuredAt"] > tcp_before, timeout=30)
        time.sleep(1)
        assert rdma_probes(fabric) == []
        assert client.get_all("Peer", IB_PATH)["ProbeState"] == "skipped-inhibited"
        assert "rdma" in client.get_all("Manager")["Inhibited"]
    finally:
        os.close(fd)
    # The path is due at once when the last inhibitor goes.
    wait_peer(client, IB_PATH, is_measured, timeout=30)


def test_restart_restores_rdma_results(rig, client, signals, daemon_factory, tmp_path):
    state = str(tmp_path / "state")
    first = start_daemon(rig, daemon_factory, QUICK, state_dir=state)
    old = wait_peer(client, IB_PATH, is_measured, timeout=30)
    wait_peer(client, ROCE_PATH, lambda p: p["ProbeState"] == "unsupported", timeout=30)
    assert first.stop() == 0

    # Same TTL: back as they were, fresh, not measured again yet.
    second = start_daemon(rig, daemon_factory, QUICK, state_dir=state)
    now = wait_peer(client, IB_PATH, lambda p: p["MeasuredAt"] > 0, timeout=10)
    for key in ("MeasuredAt", "UploadGbps", "DownloadGbps", "RttUsec", "ProbeState", "SourceDevice", "SourcePort"):
        assert now[key] == old[key], key
    assert now["Stale"] is False
    assert client.get_all("Peer", ROCE_PATH)["ProbeState"] == "unsupported"
    time.sleep(1)
    assert client.get_all("Peer", IB_PATH)["MeasuredAt"] == old["MeasuredAt"]
    assert second.stop() == 0

    # A TTL the result has outlived: republished stale, then measured again. The TTL is longer than the
    # daemon lets an RDMA probe run (its deadline: 3 x 100 ms + 7 s), so the new result is fresh when it
    # comes in however long the probe took on busy CPUs (with a TTL of 1 s, over a second there made every
    # new result stale on arrival). The saved result is made older than that TTL rather than waited for.
    ttl_s = 8
    aged = age_saved_results(state, ttl_s + 2)
    start_daemon(rig, daemon_factory, QUICK + f"RdmaTtlSec={ttl_s}s\n", state_dir=state)

    def republished_stale(ev):
        return [e for e in ev if e[3] == "InterfacesAdded" and e[4][0] == IB_PATH and
                e[4][1][PEER]["MeasuredAt"] == aged[IB_PATH] and e[4][1][PEER]["Stale"] is True]
    assert signals.wait(republished_stale)
    # What the daemon published when the new result came in (from its signals: a poll may come late).
    new = signals.wait(lambda ev: [r for r in published_results(ev, IB_PATH) if r["MeasuredAt"] > old["MeasuredAt"]],
                       timeout=30)
    assert new, published_results(signals.events, IB_PATH)
    assert new[0]["ProbeState"] == "ok" and new[0]["Stale"] is False, new[0]
