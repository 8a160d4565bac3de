# SPDX-License-Identifier: LGPL-2.1-or-later
"""Reusable pieces for Thunderbolt integration tests.

- UmockdevFixture: a parsed umockdev description (the fixture itself, to check peers against).
- Testbed: a umockdev testbed built from a fixture (a plain tree under a temp dir, plus the
  UMOCKDEV_DIR a `umockdev-wrapper`ed process needs to see it as /sys).
- LiveTestbed: the same from fixtures by name, changing while a daemon watches it (umockdev_testbed).
- PrivateBus: a private dbus-daemon of type "system"; DBUS_SYSTEM_BUS_ADDRESS points at it.
- Boltd: /usr/libexec/boltd under umockdev-wrapper on that bus with its own state and runtime
  directories; devices() reads every org.freedesktop.bolt1.Device as a plain dict.
- tbt_dump(): our reader's and topology's view of the same tree (build/tbt-dump).
- compare_router(): the side-by-side rules, one place for phase A (tbt-dump) and for the daemon's
  D-Bus objects later: pass any dict with the same keys.

Every name (sockets, temp dirs) contains the PID; everything started is stopped on close, also when
a test fails.
"""

import json
import os
import select
import shutil
import subprocess
import tempfile

import umockdev_testbed
from lp import stop_process, wait_for

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIXTURES = os.path.join(TOP, "tests", "fixtures", "thunderbolt")
BOLTD = "/usr/libexec/boltd"
BOLT_BUS_NAME = "org.freedesktop.bolt"
BOLT_PATH = "/org/freedesktop/bolt"
BOLT_MANAGER = "org.freedesktop.bolt1.Manager"
BOLT_DEVICE = "org.freedesktop.bolt1.Device"


def missing_tools(boltd=True):
    """Why the boltd side-by-side (or, with boltd=False, a umockdev testbed) cannot run here, or None."""
    for tool in ((BOLTD,) if boltd else ()) + (shutil.which("umockdev-wrapper"), shutil.which("dbus-daemon")):
        if not tool or not os.access(tool, os.X_OK):
            return f"{tool or 'umockdev-wrapper/dbus-daemon'} not installed (Debian packages bolt, umockdev, dbus)"
    try:
        import dbus  # noqa: F401
        import gi

        gi.require_version("UMockdev", "1.0")
        from gi.repository import UMockdev  # noqa: F401
    except (ImportError, ValueError) as e:
        return f"python3-dbus or gir1.2-umockdev-1.0 missing: {e}"
    return None


def fixture_records(name, predicate):
    """The records of a .umockdev file whose device path satisfies predicate, as umockdev text (parents
    before children, as in the file): what add_from_string() takes to plug devices back in."""
    with open(fixture_path(name), encoding="utf-8") as f:
        records = f.read().strip("\n").split("\n\n")
    return "\n\n".join(r for r in records if predicate(r.split("\n", 1)[0][len("P: "):])) + "\n"


def fixture_path(name):
    return os.path.join(FIXTURES, name)


def unescape(value):
    """umockdev's A: values use C escapes (\\n, \\\\, octal)."""
    return value.encode("latin-1").decode("unicode_escape")


