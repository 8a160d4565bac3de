# SPDX-License-Identifier: LGPL-2.1-or-later
"""Several nodes on one machine, for the fabric tests: each node is a network namespace with its own
linkprobed, private bus, state directory, responder, machine ID (so its own NodeId), hostname and a
umockdev Thunderbolt testbed generated for it, so that its XDomain peers carry the far nodes' host
router UUIDs. The test cables the nodes with veth pairs (Cluster.cable) and may add a monitor
namespace that reaches every node's /metrics over veth pairs of its own (IPv4 only, IPv6 off, so
neighbour discovery never sees it).

Everything carries the PID in its name and is removed by Cluster.close(), whatever happened."""

import json
import os
import secrets
import shutil
import subprocess
import tempfile
import uuid

import lp
import umockdev_testbed

NEIGHBOR = lp.IFACE + "Neighbor"
PEER = lp.IFACE + "Peer"
PCI = "/devices/pci0000:00/0000:00:0d.2"
DOMAIN = PCI + "/domain0"
HOST = DOMAIN + "/0-0"

# Inside the node's namespaces: its own UTS namespace (hostname) and mount namespace, where its
# machine ID is bind-mounted over /etc/machine-id, so sd_id128_get_machine() and with it NodeId are
# the node's own. The hostname is written to /proc: hostname(1) would refuse odd names. In a container
# that mounts /proc/sys read-only, remount (lp.proc_sys_remount) comes first.
def _node_shell(remount):
    return ((f"{remount} && " if remount else "") + 'printf %s "$LP_NODE_HOSTNAME" > /proc/sys/kernel/hostname && '
            'mount --bind "$LP_NODE_MACHINE_ID" /etc/machine-id && exec "$@"')


def _record(path, env=(), attrs=(), links=()):
    lines = [f"P: {path}"] + [f"E: {k}={v}" for k, v in env] + [f"L: {k}={v}" for k, v in links]
    lines += [f"A: {k}={v}\\n" for k, v in attrs]
    return "\n".join(lines)


def testbed_text(host_uuid, peers, dock_degraded=False):
    """A umockdev description: one domain whose host router has host_uuid, and an XDomain peer per
    (port, far host UUID, via_dock) in peers: on the host's port, or behind a Thunderbolt 4 dock on that
    port (the dock's link trained at one lane when dock_degraded)."""
    records = [
        _record(PCI, env=[("SUBSYSTEM", "pci"), ("DRIVER", "thunderbolt"), ("PCI_ID", "8086:9A1B")],
                attrs=[("class", "0x0c0340"), ("vendor", "0x8086"), ("device", "0x9a1b")]),
        _record(DOMAIN, env=[("DEVTYPE", "thunderbolt_domain"), ("SUBSYSTEM", "thunderbolt")],
                attrs=[("security", "user"), ("iommu_dma_protection", "1")]),
        _record(HOST, env=[("DEVTYPE", "thunderbolt_device"), ("SUBSYSTEM", "thunderbolt"), ("USB4_VERSION", "1.0"),
                           ("USB4_TYPE", "host")],
                attrs=[("authorized", "1"), ("device", "0x9a1b"), ("device_name", "Tiger Lake"), ("generation", "4"),
                       ("unique_id", host_uuid), ("vendor", "0x8087"), ("vendor_name", "Intel"),
                       ("usb4_port1/link", "usb4"), ("usb4_port3/link", "usb4")]),
    ]
    for port, far_uuid, via_dock in peers:
        parent, sysname = HOST, f"0-{port}"
        if via_dock:
            lanes = "1" if dock_degraded else "2"
            records.append(_record(
                f"{HOST}/0-{port}",
                env=[("DEVTYPE", "thunderbolt_device"), ("SUBSYSTEM", "thunderbolt"), ("USB4_VERSION", "1.0"),
                     ("USB4_TYPE", "hub")],
                attrs=[("authorized", "1"), ("device", "0x2"), ("device_name", "Thunderbolt 4 Dock"),
                       ("generation", "4"), ("rx_lanes", lanes), ("rx_speed", "20.0 Gb/s"), ("tx_lanes", lanes),
                       ("tx_speed", "20.0 Gb/s"), ("unique_id", str(uuid.uuid4())), ("vendor", "0x108"),
                       ("vendor_name", "Dock Vendor"), ("usb4_port3/link", "usb4")]))
            parent, sysname = f"{HOST}/0-{port}", f"0-3{port:02d}"
        records.append(_record(
            f"{parent}/{sysname}",
            env=[("DEVTYPE", "thunderbolt_xdomain"), ("SUBSYSTEM", "thunderbolt")],
            attrs=[("device", "0x1"), ("device_name", "peerhost"), ("maxhopid", "21"), ("rx_lanes", "2"),
                   ("rx_speed", "20.0 Gb/s"), ("tx_lanes", "2"), ("tx_speed", "20.0 Gb/s"), ("unique_id", far_uuid),
                   ("vendor", "0x8086"), ("vendor_name", "Intel Corp.")]))
    return "\n\n".join(records) + "\n"


