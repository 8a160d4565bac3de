# SPDX-License-Identifier: LGPL-2.1-or-later
"""PCIe objects on D-Bus: the daemon under umockdev publishes the PCI functions behind its links, RDMA
ports, GPUs and Thunderbolt domains and every bridge above them, with exact link values, degradation
judged from both ends, path rates, the PciDevice cross-links, GetAffinity() in nvidia-smi's words,
NVLink (from the GPU probe's NVML member) and XGMI (from the KFD topology) between GPUs, the joined
Thunderbolt bottleneck, metrics, live uevents, Refresh(), and garbage that must neither crash the
daemon nor invent a value. The links are real (ifb devices in the test's namespace, named and numbered
like the fixtures' interfaces); their sysfs facts come from the testbed."""

import json
import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lp  # noqa: E402
from lp import path_label, wait_for as wait_until  # noqa: E402
from test_gpu import FakeProbe, device  # noqa: E402
from umockdev_testbed import start  # noqa: E402

PCI = lp.IFACE + "Pci"
LINK = lp.IFACE + "Link"
RDMA = lp.IFACE + "RdmaPort"
GPU = lp.IFACE + "Gpu"
TBT = lp.IFACE + "Thunderbolt"
MANAGER = lp.IFACE + "Manager"
FIXTURES = os.path.join(lp.TOP, "tests", "fixtures", "pci")
PCI_IDS = "/usr/share/misc/pci.ids"

SERVER_LINKS = {"eno1": 10, "ibp25s0": 11, "ibp29s0": 12, "ibp59s0": 13, "ibp63s0": 14, "ibp158s0": 15,
                "ibp162s0": 16, "ibp190s0": 17, "ibp194s0": 18}
SERVER_GPUS = ["0000:18:00.0", "0000:1c:00.0", "0000:3a:00.0", "0000:3e:00.0", "0000:9d:00.0", "0000:a1:00.0",
               "0000:bd:00.0", "0000:c1:00.0"]
SERVER_NICS = ["0000:05:00.0", "0000:19:00.0", "0000:1d:00.0", "0000:3b:00.0", "0000:3f:00.0", "0000:9e:00.0",
               "0000:a2:00.0", "0000:be:00.0", "0000:c2:00.0"]


def pci_path(address):
    return f"{lp.ROOT}/pci/{path_label(address)}"


def link_path(ifindex):
    return f"{lp.ROOT}/link/{path_label(str(ifindex))}"


def rdma_path(device, port=1):
    return f"{lp.ROOT}/rdma/{path_label(f'{device}_{port}')}"


def tbt_path(name):
    return f"{lp.ROOT}/thunderbolt/{path_label(name)}"


def load(testbed, name):
    testbed.add_from_file(os.path.join(FIXTURES, name + ".umockdev"))


def add_links(netns, links):
    for name, index in links.items():
        netns.ip("link", "add", name, "index", str(index), "type", "ifb")
        netns.ip("link", "set", name, "up")


def objects(client, interface):
    return {path: dict(props[interface]) for path, props in client.objects().items() if interface in props}


def affinity(client):
    (rows,) = client.call(lp.ROOT, MANAGER, "GetAffinity")
    return {frozenset((a, b)): (relation, through) for a, b, relation, through in rows}


def relation(rows, a, b):
    return rows[frozenset((a, b))][0]


def gpu_devices():
    return [device(f"pci:{a}@Fake platform", f"Fake H100 {i}", pci_bus_id=a) for i, a in enumerate(SERVER_GPUS)]


def nvml_switched(links=18):
    """Every GPU with all its NVLinks to NVSwitches, as on an HGX board."""
    return {"status": "ok", "devices": [
        {"pci_bus_id": a, "nvlinks": [{"link": k, "version": 4, "remote_pci_bus_id": f"0000:0{k % 4 + 1}:00.0",
                                       "remote_type": "switch"} for k in range(links)]}
        for a in SERVER_GPUS]}


@pytest.fixture
def fake():
    f = FakeProbe()
    f.set(devices=gpu_devices(), measurements={})
    yield f
    f.remove()


def start_gpu(daemon_factory, netns, testbed, fake, *args):
    env = {**testbed.env(), **fake.env()}
    return daemon_factory(netns, prefix=["umockdev-wrapper"], env=env, gpu=True,
                          args=[f"--sysfs-root={testbed.sys}", *args],
                          config="[Gpu]\nTTLSec=1h\nDeadlineSec=20s\nRandomizedDelaySec=0\nQuick=yes\n")


