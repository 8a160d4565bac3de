# SPDX-License-Identifier: LGPL-2.1-or-later
"""Field-by-field comparison of our Link objects with `ip -j -d addr show` in the same namespace."""

import time

import lp

KIND_FROM_INFO = {"veth": "veth", "bridge": "bridge", "tun": "tun", "macvlan": "macvlan", "macvtap": "macvlan",
                  "bond": "bond", "vlan": "vlan"}


def expected_kind(entry):
    info = (entry.get("linkinfo") or {}).get("info_kind")
    if entry.get("link_type") == "loopback":
        return "loopback"
    return KIND_FROM_INFO.get(info, "other" if info else None)


def name_bytes(name):
    return name.encode("utf-8", "surrogateescape")


def sysfs_speeds(netns):
    """{ifindex: (speed or None, duplex or None)} read from the namespace's own sysfs in one go."""
    script = ('for d in /sys/class/net/*; do printf "%s %s %s\\n" "$(cat $d/ifindex)" '
              '"$(cat $d/speed 2>/dev/null || echo none)" "$(cat $d/duplex 2>/dev/null || echo none)"; done')
    out = lp.run(netns.exec_cmd(["sh", "-c", script])).stdout
    speeds = {}
    for line in out.splitlines():
        index, speed, duplex = line.split()
        speed = int(speed) if speed.lstrip("-").isdigit() and int(speed) > 0 else 0
        speeds[int(index)] = (speed, duplex if duplex in ("full", "half") else "unknown")
    return speeds


def differences(client, netns):
    kernel = netns.ip_json("-d", "addr", "show")
    speeds = sysfs_speeds(netns)
    ours = client.links()
    diffs = []
    kernel_indexes = {e["ifindex"] for e in kernel}
    for index in sorted(set(ours) - kernel_indexes):
        diffs.append(f"link {index} ({ours[index]['Name']}) published but not in the kernel")
    for e in kernel:
        index = e["ifindex"]
        if index not in ours:
            diffs.append(f"link {index} ({e['ifname']!r}) missing")
            continue
        o = ours[index]

        def check(field, ours_value, kernel_value):
            if ours_value != kernel_value:
                diffs.append(f"link {index} {field}: ours {ours_value!r}, kernel {kernel_value!r}")

        check("NameBytes", bytes(o["NameBytes"]), name_bytes(e["ifname"]))
        check("Mtu", o["Mtu"], e["mtu"])
        check("OperState", o["OperState"], e["operstate"].lower())
        check("HardwareAddress", o["HardwareAddress"], e.get("address", "") if e.get("link_type") != "none" else "")
        check("AdminState", o["AdminState"], "up" if "UP" in e["flags"] else "down")
        check("Carrier", o["Carrier"], "LOWER_UP" in e["flags"])
        # Without a carrier nothing is negotiated: the daemon publishes "unknown" where some drivers
        # (veth) still answer a fixed figure.
        if index in speeds and "UP" in e["flags"] and "LOWER_UP" in e["flags"]:
            check("SpeedMbps", o["SpeedMbps"], speeds[index][0])
            check("Duplex", o["Duplex"], speeds[index][1])
        elif index in speeds:
            check("SpeedMbps", o["SpeedMbps"], 0)
            check("Duplex", o["Duplex"], "unknown")
        kind = expected_kind(e)
        if kind:
            check("Kind", o["Kind"], kind)
        ours_addresses = sorted((a[0], a[1], a[2]) for a in o["Addresses"])
        kernel_addresses = sorted((a["local"], a["prefixlen"], a["scope"]) for a in e.get("addr_info", []))
        check("Addresses", ours_addresses, kernel_addresses)
    return diffs


def wait_consistent(client, netns, timeout=10.0):
    """Waits until our state equals the kernel's; returns the remaining differences (empty on success)."""
    deadline = time.monotonic() + timeout
    while True:
        diffs = differences(client, netns)
        if not diffs or time.monotonic() > deadline:
            return diffs
        time.sleep(0.05)
