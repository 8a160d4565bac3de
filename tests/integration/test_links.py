# SPDX-License-Identifier: LGPL-2.1-or-later
"""Network links from real netlink: the daemon in a namespace of the test's own, compared field by
field with `ip -j -d addr show`, live changes as signals, bursts and overruns."""

import os
import time

from kernel_compare import differences, wait_consistent

import lp

LINK = lp.IFACE + "Link"


def changed_for(events, path, prop=None):
    """PropertiesChanged events on path (optionally carrying prop)."""
    out = []
    for _, p, _, member, args in events:
        if p == path and member == "PropertiesChanged" and args[0] == LINK:
            if prop is None or prop in args[1]:
                out.append(args[1])
    return out


def test_enumeration_matches_kernel(netns, client, daemon_factory):
    ns = netns
    ns.ip("link", "add", "va", "type", "veth", "peer", "name", "vb")
    ns.ip("link", "add", "br0", "type", "bridge")
    ns.ip("link", "set", "vb", "master", "br0")
    ns.ip("tuntap", "add", "dev", "tun0", "mode", "tun")
    ns.ip("tuntap", "add", "dev", "tap0", "mode", "tap")
    ns.ip("link", "add", "mv0", "link", "va", "type", "macvlan", "mode", "bridge")
    for dev in ("va", "vb", "br0", "tun0", "tap0", "mv0"):
        ns.ip("link", "set", dev, "up")
    ns.ip("addr", "add", "10.20.0.1/24", "dev", "va")
    ns.ip("addr", "add", "fd12::1/64", "dev", "va")
    ns.ip("addr", "add", "192.168.7.1/24", "dev", "br0")
    ns.ip("addr", "add", "100.101.1.1/32", "dev", "tun0")
    # Scopes by name and by number, as `ip` prints them (the daemon spells each once, on arrival).
    ns.ip("addr", "add", "10.21.0.1/24", "scope", "host", "dev", "vb")
    ns.ip("addr", "add", "10.22.0.1/24", "scope", "7", "dev", "vb")

    daemon_factory(ns)
    assert wait_consistent(client, ns) == []

    by_name = {link["Name"]: link for link in client.links().values()}
    assert by_name["lo"]["Kind"] == "loopback" and by_name["lo"]["ConnectionType"] == "Loopback"
    assert by_name["va"]["Kind"] == "veth" and by_name["va"]["ConnectionType"] == "Virtual"
    assert by_name["br0"]["Kind"] == "bridge" and by_name["br0"]["ConnectionType"] == "Virtual"
    assert by_name["tun0"]["Kind"] == "tun" and by_name["tun0"]["ConnectionType"] == "VPN"
    assert by_name["tap0"]["Kind"] == "tun" and by_name["tap0"]["ConnectionType"] == "Virtual"
    assert by_name["mv0"]["Kind"] == "macvlan"
    # veth reports 10 Gb/s full duplex while up (the comparison above checked every link's speed
    # against sysfs); a down link has no speed: 0, never -1.
    assert by_name["va"]["SpeedMbps"] == 10000 and by_name["va"]["Duplex"] == "full"
    ns.ip("link", "add", "quiet0", "type", "veth", "peer", "name", "quiet1")
    assert wait_consistent(client, ns) == []
    assert client.link_by_name("quiet0")["SpeedMbps"] == 0
    assert client.link_by_name("quiet0")["Duplex"] == "unknown"
    assert by_name["va"]["Driver"] == ""
    classes = {a[0]: a[3] for link in by_name.values() for a in link["Addresses"]}
    assert classes["10.20.0.1"] == "private"
    assert classes["fd12::1"] == "ula"
    assert classes["192.168.7.1"] == "private"
    assert classes["100.101.1.1"] == "cgnat"
    assert classes["127.0.0.1"] == "loopback"
    # Paths are sd_bus_path_encode()d indexes: a leading digit is escaped ("2" -> "_32").
    index = str(by_name["va"]["Index"])
    assert by_name["va"]["Path"] == f"{lp.ROOT}/link/_{ord(index[0]):x}{index[1:]}"


