# SPDX-License-Identifier: LGPL-2.1-or-later
"""Pictures: `linkprobectl topo --svg/--png` draws the node the daemon publishes, `fabric --svg` the
cluster from snapshots. For every umockdev testbed in the tree (tests/fixtures/pci, rdma and
thunderbolt, and pci/realdata-*: real machines' sysfs from shared/realdata) the SVG must be well-formed
XML (xmllint --noout), render (rsvg-convert), and say in text every published device's name, every PCIe
link's speed and width, and every Health that is not ok with its reason. The pictures are kept in
$LINKPROBE_BUILD/pictures/ to be looked at."""

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import time
import xml.etree.ElementTree as ET

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import lp  # noqa: E402
from lp import wait_for  # noqa: E402

FIXTURES = os.path.join(lp.TOP, "tests", "fixtures")
TESTBEDS = sorted(os.path.relpath(p, FIXTURES) for kind in ("pci", "rdma", "thunderbolt")
                  for p in glob.glob(os.path.join(FIXTURES, kind, "*.umockdev")))
KINDS = ("Pci", "Link", "RdmaPort", "Gpu", "Thunderbolt")
SVG = "{http://www.w3.org/2000/svg}"
TOOLS = [t for t in ("xmllint", "rsvg-convert") if not shutil.which(t)]
pytestmark = pytest.mark.skipif(bool(TOOLS), reason=f"{' and '.join(TOOLS)} missing (make deps installs them)")


def picture_dir():
    d = os.path.join(os.environ.get("LINKPROBE_BUILD", os.path.join(lp.TOP, "build")), "pictures")
    os.makedirs(d, exist_ok=True)
    return d


def netdevs(path):
    """The interfaces a fixture's sysfs holds (…/net/NAME, with the ifindex it gives), for links of the
    same names and numbers: the daemon finds an interface's device by both."""
    with open(path, errors="replace") as f:
        records = f.read().split("\n\n")
    found, spare = {}, 200
    for record in records:
        name = re.search(r"^P: \S*/net/([^/\s]+)$", record, re.M)
        if not name or len(name[1]) > 15 or not re.fullmatch(r"[\w.-]+", name[1]) or name[1] in found:
            continue
        index = re.search(r"^A: ifindex=(\d+)", record, re.M)
        if index and int(index[1]) > 1 and int(index[1]) not in found.values():
            found[name[1]] = int(index[1])
        else:
            found[name[1]] = spare
            spare += 1
    return found


def objects(client):
    found = {}
    for path, props in client.objects().items():
        for kind in KINDS:
            if lp.IFACE + kind in props:
                found[path] = (kind, dict(props[lp.IFACE + kind]))
    return found


def texts(svg):
    """Every line of text the picture shows, as one string (a wrapped reason is whole again)."""
    root = ET.fromstring(svg)
    return " ".join(t.text or "" for t in root.iter(SVG + "text"))


def check_valid(svg_path):
    lint = lp.run(["xmllint", "--noout", svg_path], check=False)
    assert lint.returncode == 0, lint.stderr
    png = svg_path[:-4] + ".png"
    render = lp.run(["rsvg-convert", "-o", png, svg_path], check=False)
    assert render.returncode == 0, render.stderr
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def expected_words(found):
    """What the picture must say: names, PCIe link figures, Health that is not ok and its reason."""
    words = []
    for kind, p in found.values():
        if kind == "Pci":
            words.append(p["Address"])
            # A link's figures are the lower end's (a root port's are those of the link below it).
            if p["CurrentLinkSpeed"] > 0 and p["CurrentLinkWidth"] > 0 and p["PortType"] != "root-port":
                words.append(f"{p['CurrentLinkSpeed']:.1f} GT/s x{p['CurrentLinkWidth']}")
        elif kind == "Link":
            if p["Kind"] != "loopback":
                words.append(p["Name"])
        elif kind == "RdmaPort":
            words.append(f"{p['Device']} port {p['Port']}")
        elif kind == "Gpu":
            words.append(p["Name"])
        else:
            words.append(p["SysfsName"])
        health = p.get("Health")
        if health and health != "ok" and (kind != "Link" or p["Kind"] != "loopback"):
            words.append(f"Health: {health}" + (f": {p['HealthReason']}" if p.get("HealthReason") else ""))
    return words


