# SPDX-License-Identifier: LGPL-2.1-or-later
"""LLDPDUs built byte by byte and sent with a raw socket from inside a namespace (test_lldp.py, and
test_introspection.py for a Switch object)."""

import struct

import lp

NEAREST_BRIDGE = bytes.fromhex("0180c200000e")


def tlv(kind, value):
    return struct.pack("!H", (kind << 9) | len(value)) + value


def frame(chassis, port=b"\x05p1", ttl=120, extra=b"", dst=NEAREST_BRIDGE):
    return (dst + bytes.fromhex("021122334455") + b"\x88\xcc" + tlv(1, chassis) + tlv(2, port) +
            tlv(3, struct.pack("!H", ttl)) + extra + tlv(0, b""))


def send_frames(ns, ifname, frames):
    """Sends raw frames from inside ns (a Python AF_PACKET socket in a child there)."""
    script = ("import socket, sys\n"
              "s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)\n"
              "s.bind((sys.argv[1], 0))\n"
              "for line in sys.stdin:\n"
              "    s.send(bytes.fromhex(line.strip()))\n")
    lp.run(ns.exec_cmd(["/usr/bin/python3", "-c", script, ifname]),
           input="".join(f.hex() + "\n" for f in frames))