def test_server_nics(netns, client, daemon_factory, testbed):
    load(testbed, "server-8gpu")
    add_links(netns, SERVER_LINKS)
    start(daemon_factory, netns, testbed)

    pci = wait_until(lambda: (lambda o: o if len(o) == 34 else None)(objects(client, PCI)), what="34 pci objects")
    # The NICs and every bridge above them; the GPUs' functions and their ports are behind no object.
    for a in SERVER_NICS:
        assert pci_path(a) in pci
    for a in SERVER_GPUS:
        assert pci_path(a) not in pci

    nic0 = pci[pci_path("0000:19:00.0")]
    expected = dict(Address="0000:19:00.0", VendorId=0x15b3, DeviceId=0x1021, SubsystemVendorId=0x15b3,
                    SubsystemDeviceId=0x0041, Class=0x020700, Driver="mlx5_core", NumaNode=0,
                    LocalCpus="0-55,112-167", PortType="endpoint", CurrentLinkSpeed=32.0, CurrentLinkGeneration=5,
                    CurrentLinkWidth=16, MaxLinkSpeed=32.0, MaxLinkGeneration=5, MaxLinkWidth=16, Degraded=False,
                    DegradedReason="", Parent=pci_path("0000:17:01.0"),
                    PathLimitedBy="PCIe link 0000:15:01.0 - 0000:16:00.0 at 32.0 GT/s x16 (504.1 Gb/s)",
                    GpuLinks=[], Problems=[])
    for key, value in expected.items():
        assert nic0[key] == value, key
    assert abs(nic0["Gbps"] - 504.123) < 0.01 and abs(nic0["PathGbps"] - 504.123) < 0.01
    if os.path.exists(PCI_IDS):
        assert nic0["Name"].startswith("Mellanox Technologies"), nic0["Name"]
    assert pci[pci_path("0000:16:00.0")]["PortType"] == "upstream-port"
    assert pci[pci_path("0000:17:01.0")]["PortType"] == "downstream-port"
    assert pci[pci_path("0000:15:01.0")]["PortType"] == "root-port"
    assert pci[pci_path("0000:15:01.0")]["Parent"] == "/"

    # The 400G NIC in a slot that trained at x4.
    nic5 = pci[pci_path("0000:a2:00.0")]
    assert nic5["Degraded"] and nic5["CurrentLinkWidth"] == 4
    assert nic5["DegradedReason"] == "trained at 32.0 GT/s x4; both ends support 32.0 GT/s x16"
    assert nic5["Health"] == "degraded" and nic5["DegradedReason"] in nic5["HealthReason"]
    port = pci[pci_path("0000:a0:01.0")]
    assert port["Degraded"] and port["DegradedReason"] == ("the link below, to 0000:a2:00.0: trained at 32.0 GT/s x4; "
                                                           "both ends support 32.0 GT/s x16")
    assert abs(nic5["PathGbps"] - 126.03) < 0.01
    assert sum(o["Degraded"] for o in pci.values()) == 2

    # Cross-links: the network link and the RDMA port on the same function.
    links = client.links()
    assert links[11]["PciDevice"] == pci_path("0000:19:00.0")
    assert links[10]["PciDevice"] == pci_path("0000:05:00.0")
    assert links[1]["PciDevice"] == "/"  # lo
    ports = objects(client, RDMA)
    assert ports[rdma_path("mlx5_0")]["PciDevice"] == pci_path("0000:19:00.0")
    assert ports[rdma_path("mlx5_5")]["PciDevice"] == pci_path("0000:a2:00.0")

    rows = affinity(client)
    assert relation(rows, link_path(11), rdma_path("mlx5_0")) == "X"
    assert relation(rows, link_path(11), link_path(12)) == "PXB"
    assert rows[frozenset((link_path(11), link_path(12)))][1] == "0000:16:00.0"
    assert relation(rows, link_path(13), link_path(14)) == "PHB"
    assert relation(rows, link_path(11), link_path(13)) == "NODE"
    assert relation(rows, link_path(10), link_path(11)) == "NODE"
    assert relation(rows, link_path(11), link_path(15)) == "SYS"
    assert rows[frozenset((link_path(11), link_path(15)))][1] == "0,1"
    n = 9 + 8  # links and RDMA ports with a PCI function
    assert len(rows) == n * (n - 1) // 2
    assert client.managed_objects_differing_from_getall() == []

    # Metrics that join with node_exporter and DCGM on pci_address.
    (text,) = client.call(lp.ROOT, MANAGER, "GetMetrics")
    assert 'linkprobe_pci_link_speed_gts{pci_address="0000:19:00.0"} 32\n' in text
    assert 'linkprobe_pci_link_width{pci_address="0000:a2:00.0"} 4\n' in text
    assert 'linkprobe_pci_link_degraded{pci_address="0000:a2:00.0"} 1\n' in text
    assert 'linkprobe_pci_link_degraded{pci_address="0000:19:00.0"} 0\n' in text
    assert 'linkprobe_pci_numa_node{pci_address="0000:9e:00.0"} 1\n' in text