class UmockdevFixture:
    """The devices a .umockdev file describes: path, E: properties, A: attributes, L: links."""

    def __init__(self, name):
        self.devices = []
        current = None
        with open(fixture_path(name), encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\n")
                if not line.strip():
                    current = None
                    continue
                tag, _, rest = line.partition(": ")
                if tag == "P":
                    current = {"path": rest, "E": {}, "A": {}, "L": {}}
                    self.devices.append(current)
                elif tag in ("E", "L"):
                    key, _, value = rest.partition("=")
                    current[tag][key] = value
                elif tag == "A":
                    key, _, value = rest.partition("=")
                    current["A"][key] = unescape(value).rstrip("\n")
                elif tag == "H":
                    key, _, value = rest.partition("=")
                    current["A"][key] = bytes.fromhex(value).decode("utf-8", "replace")

    def by_devtype(self, devtype):
        return [d for d in self.devices if d["E"].get("DEVTYPE") == devtype]

    def iommu_protected(self):
        return any(d["A"].get("iommu_dma_protection") == "1" for d in self.by_devtype("thunderbolt_domain"))


class Testbed:
    def __init__(self, fixture):
        import gi

        gi.require_version("UMockdev", "1.0")
        from gi.repository import UMockdev

        self._testbed = UMockdev.Testbed.new()
        self._testbed.add_from_file(fixture_path(fixture))
        self.root = self._testbed.get_root_dir()
        self.sys = self._testbed.get_sys_dir()

    def env(self):
        # Testbed.new() sets UMOCKDEV_DIR in the C environment only; Python's os.environ is a copy.
        return {"UMOCKDEV_DIR": self.root}

    def close(self):
        self._testbed = None  # its finalizer removes the tree
        if os.path.isdir(self.root):
            shutil.rmtree(self.root, ignore_errors=True)


class LiveTestbed(umockdev_testbed.Testbed):
    """A testbed that can change while a daemon watches it (umockdev_testbed.Testbed: owned by a process
    under `umockdev-wrapper`, as only a preloaded process can send umockdev's uevents), built from
    fixtures by name. Its methods also take a fixture's device paths ("/devices/...")."""

    def __init__(self, *fixtures):
        super().__init__(*[fixture_path(f) for f in fixtures])

    @staticmethod
    def devpath(path):
        """A fixture's device path ("/devices/...") as the testbed API wants it ("/sys/devices/...")."""
        return path if path.startswith("/sys/") else "/sys" + path

    def uevent(self, path, action):
        return super().uevent(self.devpath(path), action)

    def set_attribute(self, path, name, value):
        return super().set_attribute(self.devpath(path), name, value)

    def set_property(self, path, name, value):
        return super().set_property(self.devpath(path), name, value)

    def remove_device(self, path):
        return super().remove_device(self.devpath(path))

    def host_path(self, path):
        """Where a /sys path of the testbed lives for this (not preloaded) process."""
        return os.path.join(self.root, self.devpath(path).lstrip("/"))


BUS_CONFIG = """<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_type="method_call"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
"""


class PrivateBus:
    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix=f"linkprobe-tbt-bus-{os.getpid()}-")
        self.socket = os.path.join(self.dir, f"bus-{os.getpid()}.sock")
        config = os.path.join(self.dir, "bus.conf")
        with open(config, "w", encoding="utf-8") as f:
            f.write(BUS_CONFIG.format(socket=self.socket))
        self.log = open(os.path.join(self.dir, "dbus-daemon.log"), "w+", encoding="utf-8")
        # The daemon prints its address once it listens; the socket file alone appears earlier.
        ready_r, ready_w = os.pipe()
        self.proc = subprocess.Popen(["dbus-daemon", "--config-file", config, "--nofork", "--nopidfile",
                                      f"--print-address={ready_w}"], stdout=self.log, stderr=subprocess.STDOUT,
                                     pass_fds=(ready_w,))
        os.close(ready_w)
        try:
            readable, _, _ = select.select([ready_r], [], [], 10)
            line = os.read(ready_r, 4096).decode() if readable else ""
            if not line.strip():
                raise RuntimeError(f"dbus-daemon did not start: {self.read_log()}")
            self.address = line.strip()
            import dbus

            self.connection = dbus.bus.BusConnection(self.address)
        except BaseException:
            self.close()
            raise
        finally:
            os.close(ready_r)

    def read_log(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def env(self):
        return {"DBUS_SYSTEM_BUS_ADDRESS": self.address}

    def close(self):
        conn = getattr(self, "connection", None)
        if conn is not None:
            conn.close()
        stop_process(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def unwrap(value):
    """dbus-python types to plain Python ones."""
    import dbus

    if isinstance(value, (dbus.String, dbus.ObjectPath)):
        return str(value)
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.Int32, dbus.Int64, dbus.UInt16, dbus.UInt32, dbus.UInt64)):
        return int(value)
    if isinstance(value, dbus.Double):
        return float(value)
    if isinstance(value, dict):
        return {unwrap(k): unwrap(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [unwrap(v) for v in value]
    return value


class Boltd:
    """boltd on a testbed and a private bus; the anchor for routers (it ignores XDomain peers)."""

    def __init__(self, testbed, bus, timeout=20):
        self.bus = bus
        self.dir = tempfile.mkdtemp(prefix=f"linkprobe-tbt-boltd-{os.getpid()}-")
        state, runtime = os.path.join(self.dir, "state"), os.path.join(self.dir, "run")
        os.mkdir(state)
        os.mkdir(runtime)
        env = dict(os.environ)
        env.update(testbed.env())
        env.update(bus.env())
        env.update({"STATE_DIRECTORY": state, "RUNTIME_DIRECTORY": runtime, "SYSTEMD_DEVICE_VERIFY_SYSFS": "0"})
        self.log = open(os.path.join(self.dir, "boltd.log"), "w+", encoding="utf-8")
        self.proc = subprocess.Popen(["umockdev-wrapper", BOLTD, "--verbose"], env=env, stdout=self.log,
                                     stderr=subprocess.STDOUT)
        try:
            dbus_proxy = bus.connection.get_object("org.freedesktop.DBus", "/org/freedesktop/DBus")

            def ready():
                if self.proc.poll() is not None:
                    raise RuntimeError(f"boltd exited with {self.proc.returncode}:\n{self.read_log()}")
                return bool(dbus_proxy.NameHasOwner(BOLT_BUS_NAME, dbus_interface="org.freedesktop.DBus"))

            wait_for(ready, timeout, "boltd to own org.freedesktop.bolt")
            wait_for(lambda: not self.manager_property("Probing"), timeout, "boltd to finish probing")
        except BaseException:
            self.close()
            raise

    def read_log(self):
        self.log.flush()
        self.log.seek(0)
        return self.log.read()

    def manager_property(self, name):
        obj = self.bus.connection.get_object(BOLT_BUS_NAME, BOLT_PATH)
        return unwrap(obj.Get(BOLT_MANAGER, name, dbus_interface="org.freedesktop.DBus.Properties"))

    def devices(self):
        """Every device boltd lists, as {property: value} dicts."""
        manager = self.bus.connection.get_object(BOLT_BUS_NAME, BOLT_PATH)
        paths = manager.ListDevices(dbus_interface=BOLT_MANAGER)
        result = []
        for path in paths:
            obj = self.bus.connection.get_object(BOLT_BUS_NAME, path)
            props = unwrap(obj.GetAll(BOLT_DEVICE, dbus_interface="org.freedesktop.DBus.Properties"))
            props["ObjectPath"] = str(path)
            result.append(props)
        return result

    def close(self):
        stop_process(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def build_dir():
    return os.environ.get("LINKPROBE_BUILD") or os.path.join(TOP, "build")


def tbt_dump(sys_dir):
    """tbt-dump's JSON for a sysfs root."""
    binary = os.path.join(build_dir(), "tbt-dump")
    proc = subprocess.run([binary, f"--sysfs-root={sys_dir}", "--compact"], capture_output=True, text=True,
                          timeout=60)
    if proc.returncode != 0:
        raise RuntimeError(f"tbt-dump failed ({proc.returncode}): {proc.stderr}")
    return json.loads(proc.stdout)


def ours_from_dump(dump):
    """tbt-dump's routers in the neutral form compare_router() takes (the daemon's objects will be
    mapped to the same keys in phase B): unique_id, name, vendor, raw ids, generation, authorized,
    lanes and per-lane speeds, type, syspath, and the parent's unique id ("" under a domain)."""
    by_name = {d["sysname"]: d for d in dump["devices"]}
    routers = []
    for d in dump["devices"]:
        if d["kind"] != "router":
            continue
        parent = by_name.get(d["parent"])
        routers.append({
            "sysname": d["sysname"],
            "unique_id": d["unique_id"],
            "name": d["device_name"],
            "vendor": d["vendor_name"],
            "device_id": d["device_id"],
            "vendor_id": d["vendor_id"],
            "generation": d["generation"],
            "authorized": d["authorized"],
            "rx_lanes": d["rx"]["lanes"],
            "rx_lane_gbps": d["rx"]["lane_gbps"],
            "tx_lanes": d["tx"]["lanes"],
            "tx_lane_gbps": d["tx"]["lane_gbps"],
            "type": d["type"],
            "syspath": d["syspath"],
            "parent_unique_id": parent.get("unique_id") if parent and parent["kind"] == "router" else None,
        })
    return routers


def ours_from_objects(objects):
    """linkprobed's Thunderbolt objects (GetManagedObjects, unpacked) in compare_router()'s form.
    Authorized "yes"/"secure"/"no" is 1/2/0; the D-Bus API publishes unknown as "" and 0."""
    interface = "org.linkprobe.LinkProbe1.Thunderbolt"
    by_path = {path: props[interface] for path, props in objects.items() if interface in props}
    authorized = {"no": 0, "yes": 1, "secure": 2}
    routers = []
    for path, t in by_path.items():
        if t["Type"] not in ("host", "hub", "device"):
            continue
        parent = by_path.get(t["Parent"])
        routers.append({
            "sysname": t["SysfsName"],
            "unique_id": t["UniqueId"] or None,
            "name": t["Name"] or None,
            "vendor": t["Vendor"] or None,
            "device_id": t["DeviceId"],
            "vendor_id": t["VendorId"],
            "generation": t["Generation"],
            "authorized": authorized.get(t["Authorized"]),
            "rx_lanes": t["RxLanes"],
            "rx_lane_gbps": t["RxLaneGbps"],
            "tx_lanes": t["TxLanes"],
            "tx_lane_gbps": t["TxLaneGbps"],
            "type": t["Type"],
            "syspath": None,
            "parent_unique_id": parent["UniqueId"] if parent and parent["Type"] != "domain" else None,
        })
    return routers


def compare_router(bolt, ours):
    """Differences between one boltd device and our view of the same router, as a list of strings.

    bolt falls back to the raw "device"/"vendor" attribute (the kernel prints "%#x") where a DROM has
    no names; we publish unknown there, so the fallback is what we compare with. bolt reports 0 for an
    unknown generation, lane count or speed; Status "authorized" is authorized >= 1, AuthFlags carries
    "secure" for authorized == 2. Parent is the parent router's unique id, "" below a domain.
    """
    diffs = []

    def check(what, theirs, mine):
        if theirs != mine:
            diffs.append(f"{what}: boltd {theirs!r}, ours {mine!r}")

    def named(name, raw_id):
        if name is not None:
            return name
        return hex(raw_id) if raw_id is not None else None

    check("unique id", bolt["Uid"], ours["unique_id"])
    check("name", bolt["Name"], named(ours["name"], ours["device_id"]))
    check("vendor", bolt["Vendor"], named(ours["vendor"], ours["vendor_id"]))
    check("generation", bolt["Generation"], ours["generation"] or 0)
    check("authorized", bolt["Status"] in ("authorized", "authorized-secure", "authorized-newkey"),
          (ours["authorized"] or 0) >= 1)
    flags = {f.strip() for f in bolt["AuthFlags"].split("|")}  # "secure | boot"
    check("secure authorization", "secure" in flags, ours["authorized"] == 2)
    speed = bolt["LinkSpeed"]
    check("rx lanes", speed.get("rx.lanes", 0), ours["rx_lanes"] or 0)
    check("rx per-lane Gb/s", speed.get("rx.speed", 0), ours["rx_lane_gbps"] or 0)
    check("tx lanes", speed.get("tx.lanes", 0), ours["tx_lanes"] or 0)
    check("tx per-lane Gb/s", speed.get("tx.speed", 0), ours["tx_lane_gbps"] or 0)
    check("parent", bolt["Parent"], ours["parent_unique_id"] or "")
    check("host", bolt["Type"] == "host", ours["type"] == "host")
    if ours["syspath"] is not None:
        check("sysfs path", bolt["SysfsPath"], "/sys/" + ours["syspath"])
    else:  # the D-Bus objects publish the name, not the path
        check("sysfs name", os.path.basename(bolt["SysfsPath"]), ours["sysname"])
    return diffs
