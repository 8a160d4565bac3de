# SPDX-License-Identifier: LGPL-2.1-or-later
"""The fake libibverbs (tests/fake-ibverbs/, built by make into $LINKPROBE_BUILD/fake-ibverbs) for the RDMA
tests: a process gets it with env(), which puts the library first on LD_LIBRARY_PATH, points it at a sysfs
tree (the devices it offers, the daemon's --sysfs-root in the daemon's tests) and at a fabric file shared by
the processes that should reach each other."""

import os
import shutil
import tempfile

import pytest

import lp

LIBRARY_DIR = os.path.join(lp.BUILD, "fake-ibverbs")
FIXTURES = os.path.join(lp.TOP, "tests", "fixtures", "rdma")


def require_library():
    if not os.path.exists(os.path.join(LIBRARY_DIR, "libibverbs.so.1")):
        pytest.fail(f"{LIBRARY_DIR}/libibverbs.so.1 is not built (make)")


class Fabric:
    """A fabric file in a directory of its own, removed on close()."""

    def __init__(self):
        require_library()
        self.dir = tempfile.mkdtemp(prefix="lp-rdma-fabric-")
        self.path = os.path.join(self.dir, "fabric")

    def env(self, sysfs, fault=None):
        env = {"LD_LIBRARY_PATH": LIBRARY_DIR, "SYSFS_PATH": sysfs, "FAKE_IBVERBS_FABRIC": self.path}
        if fault:
            env["FAKE_IBVERBS_FAULT"] = fault
        return env

    def stalled(self):
        """Whether a queue pair of a process with fault="stall=N" has stopped dead (fake-ibverbs.h)."""
        return os.path.exists(self.path + ".stalled")

    def close(self):
        shutil.rmtree(self.dir, ignore_errors=True)


def memory_registered(pid):
    """Whether process pid has registered memory with the fake (its regions live in memfds by that name)."""
    try:
        fds = os.listdir(f"/proc/{pid}/fd")
    except FileNotFoundError:
        return False
    for fd in fds:
        try:
            if "fake-ibverbs-mr" in os.readlink(f"/proc/{pid}/fd/{fd}"):
                return True
        except OSError:
            pass
    return False
