# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobed's Thunderbolt objects on umockdev testbeds: the daemon runs under `umockdev-wrapper`
with --sysfs-root=<testbed>/sys on a private bus (in a network namespace of the test), sees every
fixture, and follows add/change/remove uevents injected while it runs (tbt_harness.LiveTestbed owns
the testbed in a preloaded process, which umockdev needs to send uevents)."""

import os
import time

import pytest

import lp
import tbt_harness as h
from lp import wait_for as wait_until  # noqa: F401 (raises on timeout; test_tbt_net takes it from here)
from umockdev_testbed import start

TBT = lp.IFACE + "Thunderbolt"
SKIP_REASON = h.missing_tools(boltd=False)

ALL_FIXTURES = sorted(f for f in os.listdir(h.FIXTURES) if f.endswith(".umockdev"))


def object_path(sysname):
    return lp.path_encode(f"{lp.ROOT}/thunderbolt", sysname)


def tbt_objects(client):
    """The Thunderbolt objects by SysfsName, each with its Path."""
    return {props[TBT]["SysfsName"]: dict(props[TBT], Path=path)
            for path, props in client.objects().items() if TBT in props}


def changed(events, path, prop):
    """Whether a PropertiesChanged for path names prop."""
    return any(p == path and member == "PropertiesChanged" and args[0] == TBT and prop in args[1]
               for _, p, _, member, args in events)


def removed_paths(events):
    return {args[0] for _, _, _, member, args in events if member == "InterfacesRemoved" and TBT in args[1]}


def added_paths(events):
    return {args[0] for _, _, _, member, args in events if member == "InterfacesAdded" and TBT in args[1]}


def expected_objects(sys_dir):
    """What the daemon must publish, from tbt-dump (the reader and topology of phase A) on the same
    tree: every device but XDomain services, with the D-Bus API's spelling of unknowns."""
    dump = h.tbt_dump(sys_dir)
    by_name = {d["sysname"]: d for d in dump["devices"]}
    authorized = {0: "no", 1: "yes", 2: "secure"}
    out = {}
    for d in dump["devices"]:
        kind = d["kind"]
        if kind == "service":
            continue
        link = d.get("link") or {}
        rx, tx = d.get("rx") or {}, d.get("tx") or {}
        parent = by_name.get(d["parent"])
        e = {
            "SysfsName": d["sysname"],
            "Type": d["type"],
            "Name": d.get("device_name") or "",
            "Vendor": d.get("vendor_name") or "",
            "VendorId": d.get("vendor_id") or 0,
            "DeviceId": d.get("device_id") or 0,
            "UniqueId": d.get("unique_id") or "",
            "NvmVersion": d.get("nvm_version") or "",
            "Generation": (d.get("generation") or 0) if kind == "router" else 0,
            "Authorized": authorized.get(d.get("authorized"), "") if kind == "router" else "",
            "SecurityLevel": (d.get("security") or "") if kind == "domain" else "",
            "Parent": object_path(parent["sysname"]) if parent and parent["kind"] != "service" else "/",
            "Depth": d["depth"] if d["depth"] is not None else -1,
            "Route": d["route"] if kind in ("router", "peer") and d["route"] is not None else "",
            "RxLanes": rx.get("lanes") or 0,
            "TxLanes": tx.get("lanes") or 0,
            "RxLaneGbps": rx.get("lane_gbps") or 0,
            "TxLaneGbps": tx.get("lane_gbps") or 0,
            "RxGbps": link.get("rx_gbps") or 0,
            "TxGbps": link.get("tx_gbps") or 0,
            "LinkClass": link.get("class") or "",
            "PathRxGbps": link.get("path_rx_gbps") or 0,
            "PathTxGbps": link.get("path_tx_gbps") or 0,
            "Degraded": bool(link.get("degraded")),
            "DegradedReason": link.get("degraded_reason") or "",
            "Services": sorted(s.get("key") or "unknown" for s in dump["devices"]
                               if s["kind"] == "service" and s["parent"] == d["sysname"]),
            "Problems": [p.split(": ", 1)[1] for p in dump["problems"] if p.startswith(d["sysname"] + ": ")],
            "Path": object_path(d["sysname"]),
        }
        out[d["sysname"]] = e
    return out


