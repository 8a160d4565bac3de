# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobectl: tables and JSON from the same data, exit codes, and a clear sentence when the daemon
is not there."""

import json
import os
import signal
import subprocess
import time

import lp


def setup_links(ns):
    ns.ip("link", "add", "cli0", "type", "veth", "peer", "name", "cli1")
    ns.ip("link", "set", "cli0", "up")
    ns.ip("link", "set", "cli1", "up")
    ns.ip("addr", "add", "10.70.0.1/24", "dev", "cli0")


def test_list_table_and_json(netns, bus, client, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    table = lp.ctl(bus, "list")
    assert table.returncode == 0, table.stderr
    lines = table.stdout.splitlines()
    assert lines[0].split() == ["IDX", "NAME", "KIND", "TYPE", "STATE", "CARRIER", "SPEED", "MTU", "ADDRESSES"]
    row = next(line for line in lines if " cli0 " in line)
    assert "veth" in row and "Virtual" in row and "10 Gb/s" in row and "10.70.0.1/24" in row
    assert lines[-1] == "3 links listed."

    data = json.loads(lp.ctl(bus, "list", "--json").stdout)
    assert [link["Name"] for link in data] == ["lo", "cli1", "cli0"] or [link["Index"] for link in data] == sorted(
        link["Index"] for link in data)
    cli0 = next(link for link in data if link["Name"] == "cli0")
    assert cli0["Addresses"][0] == {"Address": "10.70.0.1", "PrefixLength": 24, "Scope": "global",
                                    "Class": "private"} or any(a["Address"] == "10.70.0.1" for a in cli0["Addresses"])
    # The same facts as D-Bus, one for one.
    ours = client.link_by_name("cli0")
    for key in ("Index", "Kind", "ConnectionType", "OperState", "Mtu", "SpeedMbps", "HardwareAddress", "Path"):
        assert cli0[key] == ours[key], key

    quiet = lp.ctl(bus, "--no-legend", "list")
    assert not quiet.stdout.startswith("IDX") and "links listed" not in quiet.stdout


def test_no_verb_means_list(netns, bus, daemon_factory):
    daemon_factory(netns)
    assert lp.ctl(bus).stdout == lp.ctl(bus, "list").stdout


def test_show(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    out = lp.ctl(bus, "show", "cli0")
    assert out.returncode == 0
    assert "Connection type: Virtual" in out.stdout and "10.70.0.1/24 (private, scope global)" in out.stdout
    index = json.loads(lp.ctl(bus, "show", "cli0", "--json").stdout)[0]["Index"]
    by_index = json.loads(lp.ctl(bus, "--json", "show", str(index), "lo").stdout)
    assert [link["Name"] for link in by_index] == ["cli0", "lo"]

    missing = lp.ctl(bus, "show", "nosuchlink")
    assert missing.returncode == 1 and missing.stderr.strip() == "No such link: nosuchlink"
    missing = lp.ctl(bus, "show", "--", "-x")
    assert missing.returncode == 1 and "No such link: -x" in missing.stderr


def test_status(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    out = lp.ctl(bus, "status")
    assert out.returncode == 0
    assert "State: running" in out.stdout and "Links: 3 (2 up)" in out.stdout
    data = json.loads(lp.ctl(bus, "status", "--json").stdout)
    assert data["Manager"]["State"] == "running"
    assert data["Counts"] == {"Links": 3, "LinksUp": 2}
    assert data["Node"]["KernelRelease"]


def read_json_lines(proc, until, timeout=10.0):
    """Events from monitor --json until until(events) holds; never blocks past the timeout. Reads the
    raw pipe (a buffered reader would hold lines that select() no longer sees)."""
    import select
    events = []
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    pending = proc.__dict__.setdefault("pending_output", [b""])  # what the last call read past its event
    while not until(events):
        while b"\n" in pending[0]:
            line, pending[0] = pending[0].split(b"\n", 1)
            events.append(json.loads(line))
        if until(events):
            break
        left = deadline - time.monotonic()
        assert left > 0, f"gave up waiting; saw {events}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"monitor ended; saw {events}"
            pending[0] += chunk
    return events


def test_monitor_json_lines(netns, bus, daemon_factory):
    daemon_factory(netns)
    proc = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "monitor", "--json"], stdout=subprocess.PIPE)
    try:
        time.sleep(0.5)
        netns.ip("link", "add", "mon0", "type", "veth", "peer", "name", "mon1")
        added = read_json_lines(proc, lambda ev: {e.get("Name") for e in ev if e["Event"] == "added"} >= {"mon0", "mon1"})
        # Once announced, a change is a "changed" event carrying the new value.
        netns.ip("link", "set", "mon0", "mtu", "1400")
        changed = read_json_lines(proc, lambda ev: any(e["Event"] == "changed" and
                                                       e.get("Properties", {}).get("Mtu") == 1400 for e in ev))
        # Every timestamp twice: ISO 8601 (UTC) and microseconds.
        assert all(e["Time"].endswith("Z") and isinstance(e["TimeUsec"], int) for e in added + changed)
        last = changed[-1]
        assert last["Name"] == "mon0" and last["Interface"] == lp.IFACE + "Link"
        # The same schema as list --json: "no object" is null.
        first = next(e for e in added if e["Name"] == "mon0")
        assert first["Properties"]["ThunderboltPeer"] is None
    finally:
        proc.send_signal(signal.SIGINT)
        assert proc.wait(5) == 0


def read_lines(proc, until, timeout=10.0):
    """Text lines from monitor until until(lines) holds."""
    import select
    lines = []
    deadline = time.monotonic() + timeout
    fd = proc.stdout.fileno()
    pending = proc.__dict__.setdefault("pending_text", [b""])
    while not until(lines):
        while b"\n" in pending[0]:
            line, pending[0] = pending[0].split(b"\n", 1)
            lines.append(line.decode())
        if until(lines):
            break
        left = deadline - time.monotonic()
        assert left > 0, f"gave up waiting; saw {lines}"
        if select.select([fd], [], [], left)[0]:
            chunk = os.read(fd, 65536)
            assert chunk, f"monitor ended; saw {lines}"
            pending[0] += chunk
    return lines


def test_monitor_human(netns, bus, daemon_factory):
    daemon_factory(netns)
    proc = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "monitor"], stdout=subprocess.PIPE,
                            stderr=subprocess.DEVNULL)
    try:
        time.sleep(0.5)
        netns.ip("link", "add", "hum0", "type", "veth", "peer", "name", "hum1")
        lines = read_lines(proc, lambda ls: any(" added " in line and "link hum0" in line for line in ls))
        assert "Kind=veth" in next(line for line in lines if "link hum0" in line)
        netns.ip("link", "set", "hum0", "mtu", "1400")
        netns.ip("addr", "add", "10.71.0.1/24", "dev", "hum0")
        lines = read_lines(proc, lambda ls: any("10.71.0.1/24" in line for line in ls))
        # Values as a person reads them: addresses as text, objects by name, never JSON or escaped paths.
        text = "\n".join(lines)
        assert "changed        link hum0: " in text and "Mtu=1400" in text, text
        assert "Addresses=10.71.0.1/24" in text
        assert "{" not in text and "[" not in text and "/_" not in text, text
    finally:
        proc.terminate()
        assert proc.wait(5) == 0


def test_monitor_prints_warnings_on_their_own_lines(bus, client, daemon_factory):
    """A GPU measured with four warnings: the change on one line, each warning indented on its own below
    it, not run together into the line; the JSON form keeps them as the list they are."""
    from test_gpu import A100, FakeProbe, config, device, measurement

    warnings = ["FP32 throughput varied by 14% between runs (9.1 to 10.4 TFLOPS)",
                "memory bandwidth varied by 22% between runs (1.2 to 1.5 TB/s)",
                "FP16 throughput varied by 11% between runs (35.0 to 39.1 TFLOPS)",
                "the copy buffer (64 MiB) is not well past the 96 MiB last-level cache"]
    fake = FakeProbe()
    gpu = device(A100["key"], "Fake A100")
    fake.set(devices=[gpu], measurements={gpu["key"]: measurement()})
    proc = None
    try:
        daemon_factory(gpu=True, env=fake.env(), config=config())
        lp.wait_for(lambda: " ok " in lp.ctl(bus, "gpu").stdout, what="a measured GPU")
        proc = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "monitor"], stdout=subprocess.PIPE,
                                stderr=subprocess.DEVNULL)
        fake.set(measurements={gpu["key"]: measurement(1400.0, 9900.0, warnings=warnings)})
        client.call(lp.ROOT, lp.IFACE + "Manager", "ProbeGpus", timeout_ms=30000)
        lines = read_lines(proc, lambda ls: sum(line.startswith("    warning: ") for line in ls) >= 4)
        event = next(i for i, line in enumerate(lines) if " changed " in line and "gpu 0" in line
                     and i + 1 < len(lines) and lines[i + 1].startswith("    warning: "))
        assert "varied" not in lines[event], lines[event]
        below = []
        for line in lines[event + 1:]:
            if not line.startswith("    warning: "):
                break
            below.append(line[len("    warning: "):])
        # The probe's four, in order, beside what the daemon adds itself ([Gpu] Quick=yes says so).
        assert [w for w in below if w in warnings] == warnings, lines
        assert all(" changed " not in w for w in below)
    finally:
        if proc:
            proc.terminate()
            proc.wait(5)
        fake.remove()


def test_monitor_waits_for_the_daemon_and_follows_restarts(netns, bus, daemon_factory):
    """monitor may start first; whenever the daemon (re)appears, every object is reported as added."""
    netns.ip("link", "add", "wait0", "type", "veth", "peer", "name", "wait1")
    proc = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "monitor"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    try:
        time.sleep(0.5)
        assert proc.poll() is None, proc.stderr.read()
        daemon = daemon_factory(netns)
        lines = read_lines(proc, lambda ls: {"link lo", "link wait0", "link wait1"} <= {
            line.split(" added ")[1].split(":")[0].strip() for line in ls if " added " in line})
        assert " daemon-started" in lines[0], lines
        daemon.stop()
        read_lines(proc, lambda ls: any("daemon-stopped" in line for line in ls))
        daemon_factory(netns)
        lines = read_lines(proc, lambda ls: any("added" in line and "link wait0" in line for line in ls))
        assert sum("link wait0" in line and " added " in line for line in lines) == 1, lines
    finally:
        proc.terminate()
        assert proc.wait(5) == 0


def test_daemon_not_running(bus):
    for args in (["status"], ["list"], ["show", "lo"], ["--json", "list"], ["peers"], ["gpu"]):
        out = lp.ctl(bus, *args)
        assert out.returncode == 1, args
        assert out.stderr.strip() == \
            "linkprobed is not running (nobody owns org.linkprobe.LinkProbe1 on this bus).", out.stderr
        assert out.stdout == ""


def test_no_bus():
    """No bus where linkprobectl looks: one sentence that names the bus, why, and what to do instead."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("DBUS_", "XDG_RUNTIME_DIR"))}
    missing = "unix:path=/nonexistent/system_bus_socket"
    cases = (
        (["--bus-address=unix:path=/nonexistent/bus"], {},
         "Cannot connect to the given bus at unix:path=/nonexistent/bus (No such file or directory): ",
         ["linkprobed --bus-address=", "--system or --user"]),
        ([], {"DBUS_SYSTEM_BUS_ADDRESS": missing},
         f"Cannot connect to the system bus at {missing} (No such file or directory): ",
         ["systemctl start linkprobed", "--bus-address=ADDRESS or --user"]),
        (["--user"], {"XDG_RUNTIME_DIR": "/nonexistent"},
         "Cannot connect to your session bus (No such file or directory): ",
         ["linkprobed --user", "--bus-address=ADDRESS or --system"]),
    )
    for args, extra, start, advice in cases:
        out = lp.run([lp.CTL, *args, "status"], check=False, env={**env, **extra})
        assert out.returncode == 1 and out.stdout == "", (args, out)
        assert out.stderr.startswith(start) and out.stderr.count("\n") == 1, (args, out.stderr)
        assert all(a in out.stderr for a in advice) and out.stderr.endswith(".\n"), (args, out.stderr)


