# SPDX-License-Identifier: LGPL-2.1-or-later
"""Faults, each with a measured outcome (written to reliability-figures.jsonl by faults.record()):
a 10,000-flap netlink storm through a one-byte receive buffer, a udev monitor overrun by real kernel
uevents, the bus going away, peer probes that hang, crash or flood, a state directory that is full or
read-only, state files that are corrupt or not files at all, and a bad value for every configuration key.

Peer and GPU probes are stand-ins (faults.FakeProbes) so every outcome is exact and quick."""

import hashlib
import os
import re
import shutil
import signal
import tempfile
import time

import pytest
from gi.repository import GLib

import faults
import lp
from kernel_compare import differences, wait_consistent
from peers_net import MANAGER, peer_path, peers, wait_peer
from test_gpu import A100, MI250, device, inhibit, measurement, pid_alive

PEER_ADDRESS = "10.77.0.2"
QUICK_PEERS = "[Reconciler]\nTickSec=100ms\nTcpDurationSec=10ms\nRdmaDurationSec=10ms\n"
GPU_CONFIG = "[Gpu]\nTTLSec=1h\nDeadlineSec=20s\nRandomizedDelaySec=0\nQuick=yes\n"
GPU = lp.IFACE + "Gpu"
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


def gpu_control(upload=1555.0):
    return {"inventory": "ok", "measure": "ok", "devices": [A100, MI250],
            "measurements": {A100["key"]: measurement(upload), MI250["key"]: measurement(1600.0, 23900.0)}}


def gpus(client):
    return {props[GPU]["Index"]: dict(props[GPU]) for props in client.objects().values() if GPU in props}


def gpus_ok(client):
    g = gpus(client)
    return g if len(g) == 2 and all(p["ProbeState"] == "ok" for p in g.values()) else None


def measured(p):
    return p["ProbeState"] == "ok" and p["MeasuredAt"] > 0


@pytest.fixture
def probes():
    p = faults.FakeProbes(gpu_control=gpu_control())
    yield p
    p.remove()


@pytest.fixture
def rdma_testbed():
    gi = pytest.importorskip("gi")
    gi.require_version("UMockdev", "1.0")
    from gi.repository import UMockdev
    # No RDMA hardware here: a testbed gives the daemon's sysfs reader an active RoCE port, so RDMA
    # paths exist and their (stand-in) probe runs.
    testbed = UMockdev.Testbed.new()
    testbed.add_from_file(os.path.join(lp.TOP, "tests", "fixtures", "rdma", "cx5-roce.umockdev"))
    yield testbed
    del testbed


# --- netlink and udev overruns --------------------------------------------------------------------------------

def test_netlink_overrun_storm_of_10000_flaps(netns, bus, client, daemon_factory):
    ns = netns
    daemon = daemon_factory(ns, args=["--netlink-rcvbuf=1", "--log-level=info"])
    pid = faults.daemon_pid(daemon)
    ns.batch([f"link add s{i}a type veth peer name s{i}b" for i in range(50)] + [f"link set s{i}b up" for i in range(50)])
    assert wait_consistent(client, ns, timeout=20) == []
    rss_before, fds_before = faults.rss_kib(pid), faults.fd_count(pid)

    storm = [f"link set s{i}a {'up' if r % 2 == 0 else 'down'}" for r in range(200) for i in range(50)]
    assert len(storm) == 10000
    # And the facts around the flaps: addresses, MTUs, links that go.
    storm += [f"addr add 10.61.{i}.1/24 dev s{i}a" for i in range(50)]
    storm += [f"link set s{i}a mtu {1300 + i}" for i in range(50)]
    storm += [f"link del s{i}a" for i in range(0, 50, 5)]
    started = time.monotonic()
    ns.batch(storm)
    storm_seconds = time.monotonic() - started
    diffs = wait_consistent(client, ns, timeout=30)
    converge_seconds = time.monotonic() - started - storm_seconds
    # Equal once is not enough: nothing queued may pull it away again.
    time.sleep(1)
    later = differences(client, ns)
    overruns = faults.metrics(bus)["linkprobe_netlink_overruns_total"]
    faults.record("netlink-storm", flaps=10000, commands=len(storm), storm_seconds=round(storm_seconds, 2),
                  converge_seconds=round(converge_seconds, 2), overruns=overruns, divergences=len(diffs),
                  divergences_after_1s=len(later), links=len(client.links()),
                  rss_kib_before=rss_before, rss_kib_after=faults.rss_kib(pid),
                  fds_before=fds_before, fds_after=faults.fd_count(pid))
    assert diffs == [], "\n".join(diffs[:20])
    assert later == [], "\n".join(later[:20])
    assert overruns >= 1, "the storm did not overrun a one-byte buffer; the test proves nothing"
    assert "Netlink receive buffer overrun" in daemon.log()
    assert client.managed_objects_differing_from_getall() == []
    assert faults.fds_back_to(pid, fds_before), "\n".join(faults.open_files(pid))


