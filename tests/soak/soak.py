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
The daemon's RSS and descriptor count are sampled every 5 s. What the daemon did is counted on the bus,
never from its log's wording: a measurement is a PropertiesChanged with a new MeasuredAt on a Peer or
a Gpu. At the end the load stops and the daemon must agree with `ip -j -d addr show` (0 divergences;
SpeedMbps and Duplex excepted, as under umockdev the net class is read from the testbed too) and with
the testbed, must have logged no warning beyond those expected, and every worker thread must have run
to the end (one that dies fails the soak). The figures are printed as `make bench` prints its own
(bench/report.py: metric, ours, goal, met), RSS and descriptors over time included, and written with
every sample to $BUILD/soak-figures.json, so that runs compare.

Needs root (namespaces, umockdev), PoCL (make deps) and a build (make). The machine may be shared:
the load average at start and end is recorded with the figures."""

import argparse
import json
import os
import random
import re
import subprocess
import sys
import threading
import time
import traceback

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(TOP, "tests", "integration"))
sys.path.insert(0, os.path.join(TOP, "bench"))

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
from report import Report  # noqa: E402
from test_tbt_daemon import DOCK, dock_records, remove_devices, tbt_objects  # noqa: E402

# PyGObject builds a type and fills in its members on first use, and that is not safe to race: of 50
# threads that met Gio.DBusConnectionFlags together, some found it without AUTHENTICATION_CLIENT and
# died at start. Everything the threads use from GLib and Gio is resolved here, once, before any starts.
CONNECTION_FLAGS = Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION
CALL_FLAGS = Gio.DBusCallFlags.NONE
SIGNAL_FLAGS = Gio.DBusSignalFlags.NONE
DBusConnection, GError, Variant = Gio.DBusConnection, GLib.Error, GLib.Variant
MainContext, MainLoop, timeout_source_new = GLib.MainContext, GLib.MainLoop, GLib.timeout_source_new

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
    return DBusConnection.new_for_address_sync(bus.address, CONNECTION_FLAGS, None, None)


class Workers:
    """The load's threads. One that raises is recorded with its traceback: a soak that lost a worker did
    not apply the load it reports, and fails."""

    def __init__(self):
        self.threads = []
        self.deaths = []
        self.lock = threading.Lock()

    def start(self, name, target, *args):
        def run():
            try:
                target(*args)
            except BaseException:
                with self.lock:
                    self.deaths.append(f"{name}: {traceback.format_exc().strip().splitlines()[-1]}")
                print(f"worker {name} died:\n{traceback.format_exc()}", file=sys.stderr, flush=True)
        thread = threading.Thread(target=run, name=name)
        self.threads.append(thread)
        thread.start()

    def join(self, timeout):
        deadline = time.monotonic() + timeout
        for t in self.threads:
            t.join(max(0.1, deadline - time.monotonic()))
        return [t.name for t in self.threads if t.is_alive()]


class Measurements:
    """What the daemon measured, as the bus says it: each PropertiesChanged of a Peer or a Gpu that carries
    a new MeasuredAt is one measurement; one that says ProbeState "failed" is one failure. On a thread
    of its own, with its own main context."""

    KINDS = ("Peer", "Gpu")

    def __init__(self, bus):
        self.lock = threading.Lock()
        self.measured = {kind: 0 for kind in self.KINDS}
        self.failed = {kind: 0 for kind in self.KINDS}
        self.ready = threading.Event()
        self.loop = None
        self.bus = bus

    def run(self, stop):
        context = MainContext.new()
        context.push_thread_default()
        conn = connect(self.bus)
        for kind in self.KINDS:
            conn.signal_subscribe(None, "org.freedesktop.DBus.Properties", "PropertiesChanged", None,
                                  lp.IFACE + kind, SIGNAL_FLAGS, self.on_changed, kind)
        self.loop = MainLoop.new(context, False)
        # Stops with the others: the main thread sets stop, a timeout here sees it.
        source = timeout_source_new(200)
        source.set_callback(lambda *a: (self.loop.quit() if stop.is_set() else None, True)[1])
        source.attach(context)
        self.ready.set()
        self.loop.run()
        conn.close_sync(None)

    def on_changed(self, conn, sender, path, interface, member, params, kind):
        _, changed, _ = params.unpack()
        with self.lock:
            if changed.get("MeasuredAt", 0) > 0:
                self.measured[kind] += 1
            if changed.get("ProbeState") == "failed":
                self.failed[kind] += 1

    def figures(self):
        with self.lock:
            return dict(self.measured), dict(self.failed)


def reader(bus, stop, counts):
    conn = connect(bus)
    rng = random.Random()
    try:
        while not stop.is_set():
            try:
                t0 = time.monotonic()
                reply = conn.call_sync(lp.BUS_NAME, lp.ROOT, "org.freedesktop.DBus.ObjectManager",
                                       "GetManagedObjects", None, None, CALL_FLAGS, 30000, None)
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
                               Variant("(s)", (interface,)), None, CALL_FLAGS, 30000, None)
                counts.add("GetAll")
            except GError as e:
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
                               Variant("(sa{sv})", ("127.0.0.1", {})), None, CALL_FLAGS, 30000, None)
                counts.add("ProbePeer calls")
                if time.monotonic() - last_gpu > 30:
                    conn.call_sync(lp.BUS_NAME, lp.ROOT, MANAGER, "ProbeGpus", None, None, CALL_FLAGS, 120000, None)
                    counts.add("ProbeGpus calls")
                    last_gpu = time.monotonic()
            except GError as e:
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


def percentile(values, p):
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(len(ordered) * p))] if ordered else None


def over_time(samples, column, unit, points=5):
    """A few samples spread over the run ("0 s 5476, 45 s 5490, ... KiB"): the shape, comparable run to run."""
    if not samples:
        return "-"
    picks = sorted({round(i * (len(samples) - 1) / (points - 1)) for i in range(points)})
    return ", ".join(f"{samples[i][0]:.0f} s {samples[i][column]}" for i in picks) + f" {unit}"


def report_figures(figures, checks, samples):
    """The soak in bench/report.py's form: the checks as goals met or missed, the rest as information."""
    r = Report()
    c = figures["counts"]
    r.row(f"soak, {figures['minutes']:g} min, {figures['readers']} readers", "load average "
          f"{figures['load_average_start'][0]:.1f} -> {figures['load_average_end'][0]:.1f}", goal="info")
    r.row("RSS over time", over_time(samples, 1, "KiB"), goal="info")
    r.row("RSS, after warm-up -> last (max)", f"{figures['rss_kib_after_warmup']} -> {figures['rss_kib_last']} KiB "
          f"(max {figures['rss_kib_max']})", goal="< 2 MiB growth", verdict=checks["RSS flat (< 2 MiB over the warm-up mark)"])
    r.row("fds over time", over_time(samples, 2, "fds"), goal="info")
    r.row("fds, after warm-up -> last (max)", f"{figures['fds_after_warmup']} -> {figures['fds_last']} "
          f"(max {figures['fds_max']})", goal="within 3", verdict=checks["fds flat (within 3 of the warm-up mark)"])
    r.row("divergences from ip -j -d addr show", figures["divergences"], goal="0",
          verdict=checks["0 divergences from ip -j"])
    r.row("GetManagedObjects = GetAll (objects differing)", figures["getall_differs"], goal="0",
          verdict=checks["GetManagedObjects equals GetAll"])
    r.row("Thunderbolt objects match the testbed", "yes" if figures["thunderbolt_matches_testbed"] else "no",
          goal="yes", verdict=checks["Thunderbolt objects match the testbed"])
    lat = [figures.get(f"getmanagedobjects_ms_{k}") for k in ("median", "p99", "max")]
    r.row(f"GetManagedObjects under load, {figures['readers']} GDBus readers",
          "-" if lat[0] is None else f"median {lat[0]} ms, p99 {lat[1]} ms, max {lat[2]} ms", goal="info")
    r.row("GetManagedObjects under load, busctl every 5 s",
          "-" if figures["busctl_getmanagedobjects_ms_median"] is None else
          f"median {figures['busctl_getmanagedobjects_ms_median']} ms, max {figures['busctl_getmanagedobjects_ms_max']} ms",
          goal="info")
    r.row("peer measurements (MeasuredAt on the bus)", f"{figures['peer_measurements']} "
          f"({figures['peer_failures']} failed)", goal="> 0", verdict=figures["peer_measurements"] > 0)
    r.row("GPU measurements (MeasuredAt on the bus)", f"{figures['gpu_measurements']} "
          f"({figures['gpu_failures']} failed)", goal="> 0", verdict=figures["gpu_measurements"] > 0)
    r.row("load applied", f"{c.get('link flaps', 0)} link flaps, {c.get('uevents', 0)} uevents, "
          f"{c.get('GetManagedObjects', 0)} GetManagedObjects, {c.get('GetAll', 0)} GetAll", goal="info")
    r.row("read errors", c.get("read errors", 0), goal="0", verdict=checks["no read errors"])
    r.row("worker threads that died or hung", len(figures["worker_deaths"]) + len(figures["workers_hung"]), goal="0",
          verdict=checks["every worker thread ran to the end"])
    r.row("unexpected warnings logged", figures["n_warnings"], goal="0", verdict=checks["no unexpected warnings"])
    r.row("daemon alive at the end", "yes" if figures["alive_at_end"] else "no", goal="yes",
          verdict=checks["daemon alive"])
    return r


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
    workers = Workers()
    counts = Counter()
    samples = []
    answers = []
    state = {}
    figures = {"minutes": args.minutes, "readers": args.readers, "load_average_start": load_start}
    report = None
    ok = True
    try:
        ns.batch([f"link add k{i}a type veth peer name k{i}b" for i in range(PAIRS)] +
                 [f"link set k{i}{s} up" for i in range(PAIRS) for s in "ab"] +
                 [f"addr add 10.98.{i}.1/24 dev k{i}a" for i in range(PAIRS)])
        config = ("[Responder]\nListen=127.0.0.1:7471\n[Peers]\nAddress=127.0.0.1\n"
                  "[Reconciler]\nTickSec=1s\nTcpTtlSec=30s\nTcpDurationSec=200ms\nTcpSamples=10\n"
                  "[Gpu]\nTTLSec=60s\nQuick=yes\nRandomizedDelaySec=0\n"
                  "[Metrics]\nListenAddress=127.0.0.1:9477\n")
        # Counting starts before the daemon does: its first measurements count too.
        measurements = Measurements(bus)
        workers.start("measurements", measurements.run, stop)
        if not measurements.ready.wait(10):
            raise RuntimeError("the measurement watcher did not start")
        daemon = lp.Daemon(bus, netns=ns, prefix=["umockdev-wrapper"], gpu=True, config=config,
                           args=[f"--sysfs-root={bed.sys}", "--log-level=info"],
                           env={**bed.env(), "JOURNAL_STREAM": "0:0", "LINKPROBE_PROBE_DIR": lp.BUILD})
        pid = faults.daemon_pid(daemon)
        started = time.monotonic()
        workers.start("sampler", sampler, bus, pid, stop, samples, started, answers)
        workers.start("flapper", flapper, ns, stop, counts)
        workers.start("uevents", uevents, bed, stop, counts, state)
        workers.start("prober", prober, bus, ns, stop, counts)
        for i in range(args.readers):
            workers.start(f"reader{i}", reader, bus, stop, counts)
        while time.monotonic() - started < seconds and daemon.proc.poll() is None:
            time.sleep(min(10, max(0.1, seconds - (time.monotonic() - started))))
            if samples:
                t, rss, fds = samples[-1]
                measured, _ = measurements.figures()
                print(f"  {t:6.0f} s  RSS {rss} KiB  fds {fds}  measured {measured}  {dict(counts.values)}"
                      f"{'  DIED: ' + '; '.join(workers.deaths) if workers.deaths else ''}", flush=True)
        stop.set()
        hung = workers.join(120)
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
        measured, failed = measurements.figures()
        figures.update({
            "rss_kib_first": rss[0], "rss_kib_after_warmup": warm[1], "rss_kib_last": rss[-1], "rss_kib_max": max(rss),
            "fds_first": fds[0], "fds_after_warmup": warm[2], "fds_last": fds[-1], "fds_max": max(fds),
            "samples": len(samples), "divergences": len(diffs), "thunderbolt_matches_testbed": tbt_ok,
            "getall_differs": len(getall), "warnings": warnings[:20], "n_warnings": len(warnings),
            "gpu_measurements": measured["Gpu"], "peer_measurements": measured["Peer"],
            "gpu_failures": failed["Gpu"], "peer_failures": failed["Peer"],
            "worker_deaths": list(workers.deaths), "workers_hung": hung,
            "udev_overruns_logged": log.count("udev monitor overrun"),
            "netlink_overruns_logged": log.count("Netlink receive buffer overrun"),
            "counts": dict(counts.values), "load_average_end": os.getloadavg(), **counts.latency_figures(),
            "busctl_getmanagedobjects_ms_median": round(1000 * percentile(answers, 0.5), 1) if answers else None,
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
            "every worker thread ran to the end": not workers.deaths and not hung,
        }
        figures["checks"] = checks
        ok = all(checks.values())
        report = report_figures(figures, checks, samples)
        for d in diffs[:20]:
            print(f"  divergence: {d}")
        for w in warnings[:20]:
            print(f"  warning: {w}")
    finally:
        stop.set()
        workers.join(10)
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
    if report:
        print()
        report.print()
        report.dump(path, figures)
    else:
        with open(path, "w") as f:
            json.dump(figures, f, indent=2)
    failed_checks = [name for name, met in figures.get("checks", {}).items() if not met]
    print(f"soak {'passed' if ok else 'FAILED'}{': ' + ', '.join(failed_checks) if failed_checks else ''}; "
          f"figures in {path}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
