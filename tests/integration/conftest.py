# SPDX-License-Identifier: LGPL-2.1-or-later
"""pytest fixtures: a private bus, a network namespace and a client per test; umockdev testbeds."""

import os
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
sys.path.insert(1, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import isolated_env  # noqa: E402
import lp  # noqa: E402
import tbt_harness  # noqa: E402
import umockdev_testbed  # noqa: E402


def pytest_configure(config):
    # run-tests runs test files two at a time (pytest-xdist), then the files marked alone by themselves:
    # those compare what they measure (rates, round trips, memory speed) with a figure that the other
    # file's CPU use would move.
    config.addinivalue_line("markers", "alone: times what it measures; run-tests runs it with nothing beside it")
    # Run by hand (pytest tests/integration/...) as well as by run-tests: the caller's COLUMNS, TERM,
    # PAGER or locale never reach what the tests run.
    isolated_env.isolate()
    if os.geteuid() != 0:
        pytest.exit("the integration tests need root (network namespaces)", returncode=1)
    for binary in (lp.DAEMON, lp.CTL):
        if not os.access(binary, os.X_OK):
            pytest.exit(f"{binary} is not built: run make", returncode=1)
    reason = lp.network_namespaces_refused()
    if reason:
        pytest.exit(f"the integration tests need network namespaces, which this machine refuses ({reason}); "
                    "in a container that takes CAP_SYS_ADMIN and CAP_NET_ADMIN: systemd-nspawn "
                    "--private-network, or docker run --privileged", returncode=1)


@pytest.fixture(scope="session")
def for_other_users():
    """An lp.ForOtherUsers: copies of what code run as another user needs, wherever the checkout lives."""
    shared = lp.ForOtherUsers()
    yield shared
    shared.remove()


@pytest.fixture
def bus():
    b = lp.PrivateBus()
    yield b
    b.stop()


@pytest.fixture
def netns():
    ns = lp.NetNS()
    yield ns
    ns.delete()


@pytest.fixture
def client(bus):
    c = lp.Client(bus)
    yield c
    c.close()


@pytest.fixture
def signals(bus):
    s = lp.SignalCollector(bus)
    yield s
    s.stop()


@pytest.fixture
def daemon_factory(bus):
    started = []

    def start(netns=None, **kw):
        d = lp.Daemon(bus, netns=netns, **kw)
        started.append(d)
        return d

    yield start
    # Whatever state a test drove its daemon into, its published objects keep to one verdict.
    wrong = []
    if any(d.proc.poll() is None for d in started):
        try:
            c = lp.Client(bus)
            try:
                (objects,) = c.call(lp.ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects",
                                    timeout_ms=3000)
                wrong = lp.one_verdict_violations(objects)
            finally:
                c.close()
        except lp.GLib.Error:
            pass  # the test took the daemon or its bus away: nothing to ask
    reports = []
    for d in started:
        d.stop()
        log = d.log_text
        # Under SANITIZE=1 a memory error, leak or undefined behaviour anywhere in the daemon's life
        # fails the test that provoked it, even if the daemon carried on.
        for marker in ("ERROR: AddressSanitizer", "ERROR: LeakSanitizer", "runtime error:"):
            if marker in log:
                reports.append(log)
    assert not reports, "sanitizer report from linkprobed:\n" + "\n".join(reports)
    assert not wrong, "Degraded and Health disagree:\n" + "\n".join(wrong)


@pytest.fixture
def testbed():
    """An empty umockdev_testbed.Testbed for umockdev_testbed.start(); the test adds the devices."""
    tb = umockdev_testbed.Testbed()
    yield tb
    tb.close()


def _testbed_factory(make, skip_reason):
    if skip_reason:
        pytest.skip(skip_reason)
    beds = []

    def new(*args):
        bed = make(*args)
        beds.append(bed)
        return bed

    yield new
    for bed in beds:
        bed.close()


@pytest.fixture
def live_bed():
    """live_bed(*fixtures): a tbt_harness.LiveTestbed, closed after the test."""
    yield from _testbed_factory(tbt_harness.LiveTestbed, tbt_harness.missing_tools(boltd=False))


@pytest.fixture
def testbed_for():
    """testbed_for(fixture): a tbt_harness.Testbed (a plain tree, for boltd and tbt-dump), closed after the test."""
    yield from _testbed_factory(tbt_harness.Testbed, tbt_harness.missing_tools())