@pytest.mark.skipif(os.path.exists("/run/udev/control"),
                    reason="udevd runs here, so the daemon listens to udevd's events, which never reach a network "
                           "namespace; this test overruns the monitor with the kernel's own uevents")
def test_udev_overrun_is_answered_by_reenumeration(netns, bus, client, daemon_factory):
    # Without udevd the monitor takes the kernel's uevents, which the kernel sends into the namespace that
    # owns a network device: a burst of veth pairs overruns a receive buffer of one byte (the kernel's
    # minimum, ~2 KiB), where umockdev's datagram sockets would only make the sender wait. The daemon is
    # stopped while the kernel sends them: on two busy CPUs it may otherwise drain the buffer as fast as the
    # burst fills it, and the test would prove nothing.
    ns = netns
    daemon = daemon_factory(ns, args=["--log-level=info"], config="[Udev]\nReceiveBufferBytes=1\n")
    pid = faults.daemon_pid(daemon)
    # A call answered means start-up is over: the state directory, opened just after READY=1, is counted.
    client.links()
    fds_before = faults.fd_count(pid)
    started = time.monotonic()
    with faults.stopped(pid):
        ns.batch([f"link add u{i}a type veth peer name u{i}b" for i in range(100)] +
                 [f"link set u{i}a up" for i in range(100)])
    diffs = wait_consistent(client, ns, timeout=20)
    seen = faults.wait_for(lambda: "udev monitor overrun" in daemon.log(), timeout=5)
    converge_seconds = time.monotonic() - started
    first = faults.metrics(bus)["linkprobe_udev_overruns_total"]
    # And the way back: removals overrun it too, and leave nothing behind.
    with faults.stopped(pid):
        ns.batch([f"link del u{i}a" for i in range(100)])
    gone = wait_consistent(client, ns, timeout=20)
    total = faults.metrics(bus)["linkprobe_udev_overruns_total"]
    faults.record("udev-overrun", uevent_bursts=2, veth_pairs=100, overruns_after_add=first, overruns_total=total,
                  converge_seconds=round(converge_seconds, 2), divergences=len(diffs) + len(gone),
                  fds_before=fds_before, fds_after=faults.fd_count(pid))
    assert seen, "the burst did not overrun the monitor; the test proves nothing"
    assert first >= 1 and total >= first
    assert diffs == [] and gone == [], "\n".join((diffs + gone)[:20])
    assert "re-enumerating devices" in daemon.log()
    assert len(client.links()) == 1
    assert faults.fds_back_to(pid, fds_before), "\n".join(faults.open_files(pid))


# --- the bus --------------------------------------------------------------------------------------------------