def package_words(node):
    """What the picture says of each CPU package and NUMA node (Node.Packages, Node.NumaNodes)."""
    words = []
    for pid, cpus, cores, _ in node["Packages"]:
        words.append(f"Package {pid}: {cores} {'core' if cores == 1 else 'cores'}, CPUs {cpus}")
    for nid, cpus in node["NumaNodes"]:
        words.append(f"NUMA node {nid}, CPUs {cpus}" if cpus else f"NUMA node {nid}, no CPUs")
    return words


def assert_packages_frame_numa_nodes(svg, node):
    """Graphviz writes a cluster's drawing as <g id="clustN" class="cluster"><title>cluster_NAME</title>…:
    each NUMA node's frame lies inside its package's (lstopo's nesting), checked on the frames' boxes."""
    root = ET.fromstring(svg)
    boxes = {}
    for g in root.iter(SVG + "g"):
        title = g.find(SVG + "title")
        shape = g.find(SVG + "path") if g.find(SVG + "path") is not None else g.find(SVG + "polygon")
        if g.get("class") == "cluster" and title is not None and shape is not None:
            numbers = [float(x) for x in re.findall(r"-?\d+(?:\.\d+)?", shape.get("d") or shape.get("points"))]
            xs, ys = numbers[0::2], numbers[1::2]
            boxes[title.text] = (min(xs), min(ys), max(xs), max(ys))
    for pid, _, _, numa_nodes in node["Packages"]:
        outer = boxes[f"cluster_package{pid}"]
        for nid in numa_nodes:
            inner = boxes[f"cluster_numa{nid}"]
            assert outer[0] <= inner[0] and outer[1] <= inner[1] and inner[2] <= outer[2] and inner[3] <= outer[3], \
                (pid, nid, outer, inner)


def draw(bus, client, name):
    """The picture as the daemon stands (asked again if the objects moved meanwhile): (svg, objects)."""
    for _ in range(5):
        before = objects(client)
        out = lp.ctl(bus, "topo", "--svg")
        assert out.returncode == 0, out.stderr
        if objects(client) == before:
            break
    path = os.path.join(picture_dir(), name + ".svg")
    with open(path, "w") as f:
        f.write(out.stdout)
    check_valid(path)
    return out.stdout, before


def normalise(s):
    return re.sub(r"\s+", " ", s)


def as_machine(proc, tmp_path):
    """linkprobed as it runs on the machine whose /proc files (cpuinfo, meminfo, stat), online CPUs and
    hostname are in proc: a script run inside the daemon's own mount namespace (ip netns exec makes one) that mounts
    them over this machine's and names a UTS namespace of its own."""
    script = os.path.join(tmp_path, "linkprobed-as-machine")
    with open(proc + "/hostname") as f:
        hostname = f.read().strip()
    binds = "".join(f"mount --bind '{proc}/{name}' /proc/{name}\n" for name in ("cpuinfo", "meminfo", "stat"))
    binds += f"mount --bind '{proc}/cpu-online' /sys/devices/system/cpu/online\n"
    with open(script, "w") as f:
        f.write(f"#!/bin/sh\nset -e\n{binds}exec unshare --uts sh -c 'hostname {hostname} && exec \"$0\" \"$@\"' "
                f"'{lp.DAEMON}' \"$@\"\n")
    os.chmod(script, 0o755)
    return script