def test_live_changes_are_signals(netns, client, signals, daemon_factory):
    ns = netns
    daemon_factory(ns)
    ns.ip("link", "add", "la", "type", "veth", "peer", "name", "lb")

    def added(events):
        names = {args[1][LINK]["Name"]: args[0] for _, _, _, m, args in events
                 if m == "InterfacesAdded" and LINK in args[1]}
        return names if {"la", "lb"} <= set(names) else None

    paths = signals.wait(added)
    assert paths, "no InterfacesAdded for the new veth pair"
    la = paths["la"]

    # Up with carrier: OperState and Carrier change on la.
    ns.ip("link", "set", "la", "up")
    ns.ip("link", "set", "lb", "up")
    assert signals.wait(lambda ev: any(c.get("Carrier") is True for c in changed_for(ev, la, "Carrier")))

    # Carrier flap from the other end.
    signals.clear()
    ns.ip("link", "set", "lb", "down")
    assert signals.wait(lambda ev: any(c.get("Carrier") is False for c in changed_for(ev, la, "Carrier")))
    ns.ip("link", "set", "lb", "up")
    assert signals.wait(lambda ev: any(c.get("OperState") == "up" for c in changed_for(ev, la, "OperState")))
    assert client.link_by_name("la")["CarrierChanges"] >= 3

    # Addresses come and go.
    signals.clear()
    ns.ip("addr", "add", "10.30.0.1/24", "dev", "la")
    assert signals.wait(lambda ev: any(any(a[0] == "10.30.0.1" for a in c["Addresses"])
                                       for c in changed_for(ev, la, "Addresses")))
    signals.clear()
    ns.ip("addr", "del", "10.30.0.1/24", "dev", "la")
    assert signals.wait(lambda ev: any(not any(a[0] == "10.30.0.1" for a in c["Addresses"])
                                       for c in changed_for(ev, la, "Addresses")))

    # MTU, MAC and a rename.
    signals.clear()
    ns.ip("link", "set", "la", "mtu", "1280", "address", "02:00:00:00:00:42")
    assert signals.wait(lambda ev: any(c.get("Mtu") == 1280 for c in changed_for(ev, la, "Mtu")))
    assert signals.wait(lambda ev: any(c.get("HardwareAddress") == "02:00:00:00:00:42"
                                       for c in changed_for(ev, la, "HardwareAddress")))
    ns.ip("link", "set", "la", "down")
    ns.ip("link", "set", "la", "name", "renamed0")
    assert signals.wait(lambda ev: any(c.get("Name") == "renamed0" for c in changed_for(ev, la, "Name")))

    # Deleting the pair removes both objects.
    signals.clear()
    ns.ip("link", "del", "renamed0")
    assert signals.wait(lambda ev: sum(1 for _, _, _, m, args in ev if m == "InterfacesRemoved") >= 2)
    assert wait_consistent(client, ns) == []


def test_changes_are_coalesced(netns, client, signals, daemon_factory):
    ns = netns
    ns.ip("link", "add", "ca", "type", "veth", "peer", "name", "cb")
    daemon_factory(ns)
    path = [v["Path"] for v in client.links().values() if v["Name"] == "ca"][0]
    signals.clear()
    # Forty MTU changes in one burst: each is a netlink message, but clients should see a handful of
    # PropertiesChanged at most, the last one carrying the final value.
    ns.batch([f"link set ca mtu {1300 + i}" for i in range(40)])
    assert signals.wait(lambda ev: any(c.get("Mtu") == 1339 for c in changed_for(ev, path, "Mtu")))
    time.sleep(0.3)
    count = len(changed_for(signals.events, path))
    assert 1 <= count < 40, f"{count} PropertiesChanged for 40 changes"
    assert changed_for(signals.events, path)[-1]["Mtu"] == 1339


