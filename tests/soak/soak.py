#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""`make soak`: linkprobed under sustained load for minutes (not part of `make check`).

One daemon, in a network namespace of its own and under umockdev-wrapper on a Thunderbolt testbed,
serving the responder and measuring itself through it, with the real GPU probe on PoCL (quick) and
metrics over HTTP, while at the same time:
  - link flaps, address changes and veth pairs created and deleted (ip -batch, twice a second),
  - Thunderbolt uevents: lane-speed changes of the dock, and the dock unplugged and plugged back in,
  - 50 D-Bus readers, each on its own connection, calling GetManagedObjects and GetAll in loops,
  - ProbePeer() every few seconds and ProbeGpus() every half minute, on top of the TTLs,
  - /metrics scraped every few seconds.
The daemon's RSS and descriptor count are sampled every 5 s. At the end the load stops and the daemon
must agree with `ip -j -d addr show` (0 divergences; SpeedMbps and Duplex excepted, as under umockdev
the net class is read from the testbed too) and with the testbed, and must have logged no warning
beyond those expected. Figures go to $BUILD/soak-figures.json and to stdout.

Needs root (namespaces, umockdev), PoCL (make deps) and a build (make). The machine may be shared:
the load average at start and end is recorded with the figures."""

import argparse
import json
import os
import random
import re
import signal
import subprocess
import sys
import threading
import time

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))

parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
parser.add_argument("--build", default="build")
parser.add_argument("--minutes", type=float, default=10.0)
parser.add_argument("--readers", type=int, default=50)
args = parser.parse_args()
os.environ["LINKPROBE_BUILD"] = os.path.join(TOP, args.build)

import faults  # noqa: E402
import lp  # noqa: E402
import tbt_harness  # noqa: E402
from gi.repository import Gio, GLib  # noqa: E402
from kernel_compare import differences, wait_consistent  # noqa: E402
from test_tbt_daemon import DOCK, dock_records, remove_devices, tbt_objects  # noqa: E402

FIXTURE = "peers-two-docks.umockdev"
PAIRS = 20
MANAGER = lp.IFACE + "Manager"
# Warnings a soak may legitimately cause, each with why.
EXPECTED_WARNINGS = [
    # None so far: every fault the load provokes is logged at info or below.
]


class Counter:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}
        self.latencies = []

    def add(self, key, n=1):
        with self.lock:
            self.values[key] = self.values.get(key, 0) + n

    def latency(self, seconds):
        with self.lock:
            self.latencies.append(seconds)

    def latency_figures(self):
        with self.lock:
            ordered = sorted(self.latencies)
        if not ordered:
            return {}
        return {"getmanagedobjects_ms_median": round(1000 * ordered[len(ordered) // 2], 1),
                "getmanagedobjects_ms_p99": round(1000 * ordered[int(len(ordered) * 0.99)], 1),
                "getmanagedobjects_ms_max": round(1000 * ordered[-1], 1)}


def connect(bus):
    return Gio.DBusConnection.new_for_address_sync(
        bus.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)


def reader(bus, stop, counts):
    conn = connect(bus)
    rng = random.Random()
    try:
        while not stop.is_set():
            try:
                t0 = time.monotonic()
                reply = conn.call_sync(lp.BUS_NAME, lp.ROOT, "org.freedesktop.DBus.ObjectManager",
                                       "GetManagedObjects", None, None, Gio.DBusCallFlags.NONE, 30000, None)
                counts.add("GetManagedObjects")
                counts.latency(time.monotonic() - t0)
                # Picked without unpacking the whole reply into Python objects: 50 threads doing that
                # would measure the interpreter's lock, not the daemon.
                objects = reply.get_child_value(0)
                entry = objects.get_child_value(rng.randrange(objects.n_children()))
                path = entry.get_child_value(0).get_string()
                interfaces = entry.get_child_value(1)
                interface = interfaces.get_child_value(rng.randrange(interfaces.n_children())).get_child_value(0) \
                    .get_string()
                conn.call_sync(lp.BUS_NAME, path, "org.freedesktop.DBus.Properties", "GetAll",
                               GLib.Variant("(s)", (interface,)), None, Gio.DBusCallFlags.NONE, 30000, None)
                counts.add("GetAll")
            except GLib.Error as e:
                # An object removed between the two calls is not an error of the daemon.
                if "UnknownObject" in str(e) or "UnknownInterface" in str(e):
                    counts.add("reads of vanished objects")
                else:
                    counts.add("read errors")
                    print(f"reader: {e.message}", file=sys.stderr)
            stop.wait(rng.uniform(0.05, 0.3))
    finally:
        conn.close_sync(None)


def flapper(ns, stop, counts):
    rng = random.Random(1)
    round_ = 0
    while not stop.is_set():
        cmds = []
        for i in rng.sample(range(PAIRS), 8):
            cmds += [f"link set k{i}a down", f"link set k{i}a up"]
        i = rng.randrange(PAIRS)
        cmds += [f"addr add 10.99.{i}.{2 + round_ % 200}/32 dev k{i}a", f"link set k{i}a mtu {1280 + round_ % 200}"]
        if round_ % 20 == 10:
            cmds += ["link add ktmpa type veth peer name ktmpb", "link set ktmpa up"]
        if round_ % 20 == 19:
            cmds += ["link del ktmpa"]
        if round_ % 40 == 39:
            cmds += [f"addr flush dev k{j}a scope global" for j in range(PAIRS)] + \
                    [f"addr add 10.98.{j}.1/24 dev k{j}a" for j in range(PAIRS)]
        ns.batch(cmds, check=False)
        counts.add("ip commands", len(cmds))
        counts.add("link flaps", 8)
        round_ += 1
        stop.wait(0.5)


def uevents(bed, stop, counts, state):
    rng = random.Random(2)
    round_ = 0
    while not stop.is_set():
        if round_ % 40 == 39:
            # Unplugged the way the kernel does it (children first), then plugged back in.
            for name in ("0-30301.0", "0-30301", "0-301", "0-501.0", "0-501", "0-1"):
                path = next(d["path"] for d in tbt_harness.UmockdevFixture(FIXTURE).devices
                            if d["path"].endswith("/" + name))
                bed.uevent(path, "remove")
                counts.add("uevents")
            remove_devices(bed, FIXTURE, DOCK)
            stop.wait(0.5)
            bed.add_from_string(dock_records())
            counts.add("uevents", 6)
            counts.add("dock replugs")
            state["rx_speed"] = 20
        else:
            speed = rng.choice((10, 20))
            bed.set_attribute(DOCK, "rx_speed", f"{speed}.0 Gb/s\n")
            bed.uevent(DOCK, "change")
            state["rx_speed"] = speed
            counts.add("uevents")
        round_ += 1
        stop.wait(0.5)


def prober(bus, ns, stop, counts):
    conn = connect(bus)
    last_gpu = 0.0
    try:
        while not stop.is_set():
            try:
                conn.call_sync(lp.BUS_NAME, lp.ROOT, MANAGER, "ProbePeer",
                               GLib.Variant("(sa{sv})", ("127.0.0.1", {})), None, Gio.DBusCallFlags.NONE, 30000, None)
                counts.add("ProbePeer calls")
                if time.monotonic() - last_gpu > 30:
                    conn.call_sync(lp.BUS_NAME, lp.ROOT, MANAGER, "ProbeGpus", None, None, Gio.DBusCallFlags.NONE,
                                   120000, None)
                    counts.add("ProbeGpus calls")
                    last_gpu = time.monotonic()
            except GLib.Error as e:
                counts.add("probe call errors")
                print(f"prober: {e.message}", file=sys.stderr)
            scraped = subprocess.run(ns.exec_cmd(["curl", "-sf", "http://127.0.0.1:9477/metrics"]),
                                     capture_output=True, text=True).stdout
            counts.add("metrics scrapes" if "linkprobe_link_up{" in scraped else "metrics scrape failures")
            stop.wait(4)
    finally:
        conn.close_sync(None)


def sampler(bus, pid, stop, samples, started, answers):
    busctl = ["busctl", f"--address={bus.address}", "call", lp.BUS_NAME, lp.ROOT,
              "org.freedesktop.DBus.ObjectManager", "GetManagedObjects"]
    while not stop.is_set():
        samples.append((round(time.monotonic() - started, 1), faults.rss_kib(pid), faults.fd_count(pid)))
        # How long the daemon takes to answer, seen by a client of its own (a process, not a thread
        # sharing the readers' interpreter); includes starting busctl.
        t0 = time.monotonic()
        if subprocess.run(busctl, capture_output=True).returncode == 0:
            answers.append(time.monotonic() - t0)
        stop.wait(5)


def netlink_differences(client, ns):
    """kernel_compare.differences() minus SpeedMbps and Duplex: under umockdev every sysfs read, the net
    class's too, goes to the testbed, which has no veth entries (test_faults.py compares those fields)."""
    return [d for d in differences(client, ns) if " SpeedMbps:" not in d and " Duplex:" not in d]


