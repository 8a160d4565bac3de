# SPDX-License-Identifier: LGPL-2.1-or-later
"""Links over time: the daemon's watch under umockdev, where attributes change with no uevent (as the
kernel's PCIe bandwidth controller and every error counter change them). A Gen4 NIC whose link retrains
16 -> 8 -> 16 GT/s again and again (counted, flapping), AER counters rising (errors), an InfiniBand port
whose symbol errors rise, an idle GPU at 2.5 GT/s (power saving) and the same GPU busy (degraded), a USB4
tunnel at 2.5 GT/s x1 above a dock's NIC (not degraded, its path rate from Thunderbolt), an SR-IOV VF at
x0 (skipped); real traffic through veths for link rates against iperf3, for a Gen1 NIC that is busy, and
for IP traffic over an IPoIB interface with none over RDMA; carrier flaps; bad input (garbage, huge,
backwards, vanishing, missing). The machine is tests/fixtures/pci/health.umockdev (and amd-xgmi for the
GPU); its links are real interfaces in the test's namespace, named and numbered like the fixture's.

Every wait is for a state, never for a time: the watch samples every 100 ms here, and a change in sysfs is
awaited until the bus shows it."""

import json
import os
import re
import shutil
import subprocess
import time

import pytest

import lp
from lp import path_label, wait_for

# The tests that drive traffic at a set rate (iperf3) and judge it are marked alone: a test file running
# beside them would move the rates they compare.

PCI = "Pci"
MANAGER = lp.IFACE + "Manager"
FIXTURES = os.path.join(lp.TOP, "tests", "fixtures", "pci")
WATCH = "[Watch]\nIntervalSec=100ms\n"
UNKNOWN = 2 ** 64 - 1

HEALTH_LINKS = {"hnic0": 61, "hflap0": 62, "hvf0": 63, "hib0": 64, "htb0": 65}
FLAP_NIC = "/sys/devices/pci0000:40/0000:40:01.0/0000:41:00.0"
FLAP_PORT = "/sys/devices/pci0000:40/0000:40:01.0"
GEN1_NIC = "/sys/devices/pci0000:00/0000:00:1c.0/0000:02:00.0"
HCA_PORT = "/sys/devices/pci0000:80/0000:80:01.0/0000:81:00.0/infiniband/mlx5_0"
AMD_GPU = "/sys/devices/pci0000:00/0000:00:01.1/0000:01:00.0/0000:02:00.0/0000:03:00.0"


def pci_path(address):
    return f"{lp.ROOT}/pci/{path_label(address)}"


def rdma_path(key):
    return f"{lp.ROOT}/rdma/{path_label(key)}"


def tbt_path(name):
    return f"{lp.ROOT}/thunderbolt/{path_label(name)}"


def start(daemon_factory, netns, testbed, config=WATCH):
    return daemon_factory(netns, prefix=["umockdev-wrapper"], env=testbed.env(),
                          args=[f"--sysfs-root={testbed.sys}"], config=config)


def add_links(netns, links, kind="ifb"):
    for name, index in links.items():
        netns.ip("link", "add", name, "index", str(index), "type", kind)
        netns.ip("link", "set", name, "up")


def add_veth(netns, far, name, index, address):
    """A veth whose other end is in far (a second namespace), both up, with 10.77.x.1 and .2."""
    netns.ip("link", "add", name, "index", str(index), "type", "veth", "peer", "name", name + "p")
    netns.ip("link", "set", name + "p", "netns", far.name)
    netns.ip("addr", "add", f"{address}.1/24", "dev", name)
    far.ip("addr", "add", f"{address}.2/24", "dev", name + "p")
    netns.ip("link", "set", name, "up")
    far.ip("link", "set", name + "p", "up")


def props(client, kind, path):
    return client.get_all(kind, path)


def wait_props(client, kind, path, predicate, what, timeout=15):
    def check():
        try:
            p = props(client, kind, path)
        except Exception:  # noqa: BLE001 — not published yet
            return None
        return p if predicate(p) else None
    return wait_for(check, timeout, what)


def metrics(client):
    (text,) = client.call(lp.ROOT, MANAGER, "GetMetrics")
    return text


def aer(total, receiver=None, severity="COR"):
    if severity == "COR":
        return f"Receiver Error {receiver if receiver is not None else total}\nBad TLP 0\nTOTAL_ERR_COR {total}\n"
    return f"Undefined 0\nData Link Protocol {total}\nTOTAL_ERR_{severity} {total}\n"


