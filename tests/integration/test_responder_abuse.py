# SPDX-License-Identifier: LGPL-2.1-or-later
"""Abuse of linkprobe-responder: idle connections, slow senders, garbage, oversized frames, wrong keys and a
flood of 200 simultaneous connections. The responder must close only the offending connections, keep its
memory and descriptors bounded, and still serve a well-behaved client.

Everything runs on the loopback of a private network namespace (all of 127.0.0.0/8 is local there, so
every client can have its own source address)."""

import os
import random
import socket
import stat
import struct
import tempfile
import time

import pytest

from linkprobe_net import (AUTH, E_AUTH_FAILED, E_PROTOCOL, E_TIMEOUT, ERROR, HELLO_REPLY, PROBE_TCP, BUILD,
                           Namespaces, Responder, closed_by_peer, connect_from, error_code, frame, hello_frame, in_netns,
                           probe, recv_frame)

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

SINK = "127.0.0.1"
LIMITS = ["--handshake-timeout", "1s", "--idle-timeout", "2s", "--max-connections", "64"]


@pytest.fixture(scope="module")
def env():
    ns = Namespaces("X")
    responders = []
    keydir = tempfile.mkdtemp(prefix="lp-psk-")
    try:
        key = os.path.join(keydir, "psk")
        with open(key, "w") as f:
            f.write("a key that is long enough\n")
        os.chmod(key, stat.S_IRUSR | stat.S_IWUSR)
        responders.append(Responder(ns["X"], f"{SINK}:7471", *LIMITS))
        responders.append(Responder(ns["X"], f"{SINK}:7472", *LIMITS, "--psk-file", key, port=7472))
        yield {"ns": ns["X"], "plain": responders[0], "keyed": responders[1]}
    finally:
        for r in responders:
            print(r.stop())
        ns.close()
        os.unlink(os.path.join(keydir, "psk"))
        os.rmdir(keydir)


def well_behaved(env, source="127.0.0.9", extra=()):
    rc, doc, err = probe(env["ns"], PROBE_TCP, "--duration", "200ms", "--samples", "10", "--source", source,
                         f"{SINK}:7471", *extra)
    assert rc == 0, (doc, err)
    assert doc["upload_gbps"] > 0.1 and doc["download_gbps"] > 0.1
    return doc


def test_idle_connections_are_closed(env):
    socks = [connect_from(env["ns"], "127.0.1.1", SINK) for _ in range(8)]
    start = time.monotonic()
    for s in socks:
        t, payload = recv_frame_with_timeout(s, 3)
        assert t == ERROR and error_code(payload) == E_TIMEOUT
        assert closed_by_peer(s, 2)
        s.close()
    assert time.monotonic() - start < 3
    # Idle after a complete hello: the idle timeout.
    s = connect_from(env["ns"], "127.0.1.2", SINK)
    s.sendall(hello_frame())
    assert recv_frame(s)[0] == HELLO_REPLY
    t, payload = recv_frame_with_timeout(s, 4)
    assert t == ERROR and error_code(payload) == E_TIMEOUT
    s.close()


def recv_frame_with_timeout(s, timeout):
    s.settimeout(timeout)
    return recv_frame(s)


def test_slow_sender(env):
    # One byte of the hello every 300 ms: the handshake timeout (1 s) ends it long before it completes.
    s = connect_from(env["ns"], "127.0.1.3", SINK)
    data = hello_frame()
    start = time.monotonic()
    closed = False
    for b in data:
        try:
            s.send(bytes([b]))
        except OSError:
            closed = True
            break
        if closed_by_peer(s, 0.3):
            closed = True
            break
    assert closed and time.monotonic() - start < 2.5
    s.close()


@pytest.mark.parametrize("payload", [
    b"GET / HTTP/1.1\r\nHost: x\r\n\r\n",
    b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03" + bytes(64),
    bytes(range(256)) * 4,
    b"LP\x01\x00\x7f\xff\xff\xff",          # a 2 GiB hello
    b"LP\x0a\x00\x00\x00\x10\x00" + bytes(4096),  # DATA before hello
])
def test_garbage_closes_only_that_connection(env, payload):
    s = connect_from(env["ns"], "127.0.1.4", SINK)
    try:
        s.sendall(payload)
    except OSError:
        pass
    t, body = recv_frame_with_timeout(s, 2)
    assert t == ERROR and error_code(body) == E_PROTOCOL
    assert closed_by_peer(s, 2)
    s.close()
    assert env["plain"].alive()


def test_oversized_frames_after_hello(env):
    s = connect_from(env["ns"], "127.0.1.5", SINK)
    s.sendall(hello_frame())
    assert recv_frame(s)[0] == HELLO_REPLY
    # An echo larger than allowed, a DATA frame beyond the maximum frame size: refused from the header.
    s.sendall(b"LP\x06\x00" + struct.pack(">I", 1 << 20))
    t, body = recv_frame_with_timeout(s, 2)
    assert t == ERROR and error_code(body) == E_PROTOCOL
    s.close()
    s = connect_from(env["ns"], "127.0.1.5", SINK)
    s.sendall(hello_frame())
    recv_frame(s)
    s.sendall(b"LP\x0a\x00" + struct.pack(">I", 0xFFFFFFFF))
    t, body = recv_frame_with_timeout(s, 2)
    assert t == ERROR and error_code(body) == E_PROTOCOL
    s.close()