def test_server_gpus_and_nvlinks(netns, client, daemon_factory, testbed, fake):
    load(testbed, "server-8gpu")
    add_links(netns, SERVER_LINKS)
    fake.set(nvml=nvml_switched())
    start_gpu(daemon_factory, netns, testbed, fake)

    gpus = wait_until(lambda: (lambda g: g if len(g) == 8 and all(p["PciDevice"] != "/" for p in g.values()) else None)(
        objects(client, GPU)), what="8 GPUs with their PCI functions")
    by_bus = {p["PciBusId"]: path for path, p in gpus.items()}
    pci = objects(client, PCI)
    assert len(pci) == 50
    for address, path in by_bus.items():
        assert gpus[path]["PciDevice"] == pci_path(address)
        # The theoretical rate next to what the probe measures: 504 Gb/s is 63 GB/s.
        assert abs(gpus[path]["PciPathGBps"] - 63.015) < 0.01
    gpu0 = pci[pci_path("0000:18:00.0")]
    assert gpu0["Driver"] == "nvidia" and gpu0["Class"] == 0x030200
    # NVLink through NVSwitches: every pair of GPUs shares 18 links.
    peers = {link[1]: link for link in gpu0["GpuLinks"]}
    assert sorted(peers) == sorted(a for a in SERVER_GPUS if a != "0000:18:00.0")
    assert peers["0000:1c:00.0"] == (pci_path("0000:1c:00.0"), "0000:1c:00.0", "NVLink", 18, 0, 0.0, 450.0)

    rows = affinity(client)
    g0, g1, g4 = by_bus["0000:18:00.0"], by_bus["0000:1c:00.0"], by_bus["0000:9d:00.0"]
    assert relation(rows, g0, g1) == "NV18" and relation(rows, g0, g4) == "NV18"
    assert relation(rows, g0, link_path(11)) == "PIX"  # GPU0 and NIC0 share a switch
    assert relation(rows, g1, link_path(12)) == "PIX"
    assert relation(rows, g0, link_path(12)) == "PXB"
    assert relation(rows, g0, link_path(15)) == "SYS"
    assert relation(rows, by_bus["0000:3a:00.0"], by_bus["0000:3e:00.0"]) == "NV18"
    assert relation(rows, by_bus["0000:3a:00.0"], link_path(14)) == "PHB"

    # NVML gone (the next inventory without it): the links go, the PCIe relation comes back.
    fake.set(nvml={"status": "absent"})
    client.call(lp.ROOT, MANAGER, "ProbeGpus", timeout_ms=30000)
    wait_until(lambda: objects(client, PCI)[pci_path("0000:18:00.0")]["GpuLinks"] == [], what="NVLinks gone")
    rows = affinity(client)
    assert relation(rows, g0, g1) == "PXB" and relation(rows, g0, g4) == "SYS"


def test_workstation_gpu_at_x8(netns, client, daemon_factory, testbed, fake):
    load(testbed, "workstation-x8")
    add_links(netns, {"enp5s0f0": 4})
    fake.set(devices=[device("pci:0000:01:00.0@Fake platform", "Fake RTX 4090", pci_bus_id="0000:01:00.0")])
    start_gpu(daemon_factory, netns, testbed, fake)

    gpu = wait_until(lambda: next((p for p in objects(client, GPU).values() if p["PciDevice"] != "/"), None),
                     what="the GPU's PCI function")
    pci = objects(client, PCI)
    assert sorted(pci) == sorted(pci_path(a) for a in ("0000:00:01.1", "0000:01:00.0", "0000:00:02.1", "0000:05:00.0"))
    g = pci[gpu["PciDevice"]]
    assert g["Degraded"] and g["NumaNode"] == -1 and g["LocalCpus"] == "0-31"
    assert g["DegradedReason"] == "trained at 16.0 GT/s x8; both ends support 16.0 GT/s x16"
    assert abs(gpu["PciPathGBps"] - 15.754) < 0.01
    summary = client.get_all("Summary")
    degraded = {path: reason for path, _, reason in summary["DegradedLinks"]}
    assert degraded.get(pci_path("0000:01:00.0")) == g["DegradedReason"]
    assert pci_path("0000:00:01.1") not in degraded  # one entry per link
    rows = affinity(client)
    assert relation(rows, link_path(4), next(iter(objects(client, GPU)))) == "PHB"