@pytest.mark.parametrize("fixture", ALL_FIXTURES)
def test_objects_match_reader(fixture, live_bed, netns, client, daemon_factory):
    """Every device of every fixture (garbage included) is published with the reader's and the
    topology's values; services are folded into their peers; the daemon stays up."""
    bed = live_bed(fixture)
    daemon = start(daemon_factory, netns, bed)
    ours = tbt_objects(client)
    expected = expected_objects(bed.sys)
    assert set(ours) == set(expected)
    for name, want in expected.items():
        got = dict(ours[name])
        got["Services"] = sorted(got["Services"])
        diffs = {k: (got.get(k), v) for k, v in want.items() if got.get(k) != v}
        assert not diffs, f"{name}: (ours, expected) {diffs}"
        assert got["NetInterface"] == "/"  # no such link in this namespace
        # GetManagedObjects is served from the daemon's own tables: it must read as sd-bus's GetAll.
        assert client.get_all("Thunderbolt", ours[name]["Path"]) == {k: v for k, v in ours[name].items()
                                                                      if k != "Path"}, name
    assert daemon.proc.poll() is None


# Facts of the fixtures written down by hand (not derived from the reader): (fixture, sysname, values).
SEMANTICS = [
    ("peers-two-docks.umockdev", "0-30301", {"Type": "peer", "Name": "node03", "Depth": 3, "Route": "30301",
                                             "Parent": object_path("0-301"), "LinkClass": "Thunderbolt 4",
                                             "PathRxGbps": 40, "PathTxGbps": 40, "Services": ["network"]}),
    ("peers-two-docks.umockdev", "0-501", {"Type": "peer", "Name": "Mac mini", "LinkClass": "Thunderbolt 3",
                                           "Parent": object_path("0-1")}),
    ("peers-two-docks.umockdev", "0-301", {"Type": "hub", "Depth": 2, "Authorized": "yes", "Generation": 4}),
    ("tb5-asymmetric-dock.umockdev", "0-1", {"LinkClass": "Thunderbolt 5 asymmetric (rx 120 Gb/s)",
                                             "RxLanes": 3, "TxLanes": 1, "RxLaneGbps": 40, "RxGbps": 120,
                                             "TxGbps": 40, "Usb4Version": 2}),
    ("tb5-asymmetric-dock.umockdev", "0-301", {"LinkClass": "Thunderbolt 5", "RxGbps": 80, "TxGbps": 80,
                                               "PathRxGbps": 80, "PathTxGbps": 40}),
    ("tb5-asymmetric-dock.umockdev", "0-3", {"LinkClass": "Thunderbolt 5 asymmetric (tx 120 Gb/s)",
                                             "RxGbps": 40, "TxGbps": 120}),
    ("tb5-direct-peer.umockdev", "0-1", {"Type": "peer", "LinkClass": "Thunderbolt 5", "PathRxGbps": 80,
                                         "PathTxGbps": 80, "Name": "node02"}),
    ("degraded-usb4v2.umockdev", "0-1", {"Degraded": True, "LinkClass": "Thunderbolt 4", "Usb4Version": 2}),
    ("single-lane.umockdev", "0-1", {"Degraded": True, "DegradedReason": "one lane although both ends support two",
                                     "LinkClass": "USB4 20G", "RxGbps": 20}),
    ("single-lane.umockdev", "0-3", {"Degraded": True, "LinkClass": "Thunderbolt 3 single lane"}),
    ("host-no-drom.umockdev", "0-0", {"Type": "host", "Name": "", "Vendor": "", "NvmVersion": "", "Depth": 0,
                                      "Parent": object_path("domain0"), "LinkClass": ""}),
    ("unauthorized.umockdev", "domain0", {"Type": "domain", "SecurityLevel": "secure", "Parent": "/"}),
    ("unauthorized.umockdev", "0-1", {"Authorized": "secure"}),
    ("unauthorized.umockdev", "0-3", {"Authorized": "no", "LinkClass": "Thunderbolt 3"}),
    ("unauthorized.umockdev", "0-301", {"Authorized": "no", "Parent": object_path("0-1")}),
    ("two-domains.umockdev", "1-0", {"Type": "host", "Parent": object_path("domain1")}),
    ("two-domains.umockdev", "1-1", {"Authorized": "no", "LinkClass": "USB4 20G", "RxLaneGbps": 10}),
    ("two-domains.umockdev", "0-1", {"LinkClass": "Thunderbolt 3", "Generation": 3}),
    ("retimers.umockdev", "0-0:1.1", {"Type": "retimer", "Parent": object_path("0-0"), "LinkClass": "",
                                      "Route": ""}),
    ("retimers.umockdev", "0-0:3.1", {"Type": "retimer", "Parent": object_path("0-0")}),
    ("legacy-tb2.umockdev", "0-1", {"LinkClass": "Thunderbolt 2", "RxGbps": 10}),
    ("legacy-tb2.umockdev", "0-201", {"LinkClass": "Thunderbolt 1", "Generation": 1}),
]