def peer_sysname(port, via_dock):
    return f"0-3{port:02d}" if via_dock else f"0-{port}"


def peer_devpath(port, via_dock):
    return f"{HOST}/0-{port}/0-3{port:02d}" if via_dock else f"{HOST}/0-{port}"


class NodeNS(lp.NetNS):
    """A node's network namespace; commands run in it get the node's hostname and machine ID."""

    def __init__(self, role, hostname):
        self.shell = _node_shell(lp.proc_sys_remount("/proc/sys/kernel"))  # may skip the test: first
        # Before the namespace: delete() (also on a failure in NetNS.__init__) removes the directory.
        self.dir = tempfile.mkdtemp(prefix=f"lp-node-{role}-")
        super().__init__(name=f"lpf{role}{os.getpid() % 100000}")
        self.hostname = hostname
        self.machine_id = os.path.join(self.dir, "machine-id")
        with open(self.machine_id, "w") as f:
            f.write(secrets.token_hex(16) + "\n")
        lp.sysctl(self.name, "net.ipv6.conf.all.accept_dad=0", "net.ipv6.conf.default.accept_dad=0")

    def node_exec_cmd(self, cmd):
        return ["ip", "netns", "exec", self.name, "unshare", "--mount", "--uts", "sh", "-c", self.shell, "sh", *cmd]

    def env(self):
        return {"LP_NODE_HOSTNAME": self.hostname, "LP_NODE_MACHINE_ID": self.machine_id}

    def delete(self):
        super().delete()
        shutil.rmtree(self.dir, ignore_errors=True)


class _InNode:
    """What lp.Daemon takes as netns: its exec_cmd runs the daemon as the node."""

    def __init__(self, node_ns):
        self.node_ns = node_ns

    def exec_cmd(self, cmd):
        return self.node_ns.node_exec_cmd(cmd)


class Node:
    def __init__(self, cluster, role, hostname):
        self.cluster = cluster
        self.role = role
        self.ns = NodeNS(role, hostname)
        self.host_uuid = str(uuid.uuid4())
        self.bus = self.client = self.daemon = self.testbed = None
        self.tbt_peers = []  # (port, far node, via_dock)
        self.config = ""
        self.args = []
        self.metrics_address = None

    @property
    def name(self):
        return self.ns.name

    def start(self, extra_config=""):
        self.testbed = umockdev_testbed.Testbed()
        peers = [(port, far.host_uuid, dock) for port, far, dock in self.tbt_peers]
        self.testbed.add_from_string(testbed_text(self.host_uuid, peers, self.cluster.dock_degraded))
        self.bus = lp.PrivateBus()
        config = self.cluster.base_config + self.config + extra_config
        if self.metrics_address:
            config += f"[Metrics]\nListenAddress={self.metrics_address}\n"
        # The watch on, as a node of a real cluster runs: the rules and the dashboard read what it samples.
        self.daemon = lp.Daemon(self.bus, netns=_InNode(self.ns), prefix=["umockdev-wrapper"], config=config,
                                watch=True, env={**self.testbed.env(), **self.ns.env()},
                                args=[f"--sysfs-root={self.testbed.sys}", *self.args])
        self.client = lp.Client(self.bus)
        return self

    def stop(self):
        log = ""
        if self.client:
            self.client.close()
            self.client = None
        if self.daemon:
            self.daemon.stop()
            log = self.daemon.log_text
            self.daemon = None
        if self.bus:
            self.bus.stop()
            self.bus = None
        if self.testbed:
            self.testbed.close()
            self.testbed = None
        return log

    # --- what the node publishes ---

    def node_id(self):
        return self.client.get_all("Node")["NodeId"]

    def neighbors(self):
        """Neighbor objects by NodeId."""
        return {props[NEIGHBOR]["NodeId"]: dict(props[NEIGHBOR], Path=path)
                for path, props in self.client.objects().items() if NEIGHBOR in props}

    def peers(self):
        return {path: dict(props[PEER]) for path, props in self.client.objects().items() if PEER in props}

    def links_by_path(self):
        return {v["Path"]: v["Name"] for v in self.client.links().values()}

    def ctl(self, *args):
        return lp.run(self.ns.exec_cmd([lp.CTL, f"--bus-address={self.bus.address}", *args]), check=False)

    def unplug_thunderbolt(self, far):
        """Removes the XDomain peer that leads to far, as unplugging the cable would."""
        for port, node, dock in self.tbt_peers:
            if node is far:
                path = "/sys" + peer_devpath(port, dock)
                self.testbed.uevent(path, "remove")
                self.testbed.remove_device(path)

    def plug_thunderbolt(self, far):
        for port, node, dock in self.tbt_peers:
            if node is far:
                text = testbed_text(self.host_uuid, [(port, far.host_uuid, dock)], self.cluster.dock_degraded)
                # Only the peer's record: the domain, host and dock are still there.
                records = [r for r in text.strip("\n").split("\n\n")
                           if r.split("\n", 1)[0] == "P: " + peer_devpath(port, dock)]
                self.testbed.add_from_string("\n\n".join(records) + "\n")