@pytest.fixture
def far():
    """A second namespace: the other end of the veths, where iperf3's server runs."""
    ns = lp.NetNS()
    yield ns
    ns.delete()


def iperf3_server(far, address):
    """iperf3 -s for one test in far, returned once it listens."""
    proc = subprocess.Popen(far.exec_cmd(["iperf3", "-s", "-1", "-B", address]), stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    wait_for(lambda: lp.run(far.exec_cmd(["ss", "-Hltn", "sport = :5201"])).stdout.strip(), 10,
             "iperf3 listening")
    return proc


def iperf3_client(netns, address, rate, seconds, reverse=False):
    """iperf3 paced at rate, started; iperf3_result() waits for what it reports moving."""
    return subprocess.Popen(netns.exec_cmd(["iperf3", "-c", address, "-b", rate, "-t", str(seconds), "-J",
                                            *(["-R"] if reverse else [])]),
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def iperf3_result(proc, timeout=60):
    out, err = proc.communicate(timeout=timeout)
    assert proc.returncode == 0, (out, err)
    return json.loads(out)["end"]["sum_received"]["bits_per_second"]


# ---- PCIe ----

def test_retrain_flapping(netns, client, daemon_factory, testbed, bus):
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, HEALTH_LINKS)
    daemon = start(daemon_factory, netns, testbed)
    nic = pci_path("0000:41:00.0")
    first = wait_props(client, PCI, nic, lambda p: p["Health"] == "ok", "the NIC ok")
    assert first["LinkChanges"] == 0 and first["LastLinkChangeAt"] == 0

    # The bandwidth controller retrains 16 -> 8 -> 16 GT/s and sends no uevent: both ends' attributes move.
    before = time.time()
    for i in range(1, 6):
        speed = "8.0 GT/s PCIe\n" if i % 2 else "16.0 GT/s PCIe\n"
        testbed.set_attribute(FLAP_PORT, "current_link_speed", speed)
        testbed.set_attribute(FLAP_NIC, "current_link_speed", speed)
        p = wait_props(client, PCI, nic, lambda p, i=i: p["LinkChanges"] == i, f"link change {i}")
        assert p["CurrentLinkSpeed"] == (8.0 if i % 2 else 16.0)
        if i < 5:
            assert p["Health"] in ("ok", "degraded"), p["HealthReason"]
    p = wait_props(client, PCI, nic, lambda p: p["Health"] == "flapping", "flapping")
    assert p["HealthReason"].startswith("5 speed changes in the last 2 min"), p["HealthReason"]
    assert before - 1 <= p["LastLinkChangeAt"] / 1e6 <= time.time() + 1
    # The port above saw the same link move: its own count.
    assert props(client, PCI, pci_path("0000:40:01.0"))["LinkChanges"] == 5

    # Said once, in the log (the journal under systemd, with MESSAGE_ID), and in STATUS=.
    assert daemon.wait_log("0000:41:00.0: health flapping: 5 speed changes in the last 2 min")
    status = wait_status(daemon, lambda s: "flapping" in s)
    assert re.match(r"running: \d+ links? (degraded, \d+ )?flapping", status), status
    text = metrics(client)
    assert 'linkprobe_pci_link_changes_total{pci_address="0000:41:00.0"} 5\n' in text
    assert 'linkprobe_pci_health{pci_address="0000:41:00.0",health="flapping"} 1\n' in text
    assert 'linkprobe_pci_health{pci_address="0000:41:00.0",health="ok"} 0\n' in text

    # linkprobectl health lists it, worst first, and says why; --json for programs.
    out = lp.ctl(bus, "health", "--no-pager")
    assert out.returncode == 0, out.stderr
    assert re.search(r"pci 0000:41:00\.0\s+flapping\s+5 speed changes in the last 2 min", out.stdout), out.stdout
    rows = json.loads(lp.ctl(bus, "health", "--json=short").stdout)
    row = next(r for r in rows if r["Path"] == nic)
    assert row["Kind"] == "Pci" and row["Health"] == "flapping" and row["Object"] == "pci 0000:41:00.0"
    assert all(r["Health"] != "ok" for r in rows)
    assert client.managed_objects_differing_from_getall() == []


def wait_status(daemon, predicate, timeout=10):
    """The latest STATUS= the daemon sent once predicate holds for it."""
    deadline = time.monotonic() + timeout
    while True:
        statuses = [m["STATUS"] for m in daemon.notify.messages if "STATUS" in m]
        if statuses and predicate(statuses[-1]):
            return statuses[-1]
        left = deadline - time.monotonic()
        if left <= 0:
            raise AssertionError(f"no STATUS= as wanted; got {statuses}")
        daemon.notify.sock.settimeout(left)
        try:
            data = daemon.notify.sock.recv(4096).decode(errors="replace")
        except OSError:
            continue
        daemon.notify.messages.append(dict(line.split("=", 1) for line in data.splitlines() if "=" in line))


def test_aer_errors_and_bad_input(netns, client, daemon_factory, testbed):
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, HEALTH_LINKS)
    daemon = start(daemon_factory, netns, testbed)
    nic = pci_path("0000:41:00.0")
    p = wait_props(client, PCI, nic, lambda p: p["Health"] == "ok", "the NIC ok")
    assert (p["AerCorrectable"], p["AerNonFatal"], p["AerFatal"]) == (0, 0, 0)

    # At the threshold (DCGM: more than 8 a minute): counted, not judged.
    testbed.set_attribute(FLAP_NIC, "aer_dev_correctable", aer(8))
    p = wait_props(client, PCI, nic, lambda p: p["AerCorrectable"] == 8, "8 correctable errors")
    assert p["Health"] == "ok"
    testbed.set_attribute(FLAP_NIC, "aer_dev_correctable", aer(37, receiver=30))
    p = wait_props(client, PCI, nic, lambda p: p["Health"] == "errors", "errors")
    assert p["AerCorrectable"] == 37
    assert p["HealthReason"] == "37 correctable AER errors (Receiver Error) in the last minute", p["HealthReason"]

    # Any fatal error: said first.
    testbed.set_attribute(FLAP_NIC, "aer_dev_fatal", aer(1, severity="FATAL"))
    p = wait_props(client, PCI, nic, lambda p: p["AerFatal"] == 1, "a fatal error")
    assert p["HealthReason"].startswith("1 fatal AER error in the last minute; 37 correctable"), p["HealthReason"]

    # Backwards (a reset): the counter says what the kernel says, nothing goes negative or adds up.
    testbed.set_attribute(FLAP_NIC, "aer_dev_correctable", aer(3))
    p = wait_props(client, PCI, nic, lambda p: p["AerCorrectable"] == 3, "the counter reset")
    assert "37 correctable" in p["HealthReason"] or "40 correctable" in p["HealthReason"], p["HealthReason"]
    # Garbage and a count beyond 64 bits: unknown, the rest unchanged.
    testbed.set_attribute(FLAP_NIC, "aer_dev_nonfatal", "Completion Timeout lots\nTOTAL_ERR_NONFATAL ?\n")
    testbed.set_attribute(FLAP_NIC, "aer_dev_fatal", "DLP 1\nTOTAL_ERR_FATAL 99999999999999999999999\n")
    p = wait_props(client, PCI, nic, lambda p: p["AerNonFatal"] == UNKNOWN and p["AerFatal"] == UNKNOWN,
                   "garbage read as unknown")
    assert p["AerCorrectable"] == 3 and p["Health"] == "errors"
    # A device without AER (the HCA, the VF): unknown counters, and no judgement against them.
    hca = props(client, PCI, pci_path("0000:81:00.0"))
    assert (hca["AerCorrectable"], hca["AerFatal"]) == (UNKNOWN, UNKNOWN) and hca["Health"] == "ok"
    text = metrics(client)
    assert 'linkprobe_pci_aer_correctable_total{pci_address="0000:41:00.0"} 3\n' in text
    assert 'linkprobe_pci_aer_fatal_total{pci_address="0000:41:00.0"}' not in text  # unknown: left out
    assert 'linkprobe_pci_aer_correctable_total{pci_address="0000:81:00.0"}' not in text

    # The device vanishes under the watch (its directory gone, the uevent not yet sent): nothing crashes,
    # the counters read as unknown; then the removal takes the object.
    shutil.rmtree(testbed.sys + FLAP_NIC[len("/sys"):] + "/net", ignore_errors=True)
    for name in ("aer_dev_correctable", "current_link_speed", "current_link_width"):
        os.unlink(testbed.sys + FLAP_NIC[len("/sys"):] + "/" + name)
    wait_props(client, PCI, nic, lambda p: p["AerCorrectable"] == UNKNOWN, "the vanished counter unknown")
    testbed.uevent(FLAP_NIC, "remove")
    wait_for(lambda: nic not in client.objects(), 10, "the NIC removed")
    assert daemon.proc.poll() is None
    assert client.managed_objects_differing_from_getall() == []


