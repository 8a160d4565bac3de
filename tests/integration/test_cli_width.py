# SPDX-License-Identifier: LGPL-2.1-or-later
"""Every table verb of linkprobectl at $COLUMNS=40, 60, 80 and 120 (linkprobectl(1), "Tables that do
not fit"): no line wider than the width, whatever the cells hold (a table whose essential columns do not
fit side by side becomes records), every essential column present, no cut cell narrower than its column's minimum, nothing cut that must stay whole, and
-l/--full showing every column whole.

The essential columns and the minimum widths below are what the views in src/ctl/linkprobectl-*.c
declare; a change there is a change of what a user sees, and belongs here too."""

import os
import subprocess

import pytest

import lp
import tbt_harness
from fabric_paper import Paper
from test_fabric import FakePrometheus
from test_gpu import FakeProbe, config as gpu_config, device, measurement
from test_health import FIXTURES, FLAP_NIC, HCA_PORT, HEALTH_LINKS, add_links as add_health_links, aer, \
    start as start_health
from test_pci import add_links, gpu_devices, load as load_pci, nvml_switched, start_gpu
from test_rdma import load as load_rdma
from test_tbt_net import TWO_DOCKS, add_link, wait_peer
from umockdev_testbed import start as start_in_testbed

WIDTHS = (40, 60, 80, 120)
WHOLE = 10 ** 6  # TEXT_WIDTH_WHOLE: never cut

# verb: (essential headers, {header: minimum width of a cut cell}); headers not named have the default 4
# (or their header's width, when wider).
VIEWS = {
    "list": (["IDX", "NAME", "STATE", "SPEED", "ADDRESSES"],
             {"NAME": WHOLE, "KIND": WHOLE, "TYPE": WHOLE, "STATE": 7, "ADDRESSES": 12}),
    "peers": (["ADDRESS", "UPLOAD", "DOWNLOAD", "RTT", "STATE", "LAST ERROR"],
              {"ADDRESS": WHOLE, "VIA": WHOLE, "TYPE": WHOLE, "MEASURED": WHOLE, "STATE": WHOLE, "LAST ERROR": 10}),
    "gpu": (["N", "NAME", "FP32", "BANDWIDTH", "STATE", "MEASURED"],
            {"NAME": 12, "TYPE": WHOLE, "STATE": WHOLE, "MEASURED": WHOLE}),
    "rdma": (["DEVICE", "PORT", "STATE", "RATE", "NETDEV"],
             {"DEVICE": WHOLE, "STATE": WHOLE, "PHYS STATE": WHOLE, "TRANSPORT": WHOLE, "LINK": WHOLE, "NETDEV": WHOLE,
              "GIDS": 12}),
    "thunderbolt": (["DEVICE", "NAME", "LINK RX/TX", "NOTES"],
                    {"DEVICE": WHOLE, "TYPE": WHOLE, "NAME": 10, "CLASS": WHOLE, "NOTES": 10}),
    "inhibitors": (["WHAT", "WHO", "WHY"], {"WHAT": WHOLE, "WHO": 10, "WHY": 10}),
    "fabric": (["FROM", "TO", "UP GB/S", "DOWN GB/S", "NOTES"],
               {"FROM": 10, "TO": 10, "TRANSPORT": WHOLE, "VIA": WHOLE, "NOTES": 10}),
    "fabric ring": (["RANK", "FROM", "GB/S", "VIA", "NOTES"],
                    {"FROM": 16, "TO": 16, "VIA": 16, "TO ADDRESS": 12, "MEASURED": WHOLE, "NOTES": 10}),
    "fabric coordinator": (["TO", "HOPS", "GB/S", "PATH"], {"TO": 16, "PATH": 16}),
    "health": (["OBJECT", "HEALTH", "REASON"], {"OBJECT": WHOLE, "HEALTH": WHOLE, "REASON": 10}),
}


