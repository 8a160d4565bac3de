# SPDX-License-Identifier: LGPL-2.1-or-later
"""End to end: boot a Debian 12 container with linkprobe installed and check the service as a user would.

The cached image (e2e_image.py) is booted through a throw-away overlay with `systemd-nspawn -b`; the
project is built for PREFIX=/usr into build-e2e/ and installed into the overlay with `make install`.
Inside, linkprobe-e2e.service runs guest/run-checks, which writes one result per check to a bind-mounted
directory and powers the container off. Each check becomes one test here; a check the container did not
report fails. Checks of the daemon skip only while the build has no linkprobed, and checks of a method
only while the daemon does not have it (the guest reads its introspection); the skip says which.
"""

import os
import shutil
import subprocess
import sys
import tempfile
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import e2e_image  # noqa: E402

BUILD_E2E = os.path.join(TOP, "build-e2e")
NOT_INSTALLED = "linkprobed not installed"  # guest/run-checks' reason for skipping the daemon checks
BOOT_TIMEOUT = 300

# Names reported by guest/run-checks, in its order.
FILE_CHECKS = ["boot", "sysusers", "activatable", "unit_loaded", "security", "udev_rule"]
DAEMON_CHECKS = ["service_active", "socket_passed", "speed_reader", "lldp_socket", "busctl_root",
                 "busctl_user", "linkprobectl_root", "linkprobectl_user", "private_socket", "access_denied", "privileged_root",
                 "privileged_member", "health_catalog", "reactivation", "unit_inhibit"]


def _env_for_make():
    # Under `make check` the jobserver of the outer make is not ours to use.
    env = {k: v for k, v in os.environ.items() if k not in ("MAKEFLAGS", "MFLAGS", "MAKELEVEL")}
    env["LC_ALL"] = "C"
    return env


def _cannot_boot_reason():
    if os.geteuid() != 0:
        return "needs root to boot a container"
    if not shutil.which("systemd-nspawn"):
        return "systemd-nspawn is not installed (apt-get install systemd-container)"
    if not os.path.isdir(e2e_image.image_path()):
        reason = e2e_image.cannot_build_reason()
        if reason:
            return reason
    return None


class Run:
    """One boot of the container; results maps a check name to (status, detail)."""

    def __init__(self):
        self.results = {}
        self.complete = False
        self.console = ""
        self.journal = ""
        self.daemon_built = False
        self.timing = {}


def _mount_overlay(image, scratch):
    merged = os.path.join(scratch, "merged")
    for d in ("upper", "work", "merged"):
        os.makedirs(os.path.join(scratch, d))
    opts = f"lowerdir={image},upperdir={scratch}/upper,workdir={scratch}/work"
    proc = subprocess.run(["mount", "-t", "overlay", "overlay", "-o", opts, merged], capture_output=True, text=True)
    if proc.returncode == 0:
        return merged, True
    # No overlayfs here: a full copy (a few seconds for ~250 MB).
    shutil.rmtree(merged)
    subprocess.run(["cp", "-a", "--reflink=auto", image, merged], check=True)
    return merged, False


def _install_guest(root):
    libdir = os.path.join(root, "usr/local/lib/linkprobe-e2e")
    os.makedirs(libdir, exist_ok=True)
    shutil.copy2(os.path.join(HERE, "guest", "run-checks"), libdir)
    unitdir = os.path.join(root, "etc/systemd/system")
    shutil.copy2(os.path.join(HERE, "guest", "linkprobe-e2e.service"), unitdir)
    wants = os.path.join(unitdir, "multi-user.target.wants")
    os.makedirs(wants, exist_ok=True)
    os.symlink("../linkprobe-e2e.service", os.path.join(wants, "linkprobe-e2e.service"))


def _run_cgroups(name):
    """Without systemd as PID 1 (a CI container), nspawn --keep-unit puts the container into "payload"
    below its own cgroup in every hierarchy it uses; two runs in the same cgroup would share it. Each run
    gets a cgroup of its own in each hierarchy instead. Returns the directories, deepest last."""
    dirs = []
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, controllers, path = line.rstrip("\n").split(":", 2)
            if controllers == "":
                mounts = ["/sys/fs/cgroup/unified", "/sys/fs/cgroup"]
            elif controllers == "name=systemd":
                mounts = ["/sys/fs/cgroup/systemd"]
            else:
                continue
            for mount in mounts:
                base = os.path.join(mount, path.lstrip("/"))
                if os.path.exists(os.path.join(base, "cgroup.procs")):
                    d = os.path.join(base, name)
                    os.makedirs(d, exist_ok=True)
                    dirs.append(d)
                    break
    return dirs


def _remove_cgroups(dirs):
    for top in dirs:
        for d, _, _ in sorted(os.walk(top), key=lambda w: -w[0].count("/")):
            try:
                os.rmdir(d)
            except OSError:
                pass


