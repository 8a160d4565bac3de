# SPDX-License-Identifier: LGPL-2.1-or-later
"""GPUs on the bus and Manager.Inhibit(): linkprobed runs linkprobe-probe-gpu as a child and publishes gpu/<n>
objects; results survive a restart; hung, crashing and lying probes are reported as failed; inhibitors
hold probes off until their descriptor closes or their client leaves; linkprobectl gpu/probe/inhibit.

Most tests run a fake probe (fake-probe-gpu, copied into a directory of the test's own that
LINKPROBE_PROBE_DIR points at) so that each behaviour is exact and fast; the first runs the real probe on
PoCL's CPU device with [Gpu] Quick=yes (a measuring run of well under a second)."""

import json
import math
import os
import shutil
import signal
import stat
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lp  # noqa: E402
from lp import BUILD, ROOT, wait_until  # noqa: E402
from test_probe_gpu import bandwidth_limit_gb_s, fp32_limit_gflops  # noqa: E402

from gi.repository import Gio, GLib  # noqa: E402

HERE = os.path.dirname(os.path.abspath(__file__))
FAKE_PROBE = os.path.join(HERE, "fake-probe-gpu")
REAL_PROBE = os.path.join(BUILD, "linkprobe-probe-gpu")
GPU = lp.IFACE + "Gpu"
MANAGER = lp.IFACE + "Manager"
ERROR = "org.linkprobe.LinkProbe1.Error."
NOBODY = 65534


def pid_alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie is dead too: only its parent has not collected it yet.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


def config(ttl="1h", deadline="20s", delay="0", quick=True, extra=""):
    return (f"[Gpu]\nTTLSec={ttl}\nDeadlineSec={deadline}\nRandomizedDelaySec={delay}\n"
            f"Quick={'yes' if quick else 'no'}\n{extra}")


def gpus(client):
    """The gpu objects by Index."""
    return {props[GPU]["Index"]: dict(props[GPU], Path=path)
            for path, props in client.objects().items() if GPU in props}


def error_name(e):
    return Gio.DBusError.get_remote_error(e) if isinstance(e, GLib.Error) else None


def call_error(fn, *args, **kw):
    """The D-Bus error name a call fails with, or None when it succeeds."""
    try:
        fn(*args, **kw)
    except GLib.Error as e:
        return error_name(e)
    return None


def probe_gpus(client, timeout_ms=30000):
    (paths,) = client.call(ROOT, MANAGER, "ProbeGpus", timeout_ms=timeout_ms)
    return paths


def inhibit(conn, what="gpu", who="test_gpu", why="testing"):
    """Takes an inhibitor on a Gio connection; returns the descriptor that holds it."""
    _, fds = conn.call_with_unix_fd_list_sync(lp.BUS_NAME, ROOT, MANAGER, "Inhibit",
                                              GLib.Variant("(sss)", (what, who, why)), GLib.VariantType("(h)"),
                                              Gio.DBusCallFlags.NONE, 10000, None, None)
    (fd,) = fds.steal_fds()
    return fd


def new_connection(bus):
    return Gio.DBusConnection.new_for_address_sync(
        bus.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
        None, None)


def inhibited(client):
    return client.get_all("Manager")["Inhibited"]


def device(key, name, **kw):
    d = {"key": key, "name": name, "vendor": "linkprobe tests", "vendor_id": 4318, "platform": "Fake platform",
         "type": "gpu", "available": True, "host_unified_memory": False, "compute_units": 108,
         "max_clock_mhz": 1410, "global_memory_bytes": 40 << 30, "max_allocation_bytes": 10 << 30,
         "driver_version": "1.0-fake", "opencl_version": "OpenCL 3.0 fake", "fp16_supported": False,
         "uuid": None, "pci_bus_id": None}
    d.update(kw)
    return d


def measurement(bandwidth=1555.0, fp32=19500.0, fp16="unsupported", warnings=()):
    """As the probe writes it: the best runs (here 10% above the medians) under the names they had
    before the medians were the figures, the medians beside them."""
    best = (lambda v: v if v == "unsupported" else v * 1.1)
    return {"status": "ok", "memory_bandwidth_gb_s": best(bandwidth), "fp32_gflops": best(fp32),
            "fp16_gflops": best(fp16), "memory_bandwidth_median_gb_s": bandwidth, "fp32_median_gflops": fp32,
            "fp16_median_gflops": fp16, "timing": "device", "duration_ms": 3.0, "warnings": list(warnings),
            "memory_bandwidth": {"relative_spread": 0.02}, "fp32": {"relative_spread": 0.01},
            "fp16": {"status": "unsupported"} if fp16 == "unsupported" else {"relative_spread": 0.03}}


A100 = device("uuid:0000-a100@Fake platform", "Fake A100", uuid="0000-a100", pci_bus_id="0000:17:00.0",
              fp16_supported=True)
MI250 = device("pci:0000:c1:00.0@Fake platform", "Fake MI250", pci_bus_id="0000:c1:00.0")