def test_wrong_key(env):
    for i in range(5):
        s = connect_from(env["ns"], f"127.0.2.{i + 1}", SINK, port=7472)
        s.sendall(hello_frame())
        t, body = recv_frame(s)
        assert t == HELLO_REPLY
        flags = struct.unpack(">H", body[2:4])[0]
        assert flags & 1
        s.sendall(frame(AUTH, os.urandom(32)))
        t, body = recv_frame_with_timeout(s, 2)
        assert t == ERROR and error_code(body) == E_AUTH_FAILED
        assert closed_by_peer(s, 2)
        s.close()
    assert env["keyed"].alive()


def test_flood_of_200_connections(env):
    r = env["plain"]
    rss_before, fds_before = r.rss_kib(), r.fd_count()
    socks = []
    rng = random.Random(4)
    # 200 connections from 50 source addresses, each doing something unhelpful: nothing, half a header,
    # a hello and then nothing, or garbage.
    for i in range(200):
        source = f"127.3.{i % 50}.1"
        try:
            s = connect_from(env["ns"], source, SINK, timeout=1)
        except OSError:
            continue
        kind = i % 4
        try:
            if kind == 1:
                s.send(b"LP\x01")
            elif kind == 2:
                s.send(hello_frame())
            elif kind == 3:
                s.send(bytes(rng.getrandbits(8) for _ in range(64)))
        except OSError:
            pass
        socks.append(s)
    time.sleep(0.2)
    rss_during, fds_during = r.rss_kib(), r.fd_count()

    # A well-behaved client from its own address is served while the flood holds its connections.
    start = time.monotonic()
    doc = well_behaved(env)
    served_in = time.monotonic() - start

    for s in socks:
        s.close()
    time.sleep(0.5)
    rss_after, fds_after = r.rss_kib(), r.fd_count()
    figures = (f"responder under a 200-connection flood: RSS {rss_before} -> {rss_during} -> {rss_after} KiB, "
               f"fds {fds_before} -> {fds_during} -> {fds_after}; well-behaved probe served in {served_in:.2f}s "
               f"(up {doc['upload_gbps']:.1f} Gbit/s, down {doc['download_gbps']:.1f} Gbit/s)")
    print(figures)
    with open(os.path.join(BUILD, "responder-abuse-figures.txt"), "w") as f:
        f.write(figures + "\n")
    # At most 64 connections plus the listener, event loop, signal and eventfd descriptors.
    assert fds_during <= fds_before + 64 + 2
    assert rss_during - rss_before < 8 * 1024
    assert fds_after <= fds_before + 2
    assert r.alive()


def test_still_serving_after_all(env):
    doc = well_behaved(env, source="127.0.0.10")
    assert doc["status"] == "ok"
    assert env["plain"].alive() and env["keyed"].alive()


def test_inherited_listening_socket(env):
    """The daemon's way of running the responder: a listening socket as fd 3 with LISTEN_FDS/LISTEN_PID."""
    import subprocess
    from linkprobe_net import RESPONDER
    with in_netns(env["ns"]):
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    ls.bind((SINK, 7481))
    ls.listen(16)
    fd = ls.fileno()
    # The shell learns its own PID for LISTEN_PID and execs the responder under it.
    proc = subprocess.Popen(["sh", "-c", 'LISTEN_PID=$$ LISTEN_FDS=1 exec "$0" --log-level=debug', RESPONDER],
                            preexec_fn=lambda: os.dup2(fd, 3), pass_fds=(fd, 3),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    ls.close()
    try:
        rc, doc, err = probe(env["ns"], PROBE_TCP, "--tests", "rtt", "--samples", "5", f"{SINK}:7481")
        assert rc == 0, (doc, err)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=5)
    assert proc.returncode == 0, stderr
    assert "Ready on 1 socket(s)" in stderr


def test_systemd_socket_activation(env):
    import shutil
    import subprocess
    from linkprobe_net import RESPONDER
    tool = shutil.which("systemd-socket-activate")
    if not tool:
        pytest.skip("systemd-socket-activate is not installed")
    proc = subprocess.Popen(["ip", "netns", "exec", env["ns"], tool, "-l", f"{SINK}:7482", RESPONDER],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        for _ in range(50):
            rc, doc, err = probe(env["ns"], PROBE_TCP, "--tests", "rtt", "--samples", "5", f"{SINK}:7482")
            if rc == 0 or doc["error"]["name"] != "ECONNREFUSED":
                break
            time.sleep(0.1)
        assert rc == 0, (doc, err)
    finally:
        proc.terminate()
        _, stderr = proc.communicate(timeout=5)
    assert "Ready on 1 socket(s)" in stderr