def warnings_in(log):
    """Lines logged at warning level or worse (<N> prefixes, as JOURNAL_STREAM asks for)."""
    return [line for line in log.splitlines() if line[:3] in ("<0>", "<1>", "<2>", "<3>", "<4>")]


def main():
    if os.geteuid() != 0:
        print("make soak needs root (network namespaces, umockdev)", file=sys.stderr)
        return 2
    seconds = args.minutes * 60
    load_start = os.getloadavg()
    bus = lp.PrivateBus()
    ns = lp.NetNS()
    bed = tbt_harness.LiveTestbed(FIXTURE)
    daemon = None
    stop = threading.Event()
    threads = []
    counts = Counter()
    samples = []
    answers = []
    state = {}
    figures = {"minutes": args.minutes, "readers": args.readers, "load_average_start": load_start}
    ok = True
    try:
        ns.batch([f"link add k{i}a type veth peer name k{i}b" for i in range(PAIRS)] +
                 [f"link set k{i}{s} up" for i in range(PAIRS) for s in "ab"] +
                 [f"addr add 10.98.{i}.1/24 dev k{i}a" for i in range(PAIRS)])
        config = ("[Responder]\nListen=127.0.0.1:7471\n[Peers]\nAddress=127.0.0.1\n"
                  "[Reconciler]\nTickSec=1s\nTcpTtlSec=30s\nTcpDurationSec=200ms\nTcpSamples=10\n"
                  "[Gpu]\nTTLSec=60s\nQuick=yes\nRandomizedDelaySec=0\n"
                  "[Metrics]\nListenAddress=127.0.0.1:9477\n")
        daemon = lp.Daemon(bus, netns=ns, prefix=["umockdev-wrapper"], gpu=True, config=config,
                           args=[f"--sysfs-root={bed.sys}", "--log-level=info"],
                           env={**bed.env(), "JOURNAL_STREAM": "0:0", "LINKPROBE_PROBE_DIR": lp.BUILD})
        pid = faults.daemon_pid(daemon)
        started = time.monotonic()
        threads = [threading.Thread(target=sampler, args=(bus, pid, stop, samples, started, answers)),
                   threading.Thread(target=flapper, args=(ns, stop, counts)),
                   threading.Thread(target=uevents, args=(bed, stop, counts, state)),
                   threading.Thread(target=prober, args=(bus, ns, stop, counts))]
        threads += [threading.Thread(target=reader, args=(bus, stop, counts)) for _ in range(args.readers)]
        for t in threads:
            t.start()
        while time.monotonic() - started < seconds and daemon.proc.poll() is None:
            time.sleep(min(10, max(0.1, seconds - (time.monotonic() - started))))
            if samples:
                t, rss, fds = samples[-1]
                print(f"  {t:6.0f} s  RSS {rss} KiB  fds {fds}  {dict(counts.values)}", flush=True)
        stop.set()
        for t in threads:
            t.join(120)
        figures["alive_at_end"] = daemon.proc.poll() is None
        client = lp.Client(bus)
        try:
            wait_consistent(client, ns, timeout=30)
            time.sleep(1)
            diffs = netlink_differences(client, ns)
            dock = tbt_objects(client).get("0-1")
            tbt_ok = dock is not None and dock["RxLaneGbps"] == state.get("rx_speed", 20)
            getall = client.managed_objects_differing_from_getall()
        finally:
            client.close()
        samples.append((round(time.monotonic() - started, 1), faults.rss_kib(pid), faults.fd_count(pid)))
        log = daemon.log()
        warnings = [w for w in warnings_in(log) if not any(re.search(p, w) for p in EXPECTED_WARNINGS)]
        rss = [s[1] for s in samples]
        fds = [s[2] for s in samples]
        # Flat: after the first quarter (heap and caches warmed up, every kind of work done once) the
        # daemon may not keep growing.
        warm = samples[len(samples) // 4]
        figures.update({
            "rss_kib_first": rss[0], "rss_kib_after_warmup": warm[1], "rss_kib_last": rss[-1], "rss_kib_max": max(rss),
            "fds_first": fds[0], "fds_after_warmup": warm[2], "fds_last": fds[-1], "fds_max": max(fds),
            "samples": len(samples), "divergences": len(diffs), "thunderbolt_matches_testbed": tbt_ok,
            "getall_differs": len(getall), "warnings": warnings[:20], "n_warnings": len(warnings),
            "gpu_measurements": log.count("FP32 TFLOPS"), "peer_measurements": len(re.findall(r"tcp:127\.0\.0\.1: up", log)),
            "udev_overruns_logged": log.count("udev monitor overrun"),
            "netlink_overruns_logged": log.count("Netlink receive buffer overrun"),
            "counts": dict(counts.values), "load_average_end": os.getloadavg(), **counts.latency_figures(),
            "busctl_getmanagedobjects_ms_median": round(1000 * sorted(answers)[len(answers) // 2], 1) if answers else None,
            "busctl_getmanagedobjects_ms_max": round(1000 * max(answers), 1) if answers else None,
        })
        checks = {
            "daemon alive": figures["alive_at_end"],
            "0 divergences from ip -j": not diffs,
            "Thunderbolt objects match the testbed": tbt_ok,
            "GetManagedObjects equals GetAll": not getall,
            "RSS flat (< 2 MiB over the warm-up mark)": rss[-1] - warm[1] < 2048,
            "fds flat (within 3 of the warm-up mark)": abs(fds[-1] - warm[2]) <= 3,
            "no unexpected warnings": not warnings,
            "no read errors": counts.values.get("read errors", 0) == 0,
            "peers and GPUs measured": figures["peer_measurements"] > 0 and figures["gpu_measurements"] > 0,
        }
        figures["checks"] = checks
        ok = all(checks.values())
        for d in diffs[:20]:
            print(f"  divergence: {d}")
    finally:
        stop.set()
        if daemon:
            daemon.stop()
            for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
                if marker in daemon.log_text:
                    ok = False
                    figures["sanitizer"] = marker
        bed.close()
        ns.delete()
        bus.stop()
    figures["samples_rss_fds"] = samples
    path = os.path.join(lp.BUILD, "soak-figures.json")
    with open(path, "w") as f:
        json.dump(figures, f, indent=2)
    for key, value in figures.items():
        if key != "samples_rss_fds":
            print(f"{key}: {value}")
    print(f"soak {'passed' if ok else 'FAILED'}; figures in {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
