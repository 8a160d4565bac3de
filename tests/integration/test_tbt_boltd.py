# SPDX-License-Identifier: LGPL-2.1-or-later
"""Thunderbolt side by side with boltd, the anchor for routers.

For each fixture without IOMMU DMA protection (boltd may write authorized=1 on protected systems),
boltd runs on a umockdev testbed and a private system bus; for every device it lists, tbt-dump on the
same tree must report the same unique id, name, vendor, generation, authorization, lanes, per-lane
speed and parent (tbt_harness.compare_router), and so must linkprobed's D-Bus objects with boltd and
linkprobed on the same testbed and private bus. boltd ignores XDomain peers: test_tbt_dump.py and
test_tbt_daemon.py check them against the fixture files.
"""

import pytest

import tbt_harness as h

BOLTD_FIXTURES = [
    "tb3-chain.umockdev",
    "tb5-asymmetric-dock.umockdev",
    "two-domains.umockdev",
    "retimers.umockdev",
    "host-no-drom.umockdev",
    "unauthorized.umockdev",
    "degraded-usb4v2.umockdev",
    "single-lane.umockdev",
    "legacy-tb2.umockdev",
]

SKIP_REASON = h.missing_tools()


@pytest.fixture
def private_bus():
    if SKIP_REASON:
        pytest.skip(SKIP_REASON)
    bus = h.PrivateBus()
    yield bus
    bus.close()


@pytest.mark.parametrize("fixture", BOLTD_FIXTURES)
def test_routers_match_boltd(fixture, testbed_for, private_bus):
    assert not h.UmockdevFixture(fixture).iommu_protected(), "boltd may authorize devices on IOMMU systems"
    bed = testbed_for(fixture)
    boltd = h.Boltd(bed, private_bus)
    try:
        theirs = boltd.devices()
        log = boltd.read_log()
    finally:
        boltd.close()
    ours = {r["unique_id"]: r for r in h.ours_from_dump(h.tbt_dump(bed.sys))}

    assert theirs, f"boltd listed no devices:\n{log}"
    problems = []
    for device in theirs:
        mine = ours.get(device["Uid"])
        if mine is None:
            problems.append(f"{device['Uid']} ({device['Name']}): listed by boltd, not by us")
            continue
        problems += [f"{mine['sysname']}: {d}" for d in h.compare_router(device, mine)]
    unseen = set(ours) - {d["Uid"] for d in theirs}
    problems += [f"{ours[u]['sysname']}: ours only" for u in sorted(unseen)]
    assert not problems, "\n".join(problems)
    # Every router of the fixture is there: none lost on either side.
    assert len(theirs) == len(h.UmockdevFixture(fixture).by_devtype("thunderbolt_device"))


def test_compare_router_finds_differences():
    """The comparison itself must be able to fail."""
    bolt = {"Uid": "u", "Name": "Dock", "Vendor": "V", "Generation": 4, "Status": "connected",
            "AuthFlags": "none", "LinkSpeed": {"rx.speed": 20, "rx.lanes": 2, "tx.speed": 20, "tx.lanes": 2},
            "Parent": "p", "Type": "peripheral", "SysfsPath": "/sys/devices/x"}
    ours = {"sysname": "0-1", "unique_id": "u", "name": "Dock", "vendor": "V", "device_id": 2, "vendor_id": 1,
            "generation": 4, "authorized": 0, "rx_lanes": 2, "rx_lane_gbps": 20, "tx_lanes": 2,
            "tx_lane_gbps": 20, "type": "hub", "syspath": "devices/x", "parent_unique_id": "p"}
    assert h.compare_router(bolt, ours) == []
    assert h.compare_router(bolt, dict(ours, authorized=1)) == ["authorized: boltd False, ours True"]
    assert h.compare_router(bolt, dict(ours, rx_lanes=1)) == ["rx lanes: boltd 2, ours 1"]
    assert h.compare_router(bolt, dict(ours, parent_unique_id=None)) == ["parent: boltd 'p', ours ''"]
    assert h.compare_router(dict(bolt, Name="0x2"), dict(ours, name=None)) == []


SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")


@pytest.fixture
def netns_for_daemon():
    import lp

    ns = lp.NetNS()
    yield ns
    ns.delete()


@pytest.mark.parametrize("fixture", BOLTD_FIXTURES)
def test_routers_match_boltd_over_dbus(fixture, testbed_for, private_bus, netns_for_daemon):
    """The same comparison against linkprobed's D-Bus objects: boltd and linkprobed on one testbed and
    one private system bus, each under umockdev-wrapper."""
    import lp

    bed = testbed_for(fixture)
    boltd = h.Boltd(bed, private_bus)
    daemon = None
    try:
        theirs = boltd.devices()
        daemon = lp.Daemon(private_bus, netns=netns_for_daemon, prefix=["umockdev-wrapper"], env=bed.env(),
                           args=[f"--sysfs-root={bed.sys}"])
        client = lp.Client(private_bus)
        try:
            objects = client.objects()
        finally:
            client.close()
    finally:
        boltd.close()
        if daemon:
            daemon.stop()
            assert not any(m in daemon.log_text for m in SANITIZER_MARKERS), daemon.log_text
    ours = {r["unique_id"]: r for r in h.ours_from_objects(objects)}

    assert theirs
    problems = []
    for device in theirs:
        mine = ours.get(device["Uid"])
        if mine is None:
            problems.append(f"{device['Uid']} ({device['Name']}): listed by boltd, not by linkprobed")
            continue
        problems += [f"{mine['sysname']}: {d}" for d in h.compare_router(device, mine)]
    problems += [f"{ours[u]['sysname']}: linkprobed only" for u in sorted(set(ours) - {d["Uid"] for d in theirs})]
    assert not problems, "\n".join(problems)