def test_gpu_power_saving_then_busy(netns, client, daemon_factory, testbed):
    testbed.add_from_file(os.path.join(FIXTURES, "amd-xgmi.umockdev"))
    start(daemon_factory, netns, testbed)
    gpu = pci_path("0000:03:00.0")
    wait_props(client, PCI, gpu, lambda p: p["Health"] == "ok", "the GPU ok")

    # Idle, amdgpu parks the link at 2.5 GT/s: power saving, not degradation (hwloc#653).
    testbed.set_attribute(AMD_GPU, "gpu_busy_percent", "0\n")
    os.makedirs(testbed.sys + AMD_GPU[len("/sys"):] + "/power", exist_ok=True)
    testbed.set_attribute(AMD_GPU, "power/runtime_status", "active\n")
    testbed.set_attribute(AMD_GPU, "current_link_speed", "2.5 GT/s PCIe\n")
    p = wait_props(client, PCI, gpu, lambda p: p["CurrentLinkSpeed"] == 2.5 and "power saving" in p["HealthReason"],
                   "power saving")
    assert p["Health"] == "ok" and p["LinkChanges"] == 1
    assert p["HealthReason"] == "2.5 GT/s x16 while idle, below the 16.0 GT/s both ends support: power saving"

    # The same link while the GPU works: degraded.
    testbed.set_attribute(AMD_GPU, "gpu_busy_percent", "97\n")
    p = wait_props(client, PCI, gpu, lambda p: p["Health"] == "degraded", "degraded while busy")
    assert p["HealthReason"] == "2.5 GT/s x16 while the GPU is 97 % busy; both ends support 16.0 GT/s x16"
    # Runtime-suspended: idle, and gpu_busy_percent (garbage now) is not even read.
    testbed.set_attribute(AMD_GPU, "gpu_busy_percent", "garbage\n")
    testbed.set_attribute(AMD_GPU, "power/runtime_status", "suspended\n")
    wait_props(client, PCI, gpu, lambda p: p["Health"] == "ok", "idle again")