def test_bus_killed_means_failure_exit_within_a_second(netns):
    times = []
    for _ in range(3):
        bus = lp.PrivateBus()
        daemon = None
        try:
            daemon = lp.Daemon(bus, netns=netns)
            bus.proc.kill()
            started = time.monotonic()
            code = daemon.proc.wait(5)
            times.append(time.monotonic() - started)
            assert code != 0
        finally:
            if daemon:
                daemon.stop()
                assert not any(m in daemon.log_text for m in SANITIZER_MARKERS), daemon.log_text
            bus.stop()
    faults.record("bus-killed", runs=len(times), exit_seconds_max=round(max(times), 3),
                  exit_seconds=[round(t, 3) for t in times])
    assert max(times) < 1.0


# --- probe children -------------------------------------------------------------------------------------------

def probe_peer(client, address, transport="tcp"):
    (path,) = client.call(lp.ROOT, MANAGER, "ProbePeer", "(sa{sv})",
                          (address, {"Transport": GLib.Variant("s", transport),
                                     "DurationUsec": GLib.Variant("t", 10000)}))
    return path


def test_peer_probes_that_hang_are_killed_with_their_children(netns, client, probes, rdma_testbed, daemon_factory):
    for name in faults.PEER_PROBES:
        probes.set_mode(name, "hang")
    daemon = daemon_factory(netns, args=[f"--sysfs-root={rdma_testbed.get_sys_dir()}"], env=probes.env(),
                            config=QUICK_PEERS)
    started = time.monotonic()
    paths = {t: probe_peer(client, PEER_ADDRESS, t) for t in ("tcp", "rdma")}
    assert faults.wait_for(lambda: probes.grandchild("linkprobe-probe-tcp"), timeout=5)
    grandchildren = {}
    ended = {}

    def check():
        # The RDMA probe starts once the TCP one has ended (the same responder serves both).
        for n in faults.PEER_PROBES:
            if n not in grandchildren and probes.grandchild(n):
                grandchildren[n] = probes.grandchild(n)
        objects = peers(client)
        for t, path in paths.items():
            if t not in ended and objects[path]["ProbeState"] == "failed":
                ended[t] = (time.monotonic() - started, objects[path])
        return len(ended) == 2
    # TCP: 2 x 10 ms + 3 s, RDMA: 3 x 10 ms + 7 s, each plus the 2 s of grace for the probe's own deadline;
    # the RDMA probe waits for the TCP one, both going to the same responder.
    assert faults.wait_for(check, timeout=30, interval=0.1)
    for t, (_, p) in ended.items():
        assert p["LastError"] == "deadline", p
    assert sorted(grandchildren) == sorted(faults.PEER_PROBES), grandchildren
    orphans = [pid for pid in grandchildren.values() if faults.pid_alive(pid)]
    faults.record("peer-probe-hang", tcp_killed_after_s=round(ended["tcp"][0], 2),
                  rdma_killed_after_s=round(ended["rdma"][0], 2), orphans=len(orphans))
    assert orphans == [], "the probe's process group outlived the deadline"
    assert 4.5 < ended["tcp"][0] < 8 and 8.5 < ended["rdma"][0] - ended["tcp"][0] < 13
    # The transport is free again: the next probe runs.
    for name in faults.PEER_PROBES:
        probes.set_mode(name, "ok")
    probe_peer(client, PEER_ADDRESS, "tcp")
    assert wait_peer(client, paths["tcp"], measured)
    assert daemon.proc.poll() is None