@pytest.mark.parametrize("fixture", sorted({s[0] for s in SEMANTICS}))
def test_fixture_facts(fixture, live_bed, netns, client, daemon_factory):
    bed = live_bed(fixture)
    start(daemon_factory, netns, bed)
    ours = tbt_objects(client)
    for _, name, values in (s for s in SEMANTICS if s[0] == fixture):
        got = {k: ours[name][k] for k in values}
        assert got == values, name
    if fixture == "degraded-usb4v2.umockdev":
        assert "USB4 v2" in ours["0-1"]["DegradedReason"]
    if fixture == "two-domains.umockdev":
        assert {n for n, o in ours.items() if o["Type"] == "domain"} == {"domain0", "domain1"}


DOCK = "/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-1"


def test_uevents_reach_the_daemon(live_bed, netns, client, signals, daemon_factory):
    """A lane-speed change (a change uevent under umockdev, which only arrives when src/daemon/udev.c's
    monitor receives umockdev's messages) updates the hop and the path of everything below it."""
    bed = live_bed("peers-two-docks.umockdev")
    start(daemon_factory, netns, bed)
    before = tbt_objects(client)
    assert before["0-1"]["RxLaneGbps"] == 20 and before["0-30301"]["PathRxGbps"] == 40

    bed.set_attribute(DOCK, "rx_speed", "10.0 Gb/s\n")
    bed.set_attribute(DOCK, "tx_speed", "10.0 Gb/s\n")
    bed.uevent(DOCK, "change")

    dock = object_path("0-1")
    assert signals.wait(lambda ev: changed(ev, dock, "RxLaneGbps")), "no PropertiesChanged for the dock"
    below = [object_path(n) for n in ("0-301", "0-30301", "0-501")]
    assert signals.wait(lambda ev: all(changed(ev, p, "PathRxGbps") and changed(ev, p, "PathTxGbps")
                                       for p in below)), "the path below the dock did not follow"
    after = tbt_objects(client)
    assert (after["0-1"]["RxLaneGbps"], after["0-1"]["RxGbps"], after["0-1"]["LinkClass"]) == (10, 20, "USB4 20G")
    for name in ("0-301", "0-30301", "0-501"):
        assert (after[name]["PathRxGbps"], after[name]["PathTxGbps"]) == (20, 20), name
        assert after[name]["RxGbps"] == 40, name  # their own hops did not change
    # Nothing else was touched: one signal per object, only for objects that changed.
    assert not any(p in (object_path("0-0"), object_path("domain0")) and m == "PropertiesChanged"
                   for _, p, _, m, _ in signals.events)


def test_authorization_flip(live_bed, netns, client, signals, daemon_factory):
    bed = live_bed("unauthorized.umockdev")
    start(daemon_factory, netns, bed)
    ssd = "/devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-3"
    assert tbt_objects(client)["0-3"]["Authorized"] == "no"

    bed.set_attribute(ssd, "authorized", "1\n")
    bed.uevent(ssd, "change")
    assert signals.wait(lambda ev: changed(ev, object_path("0-3"), "Authorized"))
    assert tbt_objects(client)["0-3"]["Authorized"] == "yes"

    signals.clear()
    bed.set_attribute(ssd, "authorized", "0\n")
    bed.uevent(ssd, "change")
    assert signals.wait(lambda ev: changed(ev, object_path("0-3"), "Authorized"))
    assert tbt_objects(client)["0-3"]["Authorized"] == "no"


def dock_records():
    return h.fixture_records("peers-two-docks.umockdev", lambda path: path.startswith(DOCK))


def remove_devices(bed, fixture, top):
    """Removes top and everything below it from the testbed, children first (umockdev's
    remove_device() leaves the bus and class links of children behind)."""
    paths = [d["path"] for d in h.UmockdevFixture(fixture).devices if d["path"].startswith(top)]
    for path in sorted(paths, key=len, reverse=True):
        bed.remove_device(path)


