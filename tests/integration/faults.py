# SPDX-License-Identifier: LGPL-2.1-or-later
"""Helpers for the fault, hostile-input and soak tests (test_faults.py, test_hostile_bus.py, tests/soak):
process figures from /proc, the daemon's own counters, stand-ins for the peer probes, a small tmpfs, and
a place where every test writes down what it measured.

Figures go to $LINKPROBE_BUILD/reliability-figures.jsonl, one JSON object per line
({"test": ..., "when": ..., figures...}), so a run of `make check` leaves the numbers behind."""

import contextlib
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time

import lp

FIGURES = os.path.join(lp.BUILD, "reliability-figures.jsonl")


def record(test, **figures):
    """Writes down what a test measured (and prints it, for pytest -s)."""
    entry = {"test": test, "when": time.strftime("%Y-%m-%dT%H:%M:%S"), **figures}
    with open(FIGURES, "a") as f:
        f.write(json.dumps(entry, sort_keys=True) + "\n")
    print(json.dumps(entry, sort_keys=True))
    return entry


def sanitized(binary=lp.DAEMON):
    """True for a clang ASan build (make SANITIZE=1): valgrind cannot run it, and ASan's quarantine keeps
    freed memory resident (up to 256 MiB), so RSS says nothing about leaks there (LeakSanitizer does)."""
    try:
        with open(binary, "rb") as f:
            return b"__asan_init" in f.read()
    except FileNotFoundError:
        return False


def rss_kib(pid):
    """Resident set size of a process in KiB."""
    with open(f"/proc/{pid}/status") as f:
        for line in f:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    raise RuntimeError(f"no VmRSS for {pid}")


def fd_count(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def open_files(pid):
    """What each of the process's descriptors is (a file's path, socket:[inode], anon_inode:[timerfd]...):
    said when a count differs, so a failure names what was left open."""
    names = []
    for fd in sorted(os.listdir(f"/proc/{pid}/fd"), key=int):
        try:
            names.append(f"{fd} -> {os.readlink(f'/proc/{pid}/fd/{fd}')}")
        except FileNotFoundError:
            pass
    return names


def fds_back_to(pid, count, timeout=5.0):
    """Whether the process's descriptors come back to count within timeout: one open for a moment (a
    probe's pipe, a sysfs directory read while re-enumerating) is not a leak; one that stays is."""
    return wait_for(lambda: fd_count(pid) == count, timeout=timeout)


def daemon_pid(daemon):
    """The pid of linkprobed itself: with a netns, Popen's child is `ip netns exec`, which execs it, so the
    pid is the same; under a wrapper (umockdev-wrapper, valgrind) it may be a child."""
    pid = daemon.proc.pid
    with open(f"/proc/{pid}/comm") as f:
        comm = f.read().strip()
    if comm.startswith("linkprobed") or comm.startswith("memcheck"):
        return pid
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True).stdout.split()
    return int(children[0]) if children else pid


@contextlib.contextmanager
def stopped(pid):
    """Holds process pid stopped (SIGSTOP) for the block, so what the kernel queues for it meanwhile piles up
    in its sockets exactly as it would behind a daemon too busy to read; SIGCONT on the way out."""
    os.kill(pid, signal.SIGSTOP)
    try:
        yield
    finally:
        os.kill(pid, signal.SIGCONT)


def metrics(bus, netns=None):
    """The daemon's samples as {"name{labels}": value} from `linkprobectl metrics`."""
    out = lp.ctl(bus, "metrics", netns=netns, check=True).stdout
    samples = {}
    for line in out.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def wait_for(predicate, timeout=10.0, interval=0.05):
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > deadline:
            return value
        time.sleep(interval)


