# SPDX-License-Identifier: LGPL-2.1-or-later
"""Test harness shared by the integration tests (and `make run`): a private dbus-daemon, network
namespaces, the daemon started with a notify socket, a GDBus client and a signal collector.

Everything a test creates carries the test process's PID in its name, so parallel runs (and
helpers working at the same time) never collide, and everything is removed on exit."""

import itertools
import json
import os
import shlex
import shutil
import socket
import subprocess
import tempfile
import threading
import time

import gi

gi.require_version("Gio", "2.0")
from gi.repository import Gio, GLib  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("LINKPROBE_BUILD", os.path.join(TOP, "build"))
DAEMON = os.path.join(BUILD, "linkprobed")
CTL = os.path.join(BUILD, "linkprobectl")

BUS_NAME = "org.linkprobe.LinkProbe1"
ROOT = "/org/linkprobe/LinkProbe1"
IFACE = "org.linkprobe.LinkProbe1."

_counter = itertools.count()


def unique(prefix):
    """A short unique name (interface names are limited to 15 bytes)."""
    return f"{prefix}{os.getpid() % 100000}{next(_counter)}"


class CommandError(subprocess.CalledProcessError):
    """A command that failed, told as its own error: the command line, the exit status and what it wrote
    to stderr (sysctl's "permission denied", ip's "File exists"), which is what a failing test must show."""

    def __str__(self):
        if self.returncode < 0:
            status = f"was killed by signal {-self.returncode}"
        else:
            status = f"exited with status {self.returncode}"
        err = (self.stderr or "").strip() or (self.stdout or "").strip() or "(no output)"
        cmd = self.cmd if isinstance(self.cmd, str) else shlex.join(map(str, self.cmd))
        return f"`{cmd}` {status}: {err}"


def run(cmd, check=True, **kw):
    """cmd's CompletedProcess (output as text); with check, a failure raises CommandError."""
    __tracebackhide__ = True  # pytest's traceback ends at the caller's line, then the command's error
    proc = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if check and proc.returncode != 0:
        raise CommandError(proc.returncode, proc.args, proc.stdout, proc.stderr)
    return proc