def test_dock_unplug_removes_subtree_and_replug_restores_it(live_bed, netns, client, signals, daemon_factory):
    bed = live_bed("peers-two-docks.umockdev")
    start(daemon_factory, netns, bed)
    before = tbt_objects(client)
    subtree = {"0-1", "0-301", "0-30301", "0-501"}

    # Only the dock's own removal arrives (as after a lost event): the whole subtree goes with it.
    bed.uevent(DOCK, "remove")
    remove_devices(bed, "peers-two-docks.umockdev", DOCK)
    gone = {object_path(n) for n in subtree}
    assert signals.wait(lambda ev: gone <= removed_paths(ev)), "InterfacesRemoved missing for the subtree"
    assert set(tbt_objects(client)) == {"domain0", "0-0"}
    assert removed_paths(signals.events) == gone  # nothing else

    # Plugged back in: umockdev announces each device with "add", parents first, as the kernel does.
    signals.clear()
    bed.add_from_string(dock_records())
    assert signals.wait(lambda ev: gone <= added_paths(ev)), "InterfacesAdded missing after the replug"
    after = tbt_objects(client)
    # The same again, but for LinkChanges: each device that came back under its UniqueId counts the
    # replug (test_health.py judges that).
    for name in subtree:
        if before[name]["UniqueId"]:
            assert after[name]["LinkChanges"] == before[name]["LinkChanges"] + 1, name
    assert {n: dict(p, LinkChanges=0) for n, p in after.items()} == \
        {n: dict(p, LinkChanges=0) for n, p in before.items()}


def test_kernel_order_unplug(live_bed, netns, client, signals, daemon_factory):
    """The kernel removes children first; every step leaves a consistent tree."""
    bed = live_bed("peers-two-docks.umockdev")
    start(daemon_factory, netns, bed)
    for name in ("0-30301.0", "0-30301", "0-301", "0-501.0", "0-501", "0-1"):
        path = next(d["path"] for d in h.UmockdevFixture("peers-two-docks.umockdev").devices
                    if d["path"].endswith("/" + name))
        bed.uevent(path, "remove")
    remove_devices(bed, "peers-two-docks.umockdev", DOCK)
    assert signals.wait(lambda ev: object_path("0-1") in removed_paths(ev))
    assert set(tbt_objects(client)) == {"domain0", "0-0"}


def test_refresh_marks_and_sweeps(live_bed, netns, client, signals, daemon_factory):
    """Changes nobody announced (a lost uevent) are found by Refresh(): a full re-read, published as
    differences only."""
    bed = live_bed("peers-two-docks.umockdev")
    start(daemon_factory, netns, bed)
    remove_devices(bed, "peers-two-docks.umockdev", DOCK + "/0-501")
    bed.set_attribute(DOCK + "/0-301", "nvm_version", "2a.1\n")
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    assert signals.wait(lambda ev: object_path("0-501") in removed_paths(ev))
    assert signals.wait(lambda ev: changed(ev, object_path("0-301"), "NvmVersion"))
    ours = tbt_objects(client)
    assert "0-501" not in ours and ours["0-301"]["NvmVersion"] == "2a.1"
    # Only what changed was announced.
    assert removed_paths(signals.events) == {object_path("0-501")}
    assert not added_paths(signals.events)
    assert not any(p == object_path("0-30301") and m == "PropertiesChanged" for _, p, _, m, _ in signals.events)


def test_devices_vanishing_mid_read(live_bed, netns, client, signals, daemon_factory):
    """A device listed on the bus whose directory is gone (unplugged between readdir and read) is left
    out at enumeration; an event for a device that can no longer be read removes it and its subtree."""
    bed = live_bed("peers-two-docks.umockdev")
    bus_dir = os.path.join(bed.root, "sys", "bus", "thunderbolt", "devices")
    os.symlink("../../../devices/pci0000:00/0000:00:0d.2/domain0/0-0/0-9", os.path.join(bus_dir, "0-9"))
    daemon = start(daemon_factory, netns, bed)
    assert "0-9" not in tbt_objects(client)

    # The dock's bus entry vanishes while its directory is still there (the sender still finds it).
    os.unlink(os.path.join(bus_dir, "0-1"))
    bed.uevent(DOCK, "change")
    gone = {object_path(n) for n in ("0-1", "0-301", "0-30301", "0-501")}
    assert signals.wait(lambda ev: gone <= removed_paths(ev))
    assert set(tbt_objects(client)) == {"domain0", "0-0"}
    assert daemon.proc.poll() is None