class FakeProbe:
    """A directory holding the fake probe as linkprobe-probe-gpu, steered through control.json."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix=f"lp-gpu-{os.getpid()}-")
        os.chmod(self.dir, 0o755)
        shutil.copy(FAKE_PROBE, os.path.join(self.dir, "linkprobe-probe-gpu"))
        self.control = {"inventory": "ok", "measure": "ok", "devices": [A100, MI250],
                        "measurements": {A100["key"]: measurement(fp16=78000.0), MI250["key"]: measurement(1600.0, 23900.0)}}
        self.write()

    def set(self, **kw):
        self.control.update(kw)
        self.write()

    def write(self):
        path = os.path.join(self.dir, "control.json")
        with open(path + ".tmp", "w") as f:
            json.dump(self.control, f)
        os.rename(path + ".tmp", path)

    def calls(self):
        try:
            with open(os.path.join(self.dir, "calls.log")) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def grandchild(self):
        """The pid a hanging run's child wrote, or None."""
        try:
            with open(os.path.join(self.dir, "grandchild.pid")) as f:
                return int(f.read())
        except (FileNotFoundError, ValueError):
            return None

    def measure_calls(self):
        return [c for c in self.calls() if "--measure" in c.split()]

    def env(self):
        return {"LINKPROBE_PROBE_DIR": self.dir}

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture
def fake():
    f = FakeProbe()
    yield f
    f.remove()


def start(daemon_factory, fake=None, **kw):
    kw.setdefault("config", config())
    env = dict(kw.pop("env", {}))
    if fake:
        env.update(fake.env())
    return daemon_factory(gpu=True, env=env, **kw)


def wait_states(client, states, timeout=15.0):
    """Waits until the gpu objects' ProbeStates are exactly states (by Index); returns the objects."""
    def check():
        g = gpus(client)
        return g if {i: p["ProbeState"] for i, p in g.items()} == states else None
    result = wait_until(check, timeout)
    assert result, f"expected {states}, have {({i: p['ProbeState'] for i, p in gpus(client).items()})}"
    return result


# --- the real probe on PoCL ---------------------------------------------------------------------------------

@pytest.fixture(scope="module")
def pocl_inventory():
    proc = subprocess.run([REAL_PROBE], capture_output=True, text=True, timeout=60)
    doc = json.loads(proc.stdout)
    if not doc.get("devices"):
        pytest.skip("no OpenCL device on this machine (is pocl-opencl-icd installed? `make deps`)")
    return doc


def test_pocl_devices_are_published_and_measured(pocl_inventory, client, signals, daemon_factory):
    started = time.time()
    start(daemon_factory)
    expected = {i: "ok" for i in range(len(pocl_inventory["devices"]))}
    objects = wait_states(client, expected, timeout=60)
    for d in pocl_inventory["devices"]:
        g = next(o for o in objects.values() if o["Key"] == d["key"])
        assert g["Name"] == d["name"] and g["Vendor"] == d["vendor"] and g["Platform"] == d["platform"]
        assert g["DeviceType"] == d["type"] and g["VendorId"] == d["vendor_id"]
        assert g["ComputeUnits"] == d["compute_units"] and g["ClockMHz"] == d["max_clock_mhz"]
        assert g["GlobalMemoryBytes"] == d["global_memory_bytes"]
        assert g["MaxAllocationBytes"] == d["max_allocation_bytes"]
        assert g["Fp16Supported"] == d["fp16_supported"] and g["DriverVersion"] == d["driver_version"]
        assert g["Uuid"] == (d["uuid"] or "") and g["PciBusId"] == (d["pci_bus_id"] or "")
        assert 0 < g["Fp32Tflops"] * 1000 <= fp32_limit_gflops(d), g
        assert 0 < g["MemoryBandwidthGBps"] <= bandwidth_limit_gb_s(d), g
        # Host<->device copies through pinned memory: on a CPU device, memory copies.
        assert 0 < g["HostToDeviceGBps"] <= bandwidth_limit_gb_s(d), g
        assert 0 < g["DeviceToHostGBps"] <= bandwidth_limit_gb_s(d), g
        assert g["PciDevice"] == "/" and g["PciPathGBps"] == 0  # PoCL's CPU device has no PCI function
        if d["fp16_supported"]:
            assert 0 < g["Fp16Tflops"] < 1000
        else:
            assert math.isnan(g["Fp16Tflops"])  # unsupported: NaN, never 0
        assert started * 1e6 <= g["MeasuredAt"] <= time.time() * 1e6
        assert g["Stale"] is False and g["LastError"] == ""
        assert any("Quick=yes" in w for w in g["Warnings"])
    assert objects[0]["Path"] == f"{ROOT}/gpu/_30"

    # Announced once with InterfacesAdded, then running -> ok in PropertiesChanged.
    # The signals come on the collector's own connection, and a large flush's signals go out in slices
    # after the flush (bus-object.c): the last may arrive after the state was read above, so wait for it.
    path = objects[0]["Path"]

    def probe_states(events):
        added = [e for e in events if e[3] == "InterfacesAdded" and e[4][0] == path]
        changed = [e[4][1]["ProbeState"] for e in events
                   if e[1] == path and e[3] == "PropertiesChanged" and "ProbeState" in e[4][1]]
        return (len(added), [added[0][4][1][GPU]["ProbeState"]] + changed if added else changed)

    signals.wait(lambda events: probe_states(events)[1][-1:] == ["ok"], timeout=10)
    n_added, seen = probe_states(signals.events)
    assert n_added == 1
    assert "running" in seen and seen[-1] == "ok" and seen.index("running") < len(seen) - 1

    # Managed objects (served from our tables) read as sd-bus's GetAll reads them; and the metrics.
    assert client.managed_objects_differing_from_getall() == []
    text = lp.ctl(client.bus, "metrics").stdout
    check = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    assert 'linkprobe_gpu_info{gpu="0",' in text and "linkprobe_gpu_fp32_flops{gpu=\"0\"" in text