def stop_process(proc, timeout=5.0):
    """SIGTERM, then SIGKILL after timeout; waits for the process either way (None is fine)."""
    if proc is None or proc.poll() is not None:
        return
    proc.terminate()
    try:
        proc.wait(timeout)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def wait_until(predicate, timeout=10.0, interval=0.05):
    """Polls predicate() until it returns something true and returns that; once timeout has passed, its
    last (false) value."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


def wait_for(predicate, timeout=10.0, what=None, interval=0.05):
    """The same, but a timeout fails: AssertionError naming what was awaited (or the last value); what may
    be a function, called only then, to say what the state was."""
    value = wait_until(predicate, timeout, interval)
    if not value:
        if callable(what):
            what = what()
        raise AssertionError(f"timed out after {timeout}s waiting for {what}" if what else
                             f"condition not met within {timeout}s; last value: {value!r}")
    return value


def path_label(label):
    """The label as sd_bus_path_encode() writes it: every byte but [A-Za-z0-9] (and a leading digit) as
    _xx, "_" for nothing."""
    out = []
    for i, byte in enumerate(label.encode()):
        c = chr(byte)
        if c.isascii() and (c.isalpha() or (i > 0 and c.isdigit())):
            out.append(c)
        else:
            out.append(f"_{byte:02x}")
    return "".join(out) or "_"


def path_encode(prefix, label):
    """sd_bus_path_encode(prefix, label)."""
    return f"{prefix}/{path_label(label)}"


def _searchable_by_all(path):
    """Whether every directory from / down to path lets any user through (o+x)."""
    path = os.path.realpath(path)
    while True:
        if not os.stat(path).st_mode & 0o001:
            return False
        if path == "/":
            return True
        path = os.path.dirname(path)


class ForOtherUsers:
    """A directory any user may enter and read, holding copies of checkout files that code run as another
    user (setpriv) needs. The checkout may live where only root can go (under /root, mode 0700), so
    nothing run as another user may read it, nor start in it: run such code with cwd=self.dir."""

    def __init__(self):
        parent = tempfile.gettempdir()
        if not _searchable_by_all(parent):
            parent = "/tmp"
        self.dir = tempfile.mkdtemp(prefix=f"lp-shared-{os.getpid()}-", dir=parent)
        os.chmod(self.dir, 0o755)

    def copy(self, path):
        """The path of a world-readable copy of path (a file), made on first use."""
        dest = os.path.join(self.dir, os.path.basename(path))
        if not os.path.exists(dest):
            shutil.copyfile(path, dest)
            os.chmod(dest, 0o755 if os.access(path, os.X_OK) else 0o644)
        return dest

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


class PrivateBus:
    """A dbus-daemon of our own with a session-style policy, listening on a path socket (path sockets,
    unlike abstract ones, are reachable from inside every network namespace)."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="lp-bus-")
        self.socket = os.path.join(self.dir, "bus")
        self.address = f"unix:path={self.socket}"
        config = os.path.join(self.dir, "bus.conf")
        with open(config, "w") as f:
            f.write(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <listen>{self.address}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
    <allow user="*"/>
  </policy>
</busconfig>
""")
        # dbus-daemon complains on stderr that it may not raise its fd limit; keep that in a file.
        self.log = open(os.path.join(self.dir, "dbus-daemon.log"), "w")
        self.proc = subprocess.Popen(["dbus-daemon", f"--config-file={config}", "--nofork", "--nopidfile",
                                      "--print-address=1"], stdout=subprocess.PIPE, stderr=self.log, text=True)
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError("dbus-daemon did not start")

    def stop(self):
        stop_process(self.proc)
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


def netns_exec_cmd(name, cmd):
    """cmd, run inside network namespace name."""
    return ["ip", "netns", "exec", name, *cmd]


def network_namespaces_refused():
    """None where a network namespace can be made and configured (root with CAP_SYS_ADMIN and
    CAP_NET_ADMIN), else the error that says why not (a container that does not grant them)."""
    name = unique("lpcheck")
    made = run(["ip", "netns", "add", name], check=False)
    if made.returncode != 0:
        return made.stderr.strip()
    try:
        up = run(["ip", "-n", name, "link", "set", "lo", "up"], check=False)
        return up.stderr.strip() if up.returncode else None
    finally:
        run(["ip", "netns", "delete", name], check=False)


# --- /proc/sys in a container ------------------------------------------------------------------------
# Docker and systemd-nspawn mount /proc/sys read-only (nspawn leaves /proc/sys/net writable only with a
# private network). What the tests write there (a namespace's sysctls, a node's hostname) is their own
# namespace's, so where the container grants CAP_SYS_ADMIN (nspawn does) the command remounts the mount
# read-write in a private mount namespace first; where it does not (Docker without --privileged), the
# test is skipped, with why and how to run it.

def _mount_point(path):
    """The mount point path lies on, from /proc/self/mountinfo (bind mounts of a subdirectory included,
    which os.path.ismount() cannot tell)."""
    with open("/proc/self/mountinfo") as f:
        targets = [line.split()[4].replace("\\040", " ") for line in f]
    return max((t for t in targets if path == t or path.startswith(t.rstrip("/") + "/")), key=len)


_remount_refused = {}


def proc_sys_remount(path):
    """"" where path (below /proc/sys) is writable as mounted; else the shell command that makes it
    writable, to run first in a private mount namespace (`ip netns exec` and `unshare --mount` give one).
    Skips the calling test where the container does not allow that."""
    if not os.statvfs(path).f_flag & os.ST_RDONLY:
        return ""
    mount_point = _mount_point(path)
    remount = f"mount -o remount,bind,rw {shlex.quote(mount_point)}"
    if mount_point not in _remount_refused:
        proc = run(["unshare", "--mount", "sh", "-c", remount], check=False)
        _remount_refused[mount_point] = (proc.stderr or proc.stdout).strip() if proc.returncode else None
    if _remount_refused[mount_point] is not None:
        import pytest
        pytest.skip(f"{mount_point} is mounted read-only (a container) and cannot be made writable in a private "
                    f"mount namespace ({_remount_refused[mount_point]}): run the container with a writable "
                    f"/proc/sys (SYSTEMD_NSPAWN_API_VFS_WRITABLE=yes systemd-nspawn, docker run --privileged)")
    return remount


def sysctl(netns_name, *assignments):
    """sysctl -qw assignments ("key=value") inside network namespace netns_name, whose net.* keys are its
    own; works where /proc/sys is mounted read-only if it can be remounted (see proc_sys_remount)."""
    cmd = ["sysctl", "-qw", *assignments]
    remount = proc_sys_remount("/proc/sys/net")
    if remount:
        cmd = ["sh", "-c", f'{remount} && exec "$@"', "sh", *cmd]
    return run(netns_exec_cmd(netns_name, cmd))


class NetNS:
    """A network namespace made for one test (named uniquely unless name is given), or with create=False
    one made elsewhere; `ip` runs inside it with .ip(...), other commands with .exec_cmd(...)."""

    def __init__(self, name=None, create=True):
        self.name = name or unique("lp")
        self.holders = []
        self.owned = create
        if create:
            run(["ip", "netns", "add", self.name])
            try:
                self.ip("link", "set", "lo", "up")
            except BaseException:
                self.delete()
                raise

    def ip(self, *args, check=True):
        return run(["ip", "-n", self.name, *args], check=check)

    def ip_json(self, *args):
        # Interface names are bytes; keep any that are not UTF-8 as surrogates, comparable as bytes.
        out = subprocess.run(["ip", "-n", self.name, "-j", *args], check=True, capture_output=True).stdout
        return json.loads(out.decode("utf-8", "surrogateescape") or "[]", strict=False)

    def batch(self, commands, check=True):
        """Runs many `ip` commands in one process (fast enough to provoke bursts)."""
        return subprocess.run(["ip", "-n", self.name, "-force", "-batch", "-"], input="\n".join(commands) + "\n",
                              capture_output=True, text=True, check=check)

    def exec_cmd(self, cmd):
        return netns_exec_cmd(self.name, cmd)

    def hold_tun(self, name):
        """Attaches a process to tun device name so it gets a carrier (a VPN client would)."""
        script = ("import fcntl, os, struct, time, sys\n"
                  "fd = os.open('/dev/net/tun', os.O_RDWR)\n"
                  "fcntl.ioctl(fd, 0x400454ca, struct.pack('16sH', sys.argv[1].encode(), 0x0001 | 0x1000))\n"
                  "print('attached', flush=True)\n"
                  "time.sleep(3600)\n")
        proc = subprocess.Popen(self.exec_cmd(["/usr/bin/python3", "-c", script, name]), stdout=subprocess.PIPE,
                                text=True)
        if proc.stdout.readline().strip() != "attached":
            raise RuntimeError(f"could not attach to {name}")
        self.holders.append(proc)
        return proc

    def delete(self):
        for proc in self.holders:
            proc.kill()
            proc.wait()
        if self.owned:
            run(["ip", "netns", "delete", self.name], check=False)


class NotifySocket:
    """Receives sd_notify() messages like systemd would."""

    def __init__(self, directory):
        self.path = os.path.join(directory, "notify")
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.sock.bind(self.path)
        self.messages = []

    def wait_for(self, key, timeout=20.0):
        deadline = time.monotonic() + timeout
        while True:
            for m in self.messages:
                if key in m:
                    return m
            left = deadline - time.monotonic()
            if left <= 0:
                return None
            self.sock.settimeout(left)
            try:
                data = self.sock.recv(4096).decode(errors="replace")
            except socket.timeout:
                return None
            self.messages.append(dict(line.split("=", 1) for line in data.splitlines() if "=" in line))

    def close(self):
        self.sock.close()


class Daemon:
    """linkprobed on the private bus, optionally inside a network namespace, ready when it says so
    (program: another linkprobed than the build's, such as an installed one)."""

    def __init__(self, bus, netns=None, args=(), env=None, config=None, wait=True, prefix=(), state_dir=None,
                 gpu=False, program=None, watch=False):
        self.dir = tempfile.mkdtemp(prefix="lp-daemon-")
        self.notify = NotifySocket(self.dir)
        self.stderr_path = os.path.join(self.dir, "stderr")
        # Results persist in a directory of the test's own (pass state_dir to share one across restarts).
        self.state_dir = state_dir or os.path.join(self.dir, "state")
        cmd = [program or DAEMON, f"--bus-address={bus.address}", f"--state-directory={self.state_dir}", *args]
        if not gpu and not any(a.startswith("--config") for a in args):
            # A GPU measurement at every start would load both CPUs for a second (PoCL) under tests that
            # have no use for it: off unless the test asks (test_gpu.py).
            config = (config or "") + "\n[Gpu]\nEnabled=no\n"
        if not watch and not any(a.startswith("--config") for a in args):
            # The watch's samples (every 2 s by default) change rates and wake the daemon: tests that do
            # not look at them run without, the way they ran before there was one. First, so that a
            # [Watch] section in the test's own configuration wins.
            config = "[Watch]\nIntervalSec=0\n" + (config or "")
        self.config_path = None  # the file the test's configuration was written to, if it gave one
        if config is not None:
            path = self.config_path = os.path.join(self.dir, "linkprobed.conf")
            with open(path, "w") as f:
                f.write(config)
            cmd.append(f"--config={path}")
        elif not any(a.startswith("--config") for a in args):
            # Never read the machine's /etc configuration in a test.
            cmd.append(f"--config={os.path.join(TOP, 'tests', 'integration', 'empty.conf')}")
        if netns:
            cmd = netns.exec_cmd(cmd)
        cmd = [*prefix, *cmd]
        full_env = dict(os.environ)
        full_env["NOTIFY_SOCKET"] = self.notify.path
        full_env.setdefault("LINKPROBE_PROBE_DIR", BUILD)  # probes from the build tree
        full_env.update(env or {})
        self.started = time.monotonic()
        self.stderr = open(self.stderr_path, "w")
        self.proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=self.stderr, env=full_env)
        self.ready_after = None
        self.log_text = ""
        if wait:
            try:
                self.wait_ready()
            except RuntimeError:
                # Nobody will hold this object to stop it: clean up here, then report.
                self.stop()
                raise

    def wait_ready(self, timeout=30.0):
        ready = self.notify.wait_for("READY", timeout)
        if ready is None:
            log = self.log()
            raise RuntimeError(f"linkprobed did not become ready (exit {self.proc.poll()}):\n{log}")
        self.ready_after = time.monotonic() - self.started
        return ready

    def log(self):
        if self.stderr.closed:
            return self.log_text
        self.stderr.flush()
        with open(self.stderr_path) as f:
            return f.read()

    def wait_log(self, text, timeout=5.0):
        """Waits until text appears in the daemon's stderr (work after READY=1 logs a little later)."""
        return wait_until(lambda: text in self.log(), timeout, interval=0.02)

    def signal(self, sig):
        self.proc.send_signal(sig)

    def stop(self):
        stop_process(self.proc, timeout=10)
        self.log_text = self.log()
        self.stderr.close()
        self.notify.close()
        shutil.rmtree(self.dir, ignore_errors=True)
        return self.proc.returncode


def unpack(value):
    return value.unpack() if isinstance(value, GLib.Variant) else value


GRAVER_THAN_DEGRADED = ("errors", "flapping")


def one_verdict_violations(objects):
    """Every object of a GetManagedObjects reply that breaks the one-verdict rule (linkprobed(8), HEALTH):
    Health is "degraded" exactly when Degraded is true, unless a graver Health (errors, flapping) stands;
    a Degraded object has a DegradedReason, and one that is not has none, or (a Link whose ends could not
    both be known) one that starts with "unknown: " and says why nothing was judged. Returns "path
    interface: what" lines; empty when every object keeps it."""
    wrong = []
    for path, interfaces in objects.items():
        for interface, props in interfaces.items():
            if "Health" not in props or "Degraded" not in props:
                continue
            health, degraded, reason = props["Health"], props["Degraded"], props.get("DegradedReason", "")
            if degraded and health != "degraded" and health not in GRAVER_THAN_DEGRADED:
                wrong.append(f"{path} {interface}: Degraded but Health={health} ({props.get('HealthReason')!r})")
            if health == "degraded" and not degraded:
                wrong.append(f"{path} {interface}: Health=degraded ({props.get('HealthReason')!r}) but not Degraded")
            if degraded != bool(reason) and not (not degraded and reason.startswith("unknown: ")):
                wrong.append(f"{path} {interface}: Degraded={degraded} with DegradedReason {reason!r}")
            if degraded and reason.startswith("unknown: "):
                wrong.append(f"{path} {interface}: Degraded with the reason of nothing judged {reason!r}")
            if degraded and reason not in props.get("HealthReason", ""):
                wrong.append(f"{path} {interface}: DegradedReason {reason!r} not in HealthReason "
                             f"{props.get('HealthReason')!r}")
    return wrong


class Client:
    """A synchronous GDBus client for method calls and property reads."""

    def __init__(self, bus):
        self.bus = bus
        self.conn = Gio.DBusConnection.new_for_address_sync(
            bus.address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)

    def call(self, path, interface, method, signature=None, args=(), reply=None, timeout_ms=20000):
        params = GLib.Variant(signature, tuple(args)) if signature else None
        result = self.conn.call_sync(BUS_NAME, path, interface, method, params,
                                     GLib.VariantType(reply) if reply else None,
                                     Gio.DBusCallFlags.NONE, timeout_ms, None)
        return result.unpack() if result is not None else None

    def objects(self):
        (objects,) = self.call(ROOT, "org.freedesktop.DBus.ObjectManager", "GetManagedObjects")
        return objects

    def link_by_name(self, name):
        return next((v for v in self.links().values() if v["Name"] == name), None)

    def links(self):
        """Link objects by index."""
        return {props[IFACE + "Link"]["Index"]: dict(props[IFACE + "Link"], Path=path)
                for path, props in self.objects().items() if IFACE + "Link" in props}

    def managed_objects_differing_from_getall(self):
        """Objects whose GetManagedObjects entry differs from what Properties.GetAll says (GetManagedObjects
        is answered from the daemon's own tables; GetAll by sd-bus from the vtable)."""
        def same(a, b):
            # NaN is a value we publish (GPU FP16 without support) and is never equal to itself.
            if isinstance(a, float) and isinstance(b, float) and a != a and b != b:
                return True
            if isinstance(a, dict) and isinstance(b, dict):
                return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
            if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
                return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b))
            return a == b

        # A fact that arrives between the two calls (a link's link modes, asked of ethtool once the daemon
        # runs) is not a difference of serialization: an object is wrong only when GetAll matches neither
        # the GetManagedObjects before it nor the one after it.
        before = self.objects()
        differing = []
        for path, interfaces in before.items():
            for interface, props in interfaces.items():
                (getall,) = self.call(path, "org.freedesktop.DBus.Properties", "GetAll", "(s)", (interface,))
                if not same(getall, props):
                    differing.append((path, interface, getall))
        after = self.objects() if differing else {}
        return [(path, interface) for path, interface, getall in differing
                if not same(getall, after.get(path, {}).get(interface))]

    def get_all(self, interface, path=ROOT):
        (props,) = self.call(path, "org.freedesktop.DBus.Properties", "GetAll", "(s)", (IFACE + interface,))
        return props

    def close(self):
        self.conn.close_sync(None)