# A stand-in for linkprobe-probe-tcp and linkprobe-probe-rdma: reads its mode from NAME.mode next to it at
# every run (so a test can change it while the daemon runs) and appends its arguments to NAME.calls.
#   ok       prints a measurement (figures from NAME.figures if present: "UP DOWN RTT [CROSS]", CROSS the
#            cross traffic in Gbit/s the probe saw, with its warning)
#   hang     starts a grandchild in its process group (pid in NAME.grandchild) and sleeps
#   crash    dies of SIGSEGV
#   flood    prints 2 MiB without a newline and exits 0
#   error    prints an error document, exits 1
_PEER_PROBE = r"""#!/bin/sh
here=$(dirname "$0")
name=$(basename "$0")
mode=$(cat "$here/$name.mode" 2>/dev/null || echo ok)
echo "$*" >> "$here/$name.calls"
case "$mode" in
hang)
        sleep 300 &
        echo $! > "$here/$name.grandchild"
        sleep 300
        ;;
crash)
        kill -SEGV $$
        ;;
flood)
        head -c 2097152 /dev/zero | tr '\0' x
        ;;
error)
        printf '{"probe":"%s","version":1,"status":"error","error":{"name":"ECONNREFUSED","message":"connect: refused"}}\n' "$name"
        exit 1
        ;;
*)
        set -- $(cat "$here/$name.figures" 2>/dev/null || echo 9.5 8.5 20)
        cross=${4:-0}
        warnings='[]'
        [ "$cross" != 0 ] && warnings="[\"upload: s0 carried $cross Gbit/s of other traffic during the test: the figure may be low\"]"
        printf '{"probe":"%s","version":1,"status":"ok","source":"10.0.0.1","upload_gbps":%s,"download_gbps":%s,"rtt_usec":%s,"jitter_usec":1,"cross_traffic_gbps":%s,"warnings":%s}\n' "$name" "$1" "$2" "$3" "$cross" "$warnings"
        ;;
esac
"""

PEER_PROBES = ("linkprobe-probe-tcp", "linkprobe-probe-rdma")


class FakeProbes:
    """A probe directory (LINKPROBE_PROBE_DIR) with stand-ins for the TCP and RDMA probes and, optionally, the
    GPU probe's stand-in (tests/integration/fake-probe-gpu, steered by control.json like test_gpu.py does)."""

    def __init__(self, gpu_control=None):
        self.dir = tempfile.mkdtemp(prefix=f"lp-probes-{os.getpid()}-")
        os.chmod(self.dir, 0o755)
        for name in PEER_PROBES:
            path = os.path.join(self.dir, name)
            with open(path, "w") as f:
                f.write(_PEER_PROBE)
            os.chmod(path, 0o755)
        if gpu_control is not None:
            shutil.copy(os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake-probe-gpu"),
                        os.path.join(self.dir, "linkprobe-probe-gpu"))
            self.set_gpu(gpu_control)

    def set_mode(self, probe, mode):
        with open(os.path.join(self.dir, probe + ".mode"), "w") as f:
            f.write(mode + "\n")

    def set_figures(self, probe, up, down, rtt, cross=0):
        with open(os.path.join(self.dir, probe + ".figures"), "w") as f:
            f.write(f"{up} {down} {rtt} {cross}\n")

    def set_gpu(self, control):
        path = os.path.join(self.dir, "control.json")
        with open(path + ".tmp", "w") as f:
            json.dump(control, f)
        os.rename(path + ".tmp", path)

    def calls(self, probe):
        try:
            with open(os.path.join(self.dir, probe + ".calls")) as f:
                return f.read().splitlines()
        except FileNotFoundError:
            return []

    def grandchild(self, probe):
        try:
            with open(os.path.join(self.dir, probe + ".grandchild")) as f:
                return int(f.read())
        except (FileNotFoundError, ValueError):
            return None

    def env(self):
        return {"LINKPROBE_PROBE_DIR": self.dir}

    def remove(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def pid_alive(pid):
    """True while pid exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


class SmallTmpfs:
    """A tmpfs of a few pages mounted on a directory of its own; unmounted and removed by close()."""

    def __init__(self, size="64k"):
        self.dir = tempfile.mkdtemp(prefix=f"lp-tmpfs-{os.getpid()}-")
        lp.run(["mount", "-t", "tmpfs", "-o", f"size={size},mode=0755", f"lp-faults-{os.getpid()}", self.dir])

    def fill(self):
        """Takes every free byte: a file grows by pages, then by single bytes, until ENOSPC."""
        fd = os.open(os.path.join(self.dir, "filler"), os.O_WRONLY | os.O_CREAT | os.O_APPEND, 0o644)
        try:
            for chunk in (b"\0" * 4096, b"\0"):
                try:
                    while True:
                        os.write(fd, chunk)
                except OSError:
                    pass
        finally:
            os.close(fd)

    def read_only(self):
        lp.run(["mount", "-o", "remount,ro", self.dir])

    def close(self):
        lp.run(["umount", self.dir], check=False)
        shutil.rmtree(self.dir, ignore_errors=True)
