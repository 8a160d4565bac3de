# SPDX-License-Identifier: LGPL-2.1-or-later
"""rdma-dump against every RDMA fixture: the JSON a person (or phase B's linkprobectl) would see, the
netdev lookup, the exit codes, and the quiet "no RDMA" answer on this machine's real /sys."""

import json
import os
import subprocess

import pytest

gi = pytest.importorskip("gi")
gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("LINKPROBE_BUILD", os.path.join(TOP, "build"))
RDMA_DUMP = os.path.join(BUILD, "rdma-dump")
FIXTURES = os.path.join(TOP, "tests", "fixtures", "rdma")
ALL = sorted(f[: -len(".umockdev")] for f in os.listdir(FIXTURES) if f.endswith(".umockdev"))


@pytest.fixture
def testbed():
    if not os.access(RDMA_DUMP, os.X_OK):
        pytest.fail(f"{RDMA_DUMP} is not built (run make)")
    tb = UMockdev.Testbed.new()
    yield tb
    del tb


def load(tb, *names):
    for name in names:
        tb.add_from_file(os.path.join(FIXTURES, name + ".umockdev"))
    return tb.get_sys_dir()


def dump(root, *args, check=True):
    proc = subprocess.run([RDMA_DUMP, "--sysfs-root", root, *args], capture_output=True, text=True, timeout=60)
    if check:
        assert proc.returncode == 0, proc.stderr
        return json.loads(proc.stdout)
    return proc


def port(doc, device, number):
    dev = next(d for d in doc["devices"] if d["name"] == device)
    return next(p for p in dev["ports"] if p["port"] == number)


@pytest.mark.parametrize("fixture", ALL)
def test_every_fixture_is_valid_json(testbed, fixture):
    doc = dump(load(testbed, fixture))
    assert doc["subsystem"] is True
    assert doc["devices"], fixture
    for dev in doc["devices"]:
        for p in dev["ports"]:
            assert p["raw"].keys() == {"state", "phys_state", "link_layer", "rate"}
            if fixture != "broken":
                assert p["warnings"] == [], (dev["name"], p["port"], p["warnings"])


def test_all_fixtures_together(testbed):
    doc = dump(load(testbed, *ALL))
    assert [d["name"] for d in doc["devices"]] == [
        "broken0", "broken1", "iwp3s0f4", "mlx4_0", "mlx5_0", "mlx5_1", "mlx5_2", "mthca0", "rocep59s0f0", "rxe0"]

    p = port(doc, "mlx5_0", 1)
    assert (p["transport"], p["state"], p["phys_state"], p["rate_gbps"], p["width"], p["speed"]) == \
        ("InfiniBand", "ACTIVE", "LinkUp", 200.0, "4X", "HDR")
    assert (p["lid"], p["sm_lid"], p["netdev"]) == (0x1a, 1, "ibp129s0f0")

    p = port(doc, "mlx5_1", 1)
    assert (p["state"], p["phys_state"], p["lid"]) == ("DOWN", "Polling", 0xffff)

    p = port(doc, "rocep59s0f0", 1)
    assert p["transport"] == "RoCE"
    assert [(g["gid"], g["type"]) for g in p["gids"] if g["netdev"] == "enp59s0f0np0"][2:4] == [
        ("::ffff:192.168.10.21", "IB/RoCE v1"), ("::ffff:192.168.10.21", "RoCE v2")]
    assert [n["name"] for n in p["netdevs"]] == ["enp59s0f0np0", "enp59s0f0np0.100"]

    p = port(doc, "rxe0", 1)
    assert (p["rate_gbps"], p["width"], p["speed"], p["netdev"]) == (2.5, "1X", "SDR", "enp0s3")
    assert p["raw"]["rate"] == "2.5 Gb/sec (1X SDR)"

    assert port(doc, "iwp3s0f4", 1)["transport"] == "iWARP"
    assert port(doc, "iwp3s0f4", 2)["state"] == "DOWN"
    assert port(doc, "mlx4_0", 1)["netdev"] == "ibp4s0"
    assert port(doc, "mlx4_0", 2)["netdev"] == "enp4s0d1"
    assert port(doc, "mthca0", 1)["speed"] == "SDR"


def test_broken_is_reported_not_fatal(testbed):
    doc = dump(load(testbed, "broken"), "--device", "broken0")
    dev = doc["devices"][0]
    assert dev["node_type"] is None and dev["node_guid"] is None
    # Invalid UTF-8 is escaped, not dropped.
    assert dev["node_desc"] == "node\\xff-01"
    assert "board_id: cannot read: Bad message" in dev["warnings"]
    p = dev["ports"][0]
    assert p["state"] is None and p["raw"]["state"] == "4 ACTIVE"
    assert 'rate: cannot parse "fast (4X EDR)"' in p["warnings"]


@pytest.mark.parametrize("ifname,device,number,transport", [
    ("ibp129s0f0", "mlx5_0", 1, "InfiniBand"),
    ("enp59s0f0np0.100", "rocep59s0f0", 1, "RoCE"),
    ("enp0s3", "rxe0", 1, "RoCE"),
    ("enp3s0f4d1", "iwp3s0f4", 2, "iWARP"),
    ("enp4s0d1", "mlx4_0", 2, "RoCE"),
    ("lo", None, None, None),
])
def test_netdev_lookup(testbed, ifname, device, number, transport):
    doc = dump(load(testbed, *ALL), "--netdev", ifname)
    assert doc["netdev"] == {"name": ifname, "device": device, "port": number, "transport": transport}


def test_exit_codes(testbed):
    root = load(testbed, "cx6-ib-hdr")
    proc = dump(root, "--device", "mlx5_9", check=False)
    assert proc.returncode == 1 and "mlx5_9" in proc.stderr
    proc = dump(root, "--device", "../mlx5_0", check=False)
    assert proc.returncode == 1
    proc = dump(root, "--no-such-option", check=False)
    assert proc.returncode == 2
    proc = dump("/nonexistent-linkprobe-root", check=False)
    assert proc.returncode == 1 and "cannot open" in proc.stderr


def test_this_machine(testbed):
    """The real /sys and libibverbs: on a machine without RDMA both answer quietly."""
    proc = subprocess.run([RDMA_DUMP, "--verbs"], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    if doc["subsystem"]:
        pytest.skip("this machine has RDMA devices; the quiet path is covered by fixtures only")
    assert doc["devices"] == []
    assert doc["verbs"]["availability"].startswith("no RDMA device")
    assert proc.stderr == ""