def test_burst_of_200_links(netns, client, daemon_factory):
    ns = netns
    daemon_factory(ns)
    ns.batch([f"link add b{i}a type veth peer name b{i}b" for i in range(100)])
    ns.batch([f"link set b{i}a up" for i in range(100)] + [f"addr add 10.40.{i}.1/24 dev b{i}a" for i in range(100)])
    assert wait_consistent(client, ns, timeout=20) == []
    assert len(client.links()) == 201
    ns.batch([f"link del b{i}a" for i in range(100)])
    assert wait_consistent(client, ns, timeout=20) == []
    assert len(client.links()) == 1


def test_overrun_resyncs_to_kernel_state(netns, client, daemon_factory):
    ns = netns
    # The smallest buffer the kernel allows: a burst must overrun it.
    daemon = daemon_factory(ns, args=["--netlink-rcvbuf=1", "--log-level=info"])
    ns.batch([f"link add o{i}a type veth peer name o{i}b" for i in range(60)])
    storm = []
    for round_ in range(20):
        for i in range(60):
            storm.append(f"link set o{i}a {'up' if round_ % 2 == 0 else 'down'}")
            storm.append(f"link set o{i}b up")
    storm += [f"addr add 10.50.{i}.1/24 dev o{i}a" for i in range(60)]
    storm += [f"link set o{i}a mtu {1400 + i}" for i in range(60)]
    storm += [f"link del o{i}a" for i in range(0, 60, 3)]
    ns.batch(storm)
    diffs = wait_consistent(client, ns, timeout=20)
    assert diffs == [], "\n".join(diffs[:20])
    assert "overrun" in daemon.log(), "the storm did not overrun a 1-byte buffer; the test proves nothing"


def test_start_survives_interrupted_dumps(netns, client, daemon_factory):
    """A start-up dump the kernel keeps interrupting (NLM_F_DUMP_INTR: links or addresses change under it, as
    when 2000 links come up and run IPv6 duplicate address detection) is accepted and read again later,
    never a failed start. The kernel interrupts a dump only when a change lands inside it, which a test
    cannot time: LINKPROBE_TEST_INTERRUPT_DUMPS makes the first dumps count as interrupted (their result
    fed, as the kernel's would be). 15: the start's link dump five times, then its address dump five times,
    then the first resync's link dump five times, so that resync is interrupted too and a second one, after
    a longer pause, completes; meanwhile links and addresses change."""
    ns = netns
    pairs = 20
    ns.batch([f"link add c{i}a type veth peer name c{i}b" for i in range(pairs)])
    ns.batch([f"link set c{i}a up" for i in range(pairs)] + [f"addr add 10.78.{i}.1/24 dev c{i}a" for i in range(pairs)])
    daemon = daemon_factory(ns, args=["--log-level=info"], env={"LINKPROBE_TEST_INTERRUPT_DUMPS": "15"})
    assert len(client.links()) == 1 + 2 * pairs
    # Changes while the resyncs are due: the published state must end equal to the kernel's.
    ns.batch([f"addr del 10.78.{i}.1/24 dev c{i}a" for i in range(0, pairs, 2)] +
             [f"link del c{i}a" for i in range(0, pairs, 5)] +
             [f"link add d{i}a type veth peer name d{i}b" for i in range(5)])
    lp.wait_for(lambda: daemon.log().count("were interrupted by changes") >= 2, 10, "the second interrupted dump")
    log = daemon.log()
    assert "Failed to dump" not in log, log
    assert "read again in 100 ms" in log and "read again in 200 ms" in log, log
    time.sleep(0.5)  # the second resync (200 ms) is not interrupted: no third one is scheduled
    assert daemon.log().count("were interrupted by changes") == 2, daemon.log()
    assert daemon.proc.poll() is None
    diffs = wait_consistent(client, ns, timeout=30)
    assert diffs == [], "\n".join(diffs[:20])