def test_usage_errors(bus):
    for args, message in ((["frobnicate"], "Unknown command"), (["--frob"], "Unknown option"),
                          (["show"], "needs more arguments"), (["status", "extra"], "takes no further"),
                          (["--bus-address="], "needs an address")):
        out = lp.ctl(bus, *args) if args[0] != "--bus-address=" else lp.run([lp.CTL, *args], check=False)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr
    # What the CLI can judge itself is a usage error before any bus call: here nobody owns the name, so
    # reaching the bus would have been exit 1 "not running".
    for args, message in ((["probe", "not-an-address"], 'Invalid peer address "not-an-address"'),
                          (["probe", "192.0.2.300"], "Invalid peer address"),
                          (["inhibit", "--what=cpu", "true"], "--what=cpu: takes gpu, rdma or gpu:rdma"),
                          (["inhibit", "--who=", "true"], "--who= takes"),
                          (["--json=fancy", "list"], "--json= takes pretty, short or off"),
                          (["--color=sometimes", "list"], "--color= takes auto, always or never"),
                          (["metrics", "--json"], "does not apply"),
                          (["-x"], "Unknown option -x"),
                          (["probe", "gpu", "--timeout=soon"], "--timeout= needs")):
        out = lp.ctl(bus, *args)
        assert out.returncode == 2, (args, out.stderr)
        assert message in out.stderr, (args, out.stderr)
        assert "not running" not in out.stderr
    assert lp.run([lp.CTL, "--help"]).stdout.startswith("Usage: linkprobectl")
    assert lp.run([lp.CTL, "--version"]).stdout.startswith("linkprobectl ")