BAD_SPEEDS = ["abc Gb/s", "-20.0 Gb/s", "", "4294967296.0 Gb/s", "20.5 Gb/s", "20.0", "\x01\x02"]
BAD_LANES = ["0", "7", "-1", "", "two", "99999999999999999999"]


def test_bad_attributes_while_running(live_bed, netns, client, daemon_factory):
    """Garbage written into a live device's attributes: published as unknown, never a crash."""
    bed = live_bed("peers-two-docks.umockdev")
    daemon = start(daemon_factory, netns, bed)
    host_dock = bed.host_path(DOCK)

    for value in BAD_SPEEDS:
        bed.set_attribute(DOCK, "rx_speed", value)
        bed.uevent(DOCK, "change")
        wait_until(lambda: tbt_objects(client)["0-1"]["RxLaneGbps"] == 0, what=f"rx_speed {value!r} as unknown")
        ours = tbt_objects(client)
        assert ours["0-1"]["LinkClass"] == "Unknown" and ours["0-1"]["RxGbps"] == 0
        assert ours["0-30301"]["PathRxGbps"] == 0  # a path with an unknown hop is unknown
        bed.set_attribute(DOCK, "rx_speed", "20.0 Gb/s\n")
        bed.uevent(DOCK, "change")
        wait_until(lambda: tbt_objects(client)["0-1"]["RxLaneGbps"] == 20, what="recovery")

    for value in BAD_LANES:
        bed.set_attribute(DOCK, "tx_lanes", value)
        bed.uevent(DOCK, "change")
        wait_until(lambda: tbt_objects(client)["0-1"]["TxLanes"] == 0, what=f"tx_lanes {value!r} as unknown")
        bed.set_attribute(DOCK, "tx_lanes", "2\n")
        bed.uevent(DOCK, "change")
        wait_until(lambda: tbt_objects(client)["0-1"]["TxLanes"] == 2, what="recovery")

    # Missing attributes, bytes that are not UTF-8, a generation that makes no sense.
    os.unlink(os.path.join(host_dock, "rx_lanes"))
    with open(os.path.join(host_dock, "device_name"), "wb") as f:
        f.write(b"Dock \xff\xfe\n")
    with open(os.path.join(host_dock, "vendor_name"), "wb") as f:
        f.write(b"")
    bed.set_attribute(DOCK, "generation", "99999999999")
    bed.uevent(DOCK, "change")
    wait_until(lambda: tbt_objects(client)["0-1"]["Generation"] == 0, what="generation as unknown")
    dock = tbt_objects(client)["0-1"]
    assert dock["RxLanes"] == 0 and dock["Name"] == "Dock \\xff\\xfe" and dock["Vendor"] == ""
    assert dock["Parent"] == object_path("0-0")  # a new identity, the same place in the tree
    assert tbt_objects(client)["0-301"]["Parent"] == object_path("0-1")
    assert daemon.proc.poll() is None


def test_uevent_for_unknown_devices(live_bed, netns, client, daemon_factory):
    """An event for a device of a type nobody knows, or on another bus, changes nothing."""
    bed = live_bed("garbage.umockdev")
    daemon = start(daemon_factory, netns, bed)
    before = tbt_objects(client)
    for d in h.UmockdevFixture("garbage.umockdev").devices:
        bed.uevent(d["path"], "change")
    client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
    time.sleep(0.3)
    assert tbt_objects(client) == before
    assert daemon.proc.poll() is None


def test_thunderbolt_metrics(live_bed, netns, bus, daemon_factory):
    import subprocess
    bed = live_bed("tb4-dock-peer.umockdev")
    start(daemon_factory, netns, bed)
    out = lp.ctl(bus, "metrics")
    assert out.returncode == 0, out.stderr
    check = subprocess.run(["promtool", "check", "metrics"], input=out.stdout, capture_output=True, text=True)
    assert check.returncode == 0, check.stdout + check.stderr
    text = out.stdout
    # The TB4 dock's hop: 2 lanes x 20 Gb/s = 40 Gb/s = 5e9 bytes/s each way.
    assert 'linkprobe_thunderbolt_link_rx_bytes{sysname="0-1"} 5000000000' in text, text
    assert 'linkprobe_thunderbolt_path_rx_bytes{sysname="0-301"} 5000000000' in text
    assert 'linkprobe_thunderbolt_device_info{sysname="0-301",type="peer",name="peerhost",' in text
    assert 'linkprobe_thunderbolt_link_degraded{sysname="0-1"} 0' in text