def split_table(text):
    """The table at the top of text (up to its first empty line) as (header cells, rows of cells, lines):
    columns are where every line has at least two blanks in a row (the separator), which no cell holds."""
    lines = []
    for line in text.splitlines():
        if not line:
            break
        lines.append(line)
    width = max(len(line) for line in lines)
    padded = [line.ljust(width) for line in lines]
    blank = [all(line[i] == " " for line in padded) for i in range(width)]
    cuts, i = [], 0
    while i < width:
        if blank[i] and i + 1 < width and blank[i + 1]:
            j = i
            while j < width and blank[j]:
                j += 1
            cuts.append((i, j))
            i = j
        else:
            i += 1
    spans, start = [], 0
    for a, b in cuts:
        spans.append((start, a))
        start = b
    spans.append((start, width))
    cells = [[line[a:b].strip() for a, b in spans] for line in padded]
    return cells[0], cells[1:], lines


def split_records(text, all_headers):
    """The records at the top of text (a table too narrow for its essential columns, linkprobectl(1)):
    (headers of the first record, records as lists of (header, value), lines). A value wrapped onto
    lines of its own (indented) is joined again."""
    records, lines, current = [], [], None
    blocks = text.split("\n\n")
    for block in blocks:
        block_lines = block.splitlines()
        if not block_lines or block_lines[0].split("  ")[0] not in all_headers:
            break
        current = []
        for line in block_lines:
            lines.append(line)
            if line.startswith(" ") and current:
                name, value = current[-1]
                current[-1] = (name, value + line.strip())
                continue
            name = next(h for h in sorted(all_headers, key=len, reverse=True) if line.startswith(h + "  "))
            current.append((name, line[len(name):].strip()))
        records.append(current)
    assert records, f"neither a table nor records:\n{text}"
    return [name for name, _ in records[0]], records, lines


def is_records(text, all_headers):
    """A table's first line is its legend: every cell a header. A record's first line is a header and a
    value."""
    first = [cell for cell in text.splitlines()[0].split("  ") if cell.strip()] if text else []
    return bool(first) and not all(cell.strip() in all_headers for cell in first)


def check_table(text, verb, columns, all_headers):
    essential, minimum = VIEWS[verb]
    if is_records(text, all_headers):
        header, records, lines = split_records(text, all_headers)
        rows = [[value for _, value in record] for record in records]
        assert all([name for name, _ in record] == header for record in records), text
    else:
        header, rows, lines = split_table(text)
    too_wide = [line for line in lines if len(line) > columns]
    assert not too_wide, f"{verb} at {columns}:\n{text}"
    assert all(h in header for h in essential), f"{verb} at {columns} lost an essential column:\n{text}"
    # What is left out is left out whole, never a header cut; the order stays.
    assert [h for h in all_headers if h in header] == header, (verb, columns, header)
    for row in rows:
        for name, cell in zip(header, row):
            if cell.endswith("…"):
                assert len(cell) >= max(minimum.get(name, 4), len(name)) and minimum.get(name) != WHOLE, \
                    f"{verb} at {columns}: {name} cut to {cell!r}:\n{text}"
    return header


def check_verb(run, verb, *args):
    """run(*argv, env=) -> CompletedProcess. Checks verb (one of VIEWS: "fabric ring" is two words) at
    every width and with --full."""
    full = run(*verb.split(), *args, "--full", env={"COLUMNS": "60"})
    assert full.returncode == 0, full.stderr
    all_headers, _, _ = split_table(full.stdout)
    assert "…" not in full.stdout.split("\n\n")[0], full.stdout
    shown = {}
    for columns in WIDTHS:
        out = run(*verb.split(), *args, env={"COLUMNS": str(columns)})
        assert out.returncode == 0, out.stderr
        print(f"$ COLUMNS={columns} linkprobectl {verb}\n{out.stdout}")
        shown[columns] = check_table(out.stdout, verb, columns, all_headers)
    # Wider never shows fewer columns.
    assert len(shown[40]) <= len(shown[60]) <= len(shown[80]) <= len(shown[120]), shown
    return shown


def ctl_runner(bus):
    return lambda *args, env=None: lp.ctl(bus, *args, env=env)


def test_list(netns, bus, daemon_factory):
    netns.ip("link", "add", "wide-name-veth0", "type", "veth", "peer", "name", "cli1")
    for name in ("wide-name-veth0", "cli1"):
        netns.ip("link", "set", name, "up")
    for i in range(6):
        netns.ip("addr", "add", f"10.72.{i}.1/24", "dev", "wide-name-veth0")
    daemon_factory(netns)
    shown = check_verb(ctl_runner(bus), "list")
    assert shown[120] == ["IDX", "NAME", "KIND", "TYPE", "STATE", "CARRIER", "SPEED", "MTU", "ADDRESSES"]