def test_no_opencl_icd_is_no_devices_and_quiet(client, daemon_factory):
    empty = tempfile.mkdtemp(prefix=f"lp-no-icd-{os.getpid()}-")
    try:
        daemon = start(daemon_factory, env={"OCL_ICD_VENDORS": empty, "LINKPROBE_PROBE_DIR": BUILD})
        assert probe_gpus(client) == []
        assert gpus(client) == {}
        assert client.get_all("Manager")["State"] == "running"
        result = lp.ctl(client.bus, "gpu")
        assert result.returncode == 0 and "No GPUs" in result.stdout
        log = daemon.log()
        assert "GPU" not in log.replace("GPU probe", ""), log  # nothing to say about GPUs
    finally:
        shutil.rmtree(empty, ignore_errors=True)


# --- publishing what the probe says ----------------------------------------------------------------------

def test_fake_devices_are_published_with_every_property(fake, client, daemon_factory):
    start(daemon_factory, fake)
    objects = wait_states(client, {0: "ok", 1: "ok"})
    a100, mi250 = objects[0], objects[1]
    assert a100["Path"] == f"{ROOT}/gpu/_30" and mi250["Path"] == f"{ROOT}/gpu/_31"
    assert a100["Key"] == A100["key"] and a100["Uuid"] == "0000-a100" and a100["PciBusId"] == "0000:17:00.0"
    assert a100["Fp16Supported"] is True and a100["Fp16Tflops"] == pytest.approx(78.0)
    assert a100["Fp32Tflops"] == pytest.approx(19.5) and a100["MemoryBandwidthGBps"] == pytest.approx(1555.0)
    assert a100["MemoryBandwidthSpread"] == pytest.approx(0.02) and a100["Fp32Spread"] == pytest.approx(0.01)
    assert a100["MemoryBandwidthBestGBps"] == pytest.approx(1710.5) and a100["Fp32BestTflops"] == pytest.approx(21.45)
    assert a100["Fp16BestTflops"] == pytest.approx(85.8) and a100["Fp16Spread"] == pytest.approx(0.03)
    assert math.isnan(mi250["Fp16BestTflops"]) and mi250["Fp16Spread"] == 0
    assert a100["GlobalMemoryBytes"] == 40 << 30 and a100["ComputeUnits"] == 108 and a100["ClockMHz"] == 1410
    assert a100["Available"] is True and a100["HostUnifiedMemory"] is False
    assert math.isnan(mi250["Fp16Tflops"]) and mi250["Fp32Tflops"] == pytest.approx(23.9)
    # One inventory run, one measuring run, both with a deadline; the measuring one quick as configured.
    calls = fake.calls()
    assert calls == ["--deadline=20000ms", "--measure --quick --deadline=20000ms"], calls


def test_one_failing_device_is_failed_alone(fake, client, daemon_factory):
    fake.set(measurements={A100["key"]: {"status": "error", "error": {"name": "CL_OUT_OF_RESOURCES",
                                                                      "message": "clCreateContext failed"}},
                           MI250["key"]: measurement()})
    start(daemon_factory, fake)
    objects = wait_states(client, {0: "failed", 1: "ok"})
    assert objects[0]["LastError"] == "CL_OUT_OF_RESOURCES: clCreateContext failed"
    assert objects[0]["MeasuredAt"] == 0 and objects[0]["Fp32Tflops"] == 0
    assert objects[1]["LastError"] == ""


def test_unavailable_device_is_unsupported(fake, client, daemon_factory):
    fake.set(devices=[dict(A100, available=False)],
             measurements={A100["key"]: {"status": "error", "error": {"name": "CL_DEVICE_NOT_AVAILABLE",
                                                                      "message": "clCreateContext failed"}}})
    start(daemon_factory, fake)
    objects = wait_states(client, {0: "unsupported"})
    assert objects[0]["Available"] is False and objects[0]["LastError"].startswith("CL_DEVICE_NOT_AVAILABLE")