def _nspawn(args, timeout):
    """Runs systemd-nspawn with args; returns (exit status, output, timed out)."""
    cmd = ["systemd-nspawn", "--quiet", "--register=no", *args]
    cgroups = []
    preexec = None
    if not os.path.isdir("/run/systemd/system"):
        # No service manager to ask for a scope: stay in a cgroup made for this run.
        cmd.insert(1, "--keep-unit")
        cgroups = _run_cgroups(f"lpe2e-{os.getpid()}-{time.monotonic_ns()}")

        def preexec():
            for d in cgroups:
                with open(os.path.join(d, "cgroup.procs"), "w") as f:
                    f.write("0")
    proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            text=True, errors="replace", preexec_fn=preexec)
    timed_out = False
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        proc.terminate()  # nspawn halts a booted container on the first SIGTERM
        try:
            out, _ = proc.communicate(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, _ = proc.communicate()
    finally:
        _remove_cgroups(cgroups)
    return proc.returncode, out, timed_out


def _cannot_run_nspawn_reason(image):
    rc, out, _ = _nspawn([f"--directory={image}", "--read-only", "/bin/true"], 60)
    if rc != 0:
        return f"systemd-nspawn cannot run a container here (exit {rc}): {out.strip()[-500:]}"
    return None


def _boot(root, results_dir, machine):
    rc, out, timed_out = _nspawn(["--boot", f"--directory={root}", f"--machine={machine}", "--private-network",
                                  "--console=pipe", f"--bind={results_dir}:/e2e"], BOOT_TIMEOUT)
    if timed_out:
        out += f"\n[e2e: container did not power off within {BOOT_TIMEOUT}s]"
    return rc, out


@pytest.fixture(scope="module")
def e2e():
    reason = _cannot_boot_reason()
    if reason:
        pytest.skip(reason)
    run = Run()
    start = time.monotonic()
    try:
        image = e2e_image.build()
    except RuntimeError as e:
        pytest.skip(f"cannot build the e2e image: {e}")
    run.timing["image"] = time.monotonic() - start
    reason = _cannot_run_nspawn_reason(image)
    if reason:
        pytest.skip(reason)

    start = time.monotonic()
    make = ["make", "--no-print-directory", "-C", TOP, f"BUILD={BUILD_E2E}", "PREFIX=/usr"]
    proc = subprocess.run(make + ["-j2", "all"], env=_env_for_make(), capture_output=True, text=True)
    assert proc.returncode == 0, f"building for PREFIX=/usr failed:\n{proc.stdout}\n{proc.stderr}"
    run.timing["build"] = time.monotonic() - start
    run.daemon_built = os.path.exists(os.path.join(BUILD_E2E, "linkprobed"))

    scratch = tempfile.mkdtemp(prefix=f"linkprobe-e2e-{os.getpid()}-", dir="/var/tmp")
    mounted = False
    try:
        root, mounted = _mount_overlay(image, scratch)
        proc = subprocess.run(make + [f"DESTDIR={root}", "install"], env=_env_for_make(), capture_output=True,
                              text=True)
        assert proc.returncode == 0, f"make install failed:\n{proc.stdout}\n{proc.stderr}"
        _install_guest(root)
        results_dir = os.path.join(scratch, "results")
        os.makedirs(results_dir)

        start = time.monotonic()
        rc, run.console = _boot(root, results_dir, f"lpe2e-{os.getpid()}")
        run.timing["boot"] = time.monotonic() - start

        path = os.path.join(results_dir, "results")
        if os.path.exists(path):
            with open(path) as f:
                for line in f:
                    name, status, detail = (line.rstrip("\n").split("\t", 2) + ["", ""])[:3]
                    run.results[name] = (status, detail)
        run.complete = run.results.get("harness", ("",))[0] == "pass"
        journal = os.path.join(root, "var/log/journal")
        if os.path.isdir(journal):
            run.journal = subprocess.run(
                ["journalctl", f"--directory={journal}", "--no-pager", "-o", "short-monotonic",
                 "-u", "linkprobed.service", "-u", "linkprobed.socket", "-u", "linkprobe-e2e.service",
                 "-u", "dbus.service"], capture_output=True, text=True).stdout[-8000:]
    finally:
        if mounted:
            subprocess.run(["umount", os.path.join(scratch, "merged")])
        shutil.rmtree(scratch, ignore_errors=True)

    # Kept for a look after the run: what each check saw, the journal, and how long the parts took.
    timing = " ".join(f"{k}={v:.1f}s" for k, v in run.timing.items())
    out = os.environ.get("LINKPROBE_BUILD", BUILD_E2E)
    with open(os.path.join(out, "e2e-results.txt"), "w") as f:
        f.write(f"# {time.strftime('%Y-%m-%dT%H:%M:%S')} {timing}\n")
        for name, (status, detail) in run.results.items():
            f.write(f"{name}\t{status}\t{detail}\n")
        f.write(f"# journal\n{run.journal}")
    print(f"e2e timing: {timing}")
    return run


def _context(run):
    return (f"\n--- container console (tail) ---\n{run.console[-4000:]}"
            f"\n--- journal (tail) ---\n{run.journal}")


def test_harness_completed(e2e):
    assert e2e.complete, "guest/run-checks did not finish" + _context(e2e)
    unknown = set(e2e.results) - set(FILE_CHECKS + DAEMON_CHECKS + ["harness"])
    assert not unknown, f"checks reported by the guest but unknown here: {sorted(unknown)}"


@pytest.mark.parametrize("check", FILE_CHECKS)
def test_installed_files(e2e, check):
    assert check in e2e.results, f"the container did not report {check}" + _context(e2e)
    status, detail = e2e.results[check]
    assert status == "pass", f"{check}: {detail}" + _context(e2e)


@pytest.mark.parametrize("check", DAEMON_CHECKS)
def test_daemon(e2e, check):
    assert check in e2e.results, f"the container did not report {check}" + _context(e2e)
    status, detail = e2e.results[check]
    if status == "skip":
        # Honest only while there is nothing to test: once the build has a daemon, it must be installed
        # (the guest also skips checks of methods the daemon does not implement yet, and says which).
        assert not (e2e.daemon_built and detail == NOT_INSTALLED), \
            f"{check} skipped although build-e2e/linkprobed exists: {detail}"
        pytest.skip(detail)
    assert status == "pass", f"{check}: {detail}" + _context(e2e)