class SignalCollector:
    """Collects every signal our daemon sends, on a thread with its own GLib main context."""

    def __init__(self, bus):
        self.events = []
        self.lock = threading.Condition()
        self.ready = threading.Event()
        self.loop = None
        self.thread = threading.Thread(target=self._run, args=(bus.address,), daemon=True)
        self.thread.start()
        if not self.ready.wait(10):
            raise RuntimeError("signal collector did not start")

    def _run(self, address):
        context = GLib.MainContext.new()
        context.push_thread_default()
        self.conn = Gio.DBusConnection.new_for_address_sync(
            address,
            Gio.DBusConnectionFlags.AUTHENTICATION_CLIENT | Gio.DBusConnectionFlags.MESSAGE_BUS_CONNECTION,
            None, None)
        self.conn.signal_subscribe(None, None, None, None, None, Gio.DBusSignalFlags.NONE, self._on_signal)
        self.loop = GLib.MainLoop.new(context, False)
        idle = GLib.idle_source_new()
        idle.set_callback(lambda *a: (self.ready.set(), False)[1])
        idle.attach(context)
        self.loop.run()

    def _on_signal(self, conn, sender, path, interface, member, params):
        with self.lock:
            self.events.append((time.monotonic(), path, interface, member, params.unpack()))
            self.lock.notify_all()

    def wait(self, predicate, timeout=10.0):
        """Waits until predicate(events) is true; returns it or None."""
        deadline = time.monotonic() + timeout
        with self.lock:
            while True:
                result = predicate(self.events)
                if result:
                    return result
                left = deadline - time.monotonic()
                if left <= 0:
                    return None
                self.lock.wait(left)

    def clear(self):
        with self.lock:
            self.events = []

    def stop(self):
        if self.loop:
            self.loop.quit()
        self.thread.join(5)


def ctl(bus, *args, netns=None, check=False, env=None, timeout=120):
    """linkprobectl on the test's bus; a hang fails the test instead of stopping the run."""
    cmd = [CTL, f"--bus-address={bus.address}", *args]
    if netns:
        cmd = netns.exec_cmd(cmd)
    return run(cmd, check=check, timeout=timeout, env=dict(os.environ, **env) if env else None)


def on_a_terminal(cmd, env=None, timeout=20.0):
    """cmd with stdin, stdout and stderr on a pseudo-terminal: (exit status, what the terminal showed).
    A program that waits there (a pager waiting for a key) is stopped at the timeout: status None."""
    import pty
    import select

    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, stdin=slave, stdout=slave, stderr=slave, env=env, start_new_session=True)
    os.close(slave)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if select.select([master], [], [], 0.2)[0]:
            try:
                chunk = os.read(master, 65536)
            except OSError:  # EIO: every writer is gone
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    os.close(master)
    try:
        status = proc.wait(10)
    except subprocess.TimeoutExpired:
        stop_process(proc)
        status = None
    return status, out.decode(errors="replace").replace("\r\n", "\n")