def test_laptop_thunderbolt_uplink(netns, client, daemon_factory, testbed):
    load(testbed, "laptop-tb-gen3x4")
    add_links(netns, {"thunderbolt0": 7, "wlp0s20f3": 3})
    start(daemon_factory, netns, testbed)

    peer = wait_until(lambda: objects(client, TBT).get(tbt_path("0-1")), what="the Thunderbolt peer")
    domain = objects(client, TBT)[tbt_path("domain0")]
    assert domain["PciDevice"] == pci_path("0000:07:00.0")
    # 40 Gb/s of Thunderbolt 3 behind 31.5 Gb/s of PCIe: the uplink is named.
    peer = wait_until(lambda: (lambda p: p if p["PathLimitGbps"] > 0 else None)(objects(client, TBT)[tbt_path("0-1")]),
                      what="PathLimitGbps")
    assert abs(peer["PathLimitGbps"] - 31.508) < 0.01
    assert peer["PathLimitedBy"] == "PCIe link 0000:00:1c.4 - 0000:05:00.0 at 8.0 GT/s x4 (31.5 Gb/s)"
    assert peer["PathRxGbps"] == 40
    assert objects(client, TBT)[tbt_path("0-0")]["PathLimitGbps"] == 0  # the host router has no link
    links = client.links()
    assert links[7]["PciDevice"] == pci_path("0000:07:00.0")
    assert links[3]["PciDevice"] == pci_path("0000:00:14.3")
    wifi = objects(client, PCI)[pci_path("0000:00:14.3")]
    assert wifi["PortType"] == "integrated" and wifi["PathGbps"] == 0 and wifi["CurrentLinkSpeed"] == 0
    rows = affinity(client)
    assert relation(rows, link_path(7), tbt_path("domain0")) == "X"
    assert relation(rows, link_path(3), tbt_path("domain0")) == "PHB"


def test_amd_xgmi(netns, client, daemon_factory, testbed):
    load(testbed, "amd-xgmi")
    start(daemon_factory, netns, testbed)

    pci = wait_until(lambda: (lambda o: o if len(o) == 8 else None)(objects(client, PCI)), what="8 pci objects")
    a, b = pci_path("0000:03:00.0"), pci_path("0000:43:00.0")
    assert pci[a]["GpuLinks"] == [(b, "0000:43:00.0", "XGMI", 1, 15, 50.0, 100.0)]
    assert pci[b]["GpuLinks"] == [(a, "0000:03:00.0", "XGMI", 1, 15, 50.0, 100.0)]
    assert affinity(client) == {frozenset((a, b)): ("XGMI", "")}


def test_live_changes(netns, client, signals, daemon_factory, testbed):
    load(testbed, "server-8gpu")
    add_links(netns, SERVER_LINKS)
    start(daemon_factory, netns, testbed)
    nic5 = pci_path("0000:a2:00.0")
    wait_until(lambda: objects(client, PCI).get(nic5), what="NIC5")

    # Reseated at full width: a change uevent re-reads the link, once, and the degradation goes.
    base = "/sys/devices/pci0000:9a/0000:9a:03.0/0000:9f:00.0/0000:a0:01.0"
    signals.clear()
    testbed.set_attribute(base, "current_link_width", "16\n")
    testbed.set_attribute(base + "/0000:a2:00.0", "current_link_width", "16\n")
    testbed.uevent(base + "/0000:a2:00.0", "change")
    wait_until(lambda: not client.get_all("Pci", nic5)["Degraded"], what="NIC5 no longer degraded")
    changes = signals.wait(lambda ev: [a[1] for _, p, _, m, a in ev if p == nic5 and m == "PropertiesChanged"])
    assert changes and "CurrentLinkWidth" in changes[0] and changes[0]["Degraded"] is False

    # The kernel announces no retrain: the port's side is read again only on Refresh().
    assert client.get_all("Pci", pci_path("0000:a0:01.0"))["CurrentLinkWidth"] == 4
    client.call(lp.ROOT, MANAGER, "Refresh")
    wait_until(lambda: client.get_all("Pci", pci_path("0000:a0:01.0"))["CurrentLinkWidth"] == 16, what="Refresh")

    # The NIC goes away (hot-unplug): its object, and its link's PciDevice, follow.
    testbed.uevent(base + "/0000:a2:00.0", "remove")
    wait_until(lambda: nic5 not in objects(client, PCI), what="NIC5 removed")
    assert client.links()[16]["PciDevice"] == "/"


