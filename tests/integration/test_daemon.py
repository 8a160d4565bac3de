# SPDX-License-Identifier: LGPL-2.1-or-later
"""The daemon's life: readiness, signals, watchdog, losing the bus, configuration, options, the root
object's interfaces, and bad input on the bus."""

import os
import signal
import socket
import time

import pytest
from gi.repository import GLib

import lp

MANAGER = lp.IFACE + "Manager"


def test_ready_status_and_clean_exit(netns, client, daemon_factory):
    daemon = daemon_factory(netns)
    ready = daemon.notify.wait_for("READY")
    assert ready["READY"] == "1" and "links" in ready.get("STATUS", "")
    assert client.get_all("Manager")["State"] == "running"
    daemon.signal(signal.SIGTERM)
    assert daemon.proc.wait(10) == 0
    assert daemon.notify.wait_for("STOPPING", timeout=5) is not None


def test_a_notify_socket_nobody_reads_never_stalls_the_daemon(netns, client, daemon_factory):
    # A supervisor that reads its socket now and then holds net.unix.max_dgram_qlen messages (10 by
    # default) before a sender waits, and sd_notify() waited with the whole loop: in CI a Refresh went
    # unanswered for 25 s and SIGTERM unheard, after an RDMA port's health had changed STATUS= a dozen
    # times. Here the queue is filled after READY=1, so STOPPING=1 finds it full.
    daemon = daemon_factory(netns)
    assert daemon.notify.wait_for("READY") is not None
    filler = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    filler.setblocking(False)
    queued = 0
    try:
        while queued < 100000:
            filler.sendto(b"FILLER=1", daemon.notify.path)
            queued += 1
    except BlockingIOError:
        pass
    finally:
        filler.close()
    assert queued > 0
    assert client.call(lp.ROOT, MANAGER, "Refresh") == ()
    daemon.signal(signal.SIGTERM)
    assert daemon.proc.wait(10) == 0, daemon.log()


def test_sigint_exits_cleanly(netns, daemon_factory):
    daemon = daemon_factory(netns)
    daemon.signal(signal.SIGINT)
    assert daemon.proc.wait(10) == 0


def test_sighup_refreshes(netns, client, daemon_factory):
    daemon = daemon_factory(netns, args=["--log-level=info"])
    daemon.signal(signal.SIGHUP)
    assert daemon.wait_log("Received SIGHUP, reloading [Health] and refreshing."), daemon.log()
    assert daemon.proc.poll() is None
    assert client.get_all("Manager")["State"] == "running"


def test_refresh_method(netns, client, daemon_factory):
    daemon_factory(netns)
    for _ in range(5):
        assert client.call(lp.ROOT, MANAGER, "Refresh") == ()
    assert client.get_all("Manager")["State"] == "running"


def test_watchdog(netns, daemon_factory):
    daemon = daemon_factory(netns, env={"WATCHDOG_USEC": "200000"})
    assert daemon.notify.wait_for("WATCHDOG", timeout=3) is not None


def test_bus_loss_is_a_failure_exit(netns, bus, daemon_factory):
    daemon = daemon_factory(netns)
    bus.proc.kill()
    start = time.monotonic()
    code = daemon.proc.wait(5)
    assert code != 0
    assert time.monotonic() - start < 1.0


def test_name_already_owned(netns, daemon_factory):
    daemon_factory(netns)
    second = daemon_factory(netns, wait=False)
    code = second.proc.wait(20)
    assert code == 1
    assert "already owns org.linkprobe.LinkProbe1" in second.log()


def test_root_interfaces(netns, client, daemon_factory):
    daemon_factory(netns)
    manager = client.get_all("Manager")
    assert manager["Version"] and manager["State"] == "running" and manager["DegradedReasons"] == []
    node = client.get_all("Node")
    assert node["Hostname"] == os.uname().nodename
    assert node["KernelRelease"] == os.uname().release
    assert node["Architecture"] == os.uname().machine
    assert len(node["BootId"]) == 32
    with open("/proc/sys/kernel/random/boot_id") as f:
        assert node["BootId"] == f.read().strip().replace("-", "")
    assert node["CpuCount"] == os.cpu_count()
    memory = client.get_all("Memory")
    assert 0 < memory["AvailableBytes"] <= memory["TotalBytes"]
    with open("/proc/meminfo") as f:
        total_kb = int(next(line.split()[1] for line in f if line.startswith("MemTotal:")))
    assert memory["TotalBytes"] == total_kb * 1024


