# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobectl fabric ring / coordinator over clusters on paper: each node's snapshot written from a
description of its cables (fabric_paper.py), read with --snapshots. Rings with a known best answer, the
reasons there is none, the host file read back by a checker of MLX's format, and bad input. No root,
no network: test_fabric.py runs the same verbs on real nodes and a real Prometheus."""

import json
import os
import re
import subprocess

import pytest

import lp
from fabric_paper import Paper, check_mlx_hostfile


def ctl(*args, files=()):
    return subprocess.run([lp.CTL, "--no-pager", *args, *files], capture_output=True, text=True, timeout=60)


def ring(paper, tmp_path, *args, only=None):
    files = paper.write(str(tmp_path), only)
    out = ctl("fabric", "ring", "--snapshots", "--json", *args, files=files)
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout), out.stderr


def names(doc):
    return [r["Hostname"] for r in doc["Ranks"]]


def cyclic(order):
    """The ring as a tuple starting at its smallest name: rotations compare equal."""
    k = order.index(min(order))
    return tuple(order[k:] + order[:k])


def square(diagonals=True):
    p = Paper()
    for h in ("n1", "n2", "n3", "n4"):
        p.node(h)
    p.cable("n1", "e12", "n2", "e21", 10)
    p.cable("n2", "e23", "n3", "e32", 10)
    p.cable("n3", "e34", "n4", "e43", 1)  # the slow cable
    p.cable("n4", "e41", "n1", "e14", 10)
    if diagonals:
        p.cable("n1", "e13", "n3", "e31", 10)
        p.cable("n2", "e24", "n4", "e42", 10)
    return p


def test_square_with_one_slow_cable(tmp_path):
    doc, err = ring(square(), tmp_path)
    # Round the slow cable: n1 n3 n2 n4 (or backwards), at 10 Gb/s, exactly.
    assert cyclic(names(doc)) in (("n1", "n3", "n2", "n4"), ("n1", "n4", "n2", "n3"))
    assert doc["BottleneckGbps"] == 10 and doc["UpperBoundGbps"] == 10 and doc["Exact"] is True
    assert doc["Transport"] == "tcp" and doc["Width"] == 1 and doc["Warnings"] == []
    for hop in doc["Hops"]:
        (cable,) = hop["Cables"]
        assert hop["Gbps"] == 10 and cable["Measured"] and not cable["Stale"]
        assert re.fullmatch(r"10\.\d+\.\d+\.\d", cable["ToAddresses"][0]), cable
        assert cable["FromInterface"][1:] == hop["FromHostname"][1:] + hop["ToHostname"][1:]
    # Rank 0 is the coordinator, and the ring starts there.
    assert doc["Coordinator"] == doc["Ranks"][0]["NodeId"]
    # Without the diagonals there is no way round it.
    doc, _ = ring(square(diagonals=False), tmp_path)
    assert doc["BottleneckGbps"] == 1


def test_two_cables_between_a_pair(tmp_path):
    p = Paper()
    for h in ("a", "b", "c"):
        p.node(h)
    p.cable("a", "ab1", "b", "ba1", 40)
    p.cable("a", "ab2", "b", "ba2", 15)
    for x, y in (("b", "c"), ("c", "a")):
        p.cable(x, f"{x}{y}1", y, f"{y}{x}1", 25)
        p.cable(x, f"{x}{y}2", y, f"{y}{x}2", 25)
    doc, _ = ring(p, tmp_path)
    # One cable a hop: 25. Two, striped: min(2 x 15, 2 x 25) = 30.
    assert doc["Width"] == 2 and doc["BottleneckGbps"] == 30
    hop = next(h for h in doc["Hops"] if {h["FromHostname"], h["ToHostname"]} == {"a", "b"})
    assert sorted(c["Gbps"] for c in hop["Cables"]) == [15, 40] and hop["Gbps"] == 30
    text = ctl("fabric", "ring", "--snapshots", files=p.write(str(tmp_path))).stdout
    assert "2 cables a hop" in text and "30.00" in text
    # The ring backend connects once per address: two addresses at every rank, the same number.
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", files=p.write(str(tmp_path)))
    backend, hosts = check_mlx_hostfile(out.stdout)
    assert backend == "ring" and all(len(ips) == 2 for _, ips, _ in hosts)


def test_asymmetric_cable(tmp_path):
    p = Paper()
    for h in ("a", "b", "c"):
        p.node(h)
    # a -> b runs at 40 (both ends agree), b -> a at 5: the ring goes a b c, never a c b.
    p.cable("a", "ab", "b", "ba", 40, 5)
    p.cable("b", "bc", "c", "cb", 40)
    p.cable("c", "ca", "a", "ac", 40)
    doc, _ = ring(p, tmp_path)
    assert cyclic(names(doc)) == ("a", "b", "c") and doc["BottleneckGbps"] == 40
    hop = next(h for h in doc["Hops"] if h["FromHostname"] == "a")
    assert hop["ToHostname"] == "b" and hop["Gbps"] == 40


def test_node_with_a_single_cable(tmp_path):
    p = square()
    p.node("node05")
    p.cable("node05", "x", "n1", "e15", 100)
    out = ctl("fabric", "ring", "--snapshots", files=p.write(str(tmp_path)))
    assert out.returncode == 1 and out.stdout == ""
    assert "node05 has 1 cable, all to n1: a ring needs two neighbours at every node" in out.stderr, out.stderr
    # Without it, the others make a ring; named by hostname and by NodeId alike.
    doc, _ = ring(p, tmp_path, f"--nodes=n1,n2,{p['n3'].node_id},n4")
    assert sorted(names(doc)) == ["n1", "n2", "n3", "n4"]


def test_ties_broken_deterministically(tmp_path):
    def full_mesh(order):
        p = Paper()
        for h in order:
            p.node(h, node_id=f"{ord(h[1]):032x}")
        for i, x in enumerate(order):
            for y in order[i + 1:]:
                p.cable(x, f"{x}{y}", y, f"{y}{x}", 10)
        return p
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    first = ring(full_mesh(["n1", "n2", "n3", "n4", "n5"]), tmp_path / "a")[0]
    second = ring(full_mesh(["n5", "n3", "n1", "n4", "n2"]), tmp_path / "b")[0]
    assert names(first) == names(second) == ["n1", "n2", "n3", "n4", "n5"]
    assert [h["Cables"][0]["FromInterface"] for h in first["Hops"]] == ["n1n2", "n2n3", "n3n4", "n4n5", "n5n1"]


def test_stale_and_nominal_are_said(tmp_path):
    p = Paper()
    for h in ("a", "b", "c"):
        p.node(h)
    p.cable("a", "ab", "b", "ba", 10, stale=True, age_s=7200)
    p.cable("b", "bc", "c", "cb", 10)
    # Nothing measured between c and a: their Thunderbolt peers negotiated 40 Gb/s.
    p.cable("c", "ca", "a", "ac", 0, measured=False, thunderbolt=40)
    doc, err = ring(p, tmp_path)
    assert "stale" in err and "nominal rate counts" in err, err
    assert any("stale" in w for w in doc["Warnings"]) and any("nominal" in w for w in doc["Warnings"])
    nominal = next(h for h in doc["Hops"] if {h["FromHostname"], h["ToHostname"]} == {"a", "c"})
    assert nominal["Measured"] is False and nominal["Cables"][0]["NominalGbps"] == 40
    assert nominal["Cables"][0]["MeasuredGbps"] is None
    stale = next(h for h in doc["Hops"] if {h["FromHostname"], h["ToHostname"]} == {"a", "b"})
    assert stale["Stale"] is True and stale["MeasuredAtUsec"] > 0
    text = ctl("fabric", "ring", "--snapshots", files=p.write(str(tmp_path))).stdout
    assert "nominal" in text and "stale" in text


def test_rdma_and_the_jaccl_host_files(tmp_path):
    p = Paper()
    hosts = ("m1", "m2", "m3", "m4")
    for h in hosts:
        p.node(h)
    # A ring of Thunderbolt RDMA cables, and one diagonal with RDMA too; TCP slower everywhere.
    ring_pairs = [("m1", "m2"), ("m2", "m3"), ("m3", "m4"), ("m4", "m1")]
    for x, y in ring_pairs + [("m1", "m3")]:
        p.cable(x, f"en{y[1]}", y, f"en{x[1]}", 8, rdma=(f"rdma_en{y[1]}", f"rdma_en{x[1]}", 60 if (x, y) != ("m1", "m3") else 50, 80))
    doc, _ = ring(p, tmp_path)
    assert doc["Transport"] == "rdma" and doc["BottleneckGbps"] == 60
    assert all(h["Cables"][0]["FromRdmaDevice"] for h in doc["Hops"])
    files = p.write(str(tmp_path))
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", files=files)
    backend, mlx_hosts = check_mlx_hostfile(out.stdout)
    # Not every pair is cabled (m2-m4 is not): the ring backend of JACCL.
    assert backend == "jaccl-ring", out.stdout
    rank = {ssh: i for i, (ssh, _, _) in enumerate(mlx_hosts)}
    for i, (ssh, ips, rdma) in enumerate(mlx_hosts):
        nxt = mlx_hosts[(i + 1) % 4][0]
        assert rdma[rank[nxt]] == f"rdma_en{nxt[1]}"
    # The cabled pair off the ring is kept (JACCL needs it to split groups); m2 and m4 share nothing.
    m1 = mlx_hosts[rank["m1"]][2]
    assert m1[rank["m3"]] == "rdma_en3" and mlx_hosts[rank["m2"]][2][rank["m4"]] is None
    # The mesh backend needs every pair.
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", "--backend=jaccl", files=files)
    assert out.returncode == 1 and "share no RDMA cable" in out.stderr and "--backend=jaccl-ring" in out.stderr
    p.cable("m2", "en4", "m4", "en2", 8, rdma=("rdma_en4", "rdma_en2", 60, 80))
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", files=p.write(str(tmp_path)))
    assert check_mlx_hostfile(out.stdout)[0] == "jaccl"
    # Over TCP, the ring backend; and TCP asked for, TCP it is.
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", "--backend=ring", files=files)
    assert check_mlx_hostfile(out.stdout)[0] == "ring"
    doc = json.loads(ctl("fabric", "ring", "--snapshots", "--json", "--transport=tcp", files=files).stdout)
    assert doc["Transport"] == "tcp" and doc["BottleneckGbps"] == 8


def test_link_local_only_cable_and_the_ring_backend(tmp_path):
    p = Paper()
    for h in ("a", "b", "c"):
        p.node(h)
    p.cable("a", "tb0", "b", "tb1", 20, routable=False)
    p.cable("b", "bc", "c", "cb", 20)
    p.cable("c", "ca", "a", "ac", 20)
    files = p.write(str(tmp_path))
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", files=files)
    assert out.returncode == 1 and "only link-local addresses" in out.stderr, out.stderr
    # Interfaces named alike at both ends: the zone is the same string on both, and it works.
    p = Paper()
    for h in ("a", "b", "c"):
        p.node(h)
    p.cable("a", "tb0", "b", "tb0", 20, routable=False)
    p.cable("b", "bc", "c", "cb", 20)
    p.cable("c", "ca", "a", "ac", 20)
    out = ctl("fabric", "ring", "--snapshots", "--hostfile=mlx", files=p.write(str(tmp_path)))
    backend, hosts = check_mlx_hostfile(out.stdout)
    assert any(ip.startswith("fe80::") and ip.endswith("%tb0") for _, ips, _ in hosts for ip in ips), out.stdout


def test_coordinator(tmp_path):
    p = Paper()
    for h in ("a", "b", "c", "d", "hub"):
        p.node(h)
    for x, y in (("a", "b"), ("b", "c"), ("c", "d"), ("d", "a")):
        p.cable(x, f"{x}{y}", y, f"{y}{x}", 40)
    for x in ("a", "b", "c", "d"):
        p.cable("hub", f"h{x}", x, "up", 10)
    files = p.write(str(tmp_path))
    doc = json.loads(ctl("fabric", "coordinator", "--snapshots", "--json", files=files).stdout)
    assert doc["Hostname"] == "hub" and doc["WorstHops"] == 1 and doc["WorstGbps"] == 10
    assert {q["Hostname"]: q["Path"] for q in doc["Paths"]}["c"] == ["hub", "c"]
    text = ctl("fabric", "coordinator", "--snapshots", files=files).stdout
    assert "Rank 0 is hub" in text
    # The ring starts at it.
    doc = json.loads(ctl("fabric", "ring", "--snapshots", "--json", files=files).stdout)
    assert doc["Ranks"][0]["Hostname"] == "hub"
    # Without the hub: a square, everyone two hops from the far corner.
    doc = json.loads(ctl("fabric", "coordinator", "--snapshots", "--json", "--nodes=a,b,c,d", files=files).stdout)
    assert doc["WorstHops"] == 2 and doc["Hostname"] == "a"


@pytest.mark.parametrize("a_first", (True, False), ids=("a-read-first", "c-read-first"))
def test_the_end_that_measured_since_tells_a_changed_cable(tmp_path, a_first):
    """Cable a-c slowed down towards c: a measured it since (a -> c at 0.1 Gb/s, live), c's measurement is
    from before (10 both ways, stale). The live end's figures count, for the edge, the coordinator and
    the ring: b is rank 0, the only node fast both ways to both others, and the ring runs c -> a. The
    merge starts from the node with the lower NodeId: both ways round."""
    p = Paper()
    ids = {"a": "1" * 32, "b": "5" * 32, "c": "9" * 32}
    if not a_first:
        ids["a"], ids["c"] = ids["c"], ids["a"]
    for h in ("a", "b", "c"):
        p.node(h, node_id=ids[h])
    p.cable("a", "ab", "b", "ba", 10)
    p.cable("b", "bc", "c", "cb", 10)
    p.cable("a", "ac", "c", "ca", 0.1, 10, one_sided=True)
    p._measure(p["c"], "ca", p["a"], p["a"].links["ac"]["Addresses"][0]["Address"], 10, 10, stale=True, age_s=600)
    files = p.write(str(tmp_path))
    for order in (files, files[::-1]):
        doc = json.loads(ctl("fabric", "--snapshots", "--json", files=order).stdout)
        (edge,) = [e for e in doc["Edges"] if {e["FromInterface"], e["ToInterface"]} == {"ac", "ca"}]
        up = edge["UploadGbps"] if edge["FromInterface"] == "ac" else edge["DownloadGbps"]
        assert up == 0.1 and edge["Stale"] is False, edge
    coord = json.loads(ctl("fabric", "coordinator", "--snapshots", "--json", files=files).stdout)
    assert coord["Hostname"] == "b" and coord["WorstGbps"] == 10, coord
    doc, _ = ring(p, tmp_path)
    assert names(doc) == ["b", "c", "a"] and doc["BottleneckGbps"] == 10, doc


def test_dot(tmp_path):
    out = ctl("fabric", "ring", "--snapshots", "--dot", files=square().write(str(tmp_path)))
    lines = out.stdout.splitlines()
    assert lines[0] == "digraph ring {" and lines[-1] == "}"
    assert sum(" -> " in line for line in lines) == 4 and sum("label=\"0: " in line for line in lines) == 1


def test_many_nodes_search_and_bound(tmp_path):
    """Past 16 nodes the ring comes from a search, reported against the bound."""
    p = Paper()
    n = 24
    for i in range(n):
        p.node(f"n{i:02d}")
    for i in range(n):
        p.cable(f"n{i:02d}", f"r{i}", f"n{(i + 1) % n:02d}", f"l{(i + 1) % n}", 10 + i % 7)
    for i in range(0, n, 3):
        p.cable(f"n{i:02d}", f"c{i}", f"n{(i + 12) % n:02d}", f"k{i}", 30)
    doc, err = ring(p, tmp_path)
    assert doc["Exact"] is False and len(doc["Ranks"]) == n
    assert doc["UpperBoundGbps"] >= doc["BottleneckGbps"] >= 10
    assert sorted(names(doc)) == sorted(p.nodes)


def test_bad_input(tmp_path):
    files = square().write(str(tmp_path))
    out = ctl("fabric", "ring", "--snapshots", "--nodes=n1,nosuch", files=files)
    assert out.returncode == 1 and 'Unknown node "nosuch"' in out.stderr and "n1" in out.stderr
    # Two nodes with one NodeId (a cloned machine ID), or one node's file twice.
    p = square()
    p["n2"].node_id = p["n1"].node_id
    (tmp_path / "clash").mkdir()
    out = ctl("fabric", "ring", "--snapshots", files=p.write(str(tmp_path / "clash")))
    assert out.returncode == 1 and "two nodes with one NodeId" in out.stderr, out.stderr
    out = ctl("fabric", "ring", "--snapshots", files=files + files[:1])
    assert out.returncode == 1 and "snapshots of the same node" in out.stderr
    # Not a snapshot, not JSON, not there.
    (tmp_path / "junk.json").write_text('{"a": 1}')
    (tmp_path / "bad.json").write_text("{")
    for name, message in (("junk.json", "not the output of"), ("bad.json", "not JSON"), ("none.json", "Cannot read")):
        out = ctl("fabric", "ring", "--snapshots", files=[str(tmp_path / name)])
        assert out.returncode == 1 and message in out.stderr, out.stderr
    # Usage: found before anything is read.
    for args, message in ((["fabric", "ring"], "needs the whole cluster"),
                          (["fabric", "ring", "--snapshots"], "needs the files"),
                          (["fabric", "--hostfile=mlx", "--snapshots", *files], "belongs to fabric ring"),
                          (["fabric", "ring", "--hostfile=slurm"], "takes mlx"),
                          (["fabric", "ring", "--backend=nccl"], "ring, jaccl or jaccl-ring"),
                          (["fabric", "ring", "--snapshots", "--backend=ring", *files], "give --hostfile=mlx"),
                          (["fabric", "ring", "--snapshots", "--hostfile=mlx", "--json", *files], "do not apply"),
                          (["fabric", "ring", "--snapshots", "--prometheus=http://127.0.0.1:1", *files], "pick one"),
                          (["fabric", "rings", "--prometheus=http://127.0.0.1:1"], 'Unknown fabric command "rings"'),
                          (["fabric", "--nodes=a", "--snapshots", *files], "belongs to fabric ring"),
                          (["fabric", "ring", "--snapshots", "--hostfile=mlx", "--backend=ring", "--transport=rdma",
                            *files], "runs over tcp")):
        out = ctl(*args)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)


def test_prometheus_unreachable():
    out = ctl("fabric", "ring", "--prometheus=http://127.0.0.1:1/prom", "--timeout=2s")
    assert out.returncode == 1 and "Cannot query Prometheus at http://127.0.0.1:1/prom: Connection refused" in out.stderr
