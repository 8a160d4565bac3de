# SPDX-License-Identifier: LGPL-2.1-or-later
"""A umockdev testbed the daemon can live in, driven from a test.

umockdev sends a uevent by looking the device up with libudev first, and libudev only sees the
testbed's /sys in a process that runs under umockdev's preload. pytest itself must not run under the
preload (every `ip` and `dbus-daemon` it starts would inherit the redirected /sys), so the testbed lives
in a small server process started with `umockdev-wrapper`; `Testbed` below forwards the calls of
UMockdev.Testbed (add_from_file, set_attribute, uevent, remove_device) to it over a pipe, one JSON
line each way. The daemon then runs with prefix=["umockdev-wrapper"] and UMOCKDEV_DIR=testbed.root:
its libudev monitor receives the testbed's uevents, and --sysfs-root=testbed.sys points the sysfs
readers at the same tree.

Run as a program, this file is the server."""

import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))


class TestbedError(RuntimeError):
    pass


class Testbed:
    __test__ = False  # not a pytest test class

    def __init__(self):
        self.proc = subprocess.Popen(["umockdev-wrapper", "/usr/bin/python3", "-u", os.path.abspath(__file__)],
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        hello = self._reply()
        self.root = hello["root"]
        self.sys = hello["sys"]

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
        return self._call("add_from_string", text=text)

    def set_attribute(self, syspath, name, value):
        return self._call("set_attribute", syspath=syspath, name=name, value=value)

    def set_property(self, syspath, name, value):
        return self._call("set_property", syspath=syspath, name=name, value=value)

    def uevent(self, syspath, action):
        return self._call("uevent", syspath=syspath, action=action)

    def remove_device(self, syspath):
        return self._call("remove_device", syspath=syspath)

    def daemon_env(self):
        return {"UMOCKDEV_DIR": self.root}

    def close(self):
        if self.proc.poll() is None:
            self.proc.stdin.close()
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.proc.stdout.close()


def serve():
    import gi
    gi.require_version("UMockdev", "1.0")
    from gi.repository import UMockdev

    testbed = UMockdev.Testbed.new()
    print(json.dumps({"root": testbed.get_root_dir(), "sys": testbed.get_sys_dir()}), flush=True)
    def uevent(a):
        # umockdev only prints to stderr for a device that is not there; say so to the test.
        if not os.path.exists(a["syspath"]):
            raise FileNotFoundError(a["syspath"])
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
        except Exception as e:  # noqa: BLE001 — every failure goes back to the test
            reply = {"error": f"{type(e).__name__}: {e}"}
        print(json.dumps(reply), flush=True)
    # The testbed's directory goes with the object.
    del testbed


if __name__ == "__main__":
    serve()