def test_memory_changes_only_when_material(netns, bus, signals, daemon_factory):
    # Threshold 100%: available memory never moves that much, so no signal at all.
    daemon_factory(netns, config="[Memory]\nPollIntervalSec=50ms\nChangeThresholdPercent=100\n")
    hog = bytearray(256 << 20)
    for i in range(0, len(hog), 4096):
        hog[i] = 1
    time.sleep(0.5)
    assert not [e for e in signals.events if e[3] == "PropertiesChanged" and e[4][0] == lp.IFACE + "Memory"]
    del hog


def test_memory_signals_on_change(netns, signals, daemon_factory):
    # Threshold 0%: every change is material; touching 256 MiB must be seen.
    daemon_factory(netns, config="[Memory]\nPollIntervalSec=50ms\nChangeThresholdPercent=0\n")
    signals.clear()
    hog = bytearray(256 << 20)
    for i in range(0, len(hog), 4096):
        hog[i] = 1
    assert signals.wait(lambda ev: [e for e in ev if e[3] == "PropertiesChanged"
                                    and e[4][0] == lp.IFACE + "Memory" and "AvailableBytes" in e[4][1]], timeout=5)
    del hog


def test_memory_polling_off(netns, client, signals, daemon_factory):
    daemon_factory(netns, config="[Memory]\nPollIntervalSec=0\nChangeThresholdPercent=0\n")
    hog = bytearray(128 << 20)
    for i in range(0, len(hog), 4096):
        hog[i] = 1
    time.sleep(0.4)
    assert not [e for e in signals.events if e[3] == "PropertiesChanged" and e[4][0] == lp.IFACE + "Memory"]
    assert client.get_all("Memory")["TotalBytes"] > 0