def test_bad_documents_lose_nothing_and_crash_nothing(fake, client, daemon_factory):
    # A device with an impossible value is left out, a name that is not UTF-8 is published escaped, a
    # figure that cannot be is not published.
    bad = dict(MI250, key="bad@x", compute_units=-1)
    raw_mi250 = dict(MI250, name="NAME", measurement=measurement())
    raw_a100 = dict(A100, measurement=dict(measurement(), fp32_gflops=-5.0))
    docs = {kind: json.dumps({"probe": "gpu", "version": 1, "status": "ok", "measured": kind == "measure",
                              "platforms": [], "devices": [raw_a100, bad, raw_mi250]})
            .replace("NAME", "Caf\u00e9 GPU \xff")  # written as the bytes E9 and FF: not UTF-8
            for kind in ("inventory", "measure")}
    fake.set(inventory="raw", measure="raw", raw_inventory=docs["inventory"], raw_measure=docs["measure"])
    daemon = start(daemon_factory, fake)
    objects = wait_states(client, {0: "failed", 1: "ok"})
    assert objects[1]["Name"] == "Caf\\xe9 GPU \\xff"
    assert objects[0]["LastError"] == "bad-output: malformed measurement"
    assert "Ignoring device 1" in daemon.log()

    # Whole documents that are not documents: every device failed, the daemon carries on.
    for mode, expected in (("garbage", "bad-output:"), ("no-devices", "bad-output:"), ("crash", "crashed:"),
                           ("error", "CL_OUT_OF_RESOURCES:")):
        fake.set(measure=mode)
        with pytest.raises(GLib.Error) as e:
            probe_gpus(client)
        assert error_name(e.value) == ERROR + "Failed"
        objects = wait_states(client, {0: "failed", 1: "failed"})
        assert all(o["LastError"].startswith(expected) for o in objects.values()), (mode, objects)
    assert "gpu-probe-failed" in client.get_all("Manager")["DegradedReasons"]
    # The last good figures stay, with their time; the state says the last attempt failed.
    assert objects[1]["Fp32Tflops"] == pytest.approx(19.5)

    fake.set(measure="ok", measurements={A100["key"]: measurement(), MI250["key"]: measurement()})
    assert len(probe_gpus(client)) == 2
    wait_states(client, {0: "ok", 1: "ok"})
    assert client.get_all("Manager")["DegradedReasons"] == []


def test_a_hanging_probe_is_killed_at_its_deadline(fake, client, signals, daemon_factory):
    fake.set(measure="hang")
    daemon = start(daemon_factory, fake, config=config(deadline="1s"))
    wait_states(client, {0: "running", 1: "running"})
    began = time.monotonic()
    objects = wait_states(client, {0: "failed", 1: "failed"}, timeout=15)
    took = time.monotonic() - began
    # The deadline (1 s) plus the runner's grace (2 s) before the kill.
    assert 1.5 < took < 8, took
    assert all(o["LastError"].startswith("deadline: killed after") for o in objects.values()), objects
    # The whole process group went, the probe's own child too.
    with open(os.path.join(fake.dir, "grandchild.pid")) as f:
        pid = int(f.read())
    assert wait_until(lambda: not os.path.exists(f"/proc/{pid}") or
                      open(f"/proc/{pid}/stat").read().split(")")[1].split()[0] == "Z", 5)
    assert "overran its deadline" in daemon.log()
    assert client.get_all("Manager")["State"] == "degraded"


def test_a_missing_probe_is_a_failure_not_a_crash(client, daemon_factory):
    empty = tempfile.mkdtemp(prefix=f"lp-no-probe-{os.getpid()}-")
    try:
        start(daemon_factory, env={"LINKPROBE_PROBE_DIR": empty})
        assert wait_until(lambda: "gpu-probe-failed" in client.get_all("Manager")["DegradedReasons"])
        # With no device list there is no gpu object to say why: the Manager does, naming the program.
        why = client.get_all("Manager")["GpuProbeError"]
        assert why.startswith("cannot-run: ") and f"{empty}/linkprobe-probe-gpu" in why, why
        with pytest.raises(GLib.Error) as e:
            probe_gpus(client)
        assert error_name(e.value) == ERROR + "Failed" and "cannot-run" in e.value.message
    finally:
        shutil.rmtree(empty, ignore_errors=True)


def test_a_daemon_in_its_build_tree_runs_the_probes_built_beside_it(client, daemon_factory):
    """build/linkprobed, started as a developer would after make, without LINKPROBE_PROBE_DIR."""
    empty = tempfile.mkdtemp(prefix=f"lp-no-icd-{os.getpid()}-")
    try:
        start(daemon_factory, env={"OCL_ICD_VENDORS": empty, "LINKPROBE_PROBE_DIR": ""})
        assert probe_gpus(client) == []  # the probe ran (and found no OpenCL device)
        manager = client.get_all("Manager")
        assert manager["GpuProbeError"] == "" and "gpu-probe-failed" not in manager["DegradedReasons"], manager
    finally:
        shutil.rmtree(empty, ignore_errors=True)


# --- schedule, persistence, numbering -------------------------------------------------------------------

def test_results_are_renewed_after_their_ttl_and_not_before(fake, client, daemon_factory):
    start(daemon_factory, fake, config=config(ttl="2s"))
    first = wait_states(client, {0: "ok", 1: "ok"})[0]["MeasuredAt"]
    assert len(fake.measure_calls()) == 1
    time.sleep(1.0)
    assert len(fake.measure_calls()) == 1  # not before the TTL
    assert wait_until(lambda: len(fake.measure_calls()) >= 2, 5)
    second = wait_until(lambda: gpus(client)[0]["MeasuredAt"] > first and gpus(client)[0]["MeasuredAt"], 5)
    assert second - first >= 2_000_000


def test_an_idle_daemon_does_not_probe(fake, client, daemon_factory):
    start(daemon_factory, fake, config=config(ttl="1h"))
    wait_states(client, {0: "ok", 1: "ok"})
    time.sleep(2.5)
    assert len(fake.calls()) == 2  # the inventory and the first measurement, nothing since