def test_peers(netns, bus, daemon_factory):
    config = ("[Responder]\nListen=127.0.0.1:7471\n"
              "[Reconciler]\nTcpDurationSec=200ms\nTcpSamples=10\n")
    daemon_factory(netns, config=config)
    assert lp.ctl(bus, "probe", "127.0.0.1").returncode == 0
    assert lp.ctl(bus, "probe", "127.0.0.2").returncode == 1  # nobody listens there
    shown = check_verb(ctl_runner(bus), "peers")
    # At 60 the essentials and nothing that would not fit; at 120 everything.
    assert "MEASURED" not in shown[60] and len(shown[120]) == 11


def test_peers_with_long_figures(bus, daemon_factory, tmp_path):
    """Figures no loopback run gives: a 3.2 Tb/s upload, a 12-digit RTT, a long error. Planted in the state
    file as measured just now (so the TTL holds them and nothing probes): every width must still fit."""
    import json
    import time

    now = int(time.time() * 1e6)
    path = {"transport": "tcp", "peer": "127.0.0.1", "adhoc": True, "state": "failed", "measured_at": now,
            "last_attempt_at": now, "upload_gbps": 3211.87, "download_gbps": 0.000123, "rtt_usec": 123456789012.5,
            "jitter_usec": 98765.4, "upload_streams": 64, "download_streams": 64, "source_interface": "lo",
            "connection_type": "Loopback", "error": "protocol",
            "error_message": "the responder answered a frame of 4294967295 bytes, more than the 65536 allowed"}
    paths = [dict(path, address=address) for address in ("127.0.0.1", "127.0.0.2:65535", "[::1]:7471")]
    state = tmp_path / "state"
    state.mkdir()
    (state / "peers.json").write_text(json.dumps({"version": 1, "paths": paths}))
    daemon_factory(config="[Reconciler]\nTcpTtlSec=1h\n", state_dir=str(state))
    lp.wait_for(lambda: lp.ctl(bus, "peers").stdout.count("3211") >= 3, what="the planted paths")
    check_verb(ctl_runner(bus), "peers")


def test_gpu(bus, daemon_factory):
    fake = FakeProbe()
    try:
        pocl = device("pci:pocl@Portable Computing Language",
                      "pthread-skylake-avx512-Intel(R) Xeon(R) CPU @ 2.60GHz", type="cpu", compute_units=2,
                      max_clock_mhz=2600, global_memory_bytes=7 << 30)
        fake.set(devices=[pocl], measurements={pocl["key"]: measurement(8.4, 225.0)})
        daemon_factory(gpu=True, env=fake.env(), config=gpu_config())
        lp.wait_for(lambda: "ok" in lp.ctl(bus, "gpu").stdout, what="a measured GPU", timeout=20)
        shown = check_verb(ctl_runner(bus), "gpu")
        # The 80-column terminal of the report: the name readable, the line within 80.
        out = lp.ctl(bus, "gpu", env={"COLUMNS": "80"}).stdout
        assert "pthread-skylake" in out and "TYPE" in shown[80] and "cpu" in out, out
    finally:
        fake.remove()


def test_rdma(netns, bus, daemon_factory, testbed):
    load_rdma(testbed, "cx6-ib-hdr", "cx6-ib-polling", "cx5-roce", "rxe-virtio")
    start_in_testbed(daemon_factory, netns, testbed)
    check_verb(ctl_runner(bus), "rdma")


@pytest.mark.skipif(bool(tbt_harness.missing_tools(boltd=False)), reason=str(tbt_harness.missing_tools(boltd=False)))
def test_thunderbolt(live_bed, netns, bus, client, daemon_factory):
    bed = live_bed(TWO_DOCKS)
    add_link(netns, "thunderbolt0", 6)
    start_in_testbed(daemon_factory, netns, bed)
    wait_peer(client, "0-30301", client.link_by_name("thunderbolt0")["Path"])
    shown = check_verb(ctl_runner(bus), "thunderbolt")
    assert shown[120][0] == "DEVICE" and "CLASS" in shown[120]