def test_usb4_tunnel_and_vf(netns, client, daemon_factory, testbed):
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, HEALTH_LINKS)
    start(daemon_factory, netns, testbed)
    nic = wait_props(client, PCI, pci_path("0000:2c:00.0"), lambda p: p["PathGbps"] == 20, "the dock NIC's path")
    # The tunnel's 2.5 GT/s x1 (both ends claiming 8 GT/s x4) is never judged, nor on the path.
    assert nic["PathLimitedBy"] == "Thunderbolt path to 0-1 at 20/20 Gb/s (PCIe tunnel)"
    assert nic["Health"] == "ok" and not nic["Degraded"]
    for address in ("0000:00:07.0", "0000:2a:00.0", "0000:2b:01.0"):
        p = props(client, PCI, pci_path(address))
        assert p["Health"] == "ok" and p["HealthReason"] == "" and not p["Degraded"], (address, p)
    dock = props(client, "Thunderbolt", tbt_path("0-1"))
    assert dock["Health"] == "ok" and dock["LinkChanges"] == 0

    # The dock's link changes rate (the driver says so with a change uevent), then it is unplugged and
    # comes back: both count, the second on the same UniqueId.
    router = "/sys/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1"
    testbed.set_attribute(router, "rx_speed", "20.0 Gb/s\n")
    testbed.set_attribute(router, "tx_speed", "20.0 Gb/s\n")
    testbed.uevent(router, "change")
    wait_props(client, "Thunderbolt", tbt_path("0-1"), lambda p: p["LinkChanges"] == 1, "a rate change")
    testbed.uevent(router, "remove")
    wait_for(lambda: tbt_path("0-1") not in client.objects(), 10, "the dock unplugged")
    testbed.uevent(router, "add")
    p = wait_props(client, "Thunderbolt", tbt_path("0-1"), lambda p: p["LinkChanges"] == 2, "the dock back")
    assert 'linkprobe_thunderbolt_link_changes_total{sysname="0-1"} 2\n' in metrics(client)

    # The VF says Unknown and x0: skipped, whatever its physical function does.
    vf = pci_path("0000:41:01.0")
    p = wait_props(client, PCI, vf, lambda p: p["Health"] == "ok", "the VF")
    assert p["CurrentLinkWidth"] == 0 and not p["Degraded"] and p["HealthReason"] == ""
    testbed.set_attribute(FLAP_NIC, "current_link_speed", "8.0 GT/s PCIe\n")
    wait_props(client, PCI, pci_path("0000:41:00.0"), lambda p: p["LinkChanges"] == 1, "the PF's change")
    assert props(client, PCI, vf)["LinkChanges"] == 0


