# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers for the network tests: namespaces joined by veth pairs and a bridge, responders inside them,
sockets opened inside a namespace, and the linkprobe wire protocol (probes/proto.h) in Python."""

import contextlib
import ctypes
import json
import os
import socket
import struct
import subprocess
import tempfile
import time

import lp
from lp import BUILD

RESPONDER = os.path.join(BUILD, "linkprobe-responder")
PROBE_TCP = os.path.join(BUILD, "linkprobe-probe-tcp")
PROBE_RDMA = os.path.join(BUILD, "linkprobe-probe-rdma")
PORT = 7471

# Frame types and error codes, as in probes/proto.h.
HELLO, HELLO_REPLY, AUTH, AUTH_OK, ERROR, ECHO_REQUEST, ECHO_REPLY = 1, 2, 3, 4, 5, 6, 7
UPLOAD_START, UPLOAD_READY, DATA, UPLOAD_END, UPLOAD_RESULT = 8, 9, 10, 11, 12
DOWNLOAD_START, DOWNLOAD_READY, DOWNLOAD_END, RDMA_CONNECT, RDMA_CONNECT_REPLY = 13, 14, 15, 16, 17
E_PROTOCOL, E_VERSION, E_AUTH_FAILED, E_AUTH_REQUIRED, E_BUSY, E_RATE_LIMITED = 1, 2, 3, 4, 5, 6
E_TOO_MANY, E_UNSUPPORTED, E_LIMIT, E_TIMEOUT = 7, 8, 9, 10

_libc = ctypes.CDLL(None, use_errno=True)
_CLONE_NEWNET = 0x40000000


def run(*args, check=True, **kw):
    return lp.run(list(args), check=check, **kw)


@contextlib.contextmanager
def in_netns(name):
    """Runs the body with this thread in network namespace name; sockets made there stay there."""
    orig = os.open("/proc/self/ns/net", os.O_RDONLY | os.O_CLOEXEC)
    target = os.open(f"/run/netns/{name}", os.O_RDONLY | os.O_CLOEXEC)
    try:
        if _libc.setns(target, _CLONE_NEWNET) != 0:
            raise OSError(ctypes.get_errno(), "setns")
        yield
    finally:
        _libc.setns(orig, _CLONE_NEWNET)
        os.close(target)
        os.close(orig)


class Namespaces:
    """lp.NetNS namespaces named after this process and a role, removed again on close() whatever
    happened; ns[role] is a namespace's name."""

    def __init__(self, *roles):
        self.names = {r: f"lpn{r}{os.getpid()}" for r in roles}
        self.created = []
        try:
            for name in self.names.values():
                self.created.append(lp.NetNS(name))
        except Exception:
            self.close()
            raise

    def __getitem__(self, role):
        return self.names[role]

    @staticmethod
    def ip(ns, *args):
        return lp.NetNS(ns, create=False).ip(*args)

    def veth(self, ns_a, if_a, ns_b, if_b):
        run("ip", "link", "add", if_a, "netns", ns_a, "type", "veth", "peer", "name", if_b, "netns", ns_b)
        self.ip(ns_a, "link", "set", if_a, "up")
        self.ip(ns_b, "link", "set", if_b, "up")

    def addr(self, ns, ifname, address):
        extra = ["nodad"] if ":" in address else []
        self.ip(ns, "addr", "add", address, "dev", ifname, *extra)

    def close(self):
        for netns in reversed(self.created):
            netns.delete()
        self.created = []


def wait_listening(ns, address, port, timeout=5.0):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET

    def listening():
        with in_netns(ns):
            s = socket.socket(family, socket.SOCK_STREAM)
        with s:
            s.settimeout(0.2)
            try:
                s.connect((address, port))
                return True
            except OSError:
                return False

    if not lp.wait_until(listening, timeout):
        raise TimeoutError(f"nothing listens on {address}:{port} in {ns}")


class Responder:
    """linkprobe-responder in a namespace (env: more environment variables); its stderr goes to a temporary
    file."""

    def __init__(self, ns, listen, *args, wait_address=None, port=PORT, env=None, binary=RESPONDER):
        self.log = tempfile.NamedTemporaryFile(prefix="lp-responder-", suffix=".log", delete=False)
        self.proc = subprocess.Popen(lp.netns_exec_cmd(ns, [binary, "--listen", listen, *args]),
                                     stdout=subprocess.DEVNULL, stderr=self.log,
                                     env=dict(os.environ, **env) if env else None)
        try:
            wait_listening(ns, wait_address or listen.rsplit(":", 1)[0].strip("[]").replace("0.0.0.0", "127.0.0.1"),
                           port)
        except Exception:
            self.stop()
            raise

    @property
    def pid(self):
        return self.proc.pid

    def alive(self):
        return self.proc.poll() is None

    def rss_kib(self):
        with open(f"/proc/{self.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def fd_count(self):
        return len(os.listdir(f"/proc/{self.pid}/fd"))

    def stop(self):
        lp.stop_process(self.proc)
        self.log.close()
        with open(self.log.name) as f:
            text = f.read()
        os.unlink(self.log.name)
        return text


def probe(ns, binary, *args, timeout=30):
    """Runs a probe program in ns; returns (exit code, parsed JSON document, stderr)."""
    p = lp.run(lp.netns_exec_cmd(ns, [binary, *args]), check=False, timeout=timeout)
    lines = [line for line in p.stdout.splitlines() if line.strip()]
    assert len(lines) == 1, f"expected one JSON document, got {p.stdout!r} (stderr {p.stderr!r})"
    return p.returncode, json.loads(lines[0]), p.stderr


# --- the wire protocol --------------------------------------------------------------------------------

def frame(ftype, payload=b""):
    return b"LP" + bytes([ftype, 0]) + struct.pack(">I", len(payload)) + payload


def hello_frame(version=1):
    return frame(HELLO, struct.pack(">HHI", version, 0, 0xF) + os.urandom(16))


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        chunk = s.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def recv_frame(s):
    header = recv_exact(s, 8)
    assert header[:2] == b"LP", header
    length = struct.unpack(">I", header[4:])[0]
    return header[2], recv_exact(s, length)


def error_code(payload):
    return struct.unpack(">H", payload[:2])[0]


def closed_by_peer(s, timeout):
    """True when the peer closed within timeout (reading and discarding whatever it sent first)."""
    s.settimeout(timeout)
    end = time.monotonic() + timeout
    try:
        while time.monotonic() < end:
            if not s.recv(65536):
                return True
    except (ConnectionResetError, BrokenPipeError):
        return True
    except socket.timeout:
        return False
    return False


def connect_from(ns, source, address, port=PORT, timeout=2.0):
    family = socket.AF_INET6 if ":" in address else socket.AF_INET
    with in_netns(ns):
        s = socket.socket(family, socket.SOCK_STREAM)
    s.settimeout(timeout)
    if source:
        s.bind((source, 0))
    s.connect((address, port))
    return s