def test_rank_addresses(netns, client, daemon_factory):
    ns = netns
    ns.ip("link", "add", "ra", "type", "veth", "peer", "name", "rb")
    ns.ip("tuntap", "add", "dev", "rt0", "mode", "tun")
    for dev in ("ra", "rb", "rt0"):
        ns.ip("link", "set", dev, "up")
    for address in ("203.0.113.5/24", "169.254.3.3/16", "10.60.0.1/24", "100.64.9.9/10"):
        ns.ip("addr", "add", address, "dev", "ra")
    ns.ip("addr", "add", "10.61.0.1/24", "dev", "rt0")
    ns.hold_tun("rt0")  # a tun without a process has no carrier and is not offered
    ns.ip("link", "add", "rdown", "type", "veth", "peer", "name", "rdown2")
    ns.ip("addr", "add", "10.62.0.1/24", "dev", "rdown")  # down: never offered
    daemon_factory(ns)

    for purpose in ("ring", "coordinator"):
        (ranked,) = client.call(lp.ROOT, lp.IFACE + "Manager", "RankAddresses", "(s)", (purpose,))
        addresses = [r[0] for r in ranked]
        v4 = [a for a in addresses if ":" not in a]
        # Same interface type: private, then link-local, then global, CGNAT last; the VPN's address
        # after all of them; loopback and down links never.
        assert v4 == ["10.60.0.1", "169.254.3.3", "203.0.113.5", "100.64.9.9", "10.61.0.1"], ranked
        assert all(r[1] in ("ra", "rt0", "rb") for r in ranked)
        assert "127.0.0.1" not in addresses and "10.62.0.1" not in addresses
        assert [r for r in ranked if r[0] == "10.61.0.1"][0][2] == "VPN"
        assert [r for r in ranked if r[0] == "10.60.0.1"][0][3] == "private"


def test_interface_names_are_bytes(netns, client, daemon_factory):
    ns = netns
    names = [b"v\xff\xfe", b"q'\"x", b"p$x*?;", b"caf\xc3\xa9", b"a\\b", b"e\x01c"]
    for i, name in enumerate(names):
        lp.subprocess.run([b"ip", b"-n", ns.name.encode(), b"link", b"add", name, b"type", b"veth", b"peer",
                           b"name", f"np{i}".encode()], check=True)
    daemon_factory(ns)
    assert wait_consistent(client, ns) == []
    published = {bytes(v["NameBytes"]): v["Name"] for v in client.links().values()}
    for name in names:
        assert name in published, f"{name!r} not published"
    assert published[b"v\xff\xfe"] == "v\\xff\\xfe"
    assert published[b"caf\xc3\xa9"] == "caf\u00e9"
    # The CLI prints every one of them, escaped for the terminal.
    out = lp.ctl(client.bus, "list")
    assert out.returncode == 0, out.stderr
    assert "v\\xff\\xfe" in out.stdout and "e\\x01c" in out.stdout


def test_a_driver_name_that_is_not_utf8_is_escaped(netns, client, daemon_factory, tmp_path):
    """sysfs names a device's driver in bytes; one that is not UTF-8 (a broken or hostile module) is
    published escaped, as interface names are, and GetManagedObjects still answers."""
    # An ifb: its kind comes from the bus facts, so the daemon reads them (a veth's it never needs).
    netns.ip("link", "add", "wd0", "type", "ifb")
    index = netns.ip_json("link", "show", "wd0")[0]["ifindex"]
    sys_root = os.fsencode(tmp_path / "sys")
    device = os.path.join(sys_root, b"devices", b"pci0000:00", b"0000:00:03.0")
    drivers = os.path.join(sys_root, b"bus", b"pci", b"drivers")
    net = os.path.join(sys_root, b"class", b"net", b"wd0")
    for d in (device, drivers, net):
        os.makedirs(d)
    os.makedirs(os.path.join(drivers, b"bad\xffdrv"))
    os.symlink(os.path.relpath(os.path.join(drivers, b"bad\xffdrv"), device), os.path.join(device, b"driver"))
    os.symlink(os.path.relpath(device, net), os.path.join(net, b"device"))
    with open(os.path.join(net, b"ifindex"), "w") as f:
        f.write(f"{index}\n")
    daemon_factory(netns, args=[f"--sysfs-root={os.fsdecode(sys_root)}"])
    lp.wait_for(lambda: (client.link_by_name("wd0") or {}).get("Driver"), 10, "wd0's driver on the bus")
    assert client.link_by_name("wd0")["Driver"] == "bad\\xffdrv"
    assert client.managed_objects_differing_from_getall() == []