def test_failures_are_retried_with_back_off(fake, client, daemon_factory):
    fake.set(measure="error")
    start(daemon_factory, fake, config=config(ttl="1s"))
    wait_states(client, {0: "failed", 1: "failed"})
    time.sleep(4.5)
    # 1 s, then 2 s: three attempts in about four seconds, not dozens.
    assert 2 <= len(fake.measure_calls()) <= 4, fake.calls()


def test_restart_republishes_saved_results(fake, client, signals, daemon_factory):
    state = tempfile.mkdtemp(prefix=f"lp-gpu-state-{os.getpid()}-")
    try:
        first = start(daemon_factory, fake, state_dir=state)
        before = wait_states(client, {0: "ok", 1: "ok"})
        first.stop()
        assert os.path.exists(os.path.join(state, "gpus.json"))

        # The next daemon's probe hangs: whatever it publishes comes from the state file.
        fake.set(inventory="hang", measure="hang")
        second = start(daemon_factory, fake, state_dir=state)
        after = wait_until(lambda: gpus(client), 5)
        assert after.keys() == before.keys()
        for i in before:
            for name in ("Path", "Key", "Name", "MeasuredAt", "Fp32Tflops", "MemoryBandwidthGBps", "ProbeState",
                         "Warnings", "ComputeUnits", "PciBusId"):
                assert after[i][name] == before[i][name], name
            assert after[i]["Stale"] is False
        assert math.isnan(after[1]["Fp16Tflops"]) and after[0]["Fp16Tflops"] == before[0]["Fp16Tflops"]
        second.stop()

        # Past the TTL the saved figures are still published, marked stale, and renewed.
        time.sleep(1.1)
        fake.set(inventory="ok", measure="ok")
        signals.clear()
        start(daemon_factory, fake, state_dir=state, config=config(ttl="1s"))
        added = signals.wait(lambda ev: [e[4][1][GPU] for e in ev if e[3] == "InterfacesAdded"
                                         and GPU in e[4][1]][:2] if len([e for e in ev if e[3] == "InterfacesAdded"
                                                                        and GPU in e[4][1]]) >= 2 else None)
        assert all(o["Stale"] and o["MeasuredAt"] == before[o["Index"]]["MeasuredAt"] for o in added), added
        renewed = signals.wait(lambda ev: {e[1] for e in ev if e[3] == "PropertiesChanged" and
                                           e[4][1].get("Stale") is False and e[4][1].get("MeasuredAt", 0) >
                                           before[0]["MeasuredAt"]} == {before[0]["Path"], before[1]["Path"]})
        assert renewed
    finally:
        shutil.rmtree(state, ignore_errors=True)


def test_numbers_are_stable_per_device(fake, client, daemon_factory):
    state = tempfile.mkdtemp(prefix=f"lp-gpu-state-{os.getpid()}-")
    try:
        d = start(daemon_factory, fake, state_dir=state)
        wait_states(client, {0: "ok", 1: "ok"})
        d.stop()

        # The A100 goes, another card comes, the order changes: the MI250 keeps 1, the new card gets 2
        # (0 stays reserved for the A100), and the A100 gets 0 back when it returns.
        h100 = device("uuid:0000-h100@Fake platform", "Fake H100")
        fake.set(devices=[h100, MI250], measurements={h100["key"]: measurement(), MI250["key"]: measurement()})
        d = start(daemon_factory, fake, state_dir=state)
        objects = wait_states(client, {1: "ok", 2: "ok"})
        assert objects[1]["Key"] == MI250["key"] and objects[2]["Key"] == h100["key"]
        d.stop()

        fake.set(devices=[h100, MI250, A100],
                 measurements={k["key"]: measurement() for k in (h100, MI250, A100)})
        start(daemon_factory, fake, state_dir=state)
        objects = wait_states(client, {0: "ok", 1: "ok", 2: "ok"})
        assert [objects[i]["Key"] for i in range(3)] == [A100["key"], MI250["key"], h100["key"]]
    finally:
        shutil.rmtree(state, ignore_errors=True)


def test_a_damaged_state_file_is_set_aside(fake, client, daemon_factory):
    state = tempfile.mkdtemp(prefix=f"lp-gpu-state-{os.getpid()}-")
    try:
        with open(os.path.join(state, "gpus.json"), "w") as f:
            f.write('{"version": 1, "gpus": [{"number": 5, "inventory": {"key": 7}}')
        daemon = start(daemon_factory, fake, state_dir=state)
        wait_states(client, {0: "ok", 1: "ok"})
        assert os.path.exists(os.path.join(state, "gpus.json.bad"))
        assert "not a GPU state file" in daemon.log()
    finally:
        shutil.rmtree(state, ignore_errors=True)


# --- ProbeGpus() and linkprobectl --------------------------------------------------------------------------

def test_probe_gpus_measures_now(fake, client, signals, daemon_factory):
    start(daemon_factory, fake)
    wait_states(client, {0: "ok", 1: "ok"})
    before = len(fake.measure_calls())
    signals.clear()
    paths = probe_gpus(client)
    assert paths == [f"{ROOT}/gpu/_30", f"{ROOT}/gpu/_31"]
    assert len(fake.measure_calls()) == before + 1
    assert signals.wait(lambda ev: any(e[3] == "PropertiesChanged" and e[4][1].get("ProbeState") == "ok"
                                       for e in ev))