def test_an_inhibitor_stops_a_running_rdma_probe_at_once(netns, client, probes, rdma_testbed, daemon_factory):
    """Inhibit means now: an RDMA probe holding the fabric is killed when a scheduler takes it, publishes
    nothing, and runs again once the inhibitor goes."""
    probes.set_mode("linkprobe-probe-rdma", "hang")
    daemon_factory(netns, args=[f"--sysfs-root={rdma_testbed.get_sys_dir()}"], env=probes.env(), config=QUICK_PEERS)
    path = probe_peer(client, PEER_ADDRESS, "rdma")
    assert faults.wait_for(lambda: probes.grandchild("linkprobe-probe-rdma"), timeout=5)
    grandchild = probes.grandchild("linkprobe-probe-rdma")
    taken = time.monotonic()
    fd = inhibit(client.conn, "rdma")
    try:
        p = wait_peer(client, path, lambda q: q["ProbeState"] == "skipped-inhibited", timeout=5)
        assert time.monotonic() - taken < 2
        assert faults.wait_for(lambda: not pid_alive(grandchild), timeout=5), "the probe's child still runs"
        assert p["MeasuredAt"] == 0 and p["LastError"] == "", p
        calls = len(probes.calls("linkprobe-probe-rdma"))
        time.sleep(0.5)  # held off while inhibited
        assert len(probes.calls("linkprobe-probe-rdma")) == calls
        probes.set_mode("linkprobe-probe-rdma", "ok")
    finally:
        os.close(fd)
    assert wait_peer(client, path, measured)


def test_peer_probes_that_crash_flood_or_fail(netns, client, probes, rdma_testbed, daemon_factory):
    for name in faults.PEER_PROBES:
        probes.set_mode(name, "crash")
    daemon = daemon_factory(netns, args=[f"--sysfs-root={rdma_testbed.get_sys_dir()}"], env=probes.env(),
                            config=QUICK_PEERS)
    outcomes = {}
    for mode, error in (("crash", "crashed"), ("flood", "bad-output"), ("error", "ECONNREFUSED")):
        for name in faults.PEER_PROBES:
            probes.set_mode(name, mode)
        started = time.monotonic()
        paths = [probe_peer(client, PEER_ADDRESS, t) for t in ("tcp", "rdma")]
        for path in paths:
            p = wait_peer(client, path, lambda q: q["ProbeState"] == "failed" and q["LastError"] == error)
            assert p, (mode, peers(client)[path])
        outcomes[mode] = round(time.monotonic() - started, 2)
    p = peers(client)[peer_path(f"tcp:{PEER_ADDRESS}")]
    assert "SIGSEGV" in p["LastErrorMessage"] or "connect" in p["LastErrorMessage"]
    faults.record("peer-probe-crash", seconds_to_failed=outcomes)
    assert daemon.proc.poll() is None
    assert client.get_all("Manager")["State"] == "running"


# --- the state directory --------------------------------------------------------------------------------------

def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def saved_state(netns, client, probes, daemon_factory):
    """A state directory with a peers.json and a gpus.json written by the daemon itself."""
    state = tempfile.mkdtemp(prefix=f"lp-state-{os.getpid()}-")
    daemon = daemon_factory(netns, env=probes.env(), state_dir=state, gpu=True,
                            config=f"[Peers]\nAddress={PEER_ADDRESS}\n" + QUICK_PEERS + GPU_CONFIG)
    assert wait_peer(client, peer_path(f"tcp:{PEER_ADDRESS}"), measured)
    assert faults.wait_for(lambda: gpus_ok(client), timeout=15)
    daemon.stop()
    assert os.path.exists(os.path.join(state, "peers.json")) and os.path.exists(os.path.join(state, "gpus.json"))
    return state