def test_config_errors(tmp_path):
    bad_value = tmp_path / "bad.conf"
    bad_value.write_text("# comment\n[Memory]\nPollIntervalSec=soon\n")
    proc = lp.run([lp.DAEMON, f"--config={bad_value}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78
    assert f"{bad_value}:3:" in proc.stderr and "PollIntervalSec" in proc.stderr

    syntax = tmp_path / "syntax.conf"
    syntax.write_text("[Memory]\nthis line has no equals sign\n")
    proc = lp.run([lp.DAEMON, f"--config={syntax}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78 and f"{syntax}:2:" in proc.stderr

    missing = tmp_path / "missing.conf"
    proc = lp.run([lp.DAEMON, f"--config={missing}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78 and "missing.conf" in proc.stderr

    unreadable = tmp_path / "dir.conf"
    unreadable.mkdir()
    proc = lp.run([lp.DAEMON, f"--config={unreadable}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78 and "dir.conf" in proc.stderr

    percent = tmp_path / "percent.conf"
    percent.write_text("[Memory]\nChangeThresholdPercent=101\n")
    proc = lp.run([lp.DAEMON, f"--config={percent}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78 and "percent.conf:2:" in proc.stderr


def test_unknown_config_keys_are_warnings(netns, tmp_path, daemon_factory):
    daemon = daemon_factory(netns, config="[Memory]\nPollIntervalSec=5s\nFrobnicate=1\n[Future]\nKey=2\n")
    log = daemon.log()
    assert "unknown key Frobnicate=" in log and "unknown section [Future]" in log
    assert daemon.proc.poll() is None


@pytest.mark.parametrize("args,message", [
    (["--frobnicate"], "Unknown option"),
    (["--bus-address="], "needs an address"),
    (["--log-level=loud"], "Unknown log level"),
    (["extra"], "Unexpected argument"),
    (["--netlink-rcvbuf=lots"], "Invalid --netlink-rcvbuf"),
    (["--config"], "needs an argument"),
])
def test_bad_options(args, message):
    proc = lp.run([lp.DAEMON, *args], check=False)
    assert proc.returncode == 2, proc.stderr
    assert message in proc.stderr


def test_help_and_version():
    assert lp.run([lp.DAEMON, "--help"]).stdout.startswith("Usage: linkprobed")
    assert lp.run([lp.DAEMON, "--version"]).stdout.startswith("linkprobed ")


def test_bad_sysfs_root(bus):
    proc = lp.run([lp.DAEMON, f"--bus-address={bus.address}", "--sysfs-root=/nonexistent/sys"], check=False)
    assert proc.returncode == 1 and "sysfs root" in proc.stderr


def test_unreachable_bus():
    proc = lp.run([lp.DAEMON, "--bus-address=unix:path=/nonexistent/socket"], check=False, timeout=20)
    assert proc.returncode == 1 and "Failed to connect" in proc.stderr


def test_bad_bus_input(netns, client, daemon_factory):
    daemon = daemon_factory(netns)
    from gi.repository import Gio

    def call_error(path, interface, method, signature=None, args=()):
        with pytest.raises(GLib.Error) as e:
            client.call(path, interface, method, signature, args)
        return Gio.DBusError.get_remote_error(e.value), e.value.message

    # Unknown purpose: InvalidArgs naming the valid ones.
    name, message = call_error(lp.ROOT, MANAGER, "RankAddresses", "(s)", ("fastest",))
    assert name == "org.freedesktop.DBus.Error.InvalidArgs" and "ring" in message
    name, _ = call_error(lp.ROOT, MANAGER, "RankAddresses", "(s)", ("",))
    assert name == "org.freedesktop.DBus.Error.InvalidArgs"
    name, message = call_error(lp.ROOT, MANAGER, "RankAddresses", "(s)", ("x" * 100000,))
    assert name == "org.freedesktop.DBus.Error.InvalidArgs" and len(message) < 300
    # Wrong signatures.
    name, _ = call_error(lp.ROOT, MANAGER, "RankAddresses", "(i)", (1,))
    assert name == "org.freedesktop.DBus.Error.InvalidArgs"
    name, _ = call_error(lp.ROOT, MANAGER, "RankAddresses")
    assert name == "org.freedesktop.DBus.Error.InvalidArgs"
    name, _ = call_error(lp.ROOT, MANAGER, "Refresh", "(s)", ("now",))
    assert name == "org.freedesktop.DBus.Error.InvalidArgs"
    # Unknown objects, interfaces, methods and properties.
    for path in (lp.ROOT + "/link/_39_39_39", lp.ROOT + "/link/0", lp.ROOT + "/link/_2d1", lp.ROOT + "/link/abc",
                 lp.ROOT + "/nothing", lp.ROOT + "/link/_32/deeper"):
        name, _ = call_error(path, lp.IFACE + "Link", "Frobnicate")
        assert name in ("org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownMethod"), path
        name, _ = call_error(path, "org.freedesktop.DBus.Properties", "GetAll", "(s)", (lp.IFACE + "Link",))
        assert name in ("org.freedesktop.DBus.Error.UnknownObject", "org.freedesktop.DBus.Error.UnknownInterface"), path
    name, _ = call_error(lp.ROOT, MANAGER, "Frobnicate")
    assert name == "org.freedesktop.DBus.Error.UnknownMethod"
    name, _ = call_error(lp.ROOT, "org.freedesktop.DBus.Properties", "Get", "(ss)", (MANAGER, "Nope"))
    assert name in ("org.freedesktop.DBus.Error.UnknownProperty", "org.freedesktop.DBus.Error.InvalidArgs")
    name, _ = call_error(lp.ROOT, "org.freedesktop.DBus.Properties", "Set", "(ssv)",
                         (MANAGER, "State", GLib.Variant("s", "running")))
    assert name in ("org.freedesktop.DBus.Error.PropertyReadOnly", "org.freedesktop.DBus.Error.InvalidArgs")
    name, _ = call_error(lp.ROOT, "org.linkprobe.LinkProbe1.Nope", "X")
    assert name in ("org.freedesktop.DBus.Error.UnknownInterface", "org.freedesktop.DBus.Error.UnknownMethod")
    # Still alive and right.
    assert daemon.proc.poll() is None
    assert client.get_all("Manager")["State"] == "running"


def test_introspection_names_arguments(netns, client, daemon_factory):
    daemon_factory(netns)
    (xml,) = client.call(lp.ROOT, "org.freedesktop.DBus.Introspectable", "Introspect")
    assert '<method name="RankAddresses">' in xml
    assert '<arg type="s" name="purpose" direction="in"/>' in xml
    assert '<arg type="a(ssss)" name="addresses" direction="out"/>' in xml
    assert '<node name="link"/>' in xml
