# SPDX-License-Identifier: LGPL-2.1-or-later
"""Old and new TCP probe and responder measure each other: the wire stays compatible.

The old ends are built from git, from the last commit before the responder's side of a test
(PROTO_CAP_TEST_STATS, threads, MSG_TRUNC) came: the real programs of that time, not a flag that
imitates them. The build is kept in the build directory, so it is made once. Topology: A a0
10.204.1.1/24 ===veth=== B b0 10.204.1.2/24, an old and a new responder in B.
"""

import os
import shutil
import subprocess
import tempfile

import pytest

from linkprobe_net import PROBE_TCP, Namespaces, Responder, probe
from lp import BUILD

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
# The last commit whose probe and responder speak protocol version 1 without PROTO_CAP_TEST_STATS.
OLD_COMMIT = "4e660af"
B_ADDR = "10.204.1.2"
FAST = ["--duration", "300ms", "--samples", "20"]


def build_old():
    """The old probe and responder, built from OLD_COMMIT (once); skips when git cannot give it."""
    out = os.path.join(BUILD, f"compat-{OLD_COMMIT}")
    programs = [os.path.join(out, "build", p) for p in ("linkprobe-probe-tcp", "linkprobe-responder")]
    if all(os.path.exists(p) for p in programs):
        return programs
    if not shutil.which("git") or subprocess.run(["git", "-C", TOP, "cat-file", "-e", f"{OLD_COMMIT}^{{commit}}"],
                                                 capture_output=True).returncode != 0:
        pytest.skip(f"commit {OLD_COMMIT} is not in this checkout (a shallow clone?): no old programs to test")
    tmp = tempfile.mkdtemp(prefix="lp-compat-", dir=BUILD)
    try:
        archive = subprocess.run(["git", "-C", TOP, "archive", OLD_COMMIT], capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", tmp], input=archive, check=True)
        subprocess.run(["make", "-C", tmp, "-j2", "build/linkprobe-probe-tcp", "build/linkprobe-responder"],
                       capture_output=True, check=True, timeout=600)
        if os.path.exists(out):
            shutil.rmtree(out)
        os.rename(tmp, out)
    except BaseException:
        shutil.rmtree(tmp, ignore_errors=True)
        raise
    return programs


@pytest.fixture(scope="module")
def net():
    old_probe, old_responder = build_old()
    ns = Namespaces("A", "B")
    responders = []
    try:
        ns.veth(ns["A"], "a0", ns["B"], "b0")
        ns.addr(ns["A"], "a0", "10.204.1.1/24")
        ns.addr(ns["B"], "b0", f"{B_ADDR}/24")
        # The per-source rate limit is not under test: the probes here follow each other at once.
        unlimited = ["--rate", "1000", "--burst", "1000"]
        responders.append(Responder(ns["B"], f"{B_ADDR}:7471", *unlimited))
        responders.append(Responder(ns["B"], f"{B_ADDR}:7472", *unlimited, binary=old_responder, port=7472))
        yield {"A": ns["A"], "old_probe": old_probe}
    finally:
        for r in responders:
            print(r.stop())
        ns.close()


def check_measured(doc):
    assert doc["status"] == "ok", doc
    for direction in ("upload", "download"):
        assert doc[direction]["gbps"] > 0.1 and doc[direction]["bytes"] > 1_000_000, doc
    assert 0 < doc["rtt_usec"] < 20000, doc


@pytest.mark.parametrize("streams", ["1", "3", "0"])
def test_old_probe_new_responder(net, streams):
    rc, doc, err = probe(net["A"], net["old_probe"], *FAST, "--streams", streams, f"{B_ADDR}:7471")
    assert rc == 0, err
    check_measured(doc)
    if streams == "3":
        assert doc["upload_streams"] == 3 and doc["download_streams"] == 3, doc


@pytest.mark.parametrize("streams", ["1", "3", "0"])
def test_new_probe_old_responder(net, streams):
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--streams", streams, f"{B_ADDR}:7472")
    assert rc == 0, err
    check_measured(doc)
    if streams == "3":
        assert doc["upload_streams"] == 3 and doc["download_streams"] == 3, doc
    for direction in ("upload", "download"):
        cpu = doc[direction]["cpu"]
        # The old responder says nothing of its side; ours is there.
        assert "responder_usec" not in cpu and cpu["probe_usec"] > 0, doc
        assert doc[direction]["cross_traffic_gbps"] == 0, doc


def test_new_probe_new_responder_has_both_sides(net):
    rc, doc, err = probe(net["A"], PROBE_TCP, *FAST, "--streams", "2", f"{B_ADDR}:7471")
    assert rc == 0, err
    check_measured(doc)
    for direction in ("upload", "download"):
        cpu = doc[direction]["cpu"]
        assert cpu["responder_usec"] > 0 and cpu["responder_threads"] >= 1 and cpu["responder_cpus"] >= 1, doc
        assert cpu["probe_threads"] == min(2, cpu["probe_cpus"]), doc
    assert doc["host"]["interface"] == "a0" and doc["host"]["cpus"], doc