@pytest.mark.parametrize("fault", ["full", "read-only"])
def test_state_directory_full_or_read_only(fault, netns, client, probes, daemon_factory):
    saved = saved_state(netns, client, probes, daemon_factory)
    sizes = {name: os.path.getsize(os.path.join(saved, name)) for name in ("peers.json", "gpus.json")}
    fs = faults.SmallTmpfs()
    try:
        for name in ("peers.json", "gpus.json"):
            shutil.copy(os.path.join(saved, name), fs.dir)
        before = {name: digest(os.path.join(fs.dir, name)) for name in ("peers.json", "gpus.json")}
        if fault == "full":
            fs.fill()
        else:
            fs.read_only()
        probes.set_figures("linkprobe-probe-tcp", 3.25, 2.5, 40)
        probes.set_gpu(gpu_control(upload=999.0))
        daemon = daemon_factory(netns, env=probes.env(), state_dir=fs.dir, gpu=True,
                                config=f"[Peers]\nAddress={PEER_ADDRESS}\n" + QUICK_PEERS + GPU_CONFIG)
        # The saved results come back, then new ones are measured and cannot be saved.
        path = peer_path(f"tcp:{PEER_ADDRESS}")
        assert wait_peer(client, path, lambda p: p["UploadGbps"] == 9.5)
        probe_peer(client, PEER_ADDRESS)
        p = wait_peer(client, path, lambda q: q["UploadGbps"] == 3.25)
        assert p and p["ProbeState"] == "ok"
        (measured_paths,) = client.call(lp.ROOT, MANAGER, "ProbeGpus", timeout_ms=30000)
        assert len(measured_paths) == 2
        g = faults.wait_for(lambda: [x for x in gpus(client).values() if x["MemoryBandwidthGBps"] == 999.0])
        assert g, gpus(client)
        errno_text = "No space left on device" if fault == "full" else "Read-only file system"
        log = daemon.log()
        assert faults.wait_for(lambda: "Cannot save GPU results" in daemon.log()), daemon.log()
        log = daemon.log()
        assert f"Cannot save peer results to peers.json in the state directory, keeping them in memory: " \
               f"{errno_text}" in log, log
        assert f"Cannot save GPU results to gpus.json: {errno_text}" in log, log
        after = {name: digest(os.path.join(fs.dir, name)) for name in ("peers.json", "gpus.json")}
        leftovers = [n for n in os.listdir(fs.dir) if n.startswith(".#")]
        faults.record(f"state-directory-{fault}", file_sizes=sizes, files_intact=after == before, leftover_temporary_files=len(leftovers),
                      peer_warnings=log.count("Cannot save peer results"), daemon_running=daemon.proc.poll() is None)
        assert after == before, "the old files must be untouched"
        assert leftovers == []
        assert log.count("Cannot save peer results") == 1  # once, not at every save
        assert client.get_all("Manager")["State"] == "running"
        daemon.stop()
    finally:
        fs.close()
        shutil.rmtree(saved, ignore_errors=True)


def fifo(path):
    os.mkfifo(path)


def directory(path):
    os.mkdir(path)


def dev_zero(path):
    os.symlink("/dev/zero", path)


CORRUPT = {
    "garbage": b"\x00\xff\xfe garbage \x01",
    "empty": b"",
    "truncated": b'{"version": 1, "paths": [{"transport": "tcp", "addr',
    "nul-inside": b'{"version": 1,\x00 "added": []}',
    "not-an-object": b'["version", 1]',
    "future-version": b'{"version": 99, "added": [], "paths": [], "gpus": [], "retired": []}',
    "wrong-types": b'{"version": 1, "added": "10.0.0.1", "paths": {"a": 1}, "gpus": "x", "retired": 7}',
    "deep-nesting": b"[" * 200000,
    "invalid-utf8": b'{"version": 1, "added": ["\xff\xfe"], "paths": [], "gpus": [{"number": 0, "key": "\xc3"}]}',
    "huge": b" " * (5 << 20) + b"{}",
    "directory": directory,
    "fifo": fifo,
    "symlink-to-dev-zero": dev_zero,
}


