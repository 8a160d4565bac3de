# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobectl on a terminal and off it: the pager, widths, colour, JSON forms, patterns, empty states
and plurals, and the JSON schema (linkprobectl(1), JSON OUTPUT)."""

import json
import os
import re

import lp

ESC = "\x1b["


def setup_links(ns):
    ns.ip("link", "add", "cli0", "type", "veth", "peer", "name", "cli1")
    ns.ip("link", "set", "cli0", "up")
    ns.ip("link", "set", "cli1", "up")
    for i in range(6):
        ns.ip("addr", "add", f"10.72.{i}.1/24", "dev", "cli0")


def on_a_tty(bus, *args, env=None, columns=100):
    """linkprobectl with stdout (and stderr) on a pseudo-terminal; what the terminal showed."""
    full_env = {**os.environ, "TERM": "xterm", "COLUMNS": str(columns), **(env or {})}
    status, shown = lp.on_a_terminal([lp.CTL, f"--bus-address={bus.address}", *args], full_env)
    assert status == 0, shown
    return shown


def test_pager_only_on_a_terminal(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    plain = lp.ctl(bus, "list").stdout
    # A pipe is never paged, whatever $PAGER says.
    paged_env = {"PAGER": "sed s/^/PAGED:/", "SYSTEMD_PAGER": ""}
    assert lp.ctl(bus, "list", env={"PAGER": "sed s/^/PAGED:/"}).stdout == plain
    # On a terminal the pager gets the output; $SYSTEMD_PAGER comes first, "" or "cat" means none.
    shown = on_a_tty(bus, "list", env={"PAGER": "sed s/^/PAGED:/"})
    assert shown.splitlines()[0].startswith("PAGED:IDX"), shown
    shown = on_a_tty(bus, "list", env={"PAGER": "true", "SYSTEMD_PAGER": "sed s/^/SD:/"})
    assert shown.splitlines()[0].startswith("SD:IDX"), shown
    assert not on_a_tty(bus, "list", env=paged_env).startswith("PAGED")
    assert not on_a_tty(bus, "--no-pager", "list", env={"PAGER": "sed s/^/PAGED:/"}).startswith("PAGED")


def test_width_and_full(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    wide = lp.ctl(bus, "list").stdout
    assert "…" not in wide  # a pipe has no width unless $COLUMNS gives one
    narrow = lp.ctl(bus, "list", env={"COLUMNS": "70"}).stdout
    lines = [line for line in narrow.splitlines() if line]
    assert all(len(line) <= 70 for line in lines), narrow
    # The addresses give way; MTU, optional and a number (never cut), is left out whole
    # (test_cli_width.py checks every table verb at 60, 80 and 120 columns).
    assert "…" in narrow and lines[0].split() == ["IDX", "NAME", "KIND", "TYPE", "STATE", "CARRIER", "SPEED",
                                                  "ADDRESSES"]
    assert "65536" not in narrow and "10 Gb/s" in narrow
    full = lp.ctl(bus, "-l", "list", env={"COLUMNS": "70"}).stdout
    assert "…" not in full and "10.72.5.1/24" in full and "65536" in full  # --full: every column, whole
    assert "+5" in wide  # without it, the first two and how many more


def test_colour(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    assert ESC not in lp.ctl(bus, "list").stdout
    coloured = lp.ctl(bus, "--color=always", "list").stdout
    assert f"{ESC}0;32mup{ESC}0m" in coloured
    # Colour wraps the text, never the padding: the columns still line up.
    strip = re.sub(r"\x1b\[[0-9;]*m", "", coloured)
    assert strip == lp.ctl(bus, "list").stdout
    assert ESC not in lp.ctl(bus, "--color=never", "list").stdout
    # On a terminal colour is the default, unless NO_COLOR or TERM=dumb; --color=always wins over both.
    assert ESC in on_a_tty(bus, "--no-pager", "list")
    assert ESC not in on_a_tty(bus, "--no-pager", "list", env={"NO_COLOR": "1"})
    assert ESC not in on_a_tty(bus, "--no-pager", "list", env={"TERM": "dumb"})
    assert ESC in lp.ctl(bus, "--color=always", "list", env={"NO_COLOR": "1"}).stdout


def test_json_forms(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    short = lp.ctl(bus, "--json=short", "list").stdout
    pretty = lp.ctl(bus, "--json=pretty", "list").stdout
    assert short.count("\n") == 1 and pretty.count("\n") > 10
    assert json.loads(short) == json.loads(pretty) == json.loads(lp.ctl(bus, "--json", "list").stdout)
    assert lp.ctl(bus, "--json=off", "list").stdout == lp.ctl(bus, "list").stdout
    # On a terminal plain --json is pretty.
    assert on_a_tty(bus, "--no-pager", "--json", "list").count("\n") > 10


def test_list_patterns_show_all_and_plurals(netns, bus, daemon_factory):
    setup_links(netns)
    daemon_factory(netns)
    out = lp.ctl(bus, "list", "cli*", "lo")
    assert out.returncode == 0
    assert [line.split()[1] for line in out.stdout.splitlines()[1:4]] == ["lo", "cli1", "cli0"]
    assert [link["Name"] for link in json.loads(lp.ctl(bus, "--json", "list", "cli?").stdout)] == ["cli1", "cli0"]
    one = lp.ctl(bus, "list", "cli0").stdout
    assert one.splitlines()[-1] == "1 link listed."
    none = lp.ctl(bus, "list", "eth*")
    assert none.returncode == 0 and none.stdout == "No links match.\n"
    assert lp.ctl(bus, "--json", "list", "eth*").stdout.strip() == "[]"

    every = lp.ctl(bus, "show", "-a").stdout
    titles = [line for line in every.splitlines() if re.fullmatch(r"\d+: \S+", line)]
    assert [t.split()[1] for t in titles] == ["lo", "cli1", "cli0"], every
    assert lp.ctl(bus, "show").returncode == 2


def test_empty_states(netns, bus, daemon_factory, tmp_path):
    sys_dir = tmp_path / "sys"
    sys_dir.mkdir()
    daemon_factory(netns, args=[f"--sysfs-root={sys_dir}"])
    for verb, sentence in (("rdma", "No RDMA devices."), ("peers", "No peer paths."),
                           ("inhibitors", "No inhibitors."), ("thunderbolt", "No Thunderbolt/USB4 devices.")):
        out = lp.ctl(bus, verb)
        assert out.returncode == 0 and out.stdout == sentence + "\n", (verb, out.stdout)
        assert lp.ctl(bus, "--no-legend", verb).stdout == ""
        assert json.loads(lp.ctl(bus, "--json", verb).stdout) == []
    out = lp.ctl(bus, "gpu")
    assert out.returncode == 0 and out.stdout.startswith("No GPUs") and out.stdout.count("\n") == 1


def walk(value, path=""):
    """Every (path, key, value) in a JSON document."""
    if isinstance(value, dict):
        for k, v in value.items():
            yield path, k, v
            yield from walk(v, f"{path}.{k}")
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from walk(v, f"{path}[{i}]")


def check_schema(doc):
    for where, key, value in walk(doc):
        assert value != "/", f"{where}.{key} is '/', not null"
        if key.endswith("At"):
            assert value is None or re.fullmatch(r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{6}Z", value), (where, key)
        if key.endswith("AtUsec"):
            assert value is None or isinstance(value, int), (where, key)
        if isinstance(value, list):
            assert not any(isinstance(v, list) for v in value), f"{where}.{key} holds positional tuples"
        if isinstance(value, float):
            assert len(repr(value).split(".")[1]) <= 3, (where, key, value)


def test_json_schema(netns, bus, client, daemon_factory, tmp_path):
    empty = tmp_path / "no-probes"
    empty.mkdir()
    setup_links(netns)
    daemon_factory(netns, env={"LINKPROBE_PROBE_DIR": str(empty)})
    # The probe program cannot run, so the attempt is over (failed) as soon as it starts.
    assert lp.ctl(bus, "probe", "10.72.0.2").returncode == 1
    lp.wait_for(lambda: json.loads(lp.ctl(bus, "--json", "peers").stdout)[0]["LastAttemptAt"], what="an attempt",
                timeout=30)

    snapshot = json.loads(lp.ctl(bus, "snapshot").stdout)
    assert snapshot["Schema"] == 1
    assert snapshot["Time"].endswith("Z") and isinstance(snapshot["TimeUsec"], int)
    check_schema(snapshot)
    (peer,) = snapshot["Objects"]["Peer"]
    assert peer["LastAttemptAt"] and peer["LastAttemptAtUsec"] > 0
    assert peer["MeasuredAt"] is None and peer["MeasuredAtUsec"] is None  # never measured: null in both
    assert "FastestLink" in snapshot["Summary"] and isinstance(snapshot["Summary"]["DegradedLinks"], list)
    for verb in ("list", "peers", "status", "thunderbolt", "rdma", "gpu", "inhibitors"):
        check_schema(json.loads(lp.ctl(bus, "--json", verb).stdout))
    cli0 = json.loads(lp.ctl(bus, "--json", "show", "cli0").stdout)[0]
    assert cli0["ThunderboltPeer"] is None and cli0["RdmaPort"] is None

    # The peers table says why the last attempt failed.
    table = lp.ctl(bus, "peers").stdout
    assert table.splitlines()[0].split()[-2:] == ["LAST", "ERROR"] and table.splitlines()[1].split()[-1] == "spawn"


def test_ifb_kind_as_ip_names_it(netns, bus, daemon_factory):
    netns.ip("link", "add", "ifb7", "type", "ifb")
    daemon_factory(netns)
    (link,) = json.loads(lp.ctl(bus, "--json", "list", "ifb7").stdout)
    assert link["Kind"] == "ifb" and link["ConnectionType"] == "Virtual"
    assert lp.ctl(bus, "list", "ifb7").stdout.splitlines()[1].split()[2] == "ifb"
