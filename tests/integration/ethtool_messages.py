# SPDX-License-Identifier: LGPL-2.1-or-later
"""ethtool's netlink replies built byte for byte as Documentation/networking/ethtool-netlink.rst lays them
out (nlmsghdr, genlmsghdr, attributes; link modes as bitsets in the compact or the verbose form), for the
test build's replayed source (tests/tools/ethtool-replay.c) and the fuzz corpus."""

import os
import struct

# include/uapi/linux/ethtool_netlink.h: the kernel's own message numbers (kernel to user space).
LINKMODES_GET_REPLY = 4
LINKMODES_NTF = 5
LINKSTATE_GET_REPLY = 6
NLA_F_NESTED = 1 << 15

HEADER_DEV_INDEX, HEADER_DEV_NAME = 1, 2
LINKMODES_HEADER, LINKMODES_AUTONEG, LINKMODES_OURS, LINKMODES_PEER = 1, 2, 3, 4
LINKMODES_SPEED, LINKMODES_DUPLEX, LINKMODES_LANES = 5, 6, 9
LINKSTATE_HEADER, LINKSTATE_LINK, LINKSTATE_EXT_STATE, LINKSTATE_EXT_SUBSTATE = 1, 2, 5, 6
BITSET_NOMASK, BITSET_SIZE, BITSET_BITS, BITSET_VALUE, BITSET_MASK = 1, 2, 3, 4, 5
BITSET_BITS_BIT, BIT_INDEX, BIT_NAME, BIT_VALUE = 1, 1, 2, 3

# Link-mode bits (include/uapi/linux/ethtool.h) of the NICs below.
MODES = {
    "10baseT/Half": 0, "10baseT/Full": 1, "100baseT/Half": 2, "100baseT/Full": 3, "1000baseT/Full": 5,
    "Autoneg": 6, "TP": 7, "FIBRE": 10, "Pause": 13, "Asym_Pause": 14,
    "1000baseKX/Full": 17, "10000baseKR/Full": 19, "25000baseCR/Full": 31, "25000baseKR/Full": 32,
    "25000baseSR/Full": 33, "100000baseKR4/Full": 36, "100000baseSR4/Full": 37, "100000baseCR4/Full": 38,
    "1000baseX/Full": 41, "10000baseSR/Full": 43, "10000baseLR/Full": 44,
    "400000baseCR8/Full": 73, "400000baseCR4/Full": 89, "800000baseCR8/Full": 93,
}
# Linux 6.18's __ETHTOOL_LINK_MODE_MASK_NBITS: the SIZE a compact set says.
NBITS = 125

EXT_STATE_AUTONEG, EXT_STATE_NO_CABLE, EXT_STATE_CABLE_ISSUE = 0, 4, 5


def attr(kind, payload):
    data = struct.pack("=HH", 4 + len(payload), kind) + payload
    return data + b"\0" * (-len(data) % 4)


def nest(kind, *attrs):
    return attr(kind | NLA_F_NESTED, b"".join(attrs))


def u8(kind, v):
    return attr(kind, struct.pack("=B", v))


def u32(kind, v):
    return attr(kind, struct.pack("=I", v))


def header(ifindex=None, name=None):
    parts = []
    if ifindex is not None:
        parts.append(u32(HEADER_DEV_INDEX, ifindex))
    if name is not None:
        parts.append(attr(HEADER_DEV_NAME, name.encode() + b"\0"))
    return nest(1, *parts)


def words(bits, nbits=NBITS):
    value = 0
    for b in bits:
        value |= 1 << (MODES[b] if isinstance(b, str) else b)
    n = (nbits + 31) // 32
    return struct.pack(f"={n}I", *[(value >> (32 * i)) & 0xffffffff for i in range(n)])


def bitset_compact(kind, value, mask=None, nbits=NBITS):
    """mask None: a list (NOMASK), as the kernel sends the partner's advertisement."""
    parts = [u32(BITSET_SIZE, nbits), attr(BITSET_VALUE, words(value, nbits))]
    if mask is None:
        parts.insert(0, attr(BITSET_NOMASK, b""))
    else:
        parts.append(attr(BITSET_MASK, words(mask, nbits)))
    return nest(kind, *parts)


def bitset_verbose(kind, value, mask=None, nbits=NBITS):
    """Every bit of the mask (or of the list) with its index and name, VALUE when it is set (not in a list)."""
    listed = mask if mask is not None else value
    bits = []
    for name in sorted(listed, key=lambda b: MODES[b]):
        parts = [u32(BIT_INDEX, MODES[name]), attr(BIT_NAME, name.encode() + b"\0")]
        if mask is not None and name in value:
            parts.append(attr(BIT_VALUE, b""))
        bits.append(nest(BITSET_BITS_BIT, *parts))
    parts = [u32(BITSET_SIZE, nbits), nest(BITSET_BITS, *bits)]
    if mask is None:
        parts.insert(0, attr(BITSET_NOMASK, b""))
    return nest(kind, *parts)


def message(cmd, attrs, seq=0, family=0x20):
    payload = struct.pack("=BBH", cmd, 1, 0) + attrs
    return struct.pack("=IHHII", 16 + len(payload), family, 0, seq, 0) + payload


def linkmodes(name=None, ifindex=None, supported=(), advertised=(), partner=None, speed=None, lanes=None,
              duplex=1, autoneg=1, verbose=False, cmd=LINKMODES_GET_REPLY):
    bitset = bitset_verbose if verbose else bitset_compact
    parts = [header(ifindex, name), u8(LINKMODES_AUTONEG, autoneg),
             bitset(LINKMODES_OURS, set(advertised), set(supported))]
    if partner:
        parts.append(bitset(LINKMODES_PEER, set(partner)))
    parts.append(u32(LINKMODES_SPEED, 0xffffffff if speed is None else speed))
    parts.append(u8(LINKMODES_DUPLEX, 0xff if duplex is None else duplex))
    if lanes:
        parts.append(u32(LINKMODES_LANES, lanes))
    return message(cmd, b"".join(parts))


def linkstate(name=None, ifindex=None, link=True, ext_state=None, ext_substate=None):
    parts = [header(ifindex, name), u8(LINKSTATE_LINK, 1 if link else 0)]
    if ext_state is not None:
        parts.append(u8(LINKSTATE_EXT_STATE, ext_state))
    if ext_substate is not None:
        parts.append(u8(LINKSTATE_EXT_SUBSTATE, ext_substate))
    return message(LINKSTATE_GET_REPLY, b"".join(parts))


def write_replies(path, *messages):
    """Replaces the replay file in one rename, as the daemon may read it at any moment."""
    tmp = f"{path}.tmp"
    with open(tmp, "wb") as f:
        f.write(b"".join(messages))
    os.rename(tmp, path)


# Real NICs' link-mode sets (what `ethtool IFACE` lists for them).
CONNECTX4_LX_25G = ["1000baseKX/Full", "10000baseKR/Full", "25000baseCR/Full", "25000baseKR/Full",
                    "25000baseSR/Full", "Autoneg", "FIBRE", "Pause"]
SWITCH_PORT_25G = ["10000baseKR/Full", "25000baseCR/Full", "Autoneg"]