def test_probe_gpus_callers_join_one_run(fake, client, daemon_factory):
    start(daemon_factory, fake)
    wait_states(client, {0: "ok", 1: "ok"})
    fake.set(measure="slow")
    before = len(fake.measure_calls())
    with ThreadPoolExecutor(4) as pool:
        results = list(pool.map(lambda _: probe_gpus(client), range(4)))
    assert all(len(r) == 2 for r in results)
    assert len(fake.measure_calls()) - before <= 2  # one run, at most one more for a late joiner


def test_linkprobectl_gpu_and_probe_gpu(fake, client, daemon_factory):
    start(daemon_factory, fake)
    wait_states(client, {0: "ok", 1: "ok"})
    table = lp.ctl(client.bus, "gpu")
    assert table.returncode == 0, table.stderr
    assert "Fake A100" in table.stdout and "19.5 TFLOPS" in table.stdout and "unsupported" in table.stdout
    assert "1555.0 GB/s" in table.stdout and "2 GPUs listed" in table.stdout

    as_json = json.loads(lp.ctl(client.bus, "--json", "gpu").stdout)
    assert [g["Name"] for g in as_json] == ["Fake A100", "Fake MI250"]
    assert as_json[0]["Fp16Tflops"] == pytest.approx(78.0) and as_json[1]["Fp16Tflops"] is None

    probed = lp.ctl(client.bus, "probe", "gpu")
    assert probed.returncode == 0, probed.stderr
    assert "ok" in probed.stdout and len(fake.measure_calls()) == 2

    fake.set(measure="error")
    failed = lp.ctl(client.bus, "probe", "gpu")
    assert failed.returncode == 1
    assert "CL_OUT_OF_RESOURCES" in failed.stdout + failed.stderr and "failed" in failed.stdout

    fake.set(measure="hang")
    timed_out = lp.ctl(client.bus, "probe", "gpu", "--timeout=1")
    assert timed_out.returncode == 1 and "No result within 1 s" in timed_out.stderr

    # Anything but "gpu" is a peer address to probe; "cpu" is none, which is bad usage.
    not_a_peer = lp.ctl(client.bus, "probe", "cpu")
    assert not_a_peer.returncode == 2 and 'Invalid peer address "cpu"' in not_a_peer.stderr
    assert lp.ctl(client.bus, "probe", "gpu", "--timeout=soon").returncode == 2


def test_a_cpu_device_is_a_compute_device_not_a_gpu(fake, client, daemon_factory):
    """PoCL lists the CPU as an OpenCL device: the table says compute devices, counted by type."""
    cpu = device("pocl:cpu@Fake platform", "pthread-Fake CPU", type="cpu")
    fake.set(devices=[cpu], measurements={cpu["key"]: measurement(40.0, 300.0)})
    start(daemon_factory, fake)
    wait_states(client, {0: "ok"})
    table = lp.ctl(client.bus, "gpu")
    assert table.returncode == 0 and table.stdout.rstrip().endswith("\n1 compute device listed (1 cpu)."), table.stdout

    fake.set(devices=[A100, cpu], measurements={A100["key"]: measurement(), cpu["key"]: measurement(40.0, 300.0)})
    lp.ctl(client.bus, "probe", "gpu", check=True)
    table = lp.ctl(client.bus, "gpu")
    assert table.stdout.rstrip().endswith("\n2 compute devices listed (1 gpu, 1 cpu)."), table.stdout


# --- Inhibit() -------------------------------------------------------------------------------------------

def test_inhibitor_holds_probes_off_until_closed(fake, client, signals, daemon_factory):
    start(daemon_factory, fake)
    wait_states(client, {0: "ok", 1: "ok"})
    measured = len(fake.measure_calls())
    signals.clear()

    fd = inhibit(client.conn, "gpu", "test_gpu", "benchmark running")
    assert inhibited(client) == ["gpu"]
    assert signals.wait(lambda ev: any(e[1] == ROOT and e[3] == "PropertiesChanged" and
                                       e[4][1].get("Inhibited") == ["gpu"] for e in ev))
    (listed,) = client.call(ROOT, MANAGER, "ListInhibitors")
    assert listed == [("gpu", "test_gpu", "benchmark running", 0, os.getpid())]

    assert call_error(probe_gpus, client) == ERROR + "Inhibited"
    wait_states(client, {0: "skipped-inhibited", 1: "skipped-inhibited"})
    time.sleep(0.5)
    assert len(fake.measure_calls()) == measured

    signals.clear()
    os.close(fd)
    assert signals.wait(lambda ev: any(e[1] == ROOT and e[3] == "PropertiesChanged" and
                                       e[4][1].get("Inhibited") == [] for e in ev))
    # The measurement that was asked for runs now.
    wait_states(client, {0: "ok", 1: "ok"})
    assert len(fake.measure_calls()) == measured + 1
    assert client.call(ROOT, MANAGER, "ListInhibitors") == ([],)