class Cluster:
    """Nodes by role, the veth cables between them, and an optional monitor namespace."""

    def __init__(self, base_config, dock_degraded=False):
        self.base_config = base_config
        self.dock_degraded = dock_degraded
        self.nodes = {}
        self.monitor = None
        self._n_monitor = 0

    def add(self, role, hostname):
        self.nodes[role] = Node(self, role, hostname)
        return self.nodes[role]

    def __getitem__(self, role):
        return self.nodes[role]

    def cable(self, a, if_a, b, if_b, addresses=()):
        """A veth pair between two nodes, up, with the given (node, ifname, address) addresses."""
        lp.run(["ip", "link", "add", if_a, "netns", a.name, "type", "veth", "peer", "name", if_b, "netns", b.name])
        a.ns.ip("link", "set", if_a, "up")
        b.ns.ip("link", "set", if_b, "up")
        for node, ifname, address in addresses:
            node.ns.ip("addr", "add", address, "dev", ifname)

    def thunderbolt(self, a, port_a, b, port_b, via_dock=False):
        """Records a Thunderbolt cable: a's XDomain peer on port_a is b, and the other way round (a dock
        hangs off a's port; from b's side its cable goes straight into the dock, so a is a direct peer)."""
        a.tbt_peers.append((port_a, b, via_dock))
        b.tbt_peers.append((port_b, a, False))

    def add_monitor(self):
        """A namespace that reaches every node's metrics at 10.99.<n>.1:9479 from 10.99.<n>.2."""
        self.monitor = lp.NetNS(name=f"lpfmon{os.getpid() % 100000}")
        for i, node in enumerate(self.nodes.values(), start=1):
            mine, theirs = f"mon{i}", f"mx{i}"
            lp.run(["ip", "link", "add", mine, "netns", node.name, "type", "veth", "peer", "name", theirs, "netns",
                    self.monitor.name])
            for ns, ifname, address in ((node.ns, mine, f"10.99.{i}.1/24"), (self.monitor, theirs, f"10.99.{i}.2/24")):
                lp.sysctl(ns.name, f"net.ipv6.conf.{ifname}.disable_ipv6=1")
                ns.ip("addr", "add", address, "dev", ifname)
                ns.ip("link", "set", ifname, "up")
            node.metrics_address = f"10.99.{i}.1:9479"
        return [node.metrics_address for node in self.nodes.values()]

    def close(self):
        logs = {}
        for role, node in self.nodes.items():
            logs[role] = node.stop()
        for node in self.nodes.values():
            node.ns.delete()
        if self.monitor:
            self.monitor.delete()
        return logs


def objects_json(node):
    return json.dumps(node.client.objects(), default=str, indent=1)


def start_prometheus(monitor, directory, targets, rule_files=()):
    """A Prometheus server in the monitor namespace at 127.0.0.1:9090, scraping targets every second and
    evaluating rule_files as often; the caller stops it (lp.stop_process)."""
    config = os.path.join(directory, "prometheus.yml")
    with open(config, "w") as f:
        f.write("global:\n  scrape_interval: 1s\n  evaluation_interval: 1s\n"
                f"rule_files: {json.dumps(list(rule_files))}\n"
                "scrape_configs:\n  - job_name: linkprobe\n"
                f"    static_configs:\n      - targets: {json.dumps(targets)}\n")
    return subprocess.Popen(monitor.exec_cmd([
        "/usr/bin/prometheus", f"--config.file={config}", f"--storage.tsdb.path={directory}/data",
        "--web.listen-address=127.0.0.1:9090"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