@pytest.mark.parametrize("fixture", TESTBEDS)
def test_node_picture(fixture, netns, bus, client, daemon_factory, testbed, tmp_path):
    path = os.path.join(FIXTURES, fixture)
    testbed.add_from_file(path)
    for name, index in netdevs(path).items():
        netns.ip("link", "add", name, "index", str(index), "type", "ifb")
        netns.ip("link", "set", name, "up")
    # The real machines are drawn as a person would see them: watched, so every Health is judged, and
    # with their own hostname, CPUs and memory (realdata-*.proc).
    real = os.path.basename(fixture).startswith("realdata-")
    daemon_factory(netns, prefix=["umockdev-wrapper"], env=testbed.env(), args=[f"--sysfs-root={testbed.sys}"],
                   watch=real, config="[Watch]\nIntervalSec=1s\n" if real else None,
                   program=as_machine(path[:-len(".umockdev")] + ".proc", tmp_path) if real else None)
    wait_for(lambda: objects(client), what="the daemon's objects")
    if real:
        wait_for(lambda: all(p.get("Health") != "unknown" for _, p in objects(client).values()),
                 timeout=20, what="every Health judged")
    name = fixture.replace("/", "-")[:-len(".umockdev")]
    svg, found = draw(bus, client, name)
    shown = normalise(texts(svg))
    missing = [w for w in expected_words(found) if normalise(w) not in shown]
    assert not missing, (missing, shown)
    # The CPU packages (sysfs' cpuN/topology, in the real trees) frame their NUMA nodes, as lstopo draws.
    node = client.get_all("Node")
    words = package_words(node)
    assert not [w for w in words if normalise(w) not in shown], (words, shown)
    assert bool(node["Packages"]) == real, node["Packages"]
    if real:
        assert_packages_frame_numa_nodes(svg, node)
        # The text says the same under the matrix, a line per package.
        out = lp.ctl(bus, "topo")
        assert out.returncode == 0, out.stderr
        for pid, cpus, cores, numa_nodes in node["Packages"]:
            line = rf"^\s*{pid}\s+{re.escape(cpus)}\s+{cores}\s+{','.join(map(str, numa_nodes))}\s*$"
            assert re.search(line, out.stdout, re.M), (line, out.stdout)
        assert f"{len(node['Packages'])} packages listed." in out.stdout, out.stdout
        # The PNG, as linkprobectl makes it (Graphviz's cairo renderer): kept beside the SVG.
        png = os.path.join(picture_dir(), name + ".png")
        out = lp.ctl(bus, "topo", "--png", f"--output={png}")
        assert out.returncode == 0 and out.stdout == "", out.stderr
        with open(png, "rb") as f:
            assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_fabric_picture(tmp_path):
    """fabric --svg from the nodes' snapshots: every node by its hostname, every edge with its measured
    rates; a hostname with markup shows as it is, in a well-formed document; --png writes a PNG."""
    from fabric_paper import Paper

    p = Paper()
    evil = '<b>&amp;"n4"'
    for h in ("n1", "n2", "n3", evil):
        p.node(h)
    p.cable("n1", "e12", "n2", "e21", 10)
    p.cable("n2", "e23", "n3", "e32", 25, 20)
    p.cable("n3", "e34", evil, "e43", 1)
    files = p.write(str(tmp_path))
    out = lp.run([lp.CTL, "fabric", "--snapshots", "--svg", *files], check=False)
    assert out.returncode == 0, out.stderr
    path = os.path.join(picture_dir(), "fabric-snapshots.svg")
    with open(path, "w") as f:
        f.write(out.stdout)
    check_valid(path)
    shown = normalise(texts(out.stdout))
    edges = json.loads(lp.run([lp.CTL, "fabric", "--snapshots", "--json", *files]).stdout)["Edges"]
    assert len(edges) == 3
    for e in edges:
        assert f"↑ {e['UploadGbps']:.2f} ↓ {e['DownloadGbps']:.2f} Gb/s" in shown, (e, shown)
    for h in ("n1", "n2", "n3", evil):
        assert h in shown, (h, shown)

    png = os.path.join(picture_dir(), "fabric-snapshots.png")
    out = lp.run([lp.CTL, "fabric", "--snapshots", "--png", f"--output={png}", *files], check=False)
    assert out.returncode == 0 and out.stdout == "", out.stderr
    with open(png, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"


def test_empty_node_and_markup(netns, bus, client, daemon_factory, testbed):
    """Nothing published but a virtual link whose name is markup: a valid picture that names it as it
    is, and says what is missing. The PNG goes to a pipe as well as to a file."""
    name = 'x<&"y>'
    netns.ip("link", "add", name, "type", "ifb")
    daemon_factory(netns, prefix=["umockdev-wrapper"], env=testbed.env(), args=[f"--sysfs-root={testbed.sys}"])
    wait_for(lambda: any(p.get("Name") == name for _, p in objects(client).values()), what="the link")
    svg, _ = draw(bus, client, "markup")
    shown = normalise(texts(svg))
    assert name in shown and "Not behind a PCI function" in shown, shown
    assert "&lt;&amp;&quot;" in svg or "&lt;&amp;\"" in svg

    png = subprocess.run([lp.CTL, f"--bus-address={bus.address}", "topo", "--png"], capture_output=True, timeout=120)
    assert png.returncode == 0 and png.stdout[:8] == b"\x89PNG\r\n\x1a\n", png.stderr


def test_thousands_of_links(netns, bus, client, daemon_factory, testbed):
    """A host with 1500 virtual links: the picture draws a readable part of them, counts the rest in
    words, and takes seconds, not minutes."""
    n = 1500
    netns.batch([f"link add lpv{i} type ifb" for i in range(n)])
    daemon_factory(netns, prefix=["umockdev-wrapper"], env=testbed.env(), args=[f"--sysfs-root={testbed.sys}"])
    wait_for(lambda: len(objects(client)) >= n, timeout=60, what=f"{n} links")
    started = time.monotonic()
    svg, found = draw(bus, client, "thousands")
    took = time.monotonic() - started
    shown = normalise(texts(svg))
    drawn = sum(1 for i in range(n) if re.search(rf"\blpv{i}\b", shown))
    assert 0 < drawn < n
    assert f"Left out to keep the picture readable: {n - drawn} network links" in shown, shown[-400:]
    assert took < 60, took


def test_bad_input(tmp_path, bus):
    """No daemon, a file that cannot be written, and options that do not go together: a sentence on
    stderr, nothing on stdout, exit 1 (failure) or 2 (usage)."""
    def ctl(*args, **kw):
        return lp.run([lp.CTL, f"--bus-address={bus.address}", *args], check=False, **kw)

    # The bus is there, linkprobed is not.
    out = ctl("topo", "--svg")
    assert out.returncode == 1 and out.stdout == "" and "not running" in out.stderr, out
    # No bus at all.
    out = lp.run([lp.CTL, f"--bus-address=unix:path={tmp_path}/none", "topo", "--svg"], check=False)
    assert out.returncode == 1 and out.stdout == "" and "Cannot connect" in out.stderr, out
    # Where the picture cannot go: said before the daemon is asked (it is not running here either).
    for target, words in ((f"{tmp_path}/no/such/dir/x.svg", "No such file or directory"),
                          (str(tmp_path), "is a directory")):
        out = ctl("topo", "--svg", f"--output={target}")
        assert out.returncode == 1 and out.stdout == "" and "Cannot write the picture to" in out.stderr, out
        assert words in out.stderr, out.stderr
    assert not os.listdir(tmp_path)
    for args, words in ((("topo", "--output=x.svg"), "--output="),
                        (("list", "--svg"), "--svg and --png draw"),
                        (("topo", "--svg", "--json"), "pick one"),
                        (("topo", "--svg", "--png"), "pick one"),
                        (("fabric", "ring", "--snapshots", "f", "--svg"), "print no picture")):
        out = ctl(*args)
        assert out.returncode == 2 and out.stdout == "" and words in out.stderr, (args, out)
    # A PNG is not for a terminal.
    status, shown = lp.on_a_terminal([lp.CTL, f"--bus-address={bus.address}", "topo", "--png"])
    assert status == 2 and "not for a terminal" in shown, shown


def test_gpus_and_thunderbolt_peers(netns, bus, client, daemon_factory, testbed):
    """GPUs (from the GPU probe) hang off their PCI functions, joined by their NVLinks, and a
    thunderbolt-net link off the peer host it reaches: the lines of the picture say so (an SVG edge's
    title names both ends)."""
    from test_pci import gpu_devices, nvml_switched, start_gpu, FakeProbe

    testbed.add_from_file(os.path.join(FIXTURES, "pci", "server-8gpu.umockdev"))
    testbed.add_from_file(os.path.join(FIXTURES, "thunderbolt", "tb4-dock-peer.umockdev"))
    for fixture in ("pci/server-8gpu.umockdev", "thunderbolt/tb4-dock-peer.umockdev"):
        for name, index in netdevs(os.path.join(FIXTURES, fixture)).items():
            netns.ip("link", "add", name, "index", str(index), "type", "ifb")
    fake = FakeProbe()
    try:
        fake.set(devices=gpu_devices()[:2], measurements={}, nvml=nvml_switched())
        start_gpu(daemon_factory, netns, testbed, fake)
        wait_for(lambda: sum(k == "Gpu" and p["PciDevice"] != "/" for k, p in objects(client).values()) == 2,
                 what="2 GPUs on their functions")
        svg, found = draw(bus, client, "gpus-and-thunderbolt")
    finally:
        fake.remove()
    shown = normalise(texts(svg))
    edges = set(re.findall(r"<title>(.*?)&#45;&gt;(.*?)</title>", svg))
    gpus = [(path, p) for path, (k, p) in found.items() if k == "Gpu"]
    assert len(gpus) == 2
    for path, p in gpus:
        assert f"GPU{p['Index']}: {p['Name']}" in shown, shown
        assert (p["PciDevice"], path) in edges, (path, edges)
    (a, _), (b, _) = gpus
    assert (a, b) in edges or (b, a) in edges, edges
    assert "NV18" in shown
    peers = {path: p for path, (k, p) in found.items() if k == "Link" and p["ThunderboltPeer"] != "/"}
    assert peers, found
    for path, p in peers.items():
        assert (p["ThunderboltPeer"], path) in edges, (path, edges)