def test_a_new_inhibitor_stops_a_running_probe_at_once(fake, client, daemon_factory):
    """Inhibit means now: a scheduler that takes the GPU must not wait for a measurement to end."""
    fake.set(measure="hang")
    start(daemon_factory, fake)
    wait_states(client, {0: "running", 1: "running"})
    grandchild = wait_until(fake.grandchild)
    assert grandchild, "the hanging probe did not start its child"
    taken = time.monotonic()
    fd = inhibit(client.conn)
    try:
        objects = wait_states(client, {0: "skipped-inhibited", 1: "skipped-inhibited"}, timeout=5)
        assert time.monotonic() - taken < 2
        # Killed with its process group, and nothing of it published: no figures, no error.
        assert wait_until(lambda: not pid_alive(grandchild), timeout=5), f"the probe's child {grandchild} still runs"
        assert all(g["MeasuredAt"] == 0 and g["LastError"] == "" for g in objects.values()), objects
        fake.set(measure="ok")
    finally:
        os.close(fd)
    # Measured once the last inhibitor is gone.
    wait_states(client, {0: "ok", 1: "ok"})


def test_waiting_callers_hear_of_a_new_inhibitor(fake, client, daemon_factory):
    fake.set(inventory="slow")
    start(daemon_factory, fake)
    with ThreadPoolExecutor(1) as pool:
        waiting = pool.submit(call_error, probe_gpus, client)
        time.sleep(0.3)  # the call waits for the inventory run, which takes 1.5 s
        fd = inhibit(client.conn)
        assert waiting.result(timeout=10) == ERROR + "Inhibited"
    wait_states(client, {0: "skipped-inhibited", 1: "skipped-inhibited"})
    os.close(fd)
    wait_states(client, {0: "ok", 1: "ok"})


def test_due_runs_wait_for_the_inhibitor(fake, client, daemon_factory):
    start(daemon_factory, fake, config=config(ttl="1s"))
    wait_states(client, {0: "ok", 1: "ok"})
    fd = inhibit(client.conn)
    measured = len(fake.measure_calls())
    wait_states(client, {0: "skipped-inhibited", 1: "skipped-inhibited"}, timeout=5)
    assert all(o["Stale"] for o in gpus(client).values())
    assert len(fake.measure_calls()) == measured
    os.close(fd)
    wait_states(client, {0: "ok", 1: "ok"})


def test_inhibitor_released_when_its_client_leaves(fake, bus, client, daemon_factory):
    start(daemon_factory, fake)
    conn = new_connection(bus)
    fd = inhibit(conn, "gpu:rdma")
    assert inhibited(client) == ["gpu", "rdma"]
    conn.close_sync(None)
    # The descriptor is still open here: leaving the bus is enough.
    assert wait_until(lambda: inhibited(client) == [], 5)
    os.close(fd)

    # A process that dies releases its inhibitor with it.
    holder = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "inhibit", "--", "sleep", "60"],
                              start_new_session=True)
    assert wait_until(lambda: inhibited(client) == ["gpu"], 5)
    os.killpg(holder.pid, signal.SIGKILL)
    holder.wait()
    assert wait_until(lambda: inhibited(client) == [], 5)


def test_inhibit_kinds(fake, client, daemon_factory):
    start(daemon_factory, fake)
    wait_states(client, {0: "ok", 1: "ok"})
    fd = inhibit(client.conn, "rdma")
    assert inhibited(client) == ["rdma"]
    assert len(probe_gpus(client)) == 2  # RDMA inhibitors do not hold GPU probes off
    fd2 = inhibit(client.conn, "rdma:gpu")
    assert inhibited(client) == ["gpu", "rdma"]
    assert client.call(ROOT, MANAGER, "ListInhibitors")[0][1][0] == "gpu:rdma"
    os.close(fd2)
    assert wait_until(lambda: inhibited(client) == ["rdma"], 5)
    os.close(fd)
    assert wait_until(lambda: inhibited(client) == [], 5)


@pytest.mark.parametrize("what,who,why", [
    ("", "x", ""), ("cpu", "x", ""), ("gpu:", "x", ""), (":gpu", "x", ""), ("gpu::rdma", "x", ""),
    ("GPU", "x", ""), ("gpu rdma", "x", ""), ("gpu", "", "why"), ("gpu", "x" * 129, ""),
    ("gpu", "line\nbreak", ""), ("gpu", "x", "y" * 257), ("gpu", "x", "tab\there"), ("gpu", "bell\x07", ""),
])
def test_inhibit_refuses_bad_arguments(what, who, why, fake, client, daemon_factory):
    start(daemon_factory, fake)
    assert call_error(inhibit, client.conn, what, who, why) == "org.freedesktop.DBus.Error.InvalidArgs"
    assert inhibited(client) == []


def test_inhibit_accepts_the_limits(fake, client, daemon_factory):
    start(daemon_factory, fake)
    fd = inhibit(client.conn, "gpu", "é" * 64, "y" * 256)  # 128 bytes of who, 256 of why
    assert client.call(ROOT, MANAGER, "ListInhibitors")[0][0][1] == "é" * 64
    os.close(fd)
    fd = inhibit(client.conn, "gpu", "x", "")  # no reason is allowed
    os.close(fd)


