# SPDX-License-Identifier: LGPL-2.1-or-later
"""One verdict (linkprobed(8), HEALTH): on every object that has both, Health is "degraded" exactly when
Degraded is true, unless a graver Health (errors, flapping) stands, and a link below its best for power
saving is neither. Walked here over every testbed in tests/fixtures, with the watch on and off; every
other integration test checks the same of its daemon's objects when the daemon stops (conftest.py)."""

import glob
import os

import pytest

import lp
from umockdev_testbed import start

# Every testbed that publishes objects with a Health (cpu/ only feeds the GPU probe's cache sizes).
FIXTURES = sorted(f for kind in ("pci", "rdma", "thunderbolt")
                  for f in glob.glob(os.path.join(lp.TOP, "tests", "fixtures", kind, "*.umockdev")))
HEALTHY_KINDS = ("Pci", "Thunderbolt", "RdmaPort", "Link")


def net_devices(path):
    """{interface name: ifindex} of the network interfaces a umockdev file describes."""
    found, name = {}, None
    with open(path) as f:
        for line in f:
            if line.startswith("P: "):
                parts = line[3:].strip().split("/")
                name = parts[-1] if len(parts) >= 2 and parts[-2] == "net" else None
            elif name and line.startswith("A: ifindex="):
                found[name] = int(line.split("=", 1)[1].replace("\\n", "").strip())
    return found


def fixture_id(path):
    return os.path.relpath(path, os.path.join(lp.TOP, "tests", "fixtures"))


# With the watch off only what structure says is judged: the PCIe trees are where that changes the verdict
# (no sample ever tells how busy a device is).
CASES = [(f, "100ms") for f in FIXTURES] + [(f, "0") for f in FIXTURES if fixture_id(f).startswith("pci/")]


@pytest.mark.parametrize("fixture,watch", CASES,
                         ids=[f"{fixture_id(f)}-{'watched' if w != '0' else 'unwatched'}" for f, w in CASES])
def test_every_published_object(fixture, watch, netns, bus, client, daemon_factory, testbed):
    testbed.add_from_file(fixture)
    for name, index in net_devices(fixture).items():
        if index > 1 and len(name) <= 15:
            netns.ip("link", "add", name, "index", str(index), "type", "ifb")
            netns.ip("link", "set", name, "up")
    start(daemon_factory, netns, testbed, config=f"[Watch]\nIntervalSec={watch}\n")

    def judged():
        objects = client.objects()
        reasons = [props.get("HealthReason", "") for interfaces in objects.values()
                   for interface, props in interfaces.items() if interface.endswith(HEALTHY_KINDS)]
        return objects if not any("not sampled yet" in r for r in reasons) else None

    objects = lp.wait_for(judged, 15, "every object sampled once")
    assert lp.one_verdict_violations(objects) == []
    judged = [props for interfaces in objects.values() for props in interfaces.values() if "Degraded" in props]
    degraded = sum(props["Degraded"] for props in judged)
    print(f"{fixture_id(fixture)} (watch {watch}): {len(judged)} objects with Degraded, {degraded} of them true")


def test_hca_below_both_ends(netns, bus, client, daemon_factory, testbed):
    """A reviewer's two testbeds (pci/hca-trained-low.umockdev): the root port above an HCA narrowed to x8,
    and an HCA at 8 GT/s x16 in a 16 GT/s x16 slot whose traffic cannot be told (no counters). Both were
    Degraded=true with Health=ok; now both ends of each link are degraded, with the reason."""
    testbed.add_from_file(os.path.join(lp.TOP, "tests", "fixtures", "pci", "hca-trained-low.umockdev"))
    netns.ip("link", "add", "hcanarrow0", "index", "75", "type", "ifb")
    netns.ip("link", "set", "hcanarrow0", "up")
    start(daemon_factory, netns, testbed, config="[Watch]\nIntervalSec=100ms\n")

    def of(address):
        return client.get_all("Pci", "/org/linkprobe/LinkProbe1/pci/" + lp.path_label(address))

    lp.wait_for(lambda: all(of(a)["Health"] == "degraded" for a in ("0000:c0:01.1", "0000:c1:00.0", "0000:d0:01.1",
                                                                   "0000:d1:00.0")),
                15, lambda: {a: of(a)["HealthReason"] for a in ("0000:c0:01.1", "0000:d1:00.0")})
    port, hca = of("0000:c0:01.1"), of("0000:c1:00.0")
    assert port["Degraded"] and port["DegradedReason"] == \
        "the link below, to 0000:c1:00.0: trained at 16.0 GT/s x8; both ends support 16.0 GT/s x16", port
    assert hca["DegradedReason"] == "trained at 16.0 GT/s x8; both ends support 16.0 GT/s x16", hca
    slow = of("0000:d1:00.0")
    assert slow["Degraded"] and slow["HealthReason"] == slow["DegradedReason"] == (
        "trained at 8.0 GT/s x16; both ends support 16.0 GT/s x16 (how busy the device is cannot be told, and it "
        "does not park its link to save power)"), slow
    assert lp.one_verdict_violations(client.objects()) == []