def test_corrupt_state_files_are_ignored_with_a_warning(netns, client, probes, daemon_factory):
    """Every case at once for peers.json and gpus.json: the daemon starts, warns, measures afresh."""
    results = {}
    for case, content in CORRUPT.items():
        state = tempfile.mkdtemp(prefix=f"lp-corrupt-{os.getpid()}-")
        try:
            for name in ("peers.json", "gpus.json"):
                path = os.path.join(state, name)
                if callable(content):
                    content(path)
                else:
                    with open(path, "wb") as f:
                        f.write(content)
            started = time.monotonic()
            daemon = daemon_factory(netns, env=probes.env(), state_dir=state, gpu=True,
                                    config=f"[Peers]\nAddress={PEER_ADDRESS}\n" + QUICK_PEERS + GPU_CONFIG)
            assert wait_peer(client, peer_path(f"tcp:{PEER_ADDRESS}"), measured), case
            assert faults.wait_for(lambda: gpus_ok(client), timeout=15), case
            results[case] = round(time.monotonic() - started, 2)
            log = daemon.log()
            peer_warning = re.search(r"(Ignoring peers\.json|Cannot read peers\.json|peers\.json: ignored)", log)
            gpu_warning = re.search(r"(Ignoring gpus\.json|Cannot read gpus\.json|gpus\.json: ignoring)",
                                    log)
            assert peer_warning and gpu_warning, f"{case}:\n{log}"
            assert daemon.proc.poll() is None and client.get_all("Manager")["State"] == "running"
            daemon.stop()
        finally:
            shutil.rmtree(state, ignore_errors=True)
    faults.record("corrupt-state-files", cases=len(results), crashes=0, seconds_to_measured=results)


# --- configuration --------------------------------------------------------------------------------------------

# A value each parser refuses. A new parser without one here fails the test, so every key stays covered.
BAD_VALUES = {
    "parse_log_level": "loud",
    "parse_group_name": "no such/group",
    "parse_size_field": "lots",
    "parse_directory_field": "relative/dir",
    "parse_duration_field": "soon",
    "parse_listen_field": "anywhere:http",
    "parse_percent_field": "101",
    "parse_bool_field": "perhaps",
    "parse_deadline_field": "0",
    "parse_watch_interval": "1ms",
    "config_parse_peer_addresses": "peer.example.org",
    "config_parse_listen_addresses": "0.0.0.0:99999",
    "config_parse_link_kinds": "carrier-pigeon",
    "config_parse_key_file": "relative/key",
    "config_parse_positive_duration": "0",
    "config_parse_probe_duration": "2h",
    "config_parse_count": "0",
    "config_parse_test_bytes": "2T",
    "config_parse_tristate": "sometimes",
    "config_parse_unit_names": "inference",
    "config_parse_tcp_streams": "9",
    "config_parse_max_streams": "auto",
    "config_parse_inhibit_what": "tpu",
    "config_parse_health_window": "10s",
    "config_parse_per_minute": "-1",
    "config_parse_bit_error_rate": "1",
    "config_parse_share_percent": "150",
    "config_parse_gbps": "fast",
    "config_parse_escalation_window": "30s",
    "config_parse_escalation_events": "17",
    "config_parse_sweep_interval": "5",
    "config_parse_sweep_timeout": "never",
    "config_parse_max_switches": "0",
    "config_parse_outstanding_smps": "65",
}


def config_items():
    with open(os.path.join(lp.TOP, "src", "daemon", "config.c")) as f:
        text = f.read()
    return re.findall(r'\{\s*"(\w+)",\s*"(\w+)",\s*(\w+),', text)


def test_config_errors_name_file_line_and_key_for_every_key(tmp_path):
    items = config_items()
    assert len(items) >= 30, items
    missing = sorted({parser for _, _, parser in items} - set(BAD_VALUES))
    assert not missing, f"no bad value for {missing}: add one to BAD_VALUES"
    for section, key, parser in items:
        path = tmp_path / f"{section}-{key}.conf"
        # The bad line is the fourth: the message must name that one, not the section's.
        path.write_text(f"# linkprobed.conf\n[{section}]\n\n{key}={BAD_VALUES[parser]}\n")
        proc = lp.run([lp.DAEMON, f"--config={path}", "--bus-address=unix:path=/nonexistent"], check=False,
                      timeout=10)
        assert proc.returncode == 78, (section, key, proc.returncode, proc.stderr)
        assert f"{path}:4:" in proc.stderr and key in proc.stderr and section in proc.stderr, proc.stderr
    faults.record("config-errors", keys=len(items), parsers=len({p for _, _, p in items}), exit_78=len(items))
