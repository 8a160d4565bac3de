# SPDX-License-Identifier: LGPL-2.1-or-later
"""A cluster on paper: each node's `linkprobectl snapshot` document, written from a description of its
cables, with the members `linkprobectl fabric --snapshots` reads (the 3-node fabric test checks that
real snapshots read the same way). And a checker of MLX's launcher host file, written from mlx's own
reader (python/mlx/_distributed_utils/common.py Hostfile.from_file) and the checks its launchers make
(launch.py: launch_ring, launch_jaccl; the ring backend's equal connection counts, ring.cpp; JACCL's
device matrix parser and RING_MAX_CONNS)."""

import ipaddress
import itertools
import json
import os
import time
import uuid

ROOT = "/org/linkprobe/LinkProbe1"


class Node:
    def __init__(self, hostname, node_id=None, boot_id=None):
        self.hostname = hostname
        self.node_id = node_id or uuid.uuid4().hex
        self.boot_id = boot_id or uuid.uuid4().hex
        self.links = {}      # name -> Link object
        self.peers = []
        self.neighbors = {}  # NodeId -> Neighbor object
        self.rdma = []
        self.thunderbolt = []
        self.taken_usec = int(time.time() * 1e6)

    def link(self, name, speed_mbps=0):
        if name not in self.links:
            self.links[name] = {"Path": f"{ROOT}/link/{name}", "Index": len(self.links) + 2, "Name": name,
                                "SpeedMbps": speed_mbps, "Addresses": [], "RdmaPort": "/", "ThunderboltPeer": "/"}
        return self.links[name]

    def neighbor(self, other):
        return self.neighbors.setdefault(other.node_id, {
            "Path": f"{ROOT}/neighbor/{other.node_id}", "NodeId": other.node_id, "Hostname": other.hostname,
            "Authenticated": True, "Links": [], "ThunderboltPeers": [], "Paths": [], "Problems": []})

    def snapshot(self):
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(self.taken_usec / 1e6))
        return {"Schema": 1, "Time": iso, "TimeUsec": self.taken_usec,
                "Node": {"NodeId": self.node_id, "Hostname": self.hostname, "BootId": self.boot_id},
                "Objects": {"Link": list(self.links.values()), "Peer": self.peers,
                            "Neighbor": list(self.neighbors.values()), "RdmaPort": self.rdma, "Thunderbolt": self.thunderbolt}}


class Paper:
    """Nodes and the cables between them; write() puts one snapshot file per node in a directory."""

    def __init__(self):
        self.nodes = {}
        self._subnet = itertools.count(1)
        self._peer = itertools.count(1)

    def node(self, hostname, **kw):
        self.nodes[hostname] = Node(hostname, **kw)
        return self.nodes[hostname]

    def __getitem__(self, hostname):
        return self.nodes[hostname]

    def _measure(self, a, if_a, b, address, up, down, transport="tcp", stale=False, age_s=0, device=None):
        """a's path to b over if_a: up is a -> b."""
        measured = int(time.time() * 1e6 - age_s * 1e6)
        path = f"{ROOT}/peer/p{next(self._peer)}"
        a.peers.append({
            "Path": path, "Address": address, "Transport": transport, "SourceDevice": device or "",
            "SourceInterface": a.links[if_a]["Path"], "SourceInterfaceName": if_a, "UploadGbps": up,
            "DownloadGbps": down, "RttUsec": 25.0, "MeasuredAt": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(measured / 1e6)),
            "MeasuredAtUsec": measured, "Stale": stale, "ProbeState": "ok", "RemoteNodeId": b.node_id})
        nb = a.neighbor(b)
        nb["Paths"].append(path)
        if a.links[if_a]["Path"] not in nb["Links"]:
            nb["Links"].append(a.links[if_a]["Path"])

    def cable(self, a, if_a, b, if_b, up, down=None, *, back=None, routable=True, speed_mbps=0, stale=False,
              age_s=0, measured=True, one_sided=False, rdma=None, thunderbolt=None):
        """A cable between nodes a and b (hostnames), interfaces if_a and if_b. a measures up Gb/s towards
        b and down back; b measures the same unless back=(b's up, b's down) says otherwise. routable:
        each end gets an IPv4 address (else only link-local IPv6). rdma=(device at a, device at b, Gb/s
        measured each way or None for the port rate only, port rate). thunderbolt=Gb/s: the cable is a
        Thunderbolt one with thunderbolt-net, whose XDomain peers at both ends negotiated that rate."""
        a, b = self.nodes[a], self.nodes[b]
        down = up if down is None else down
        net = next(self._subnet)
        la, lb = a.link(if_a, speed_mbps), b.link(if_b, speed_mbps)
        for link, host in ((la, 1), (lb, 2)):
            if routable:
                link["Addresses"].append({"Address": f"10.{net // 250}.{net % 250}.{host}", "PrefixLength": 24,
                                          "Scope": "global", "Class": "private"})
            link["Addresses"].append({"Address": f"fe80::{net:x}:{host}", "PrefixLength": 64, "Scope": "link",
                                      "Class": "link-local"})
        addr_a, addr_b = la["Addresses"][0]["Address"], lb["Addresses"][0]["Address"]
        if not routable:
            addr_a, addr_b = f"{addr_a}%{if_b}", f"{addr_b}%{if_a}"
        if measured:
            self._measure(a, if_a, b, addr_b, up, down, stale=stale, age_s=age_s)
            if not one_sided:
                bu, bd = back if back else (down, up)
                self._measure(b, if_b, a, addr_a, bu, bd, stale=stale, age_s=age_s)
        else:
            a.neighbor(b)
            b.neighbor(a)
        if thunderbolt:
            for node, other, link in ((a, b, la), (b, a, lb)):
                sysname = f"0-{len(node.thunderbolt) + 1}"
                obj = {"Path": f"{ROOT}/thunderbolt/{sysname}", "SysfsName": sysname, "Type": "peer",
                       "PathRxGbps": thunderbolt, "PathTxGbps": thunderbolt, "Degraded": False, "Parent": "/",
                       "NetInterface": link["Path"]}
                node.thunderbolt.append(obj)
                link["ThunderboltPeer"] = obj["Path"]
                node.neighbor(other)["ThunderboltPeers"].append(obj["Path"])
        if rdma:
            dev_a, dev_b, gbps, rate = rdma
            for node, link, dev in ((a, la, dev_a), (b, lb, dev_b)):
                if not any(p["Device"] == dev for p in node.rdma):
                    node.rdma.append({"Path": f"{ROOT}/rdma/{dev}_1", "Device": dev, "Port": 1, "RateGbps": rate,
                                      "NetInterface": link["Path"]})
            if gbps:
                self._measure(a, if_a, b, addr_b, gbps, gbps, transport="rdma", device=dev_a)
                self._measure(b, if_b, a, addr_a, gbps, gbps, transport="rdma", device=dev_b)

    def write(self, directory, only=None):
        files = []
        for name, node in self.nodes.items():
            if only and name not in only:
                continue
            path = os.path.join(directory, f"{name}.json")
            with open(path, "w") as f:
                json.dump(node.snapshot(), f)
            files.append(path)
        return files


