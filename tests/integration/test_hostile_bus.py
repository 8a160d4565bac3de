# SPDX-License-Identifier: LGPL-2.1-or-later
"""Hostile D-Bus input, one table: every case a call and the D-Bus error it must get. Wrong signatures,
unknown objects, interfaces and members, oversized and control-character strings, hostile addresses, bad
inhibit modes, floods from one sender, a churn of senders, unprivileged callers, and messages no library
will build (not UTF-8, lying headers), which the bus itself must refuse before they reach us. One daemon
serves the whole table; at the end it must be alive, answering, and no bigger than a bound.

Peer and GPU probes are stand-ins (faults.FakeProbes): nothing leaves the test's network namespace."""

import os
import time

import pytest
from gi.repository import Gio, GLib

import faults
import lp
import raw_dbus
from peers_net import call_as, peers
from test_faults import PEER_ADDRESS, QUICK_PEERS, GPU_CONFIG, gpu_control, gpus_ok

MANAGER = lp.IFACE + "Manager"
PROPERTIES = "org.freedesktop.DBus.Properties"
E = "org.freedesktop.DBus.Error."
OURS = "org.linkprobe.LinkProbe1.Error."
MIB = "x" * (1 << 20)
NOBODY = ["--reuid=65534", "--regid=65534", "--clear-groups"]
SANITIZER_MARKERS = ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:")
# What the daemon may grow by over the whole table (heap high-water marks of 1 MiB messages, caches);
# under ASan freed memory stays resident in its quarantine (256 MiB by default), so the bound is that.
SANITIZED = faults.sanitized()
RSS_GROWTH_MAX_KIB = (256 + 16) * 1024 if SANITIZED else 16 * 1024


class Env:
    pass


@pytest.fixture(scope="module")
def env():
    e = Env()
    e.bus = lp.PrivateBus()
    os.chmod(e.bus.dir, 0o755)  # other users (the unprivileged cases) must reach the socket
    e.ns = lp.NetNS()
    e.probes = faults.FakeProbes(gpu_control=gpu_control())
    e.daemon = None
    try:
        e.daemon = lp.Daemon(e.bus, netns=e.ns, env=e.probes.env(), gpu=True,
                             config="[Daemon]\nPrivilegedGroup=users\n" + QUICK_PEERS + GPU_CONFIG)
        e.pid = faults.daemon_pid(e.daemon)
        client = lp.Client(e.bus)
        assert faults.wait_for(lambda: gpus_ok(client), timeout=15)
        client.close()
        e.rss_start, e.fds_start = faults.rss_kib(e.pid), faults.fd_count(e.pid)
        e.rss_max = e.rss_start
        e.cases = 0
        yield e
    finally:
        if e.daemon:
            e.daemon.stop()
            assert not any(m in e.daemon.log_text for m in SANITIZER_MARKERS), e.daemon.log_text
        e.ns.delete()
        e.bus.stop()
        e.probes.remove()


