# SPDX-License-Identifier: LGPL-2.1-or-later
"""[Inhibit] WhileUnitsActive=: GPU and RDMA probes held off while systemd units run, followed by signals
from a bus that plays systemd (fake_systemd.py), listed by ListInhibitors() and `linkprobectl
inhibitors`; bad unit names are configuration errors."""

import os

import pytest

import lp
from fake_systemd import FakeSystemd
from lp import ROOT, wait_until

MANAGER = lp.IFACE + "Manager"


def inhibitors(client):
    (items,) = client.call(ROOT, MANAGER, "ListInhibitors")
    return items


def inhibited(client):
    return client.get_all("Manager")["Inhibited"]


def config(units, what=None):
    return f"[Inhibit]\nWhileUnitsActive={units}\n" + (f"What={what}\n" if what else "") + "[Gpu]\nEnabled=no\n"


@pytest.fixture
def systemd(bus):
    fake = FakeSystemd(bus, {"inference.service": "inactive", "batch@night.service": "inactive"})
    yield fake
    fake.stop()


def test_probes_are_held_off_while_a_unit_runs(systemd, client, daemon_factory):
    daemon_factory(config=config("inference.service batch@night.service"))
    assert wait_until(lambda: systemd.subscribed and set(systemd.load_calls) >= {"inference.service",
                                                                                 "batch@night.service"})
    assert wait_until(lambda: client.get_all("Manager")["State"] == "running")
    assert inhibited(client) == [] and inhibitors(client) == []

    systemd.set_state("inference.service", "activating")
    assert wait_until(lambda: inhibited(client) == ["gpu", "rdma"])
    ((what, who, why, uid, pid),) = inhibitors(client)
    assert (what, who, why) == ("gpu:rdma", "linkprobed", "while inference.service runs")
    assert uid == os.geteuid() and pid > 0

    # A second unit: one inhibitor still, saying both.
    systemd.set_state("batch@night.service", "active")
    assert wait_until(lambda: [i[2] for i in inhibitors(client)] == ["while inference.service, batch@night.service run"])
    systemd.set_state("inference.service", "inactive")
    assert wait_until(lambda: [i[2] for i in inhibitors(client)] == ["while batch@night.service runs"])
    # systemd may say only that ActiveState changed: the daemon asks.
    systemd.set_state("batch@night.service", "failed", invalidate=True)
    assert wait_until(lambda: inhibited(client) == [] and inhibitors(client) == [])

    out = lp.ctl(client.bus, "inhibitors", check=True).stdout
    assert "linkprobed" not in out


def test_what_and_a_unit_running_at_start(systemd, client, daemon_factory):
    systemd.set_state("inference.service", "active")
    daemon_factory(config=config("inference.service", what="gpu"))
    assert wait_until(lambda: inhibited(client) == ["gpu"])
    listed = lp.ctl(client.bus, "inhibitors", check=True).stdout
    assert "linkprobed" in listed and "while inference.service runs" in listed
    assert lp.ctl(client.bus, "inhibit", "--list", check=True).stdout == listed
    # --list lists; with a command it is a usage error, not a command run with an inhibitor.
    proc = lp.ctl(client.bus, "inhibit", "--list", "--", "true")
    assert proc.returncode == 2 and "takes no command" in proc.stderr, proc


def test_a_transient_unit_announced_only_by_unit_new(systemd, client, daemon_factory):
    """systemd-run: the unit is loaded anew and may be active before its first signal, UnitNew, goes
    out; no PropertiesChanged tells of that. The daemon asks."""
    daemon_factory(config=config("inference.service"))
    assert wait_until(lambda: systemd.subscribed and client.get_all("Manager")["State"] == "running")
    systemd.new_unit("inference.service", "active")
    assert wait_until(lambda: [i[2] for i in inhibitors(client)] == ["while inference.service runs"])
    systemd.remove_unit("inference.service")
    assert wait_until(lambda: inhibitors(client) == [])


def test_a_unit_not_loaded_is_not_running_until_systemd_loads_it(systemd, client, daemon_factory):
    """GetUnit() of a unit systemd has not loaded is NoSuchUnit: not running, and known, so not
    degraded; the daemon does not load it (LoadUnit() would leave a stub in systemd)."""
    daemon_factory(config=config("later.service"))
    assert wait_until(lambda: client.get_all("Manager")["State"] == "running")
    assert "later.service" in systemd.load_calls and inhibitors(client) == []
    systemd.new_unit("later.service", "activating")
    assert wait_until(lambda: [i[2] for i in inhibitors(client)] == ["while later.service runs"])
    systemd.set_state("later.service", "inactive")
    assert wait_until(lambda: inhibitors(client) == [])
    systemd.new_unit("later.service", "active")
    assert wait_until(lambda: len(inhibitors(client)) == 1)
    # Unloaded (systemd unloads only what is not running): not running.
    systemd.remove_unit("later.service")
    assert wait_until(lambda: inhibitors(client) == [])


def test_systemd_coming_back_is_asked_again(bus, client, daemon_factory):
    first = FakeSystemd(bus, {"inference.service": "inactive"})
    daemon_factory(config=config("inference.service"))
    assert wait_until(lambda: first.subscribed)
    first.stop()
    # Away, systemd can say nothing: the promise cannot be checked.
    assert wait_until(lambda: client.get_all("Manager")["DegradedReasons"] == ["inhibit-units-unknown"])
    # systemd re-executed, and the unit started meanwhile: the new instance is asked.
    second = FakeSystemd(bus, {"inference.service": "active"})
    try:
        assert wait_until(lambda: inhibited(client) == ["gpu", "rdma"])
        assert second.subscribed
        assert wait_until(lambda: client.get_all("Manager")["State"] == "running")
    finally:
        second.stop()


def test_without_systemd_the_daemon_says_it_cannot_keep_the_promise(client, daemon_factory):
    daemon_factory(config=config("inference.service"))
    manager = wait_until(lambda: (lambda m: m if m["State"] == "degraded" else None)(client.get_all("Manager")))
    assert manager["DegradedReasons"] == ["inhibit-units-unknown"], manager


@pytest.mark.parametrize("units", ["inference", "foo@.service", "a b.service/x", "x" * 300 + ".service",
                                   "inference.nonsense", "@x.service"])
def test_bad_unit_names_are_configuration_errors(units, bus, tmp_path):
    path = tmp_path / "linkprobed.conf"
    path.write_text(f"[Inhibit]\nWhileUnitsActive={units}\n")
    proc = lp.run([lp.DAEMON, f"--bus-address={bus.address}", f"--config={path}"], check=False)
    assert proc.returncode == 78, proc
    assert "WhileUnitsActive" in proc.stderr and "is not a unit name" in proc.stderr, proc.stderr


def test_bad_what_is_a_configuration_error(bus, tmp_path):
    path = tmp_path / "linkprobed.conf"
    path.write_text("[Inhibit]\nWhileUnitsActive=a.service\nWhat=tpu\n")
    proc = lp.run([lp.DAEMON, f"--bus-address={bus.address}", f"--config={path}"], check=False)
    assert proc.returncode == 78 and "expected gpu, rdma or gpu:rdma" in proc.stderr, proc.stderr