# ---- [Health] ----

def test_health_limits_reload(netns, client, daemon_factory, testbed):
    """[Health] (linkprobed.conf(5)): symbol errors judged per bit at the port's rate, limits read again
    on SIGHUP and applied at once, a bad file refused whole with its line, the limits in use kept."""
    import signal
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, HEALTH_LINKS)
    daemon = start(daemon_factory, netns, testbed)
    port = rdma_path("mlx5_0_1")
    wait_props(client, "RdmaPort", port, lambda p: p["Health"] == "ok", "the port ok")
    # 20 symbol errors in a minute on a 4X HDR port: above IBTA's 1e-12 (12 a minute at 200 Gb/s).
    testbed.set_attribute(HCA_PORT + "/ports/1/counters", "symbol_error", "20\n")
    p = wait_props(client, "RdmaPort", port, lambda p: p["Health"] == "errors", "symbol errors")
    assert p["HealthReason"] == "20 symbol errors in the last minute", p

    config = daemon.config_path
    with open(config, "a") as f:
        f.write("[Health]\nSymbolErrorRate=1e-10\nErrorsWindowSec=30\n")
    daemon.signal(signal.SIGHUP)
    wait_props(client, "RdmaPort", port, lambda p: p["Health"] == "ok", "the port ok by the looser limit")
    daemon.wait_log("judged with the new limits")

    with open(config, "a") as f:
        f.write("FlapChanges=0\n")
    lines = open(config).read().count("\n")
    daemon.signal(signal.SIGHUP)
    daemon.wait_log(f"linkprobed.conf:{lines}: ")
    assert "FlapChanges=" in daemon.log() and "Keeping the [Health] limits in use" in daemon.log()
    # Still the limits read last: ok, and the daemon goes on.
    time.sleep(0.3)
    assert props(client, "RdmaPort", port)["Health"] == "ok" and daemon.proc.poll() is None


# ---- RDMA ----

def test_ib_symbol_errors_and_counters(netns, client, daemon_factory, testbed):
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, HEALTH_LINKS)
    start(daemon_factory, netns, testbed)
    port = rdma_path("mlx5_0_1")
    # The realdata counters: 14 receive errors since boot are history, not health.
    p = wait_props(client, "RdmaPort", port, lambda p: p["Health"] == "ok", "the port ok")
    assert (p["SymbolErrors"], p["RcvErrors"], p["LinkDowned"], p["XmitDiscards"]) == (0, 14, 0, 0)

    counters = HCA_PORT + "/ports/1/counters"
    testbed.set_attribute(counters, "symbol_error", "250\n")
    p = wait_props(client, "RdmaPort", port, lambda p: p["Health"] == "errors", "symbol errors")
    assert p["SymbolErrors"] == 250 and p["HealthReason"] == "250 symbol errors in the last minute"

    # Data counts 4-byte words; rates follow, never negative when a counter goes back (a reset).
    base = 230539874932483
    testbed.set_attribute(counters, "port_rcv_data", f"{base + 125_000_000}\n")
    p = wait_props(client, "RdmaPort", port, lambda p: p["RxGbps"] > 0, "a receive rate")
    testbed.set_attribute(counters, "port_xmit_data", "5\n")
    wait_props(client, "RdmaPort", port, lambda p: p["TxGbps"] > 0 or p["TxGbps"] == 0, "the reset read")
    for _ in range(5):
        p = props(client, "RdmaPort", port)
        assert not p["TxGbps"] < 0 and not p["RxGbps"] < 0, p
        time.sleep(0.05)
    # A counter file a driver does not have: that counter unknown, the others still judged.
    os.unlink(testbed.sys + counters[len("/sys"):] + "/link_downed")
    p = wait_props(client, "RdmaPort", port, lambda p: p["LinkDowned"] == UNKNOWN, "link_downed unknown")
    assert p["SymbolErrors"] == 250 and p["Health"] == "errors"
    text = metrics(client)
    assert 'linkprobe_rdma_port_symbol_errors_total{device="mlx5_0",port="1"} 250\n' in text
    assert 'linkprobe_rdma_port_link_downed_total{device="mlx5_0",port="1"}' not in text
    assert 'linkprobe_rdma_port_health{device="mlx5_0",port="1",health="errors"} 1\n' in text