def call(e, method, signature=None, args=(), interface=MANAGER, path=lp.ROOT, conn=None):
    """One call on a connection of its own (so no case spends another's rate-limit tokens);
    returns "OK" or (error name, message)."""
    own = conn is None
    if own:
        conn = Gio.DBusConnection.new_for_address_sync(
            e.bus.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
            Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    try:
        params = GLib.Variant(signature, tuple(args)) if signature else None
        result = conn.call_with_unix_fd_list_sync(lp.BUS_NAME, path, interface, method, params, None,
                                                  Gio.DBusCallFlags.NONE, 20000, None, None)
        fds = result[1]
        if fds is not None:
            for fd in fds.steal_fds():
                os.close(fd)
        return "OK"
    except GLib.Error as err:
        return Gio.DBusError.get_remote_error(err), err.message
    finally:
        if own:
            conn.close_sync(None)


def v(signature, value):
    return GLib.Variant(signature, value)


def probe(address, options=None):
    return ("ProbePeer", "(sa{sv})", (address, options or {}))


# (id, (method, signature, args[, interface[, path]]), expected error name)
CASES = [
    # Wrong signatures.
    ("refresh-with-an-argument", ("Refresh", "(s)", ("now",)), E + "InvalidArgs"),
    ("rank-int-for-string", ("RankAddresses", "(i)", (1,)), E + "InvalidArgs"),
    ("rank-without-argument", ("RankAddresses", None, ()), E + "InvalidArgs"),
    ("probe-without-options", ("ProbePeer", "(s)", (PEER_ADDRESS,)), E + "InvalidArgs"),
    ("probe-options-wrong-container", ("ProbePeer", "(sas)", (PEER_ADDRESS, ["Transport"])), E + "InvalidArgs"),
    ("add-peer-two-strings", ("AddPeer", "(ss)", (PEER_ADDRESS, PEER_ADDRESS)), E + "InvalidArgs"),
    ("inhibit-two-strings", ("Inhibit", "(ss)", ("gpu", "who")), E + "InvalidArgs"),
    # Unknown objects, interfaces, members, properties.
    ("unknown-member", ("Frobnicate", None, ()), E + "UnknownMethod"),
    ("unknown-interface", ("Refresh", None, (), lp.IFACE + "Nope"), E + "UnknownMethod"),
    ("unknown-link", ("GetAll", "(s)", (lp.IFACE + "Link",), PROPERTIES, lp.ROOT + "/link/999999"), E + "UnknownObject"),
    ("unknown-encoded-peer", ("GetAll", "(s)", (lp.IFACE + "Peer",), PROPERTIES, lp.ROOT + "/peer/_ff_fe_00"),
     E + "UnknownObject"),
    ("unknown-deep-path", ("GetAll", "(s)", (lp.IFACE + "Gpu",), PROPERTIES, lp.ROOT + "/gpu/0/a/b/c/d"),
     E + "UnknownObject"),
    ("unknown-property", ("Get", "(ss)", (MANAGER, "Nope"), PROPERTIES), E + "UnknownProperty"),
    ("set-read-only-property", ("Set", "(ssv)", (MANAGER, "State", v("s", "running")), PROPERTIES),
     E + "PropertyReadOnly"),
    ("set-with-wrong-type", ("Set", "(ssv)", (MANAGER, "Inhibited", v("i", 1)), PROPERTIES), E + "PropertyReadOnly"),
    # Oversized strings: refused, and the 1 MiB is not echoed back in the message.
    ("rank-1mib", ("RankAddresses", "(s)", (MIB,)), E + "InvalidArgs"),
    ("probe-1mib", probe(MIB), E + "InvalidArgs"),
    ("add-peer-1mib", ("AddPeer", "(s)", (MIB,)), E + "InvalidArgs"),
    ("remove-peer-1mib", ("RemovePeer", "(s)", (MIB,)), E + "InvalidArgs"),
    ("inhibit-who-1mib", ("Inhibit", "(sss)", ("gpu", MIB, "why")), E + "InvalidArgs"),
    ("inhibit-why-1mib", ("Inhibit", "(sss)", ("gpu", "who", MIB)), E + "InvalidArgs"),
    ("probe-option-name-1mib", probe(PEER_ADDRESS, {MIB: v("s", "tcp")}), E + "InvalidArgs"),
    # What does reach us: UTF-8 that is not an address, control characters, terminal escapes.
    ("add-peer-control-characters", ("AddPeer", "(s)", ("10.77.0.2\x07\x1b[2J",)), E + "InvalidArgs"),
    ("add-peer-right-to-left", ("AddPeer", "(s)", ("\u202e2.0.77.01",)), E + "InvalidArgs"),
    ("add-peer-empty", ("AddPeer", "(s)", ("",)), E + "InvalidArgs"),
    ("inhibit-who-escape-sequence", ("Inhibit", "(sss)", ("gpu", "who\x1b]0;owned\x07", "why")), E + "InvalidArgs"),
    ("inhibit-who-empty", ("Inhibit", "(sss)", ("gpu", "", "why")), E + "InvalidArgs"),
    ("rank-control-characters", ("RankAddresses", "(s)", ("ring\n\r\t",)), E + "InvalidArgs"),
    # Hostile addresses.
    ("probe-host-name", probe("peer.example.org"), E + "InvalidArgs"),
    ("probe-zone-traversal", probe("fe80::1%../../etc"), E + "InvalidArgs"),
    ("probe-no-such-interface", probe("fe80::1%nosuchif9"), E + "InvalidArgs"),
    ("probe-shorthand-ipv4", probe("127.1"), E + "InvalidArgs"),
    ("probe-ipv4-mapped", probe("::ffff:10.77.0.2"), E + "InvalidArgs"),
    ("probe-multicast", probe("224.0.0.251"), E + "InvalidArgs"),
    ("probe-broadcast", probe("255.255.255.255"), E + "InvalidArgs"),
    ("probe-unspecified", probe("[::]:7471"), E + "InvalidArgs"),
    ("probe-port-zero", probe("10.77.0.2:0"), E + "InvalidArgs"),
    ("probe-port-too-big", probe("10.77.0.2:65536"), E + "InvalidArgs"),
    ("probe-unknown-option", probe(PEER_ADDRESS, {"Frobnicate": v("b", True)}), E + "InvalidArgs"),
    ("probe-option-wrong-type", probe(PEER_ADDRESS, {"Transport": v("i", 1)}), E + "InvalidArgs"),
    ("probe-unknown-transport", probe(PEER_ADDRESS, {"Transport": v("s", "carrier-pigeon")}), E + "InvalidArgs"),
    ("probe-duration-too-short", probe(PEER_ADDRESS, {"DurationUsec": v("t", 1)}), E + "InvalidArgs"),
    ("probe-samples-zero", probe(PEER_ADDRESS, {"Samples": v("u", 0)}), E + "InvalidArgs"),
    ("probe-rdma-without-port", probe(PEER_ADDRESS, {"Transport": v("s", "rdma")}), OURS + "NotSupported"),
    ("remove-peer-never-added", ("RemovePeer", "(s)", ("10.77.0.99",)), OURS + "NoSuchPeer"),
    # Bad inhibit modes.
    ("inhibit-cpu", ("Inhibit", "(sss)", ("cpu", "who", "why")), E + "InvalidArgs"),
    ("inhibit-empty-mode", ("Inhibit", "(sss)", ("", "who", "why")), E + "InvalidArgs"),
    ("inhibit-trailing-colon", ("Inhibit", "(sss)", ("gpu:", "who", "why")), E + "InvalidArgs"),
    ("inhibit-upper-case", ("Inhibit", "(sss)", ("GPU", "who", "why")), E + "InvalidArgs"),
    ("inhibit-nul-free-garbage", ("Inhibit", "(sss)", ("\u00ff\u00fe\u2603", "who", "why")), E + "InvalidArgs"),
    ("rank-unknown-purpose", ("RankAddresses", "(s)", ("fastest",)), E + "InvalidArgs"),
]


def track(e):
    e.cases += 1
    e.rss_max = max(e.rss_max, faults.rss_kib(e.pid))


@pytest.mark.parametrize("case", CASES, ids=[c[0] for c in CASES])
def test_hostile_call(env, case):
    name, spec, expected = case
    method, signature, args, *rest = spec
    interface = rest[0] if rest else MANAGER
    path = rest[1] if len(rest) > 1 else lp.ROOT
    outcome = call(env, method, signature, args, interface, path)
    track(env)
    assert outcome != "OK", f"{name}: accepted"
    error, message = outcome
    assert error == expected, (name, error, message)
    # Whatever the caller sent, the answer stays short: no 1 MiB echoed back, no terminal escapes.
    assert len(message) < 400 and "\x1b" not in message and "\x07" not in message, (name, message[:200])
    assert env.daemon.proc.poll() is None


def test_not_utf8_and_lying_messages_never_reach_the_daemon(env):
    """dbus-daemon disconnects a client that sends a string that is not UTF-8, so such a message never
    reaches us (and sd-bus would refuse to read the string too: tests/unit/test-bus-utf8.c). The same for a
    header field of the wrong type, a body shorter than its signature and a string with a NUL inside."""
    hostile = {
        "string-not-utf8": dict(member=b"AddPeer", signature=b"s", args=(b"\xff\xfe10.77.0.2",)),
        "string-with-nul": dict(member=b"AddPeer", signature=b"s", args=(b"10.77\x000.2",)),
        "lone-surrogate": dict(member=b"Inhibit", signature=b"sss", args=(b"gpu", b"\xed\xa0\x80", b"why")),
        "overlong-encoding": dict(member=b"RankAddresses", signature=b"s", args=(b"\xc0\xafring",)),
        "body-shorter-than-signature": dict(member=b"AddPeer", signature=b"ss", body=b"\x04\0\0\0abc"),
        "path-field-as-string": dict(member=b"Refresh", field_types={raw_dbus.FIELD_PATH: b"s"}),
        "path-not-a-path": dict(member=b"Refresh", path=b"//org//linkprobe"),
        "member-not-a-name": dict(member=b"Re fresh"),
        "interface-not-a-name": dict(member=b"Refresh", interface=b"org..linkprobe"),
    }
    before = env.daemon.log()
    refused = {}
    for name, spec in hostile.items():
        conn = raw_dbus.RawConnection(env.bus.socket)
        try:
            conn.call(lp.BUS_NAME, spec.get("path", lp.ROOT.encode()), spec.get("interface", MANAGER.encode()),
                      spec["member"], spec.get("signature", b""), spec.get("args", ()), body=spec.get("body"),
                      field_types=spec.get("field_types"))
            refused[name] = conn.closed_by_peer()
        finally:
            conn.close()
        track(env)
    faults.record("hostile-bus-raw", cases=len(hostile), disconnected_by_the_bus=sum(refused.values()))
    assert all(refused.values()), refused
    # None of it reached the daemon: nothing logged, still answering.
    assert env.daemon.log() == before
    assert call(env, "GetAll", "(s)", (MANAGER,), PROPERTIES) == "OK"


@pytest.mark.parametrize("method,signature,args,burst", [
    ("Refresh", None, (), 10),
    ("GetMetrics", None, (), 10),
    ("ProbePeer", "(sa{sv})", ("10.77.0.3", {}), 20),
    ("AddPeer", "(s)", ("10.77.0.4",), 20),
    ("Inhibit", "(sss)", ("rdma", "flood", "test"), 10),
    ("ProbeGpus", None, (), 5),
])
def test_flood_from_one_sender_hits_the_rate_limit(env, method, signature, args, burst):
    conn = Gio.DBusConnection.new_for_address_sync(
        env.bus.address, Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT |
        Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION, None, None)
    try:
        outcomes = [call(env, method, signature, args, conn=conn) for _ in range(3 * burst)]
    finally:
        conn.close_sync(None)
    track(env)
    limited = [o for o in outcomes if o != "OK" and o[0] == OURS + "RateLimited"]
    other = [o for o in outcomes if o != "OK" and o[0] != OURS + "RateLimited"]
    faults.record(f"hostile-bus-flood-{method}", calls=len(outcomes), rate_limited=len(limited), errors=len(other))
    assert not other, other[:3]
    assert len(limited) >= burst // 2, (len(limited), outcomes[:3])
    assert all("try again in" in o[1] for o in limited)
    # Another sender is not affected.
    assert call(env, "GetAll", "(s)", (MANAGER,), PROPERTIES) == "OK"


def test_churn_of_senders_is_bounded(env):
    """New connections get fresh buckets; the tables of buckets are bounded, and so is the daemon."""
    before = faults.rss_kib(env.pid)
    outcomes = [call(env, "Refresh") for _ in range(300)]
    track(env)
    after = faults.rss_kib(env.pid)
    faults.record("hostile-bus-sender-churn", senders=len(outcomes), ok=outcomes.count("OK"),
                  rss_kib_before=before, rss_kib_after=after)
    assert all(o == "OK" or o[0] == OURS + "RateLimited" for o in outcomes)
    assert after - before < RSS_GROWTH_MAX_KIB


def test_unprivileged_callers_are_denied_and_may_read(env):
    calls = [("AddPeer", "(s)", ("10.77.0.5",)), ("RemovePeer", "(s)", ("10.77.0.5",)),
             ("ProbePeer", "(sa{sv})", ("10.77.0.5", {})), ("ProbeGpus", None, ()),
             ("Inhibit", "(sss)", ("gpu", "nobody", "test"))]
    denied = call_as(env.bus, NOBODY, calls)
    track(env)
    assert len(denied) == len(calls)
    for line in denied:
        assert line.startswith(E + "AccessDenied") and '"users"' in line, line
    # Hostile arguments from the unprivileged: refused either way (AddPeer checks the address, a
    # bounded parse, before it asks the bus who is calling), never taken. (100 kB: one argument of a
    # command line may not be longer than 128 KiB.)
    for line in call_as(env.bus, NOBODY, [("AddPeer", "(s)", ("x" * 100000,)), ("AddPeer", "(s)", ("10.77.0.6",))]):
        assert line.startswith((E + "AccessDenied", E + "InvalidArgs")), line[:200]
    client = lp.Client(env.bus)
    try:
        assert not [p for p in peers(client).values() if p["Address"] in ("10.77.0.5", "10.77.0.6")]
    finally:
        client.close()
    # Reading stays open.
    assert call_as(env.bus, NOBODY, [("GetManagedObjects", None, ())],
                   interface="org.freedesktop.DBus.ObjectManager") == ["OK"]
    assert call_as(env.bus, NOBODY, [("ListInhibitors", None, ())]) == ["OK"]
    faults.record("hostile-bus-unprivileged", refused=len(calls) + 2, reads_ok=2)


def test_daemon_alive_answering_and_bounded(env):
    # The oversized cases once more, many times: memory must not creep.
    samples = []
    for i in range(40):
        for method, signature, args in (("RankAddresses", "(s)", (MIB,)), ("AddPeer", "(s)", (MIB,))):
            call(env, method, signature, args)
        if i % 5 == 0:
            samples.append(faults.rss_kib(env.pid))
    track(env)
    end_rss, end_fds = faults.rss_kib(env.pid), faults.fd_count(env.pid)
    faults.record("hostile-bus", cases_run=env.cases, table_cases=len(CASES), rss_kib_start=env.rss_start,
                  rss_kib_end=end_rss, rss_kib_max=max(env.rss_max, *samples), fds_start=env.fds_start,
                  fds_end=end_fds, repeat_samples_kib=samples)
    assert env.daemon.proc.poll() is None
    client = lp.Client(env.bus)
    try:
        assert client.get_all("Manager")["State"] == "running"
        assert client.managed_objects_differing_from_getall() == []
    finally:
        client.close()
    assert end_rss - env.rss_start < RSS_GROWTH_MAX_KIB
    if not SANITIZED:
        assert samples[-1] - samples[1] < 4096, samples  # flat once the heap has its high-water mark
    assert end_fds <= env.fds_start + 2  # an inhibitor from the flood may still be closing