def test_garbage(netns, client, daemon_factory, testbed):
    load(testbed, "garbage")
    add_links(netns, {"garb0": 20, "bare0": 21, "off0": 22, "deep0": 23})
    daemon = start(daemon_factory, netns, testbed)

    pci = wait_until(lambda: (lambda o: o if pci_path("0000:38:00.0") in o else None)(objects(client, PCI)),
                     what="the deep chain")
    bad = pci[pci_path("0000:01:00.0")]
    assert (bad["VendorId"], bad["DeviceId"], bad["Class"], bad["NumaNode"], bad["LocalCpus"]) == (0, 0, 0, -1, "")
    assert (bad["CurrentLinkSpeed"], bad["CurrentLinkWidth"], bad["MaxLinkSpeed"], bad["MaxLinkWidth"]) == (0, 0, 0, 0)
    assert bad["Gbps"] == 0 and not bad["Degraded"] and bad["Name"] == ""
    assert "current_link_speed: \"abc GT/s\" is not a PCIe link speed" in bad["Problems"]
    assert "subsystem_vendor: contains a NUL byte" in bad["Problems"]
    assert len(bad["Problems"]) == 9
    bare = pci[pci_path("0000:00:02.0")]
    assert bare["Problems"] == [] and bare["VendorId"] == 0 and bare["PortType"] == "integrated"
    off = pci[pci_path("0000:03:00.0")]
    assert "vendor: 0xffff: the function does not respond" in off["Problems"]
    # 40 bridges deep: cut off where the tree gets absurd, said so, and the rest still published.
    cut = [o for o in pci.values() if any("cut off" in p for p in o["Problems"])]
    assert len(cut) == 1 and cut[0]["Parent"] == "/"
    assert client.links()[23]["PciDevice"] == pci_path("0000:38:00.0")
    assert affinity(client)  # answered
    assert daemon.proc.poll() is None
    assert client.managed_objects_differing_from_getall() == []


def test_ctl_topo(netns, bus, client, daemon_factory, testbed, fake):
    """linkprobectl topo: the matrix nvidia-smi topo -m prints, for every device with a PCI function, with
    CPU affinity and NUMA node and a legend of the words used; --json is the same rows."""
    load(testbed, "server-8gpu")
    add_links(netns, {"eno1": 10, "ibp25s0": 11, "ibp158s0": 15})
    fake.set(devices=gpu_devices()[:2], nvml=nvml_switched())
    start_gpu(daemon_factory, netns, testbed, fake)
    wait_until(lambda: sum(p["PciDevice"] != "/" for p in objects(client, GPU).values()) == 2, what="2 GPUs")

    text = lp.ctl(bus, "topo", "--color=never", "--no-pager")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    header = lines[0].split()
    assert header[:4] == ["DEVICE", "GPU0", "GPU1", "eno1"] and header[-3:] == ["CPU", "AFFINITY", "NUMA"]
    rows = {line.split()[0]: line.split() for line in lines[1:] if line and not line.startswith(" ")}
    assert rows["GPU0"][1:4] == ["X", "NV18", "NODE"]
    assert rows["ibp25s0"][1:3] == ["PIX", "PXB"]
    assert rows["GPU0"][-2:] == ["0-55,112-167", "0"]
    assert rows["ibp158s0"][1] == "SYS" and rows["ibp158s0"][-1] == "1"
    assert "mlx5_0/1" in rows and rows["mlx5_0/1"][header.index("ibp25s0")] == "X"
    assert "Legend:" in text.stdout and "NV#" in text.stdout and "SYS" in text.stdout

    doc = json.loads(lp.ctl(bus, "topo", "--json=short").stdout)
    by_name = {d["Device"]: d for d in doc}
    assert by_name["GPU0"]["Relations"]["GPU1"] == "NV18"
    assert by_name["GPU0"]["PciAddress"] == "0000:18:00.0" and by_name["GPU0"]["NumaNode"] == 0
    assert by_name["ibp158s0"]["Relations"]["GPU0"] == "SYS"
    assert by_name["eno1"]["Kind"] == "Link" and by_name["eno1"]["Object"] == link_path(10)