def test_managed_objects_equal_getall(netns, client, daemon_factory):
    """GetManagedObjects is served from our own tables; every object must read exactly as sd-bus's
    GetAll reads it, property for property."""
    netns.ip("link", "add", "ga0", "type", "veth", "peer", "name", "ga1")
    netns.ip("link", "set", "ga0", "up")
    netns.ip("addr", "add", "10.90.0.1/24", "dev", "ga0")
    netns.ip("tuntap", "add", "dev", "gt0", "mode", "tun")
    daemon_factory(netns)
    objects = client.objects()
    assert len(objects) == 4
    for path, interfaces in objects.items():
        assert list(interfaces) == [LINK], interfaces.keys()
    assert client.managed_objects_differing_from_getall() == []


def test_ready_picture_is_complete(netns, client, signals, daemon_factory):
    """What READY=1 stands for is whole: a client that asks at once sees every link's speed, duplex, link modes
    and their verdict as a client a moment later does, and no signal changes them afterwards (the start's
    ethtool dumps answer before READY=1; before them every veth said "unknown: link modes not asked yet" and
    the worker's answers, always sent after READY=1, changed it moments later). Rates (RxGbps, TxGbps) need
    two samples of the watch and are by nature later; the watch is on here, its default."""
    pairs = 30
    netns.batch([f"link add r{i}a type veth peer name r{i}b" for i in range(pairs)])
    netns.batch([f"link set r{i}{s} up" for i in range(pairs) for s in "ab"])
    netns.batch([f"link add q{i}a type veth peer name q{i}b" for i in range(3)])  # down: no speed
    # The kernel's own follow-ups of links coming up (IPv6 link-local addresses, their duplicate address
    # detection) are changes of its own, announced as they happen: over before the daemon starts.
    lp.wait_for(lambda: len(netns.ip_json("-6", "addr", "show", "scope", "link")) == 2 * pairs and
                not netns.ip("-6", "addr", "show", "tentative").stdout.strip(), 30, "IPv6 link-local addresses")
    daemon_factory(netns, watch=True)
    first = client.links()
    time.sleep(1.0)
    later = client.links()
    assert len(first) == 1 + 2 * pairs + 6
    by_name = {link["Name"]: link for link in first.values()}
    for i in range(pairs):
        link = by_name[f"r{i}a"]
        assert (link["SpeedMbps"], link["Duplex"]) == (10000, "full"), link
        assert link["DegradedReason"] == "unknown: the driver reports no link modes", link
    assert (by_name["q0a"]["SpeedMbps"], by_name["q0a"]["Duplex"]) == (0, "unknown")
    rates = {"RxGbps", "TxGbps"}
    moved = [(first[i]["Name"], key, first[i][key], later[i][key]) for i in first for key in first[i]
             if key not in rates and first[i][key] != later[i][key]]
    assert moved == [], moved[:10]
    signalled = [(path, sorted(set(args[1]) - rates)) for _, path, _, member, args in signals.events
                 if member == "PropertiesChanged" and args[0] == LINK and set(args[1]) - rates]
    assert signalled == [], signalled[:10]
