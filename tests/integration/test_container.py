# SPDX-License-Identifier: LGPL-2.1-or-later
"""The tests in a container that mounts /proc/sys read-only (Docker, systemd-nspawn): what they write
there (a namespace's sysctls, a node's hostname) is remounted writable in a private mount namespace
where CAP_SYS_ADMIN allows it, and the test is skipped with one reason where it does not.

A read-only /proc/sys is made here with a read-only bind mount in a mount namespace of the test's own;
a container without CAP_SYS_ADMIN is stood in for by dropping it from the bounding set (setpriv)."""

import os
import subprocess
import textwrap

import lp

HERE = os.path.dirname(os.path.abspath(__file__))
# /proc/sys made read-only, or writable (as the tests may find it), in a mount namespace of the test's own.
MOUNT = "mount --bind /proc/sys /proc/sys && mount -o remount,bind,{} /proc/sys && exec \"$@\""
PROBE = textwrap.dedent(f"""\
    import subprocess, sys
    sys.path.insert(0, {HERE!r})
    import lp, pytest
    try:
        remount = lp.proc_sys_remount("/proc/sys/kernel")
    except pytest.skip.Exception as e:
        print("skip:", e.msg)
        sys.exit(0)
    print("remount:", remount)
    # A hostname of the test's own, written as fabric_net does.
    proc = subprocess.run(["unshare", "--mount", "--uts", "sh", "-c",
                           (remount + " && " if remount else "") +
                           "printf lp-node > /proc/sys/kernel/hostname && hostname"],
                          capture_output=True, text=True)
    print("hostname:", proc.stdout.strip() or proc.stderr.strip())
    """)


def with_proc_sys(mode, *prefix):
    cmd = ["unshare", "--mount", "--propagation", "private", "sh", "-c", MOUNT.format(mode), "sh", *prefix,
           "/usr/bin/python3", "-c", PROBE]
    return lp.run(cmd).stdout


def test_writable_proc_sys_needs_nothing():
    out = with_proc_sys("rw")
    assert "remount: \n" in out and "hostname: lp-node\n" in out, out


def test_read_only_proc_sys_is_remounted_where_allowed():
    out = with_proc_sys("ro")
    assert "remount: mount -o remount,bind,rw /proc/sys\n" in out, out
    assert "hostname: lp-node\n" in out, out
    assert subprocess.run(["hostname"], capture_output=True, text=True).stdout.strip() != "lp-node"


def test_read_only_proc_sys_skips_where_not_allowed():
    out = with_proc_sys("ro", "setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin")
    assert out.startswith("skip: /proc/sys is mounted read-only (a container) and cannot be made writable"), out
    assert "SYSTEMD_NSPAWN_API_VFS_WRITABLE=yes" in out and "docker run --privileged" in out, out
    assert "hostname:" not in out, out