@pytest.mark.alone
def test_ipoib_traffic_without_rdma(netns, far, client, daemon_factory, testbed):
    """IP traffic over the IPoIB interface and none over RDMA on the port: a job that fell back to sockets."""
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_veth(netns, far, "hib0", 64, "10.77.4")
    start(daemon_factory, netns, testbed)
    port = rdma_path("mlx5_0_1")
    wait_props(client, "RdmaPort", port, lambda p: p["Health"] == "ok" and p["NetInterface"] != "/", "the port")

    server = iperf3_server(far, "10.77.4.2")
    try:
        proc = iperf3_client(netns, "10.77.4.2", "3G", 6)
        p = wait_props(client, "RdmaPort", port, lambda p: "fallen back to sockets" in p["HealthReason"],
                       "the suspected fallback", timeout=20)
        assert re.fullmatch(r"[\d.]+ Gb/s over TCP/IP and none over RDMA on mlx5_0 port 1: a job may have fallen "
                            r"back to sockets", p["HealthReason"]), p["HealthReason"]
        assert p["Health"] == "ok"  # a reason, not a verdict: IPoIB traffic alone may be intended
        assert 'linkprobe_rdma_port_suspected_fallback{device="mlx5_0",port="1"} 1\n' in metrics(client)
        ip = re.search(r'linkprobe_rdma_port_ip_transmit_rate_bytes\{device="mlx5_0",port="1"\} (\S+)', metrics(client))
        assert ip and float(ip.group(1)) > 1e8
        iperf3_result(proc)
    finally:
        lp.stop_process(server)
    wait_props(client, "RdmaPort", port, lambda p: p["HealthReason"] == "", "no fallback once quiet")


# ---- network links ----