def _address(ip):
    ipaddress.ip_address(ip.split("%", 1)[0])


def check_mlx_hostfile(text):
    """What mlx.launch would make of the host file: returns (backend, hosts as (ssh, ips, rdma)), or fails
    an assertion where mlx would raise."""
    data = json.loads(text)
    # Hostfile.from_file: a dict with "hosts" (or a bare list), each host with "ssh".
    assert isinstance(data, dict), "the host file is a JSON object"
    backend = data.get("backend", "")
    envs = data.get("envs", [])
    hosts = [(h["ssh"], h.get("ips", []), h.get("rdma", [])) for h in data["hosts"]]
    assert isinstance(envs, list) and all(isinstance(e, str) and "=" in e and
                                          all(c.isalnum() or c == "_" for c in e.split("=", 1)[0]) for e in envs)
    assert all(isinstance(ssh, str) and ssh for ssh, _, _ in hosts)
    if backend == "ring":
        # launch_ring: "The ring backend requires IPs to be provided instead of hostnames".
        assert all(len(ips) > 0 for _, ips, _ in hosts) or len(hosts) == 1
        for _, ips, _ in hosts:
            for ip in ips:
                _address(ip)
        # ring.cpp: every rank as many connections to its right as from its left.
        assert len({len(ips) for _, ips, _ in hosts}) == 1, "the same number of addresses at every rank"
    elif backend in ("jaccl", "jaccl-ring"):
        # launch_jaccl: rank 0's first address is the coordinator; the device matrix is square with a
        # null diagonal.
        assert hosts[0][1], "Rank 0 should have an IP reachable from all other ranks"
        _address(hosts[0][1][0])
        assert all(len(rdma) == len(hosts) for _, _, rdma in hosts), "Malformed hostfile for jaccl backend"
        assert all(rdma[i] is None for i, (_, _, rdma) in enumerate(hosts)), "Malformed hostfile for jaccl backend"
        n = len(hosts)
        for i, (_, _, rdma) in enumerate(hosts):
            for j, cell in enumerate(rdma):
                # parse_devices_json: a string or an array of strings.
                assert cell is None or isinstance(cell, str) or (isinstance(cell, list) and
                                                                 all(isinstance(d, str) for d in cell)), cell
                if backend == "jaccl" and i != j:
                    assert cell is not None, f"the mesh needs a device from rank {i} to rank {j}"
        if backend == "jaccl-ring" and n > 1:
            def width(cell):
                return 0 if cell is None else 1 if isinstance(cell, str) else len(cell)
            widths = set()
            for i, (_, _, rdma) in enumerate(hosts):
                left, right = rdma[(i - 1) % n], rdma[(i + 1) % n]
                assert width(left) and width(right), f"rank {i} has devices to both ring neighbours"
                assert width(left) <= 4 and width(right) <= 4, "[jaccl] Up to 4 per direction supported"
                widths |= {width(left), width(right)}
            assert len(widths) == 1, "one width around the ring"
    else:
        raise AssertionError(f"unknown backend {backend!r}")
    return backend, hosts
