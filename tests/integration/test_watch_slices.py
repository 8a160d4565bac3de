# SPDX-License-Identifier: LGPL-2.1-or-later
"""The watch out of the way (watch.c, link-watch.c, bus-object.c): at hundreds of links the timer's dump
of statistics is read a datagram at a time, below bus calls and netlink events, and the signals it causes
go out in slices; each link still gets one PropertiesChanged per sample with everything that changed,
and each link's rate is still over its own two readings.

Nothing here waits for luck: 601 links' statistics cannot fit one netlink datagram (32 KiB at most, some
200 bytes a link), so the dump is read in several slices whatever the load; and the first sample after
start-up moves every link's RxGbps and TxGbps from unknown (one reading) to a number, so that sample
changes every link at once. That the slices are dispatched below bus calls is the unit test's
(tests/unit/test-bus-publisher.c)."""

import re
import time

import pytest

import lp
from lp import wait_for

LINK = lp.IFACE + "Link"
PAIRS = 300
N_LINKS = 1 + 2 * PAIRS


def add_pairs(netns, n):
    netns.batch([f"link add w{i}a type veth peer name w{i}b" for i in range(n)])


def rate_signals(events):
    """{path: [the changed properties of each PropertiesChanged that named RxGbps]}."""
    out = {}
    for _, path, _, member, args in events:
        if member == "PropertiesChanged" and args[0] == LINK and "RxGbps" in args[1]:
            out.setdefault(path, []).append(args[1])
    return out


def test_sample_read_in_slices_signals_batched(netns, signals, client, daemon_factory):
    add_pairs(netns, PAIRS)
    d = daemon_factory(netns, args=["--log-level=debug"], config="[Watch]\nIntervalSec=300ms\n", watch=True)
    paths = {link["Path"] for link in client.links().values()}
    assert len(paths) == N_LINKS

    # The first timer sample: every link's rates go from unknown to 0 (the links are down, nothing moves).
    got = signals.wait(lambda events: len(rate_signals(events)) >= N_LINKS and rate_signals(events), timeout=30)
    assert got, (f"{len(rate_signals(signals.events))} of {N_LINKS} links announced their rates", d.log()[-3000:])
    assert set(got) == paths
    for path, changes in got.items():
        # One signal per link and sample, both rates in it.
        assert "TxGbps" in changes[0], (path, changes)
        assert changes[0]["RxGbps"] == 0.0 and changes[0]["TxGbps"] == 0.0, (path, changes)

    assert d.wait_log(f"Link statistics: {N_LINKS} links read in", timeout=10), d.log()
    slices = [int(n) for n in re.findall(rf"Link statistics: {N_LINKS} links read in (\d+) slices", d.log())]
    assert slices and min(slices) >= 2, slices
    assert "in slices." in d.log()
    # A few samples later nothing moved: no more rate signals (each link said its rates once).
    time.sleep(1)
    assert all(len(changes) == 1 for changes in rate_signals(signals.events).values()), \
        {p: c for p, c in rate_signals(signals.events).items() if len(c) != 1}


@pytest.fixture
def far():
    ns = lp.NetNS()
    yield ns
    ns.delete()


@pytest.mark.alone
def test_rate_of_a_link_read_in_a_late_slice(netns, far, client, daemon_factory):
    """A veth behind 600 others (the dump answers by ifindex: its reading comes in the last datagrams)
    against what iperf3 moved through it, paced at 300 Mb/s; the median of the samples in the middle of
    the run, as test_health.py's test of one veth."""
    add_pairs(netns, PAIRS)
    netns.ip("link", "add", "late0", "type", "veth", "peer", "name", "late0p")
    netns.ip("link", "set", "late0p", "netns", far.name)
    netns.ip("addr", "add", "10.77.9.1/24", "dev", "late0")
    far.ip("addr", "add", "10.77.9.2/24", "dev", "late0p")
    netns.ip("link", "set", "late0", "up")
    far.ip("link", "set", "late0p", "up")
    daemon_factory(netns, config="[Watch]\nIntervalSec=500ms\n", watch=True)
    link = wait_for(lambda: client.link_by_name("late0"), 10, "late0")

    import test_health  # its iperf3 helpers
    server = test_health.iperf3_server(far, "10.77.9.2")
    try:
        proc = test_health.iperf3_client(netns, "10.77.9.2", "300M", 5)
        start_time, samples = time.monotonic(), []
        while proc.poll() is None:
            if 1.5 <= time.monotonic() - start_time <= 4.2:
                samples.append(client.get_all("Link", link["Path"])["TxGbps"])
            time.sleep(0.25)
        iperf_bps = test_health.iperf3_result(proc)
    finally:
        lp.stop_process(server)
    samples.sort()
    ours = samples[len(samples) // 2] * 1e9
    # Our counters see frames (Ethernet, IP and TCP headers: about 4.5 % at this MTU); iperf3 its payload.
    assert abs(ours - iperf_bps) <= 0.10 * iperf_bps, (ours, iperf_bps, samples)