@pytest.mark.alone
def test_link_rates_against_iperf3(netns, far, client, daemon_factory):
    """RxGbps and TxGbps of a veth against what iperf3 moved through it, paced at 500 Mb/s so that two busy
    CPUs keep the rate steady; the median of the samples in the middle of each run."""
    add_veth(netns, far, "rate0", 70, "10.77.1")
    daemon_factory(netns, config="[Watch]\nIntervalSec=500ms\n")
    link = wait_for(lambda: client.link_by_name("rate0"), 10, "rate0")

    for reverse, key in ((False, "TxGbps"), (True, "RxGbps")):
        server = iperf3_server(far, "10.77.1.2")
        try:
            proc = iperf3_client(netns, "10.77.1.2", "500M", 5, reverse=reverse)
            start_time, samples = time.monotonic(), []
            while proc.poll() is None:
                if 1.5 <= time.monotonic() - start_time <= 4.2:
                    samples.append(client.get_all("Link", link["Path"])[key])
                time.sleep(0.25)
            iperf_bps = iperf3_result(proc)
        finally:
            lp.stop_process(server)
        samples.sort()
        ours = samples[len(samples) // 2] * 1e9
        # Our counters see frames (Ethernet, IP and TCP headers: about 4.5 % at this MTU); iperf3 its payload.
        assert abs(ours - iperf_bps) <= 0.10 * iperf_bps, (key, ours, iperf_bps, samples)
    assert 'linkprobe_link_receive_rate_bytes{device="rate0"}' in metrics(client)


def mirror_ingress(netns, source, target):
    """Mirrors what source receives through the ifb target (tc u32 + mirred), or skips."""
    netns.ip("link", "set", target, "up")
    r = lp.run(["tc", "-n", netns.name, "qdisc", "add", "dev", source, "handle", "ffff:", "ingress"], check=False)
    if r.returncode == 0:
        r = lp.run(["tc", "-n", netns.name, "filter", "add", "dev", source, "parent", "ffff:", "protocol", "all", "u32",
                    "match", "u32", "0", "0", "action", "mirred", "egress", "redirect", "dev", target], check=False)
    if r.returncode != 0:
        pytest.skip(f"this kernel cannot redirect with tc u32 and mirred: {r.stderr.strip()}")


@pytest.mark.alone
def test_busy_nic_degraded(netns, far, client, daemon_factory, testbed):
    """The Gen2 x1 NIC trained at Gen1: saving power while idle, degraded while its link moves a tenth of
    what 2.5 GT/s x1 carries. Its interface is an ifb named like the fixture's (so the daemon ties it to
    the fixture's PCI function); a veth's incoming iperf3 traffic goes through it."""
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_links(netns, {"hnic0": 61})
    add_veth(netns, far, "vnic0", 71, "10.77.2")
    mirror_ingress(netns, "vnic0", "hnic0")
    start(daemon_factory, netns, testbed, config="[Watch]\nIntervalSec=200ms\n")
    nic = pci_path("0000:02:00.0")
    p = wait_props(client, PCI, nic, lambda p: "while idle" in p["HealthReason"], "idle: power saving")
    assert p["HealthReason"] == "2.5 GT/s x1 while idle, below the 5.0 GT/s both ends support: power saving"
    assert p["Health"] == "ok"

    server = iperf3_server(far, "10.77.2.2")
    try:
        proc = iperf3_client(netns, "10.77.2.2", "500M", 4, reverse=True)
        p = wait_props(client, PCI, nic, lambda p: p["Health"] == "degraded", "degraded while busy", timeout=20)
        assert re.fullmatch(r"2\.5 GT/s x1 while moving 0\.\d+ Gb/s; both ends support 5\.0 GT/s x1",
                            p["HealthReason"]), p["HealthReason"]
        iperf3_result(proc)
    finally:
        lp.stop_process(server)
    wait_props(client, PCI, nic, lambda p: p["Health"] == "ok", "idle again")


def test_carrier_flapping(netns, client, daemon_factory, bus):
    netns.ip("link", "add", "flap0", "type", "veth", "peer", "name", "flap1")
    netns.ip("link", "set", "flap0", "up")
    daemon_factory(netns, config=WATCH)
    link = wait_for(lambda: client.link_by_name("flap0"), 10, "flap0")
    assert link["Health"] == "ok"
    monitor = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "monitor"], stdout=subprocess.PIPE, text=True)
    # The far end goes down and up: each is a carrier change of flap0.
    for _ in range(3):
        netns.ip("link", "set", "flap1", "up")
        wait_for(lambda: client.link_by_name("flap0")["Carrier"], 5, "carrier")
        netns.ip("link", "set", "flap1", "down")
        wait_for(lambda: not client.link_by_name("flap0")["Carrier"], 5, "no carrier")
    link = wait_for(lambda: (lambda l: l if l["Health"] == "flapping" else None)(client.link_by_name("flap0")), 10,
                    "flapping")
    assert re.fullmatch(r"[5-9] carrier changes in the last 2 min", link["HealthReason"]), link["HealthReason"]
    out = lp.ctl(bus, "health", "--no-pager", "--no-legend")
    assert out.returncode == 0 and re.search(r"link flap0\s+flapping\s+\d carrier changes", out.stdout), out.stdout
    assert 'linkprobe_link_health{device="flap0",health="flapping"} 1\n' in metrics(client)
    # monitor gives the transition a line of its own, and leaves the rates out of the others.
    lp.stop_process(monitor)
    lines = monitor.stdout.read().splitlines()
    assert any(re.search(r" health +link flap0: flapping: \d carrier changes in the last 2 min$", line) for line in lines), \
        lines
    assert not any(re.search(r"\b(Rx|Tx|RxGbps|TxGbps)=", line) for line in lines), lines

    # A link made after the daemon started counts its carrier changes from its creation, also those
    # before the watch's first look at it; whenever the samples fall, the count is the same.
    netns.ip("link", "add", "flap2", "type", "veth", "peer", "name", "flap3")
    netns.ip("link", "set", "flap2", "up")
    for _ in range(3):
        netns.ip("link", "set", "flap3", "up")
        netns.ip("link", "set", "flap3", "down")
    # The count in the reason follows the watch's samples, CarrierChanges each event: once the last sample
    # after the last change is judged, they agree.
    def counted_alike(l):
        return l and l["Health"] == "flapping" and \
            l["HealthReason"] == f"{l['CarrierChanges']} carrier changes in the last 2 min"
    wait_for(lambda: counted_alike(client.link_by_name("flap2")), 10,
             lambda: f"flap2 flapping with every change counted: {client.link_by_name('flap2')}")


