# SPDX-License-Identifier: LGPL-2.1-or-later
"""A D-Bus client that writes the wire format itself, for messages no library will build: strings that are
not UTF-8, header fields of the wrong type, bodies that do not match their signature. Enough of the
protocol (EXTERNAL authentication, Hello, method calls, little-endian marshalling of the basic types and
a{sv}-free bodies) to send one hostile message and see what the bus does with it."""

import os
import select
import socket
import struct

METHOD_CALL = 1
FIELD_PATH, FIELD_INTERFACE, FIELD_MEMBER, FIELD_DESTINATION, FIELD_SIGNATURE = 1, 2, 3, 6, 8


class Writer:
    def __init__(self):
        self.buf = bytearray()

    def align(self, n):
        self.buf += b"\0" * (-len(self.buf) % n)

    def byte(self, v):
        self.buf += bytes([v])

    def u32(self, v):
        self.align(4)
        self.buf += struct.pack("<I", v)

    def string(self, b):
        """A string or object path, given as the raw bytes to send (valid or not)."""
        self.u32(len(b))
        self.buf += b + b"\0"

    def signature(self, b):
        self.byte(len(b))
        self.buf += b + b"\0"


def marshal_body(signature, args):
    """Bodies of 's', 'u' and 'i' arguments; strings as raw bytes."""
    w = Writer()
    for code, value in zip(signature.decode(), args):
        if code in "so":
            w.string(value)
        elif code == "u":
            w.u32(value)
        elif code == "i":
            w.u32(value & 0xffffffff)
        else:
            raise ValueError(f"cannot marshal {code!r}")
    return bytes(w.buf)


def method_call(serial, destination, path, interface, member, signature=b"", body=b"", field_types=None):
    """A whole message. field_types overrides the type code a header field is sent with (to lie)."""
    field_types = field_types or {}
    fields = [(FIELD_PATH, b"o", path), (FIELD_MEMBER, b"s", member)]
    if interface is not None:
        fields.append((FIELD_INTERFACE, b"s", interface))
    if destination is not None:
        fields.append((FIELD_DESTINATION, b"s", destination))
    if signature:
        fields.append((FIELD_SIGNATURE, b"g", signature))
    w = Writer()
    w.buf += b"l" + bytes([METHOD_CALL, 0, 1])
    w.u32(len(body))
    w.u32(serial)
    array = Writer()
    array.buf = bytearray(16)  # fields start at offset 16: alignment is relative to the message start
    for code, kind, value in fields:
        array.align(8)
        array.byte(code)
        kind = field_types.get(code, kind)
        array.signature(kind)
        if kind == b"g":
            array.signature(value)
        else:
            array.string(value)
    fields_bytes = bytes(array.buf[16:])
    w.u32(len(fields_bytes))
    w.buf += fields_bytes
    w.align(8)
    return bytes(w.buf) + body


class RawConnection:
    def __init__(self, socket_path, timeout=5.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(socket_path)
        self.serial = 0
        self.sock.sendall(b"\0AUTH EXTERNAL " + str(os.geteuid()).encode().hex().encode() + b"\r\n")
        line = self._read_line()
        if not line.startswith(b"OK "):
            raise RuntimeError(f"authentication refused: {line!r}")
        self.sock.sendall(b"BEGIN\r\n")
        self.call("org.freedesktop.DBus", b"/org/freedesktop/DBus", b"org.freedesktop.DBus", b"Hello")
        self.unique_name = self.read_message()

    def _read_line(self):
        data = b""
        while not data.endswith(b"\r\n"):
            chunk = self.sock.recv(1)
            if not chunk:
                raise ConnectionError("closed during authentication")
            data += chunk
        return data

    def call(self, destination, path, interface, member, signature=b"", args=(), body=None, field_types=None):
        self.serial += 1
        if body is None:
            body = marshal_body(signature, args)
        dest = destination.encode() if isinstance(destination, str) else destination
        self.sock.sendall(method_call(self.serial, dest, path, interface, member, signature, body, field_types))
        return self.serial

    def _read_exactly(self, n):
        data = b""
        while len(data) < n:
            chunk = self.sock.recv(n - len(data))
            if not chunk:
                raise ConnectionError("closed by the bus")
            data += chunk
        return data

    def read_message(self):
        """Reads one message; returns (type, header fields bytes, body bytes)."""
        fixed = self._read_exactly(16)
        if fixed[0:1] != b"l":
            raise RuntimeError("big-endian replies are not handled here")
        body_len, _, fields_len = struct.unpack("<III", fixed[4:16])
        rest = self._read_exactly(fields_len + (-(16 + fields_len) % 8) + body_len)
        return fixed[1], rest[:fields_len], rest[-body_len:] if body_len else b""

    def closed_by_peer(self, timeout=3.0):
        """True when the bus hangs up within timeout (messages before that are read and dropped)."""
        self.sock.settimeout(timeout)
        try:
            while True:
                r, _, _ = select.select([self.sock], [], [], timeout)
                if not r:
                    return False
                if not self.sock.recv(65536):
                    return True
        except (ConnectionError, OSError):
            return True

    def close(self):
        self.sock.close()
