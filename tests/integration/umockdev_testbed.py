# SPDX-License-Identifier: LGPL-2.1-or-later
"""A umockdev testbed the daemon can live in, driven from a test.

umockdev sends a uevent by looking the device up with libudev first, and libudev only sees the
testbed's /sys in a process that runs under umockdev's preload (umockdev 0.17: a process that is not
preloaded gets "No such device"). pytest itself must not run under the preload (every `ip` and
`dbus-daemon` it starts would inherit the redirected /sys), so the testbed lives in a small server
process started with `umockdev-wrapper`; `Testbed` below forwards the calls of UMockdev.Testbed
(add_from_file, add_from_string, set_attribute, set_property, uevent, remove_device) to it over a pipe,
one JSON line each way. start() then runs the daemon with prefix=["umockdev-wrapper"] and
UMOCKDEV_DIR=testbed.root: its libudev monitor receives the testbed's uevents, and
--sysfs-root=testbed.sys points the sysfs readers at the same tree.

Run as a program, this file is the server."""

import json
import os
import shutil
import subprocess
import sys


class TestbedError(RuntimeError):
    pass


class Testbed:
    """The client: a testbed with the devices of the .umockdev files at paths, more added as it runs."""

    __test__ = False  # not a pytest test class

    def __init__(self, *paths):
        self.root = None
        self.proc = subprocess.Popen(["umockdev-wrapper", "/usr/bin/python3", "-u", os.path.abspath(__file__)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        try:
            hello = self._reply()
            self.root = hello["root"]
            self.sys = hello["sys"]
            for path in paths:
                self.add_from_file(path)
        except BaseException:
            self.close()
            raise

    def _reply(self):
        line = self.proc.stdout.readline()
        if not line:
            raise TestbedError(f"the umockdev testbed server exited ({self.proc.poll()})")
        reply = json.loads(line)
        if "error" in reply:
            raise TestbedError(reply["error"])
        return reply

    def _call(self, op, **args):
        self.proc.stdin.write(json.dumps({"op": op, **args}) + "\n")
        self.proc.stdin.flush()
        return self._reply().get("result")

    def add_from_file(self, path):
        return self._call("add_from_file", path=path)

    def add_from_string(self, text):
        """Adds the devices of a umockdev description; umockdev sends "add" for each, in order."""
        return self._call("add_from_string", text=text)

    def set_attribute(self, syspath, name, value):
        return self._call("set_attribute", syspath=syspath, name=name, value=value)

    def set_property(self, syspath, name, value):
        return self._call("set_property", syspath=syspath, name=name, value=value)

    def uevent(self, syspath, action):
        return self._call("uevent", syspath=syspath, action=action)

    def remove_device(self, syspath):
        return self._call("remove_device", syspath=syspath)

    def env(self):
        """What a `umockdev-wrapper`ed process needs to see the testbed as /sys."""
        return {"UMOCKDEV_DIR": self.root}

    def close(self):
        if self.proc.poll() is None:
            try:
                self.proc.stdin.close()  # the server removes the testbed at the end of its input
                self.proc.wait(10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.proc.kill()
                self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout):
            try:
                stream.close()
            except BrokenPipeError:
                pass
        # Should the server have died, its testbed's directory is still there.
        if self.root and os.path.isdir(self.root):
            shutil.rmtree(self.root, ignore_errors=True)


def start(daemon_factory, netns, testbed, *args, env=None, config=None):
    """linkprobed (through conftest's daemon_factory) living in testbed: under umockdev-wrapper, its sysfs
    readers rooted at the testbed's /sys."""
    return daemon_factory(netns, prefix=["umockdev-wrapper"], env={**testbed.env(), **(env or {})},
                          args=[f"--sysfs-root={testbed.sys}", *args], config=config)


def serve():
    import gi
    gi.require_version("UMockdev", "1.0")
    from gi.repository import UMockdev

    testbed = UMockdev.Testbed.new()
    print(json.dumps({"root": testbed.get_root_dir(), "sys": testbed.get_sys_dir()}), flush=True)

    def uevent(a):
        # umockdev only prints to stderr for a device that is not there; say so to the test.
        if not os.path.exists(a["syspath"]):
            raise FileNotFoundError(f"no device {a['syspath']} in the testbed")
        testbed.uevent(a["syspath"], a["action"])

    operations = {
        "add_from_file": lambda a: testbed.add_from_file(a["path"]),
        "add_from_string": lambda a: testbed.add_from_string(a["text"]),
        "set_attribute": lambda a: testbed.set_attribute(a["syspath"], a["name"], a["value"]),
        "set_property": lambda a: testbed.set_property(a["syspath"], a["name"], a["value"]),
        "uevent": uevent,
        "remove_device": lambda a: testbed.remove_device(a["syspath"]),
    }
    for line in sys.stdin:
        try:
            request = json.loads(line)
            result = operations[request["op"]](request)
            reply = {"result": result if isinstance(result, (bool, int, str, type(None))) else None}
        except Exception as e:  # noqa: BLE001 — every failure goes back to the test, which keeps going
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)
    # The testbed's finalizer removes its directory (and aborts if someone else did first).
    del testbed


if __name__ == "__main__":
    serve()