def test_all_ok_and_watch_off(netns, client, daemon_factory, bus):
    daemon = daemon_factory(netns, config=WATCH)
    wait_for(lambda: client.links()[1]["Health"] == "ok", 10, "lo judged")
    out = lp.ctl(bus, "health", "--no-pager")
    assert out.returncode == 0 and out.stdout == \
        "All 1 links, RDMA ports, PCI functions and Thunderbolt devices are ok.\n", out.stdout
    assert json.loads(lp.ctl(bus, "health", "--json=short").stdout) == []
    assert client.get_all("Manager")["WatchIntervalUSec"] == 100000
    assert wait_status(daemon, lambda s: True) == "running: all links healthy"
    daemon.stop()

    # Off: no timer, every Health unknown and said why; health says so in one sentence.
    daemon = daemon_factory(netns, config="[Watch]\nIntervalSec=0\n")
    lo = client.links()[1]
    assert (lo["Health"], lo["HealthReason"]) == ("unknown", "not watched ([Watch] IntervalSec=0)")
    assert lo["RxErrors"] == UNKNOWN and lo["RxGbps"] != lo["RxGbps"]  # NaN: unknown
    out = lp.ctl(bus, "health", "--no-pager")
    assert out.returncode == 0 and out.stdout == \
        "Link health is not watched: [Watch] IntervalSec=0 in linkprobed.conf.\n", out.stdout
    shown = json.loads(lp.ctl(bus, "show", "lo", "--json=short").stdout)
    shown = shown[0] if isinstance(shown, list) else shown
    assert shown["RxErrors"] is None and shown["RxGbps"] is None
    assert client.managed_objects_differing_from_getall() == []


def test_catalog(tmp_path):
    """linkprobe.catalog explains every MESSAGE_ID the daemon logs, and journalctl reads it."""
    with open(os.path.join(lp.TOP, "src", "daemon", "derive-health.h")) as f:
        ids = set(re.findall(r'#define HEALTH_MESSAGE_\w+ "([0-9a-f]{32})"', f.read()))
    catalog = os.path.join(lp.TOP, "systemd", "linkprobe.catalog")
    with open(catalog) as f:
        entries = set(re.findall(r"^-- ([0-9a-f]{32})$", f.read(), re.M))
    assert len(ids) == 5 and entries == ids
    if not shutil.which("journalctl"):
        pytest.skip("journalctl is not installed")
    os.makedirs(tmp_path / "usr/lib/systemd/catalog")
    os.makedirs(tmp_path / "var/lib/systemd/catalog")
    shutil.copy(catalog, tmp_path / "usr/lib/systemd/catalog")
    lp.run(["journalctl", f"--root={tmp_path}", "--update-catalog"])
    listed = lp.run(["journalctl", f"--root={tmp_path}", "--list-catalog"]).stdout
    assert {line.split()[0] for line in listed.splitlines() if line.strip()} == ids, listed
    assert "@LINKPROBE_OBJECT_NAME@ is flapping" in listed


def test_escalation_after_repeated_events(netns, client, daemon_factory):
    """NVIDIA's NIC health monitor escalates after 5 degradation events in 24 h; [Health] sets both. Here 2
    in a minute, and a short flapping window: flapping, ok again, flapping again is escalated to errors."""
    netns.ip("link", "add", "esc0", "type", "veth", "peer", "name", "esc1")
    netns.ip("link", "set", "esc0", "up")
    daemon_factory(netns, config=WATCH + "[Health]\nFlapWindowSec=30\nFlapChanges=1\n"
                   "EscalationWindowSec=60\nEscalationEvents=2\n")
    wait_for(lambda: client.link_by_name("esc0"), 10, "esc0")

    def flap():
        netns.ip("link", "set", "esc1", "up")
        wait_for(lambda: client.link_by_name("esc0")["Carrier"], 5, "carrier")

    def health(want):
        return lambda: (lambda l: l if l["Health"] == want else None)(client.link_by_name("esc0"))

    flap()
    link = wait_for(health("flapping"), 10, "flapping")
    assert "escalated" not in link["HealthReason"], link
    # Flapping for the 30 s window at least (counted in 15 s buckets: 30 to 45 s), then ok again: one event
    # counted.
    netns.ip("link", "set", "esc1", "down")
    wait_for(lambda: not client.link_by_name("esc0")["Carrier"], 5, "no carrier")
    wait_for(health("ok"), 60, lambda: f"ok again: {client.link_by_name('esc0')}")
    flap()
    link = wait_for(health("errors"), 10, lambda: f"escalated: {client.link_by_name('esc0')}")
    assert link["HealthReason"].startswith("2 degradation events (errors or flapping) in the last minute: escalated; "), \
        link["HealthReason"]
    assert 'linkprobe_link_health{device="esc0",health="errors"} 1\n' in metrics(client)