def test_inhibitors(bus, daemon_factory):
    daemon_factory()
    held = subprocess.Popen([lp.CTL, f"--bus-address={bus.address}", "inhibit", "--what=gpu:rdma",
                             "--who=a benchmark with a long name",
                             "--why=measuring the all-reduce bandwidth of the whole ring, do not disturb",
                             "--", "sleep", "60"])
    try:
        lp.wait_for(lambda: "benchmark" in lp.ctl(bus, "inhibitors").stdout, what="the inhibitor")
        check_verb(ctl_runner(bus), "inhibitors")
    finally:
        lp.stop_process(held)


def test_fabric(netns):
    a, b = "a" * 32, "b" * 32
    gbps = 1e9 / 8
    series = {
        "linkprobe_node_identity_info": [({"node_id": a, "nodename": "compute-node-a.cluster.example"}, 1),
                                         ({"node_id": b, "nodename": "compute-node-b.cluster.example"}, 1)],
        "linkprobe_neighbor_info": [({"node_id": a, "neighbor_id": b, "neighbor_hostname": "compute-node-b"}, 1)],
        "linkprobe_edge_upload_bytes": [({"node_id": a, "neighbor_id": b, "transport": "tcp", "interface": "enp65s0f0"},
                                         40 * gbps),
                                        ({"node_id": b, "neighbor_id": a, "transport": "tcp", "interface": "enp65s0f1"},
                                         20 * gbps)],
        "linkprobe_edge_download_bytes": [({"node_id": a, "neighbor_id": b, "transport": "tcp",
                                            "interface": "enp65s0f0"}, 20 * gbps),
                                          ({"node_id": b, "neighbor_id": a, "transport": "tcp",
                                            "interface": "enp65s0f1"}, 20 * gbps)],
        "linkprobe_edge_rtt_seconds": [({"node_id": a, "neighbor_id": b, "transport": "tcp", "interface": "enp65s0f0"},
                                        50e-6)],
    }
    fake = FakePrometheus(netns.name, series)
    try:
        def run(*args, env=None):
            command = ["env", *(f"{k}={v}" for k, v in (env or {}).items()), lp.CTL, *args]
            return lp.run(netns.exec_cmd(command), check=False)
        shown = check_verb(run, "fabric", f"--prometheus={fake.url}")
        assert "SEEN FROM" in shown[120]
    finally:
        fake.close()


def test_fabric_ring_and_coordinator(tmp_path):
    """A ring of four nodes with long hostnames, from their snapshots: a hop over two cables (RDMA), one
    stale, one at a Thunderbolt link's nominal rate over link-local addresses, one measured an hour ago."""
    p = Paper()
    hosts = [f"gpu-node-{i:02}.cluster.example" for i in range(1, 5)]
    for h in hosts:
        p.node(h)
    p.cable(hosts[0], "enp65s0f0np0", hosts[1], "enp65s0f0np0", 90, rdma=("mlx5_0", "mlx5_0", 180, 200))
    p.cable(hosts[0], "enp65s0f1np1", hosts[1], "enp65s0f1np1", 85, rdma=("mlx5_1", "mlx5_1", 170, 200))
    p.cable(hosts[1], "enp66s0f0np0", hosts[2], "enp66s0f0np0", 40, stale=True, age_s=600)
    p.cable(hosts[2], "thunderbolt0", hosts[3], "thunderbolt0", 0, measured=False, thunderbolt=40, routable=False)
    p.cable(hosts[3], "enp67s0f0", hosts[0], "enp67s0f0", 25, age_s=3600)
    files = p.write(str(tmp_path))

    def run(*args, env=None):
        return lp.run([lp.CTL, *args], check=False, env=dict(os.environ, **(env or {})), timeout=60)
    shown = check_verb(run, "fabric ring", "--snapshots", *files)
    # At 60 the ring's order, speeds, cables and notes; TO (the next rank's FROM) goes first.
    assert shown[60] == ["RANK", "FROM", "GB/S", "VIA", "NOTES"], shown
    assert shown[120] == ["RANK", "FROM", "TO", "GB/S", "VIA", "TO ADDRESS", "MEASURED", "NOTES"], shown
    out = run("fabric", "ring", "--snapshots", *files, env={"COLUMNS": "80"}).stdout
    assert "gpu-node-01.clu" in out and "stale" in out and "nominal" in out, out
    check_verb(run, "fabric coordinator", "--snapshots", *files)
    # Each path from rank 0, which the footer names: the table starts at the arrow.
    out = run("fabric", "coordinator", "--snapshots", *files, env={"COLUMNS": "120"}).stdout
    assert "  → gpu-node-" in out and "Rank 0 is gpu-node-" in out, out