def test_inhibit_floods_are_limited(fake, bus, client, daemon_factory):
    start(daemon_factory, fake)
    fds, results = [], []
    for _ in range(20):
        try:
            fds.append(inhibit(client.conn))
            results.append("ok")
        except GLib.Error as e:
            results.append(error_name(e))
    # Eight per client, then ten calls in a row per client and one a second.
    assert results[:8] == ["ok"] * 8, results
    assert results[8] == "org.freedesktop.DBus.Error.LimitsExceeded", results
    assert ERROR + "RateLimited" in results[9:] and "ok" not in results[8:], results
    for fd in fds:
        os.close(fd)

    # Sixty-four for everybody together.
    assert wait_until(lambda: inhibited(client) == [], 5)
    conns = [new_connection(bus) for _ in range(9)]
    held = []
    try:
        for conn in conns[:8]:
            held += [inhibit(conn) for _ in range(8)]
        assert len(held) == 64
        assert call_error(inhibit, conns[8]) == "org.freedesktop.DBus.Error.LimitsExceeded"
    finally:
        for fd in held:
            os.close(fd)
        for conn in conns:
            conn.close_sync(None)


def test_probe_gpus_floods_are_limited(fake, client, daemon_factory):
    start(daemon_factory, fake)
    wait_states(client, {0: "ok", 1: "ok"})
    fake.set(measure="slow")
    with ThreadPoolExecutor(12) as pool:
        results = list(pool.map(lambda _: call_error(probe_gpus, client), range(12)))
    assert results.count(None) >= 5 and results.count(ERROR + "RateLimited") >= 5, results


UNPRIVILEGED_CALL = """
import sys
from gi.repository import Gio, GLib
conn = Gio.DBusConnection.new_for_address_sync(sys.argv[1], Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
                                               Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
args = GLib.Variant("(sss)", ("gpu", "nobody", "test")) if sys.argv[2] == "Inhibit" else None
try:
    conn.call_with_unix_fd_list_sync("org.linkprobe.LinkProbe1", "/org/linkprobe/LinkProbe1",
                                     "org.linkprobe.LinkProbe1.Manager", sys.argv[2], args, None,
                                     Gio.DBusCallFlags.NONE, 20000, None, None)
    print("ok")
except GLib.Error as e:
    print(Gio.DBusError.get_remote_error(e))
"""


def run_as(bus, method, *setpriv):
    # The bus socket lives in a directory only root may enter; others need to reach it too.
    os.chmod(bus.dir, 0o755)
    # Started in /, not in the checkout, which that user may not be able to enter.
    proc = subprocess.run(["setpriv", *setpriv, "/usr/bin/python3", "-c", UNPRIVILEGED_CALL, bus.address, method],
                          capture_output=True, text=True, timeout=30, cwd="/")
    assert proc.returncode == 0, proc.stderr
    return proc.stdout.strip()


def test_inhibit_and_probe_gpus_need_privileges(fake, bus, client, daemon_factory):
    start(daemon_factory, fake, config=config(extra="[Daemon]\nPrivilegedGroup=users\n"))
    wait_states(client, {0: "ok", 1: "ok"})
    nobody = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups"]
    assert run_as(bus, "Inhibit", *nobody) == "org.freedesktop.DBus.Error.AccessDenied"
    assert run_as(bus, "ProbeGpus", *nobody) == "org.freedesktop.DBus.Error.AccessDenied"
    assert inhibited(client) == []
    # Reading is open to everyone.
    assert run_as(bus, "ListInhibitors", *nobody) == "ok"
    # Members of the privileged group may.
    member = [f"--reuid={NOBODY}", f"--regid={NOBODY}", "--groups=100"]
    assert run_as(bus, "Inhibit", *member) == "ok"
    assert run_as(bus, "ProbeGpus", *member) == "ok"


def test_probe_gpus_when_gpu_probing_is_off(client, daemon_factory):
    daemon_factory(config="[Gpu]\nEnabled=no\n")
    assert call_error(probe_gpus, client) == ERROR + "NotSupported"
    assert gpus(client) == {}


# --- linkprobectl inhibit ---------------------------------------------------------------------------------

def test_linkprobectl_inhibit_holds_while_the_command_runs(fake, bus, client, daemon_factory):
    start(daemon_factory, fake)
    script = f"{lp.CTL} --bus-address={bus.address} --json inhibitors; exit 7"
    result = lp.ctl(bus, "inhibit", "--what=gpu:rdma", "--who=tester", "--why=because", "--", "sh", "-c", script)
    assert result.returncode == 7, result.stderr
    (held,) = json.loads(result.stdout)
    assert held["What"] == "gpu:rdma" and held["Who"] == "tester" and held["Why"] == "because"
    assert held["Uid"] == 0 and held["Pid"] > 0
    assert wait_until(lambda: inhibited(client) == [], 5)

    # Without --who the command line says who; a signal and a missing command are exit statuses too.
    result = lp.ctl(bus, "inhibit", "--", "sh", "-c", f"{lp.CTL} --bus-address={bus.address} inhibitors")
    assert result.returncode == 0 and "sh -c" in result.stdout and "1 inhibitor listed" in result.stdout
    assert lp.ctl(bus, "inhibit", "--", "sh", "-c", "kill -9 $$").returncode == 128 + 9
    missing = lp.ctl(bus, "inhibit", "/nonexistent/command")
    assert missing.returncode == 127 and "Cannot run" in missing.stderr
    assert lp.ctl(bus, "inhibit", "--what=cpu", "true").returncode == 2
    assert lp.ctl(bus, "inhibit").returncode == 2