def test_health(netns, bus, client, daemon_factory, testbed):
    """Objects that are not ok, with long reasons: a NIC with AER errors, an InfiniBand port with symbol
    errors (under umockdev, as test_health.py makes them) and a link whose carrier flaps."""
    testbed.add_from_file(os.path.join(FIXTURES, "health.umockdev"))
    add_health_links(netns, HEALTH_LINKS)
    netns.ip("link", "add", "flapping-veth0", "type", "veth", "peer", "name", "flap1")
    netns.ip("link", "set", "flapping-veth0", "up")
    start_health(daemon_factory, netns, testbed)
    testbed.set_attribute(FLAP_NIC, "aer_dev_correctable", aer(37, receiver=30))
    testbed.set_attribute(FLAP_NIC, "aer_dev_fatal", aer(1, severity="FATAL"))
    testbed.set_attribute(HCA_PORT + "/ports/1/counters", "symbol_error", "250\n")
    for _ in range(3):
        netns.ip("link", "set", "flap1", "up")
        lp.wait_for(lambda: client.link_by_name("flapping-veth0")["Carrier"], 5, "carrier")
        netns.ip("link", "set", "flap1", "down")
        lp.wait_for(lambda: not client.link_by_name("flapping-veth0")["Carrier"], 5, "no carrier")
    wanted = ("pci 0000:41:00.0", "rdma mlx5_0/1", "link flapping-veth0")
    lp.wait_for(lambda: all(w in lp.ctl(bus, "health").stdout for w in wanted), 15, "three objects not ok")
    shown = check_verb(ctl_runner(bus), "health")
    assert shown[60] == shown[120] == ["OBJECT", "HEALTH", "REASON"]


def test_topo(netns, bus, client, daemon_factory, testbed):
    """The matrix cannot be cut: what does not fit is the CPU list, left out whole; what is left is as
    wide as it must be, never cut."""
    fake = FakeProbe()
    try:
        load_pci(testbed, "server-8gpu")
        add_links(netns, {"eno1": 10, "ibp25s0": 11})
        fake.set(devices=gpu_devices()[:2], measurements={}, nvml=nvml_switched())
        start_gpu(daemon_factory, netns, testbed, fake)
        lp.wait_for(lambda: lp.ctl(bus, "topo").stdout.count("GPU") >= 4, what="the GPUs in the matrix")
        full = lp.ctl(bus, "topo", "--full", env={"COLUMNS": "60"}).stdout
        full_header, _, _ = split_table(full)
        for columns in WIDTHS:
            out = lp.ctl(bus, "topo", env={"COLUMNS": str(columns)}).stdout
            header, rows, lines = split_table(out)
            assert "…" not in "\n".join(lines), out
            if any(len(line) > columns for line in lines):
                assert header == [h for h in full_header if h != "CPU AFFINITY"], out
            else:
                assert header in (full_header, [h for h in full_header if h != "CPU AFFINITY"]), out
    finally:
        fake.remove()


def test_width_zero_and_pipes_are_unlimited(netns, bus, daemon_factory):
    """$COLUMNS=0, or a pipe without $COLUMNS: no limit, every column whole."""
    netns.ip("link", "add", "cli0", "type", "veth", "peer", "name", "cli1")
    for i in range(6):
        netns.ip("addr", "add", f"10.72.{i}.1/24", "dev", "cli0")
    daemon_factory(netns)
    plain = lp.ctl(bus, "list").stdout
    assert "…" not in plain and lp.ctl(bus, "list", env={"COLUMNS": "0"}).stdout == plain
    assert split_table(plain)[0] == ["IDX", "NAME", "KIND", "TYPE", "STATE", "CARRIER", "SPEED", "MTU", "ADDRESSES"]
