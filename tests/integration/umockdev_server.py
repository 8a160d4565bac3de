# SPDX-License-Identifier: LGPL-2.1-or-later
"""A umockdev testbed owned by a process under `umockdev-wrapper`, driven over stdin/stdout.

umockdev 0.17's uevent sender looks the device up through libudev in the sending process, so only a
process running under the preload (where /sys is the testbed) can inject uevents; a test process that
is not preloaded gets "No such device". This program is that process: started as
`umockdev-wrapper /usr/bin/python3 umockdev_server.py [FIXTURE...]`, it prints one JSON line
{"root": ..., "sys": ...} and then answers one JSON request per line with one JSON reply:

  {"op": "uevent", "devpath": "/sys/devices/...", "action": "change"}
  {"op": "set_attribute", "devpath": ..., "name": ..., "value": ...}
  {"op": "set_property", "devpath": ..., "name": ..., "value": ...}
  {"op": "remove_device", "devpath": ...}
  {"op": "add_from_string", "text": ...}
  {"op": "quit"}

Replies are {"ok": true} or {"ok": false, "error": "..."}. The testbed's directory is removed on quit
and at the end of input (the client removes it too, should this process die).
"""

import json
import os
import sys

import gi

gi.require_version("UMockdev", "1.0")
from gi.repository import UMockdev  # noqa: E402


def handle(testbed, request):
    op = request["op"]
    if op == "uevent":
        # The sender prints an error and sends nothing for a device it cannot see: say so instead.
        if not os.path.isdir(request["devpath"]):
            raise FileNotFoundError(f"no device {request['devpath']} in the testbed")
        testbed.uevent(request["devpath"], request["action"])
    elif op == "set_attribute":
        testbed.set_attribute(request["devpath"], request["name"], request["value"])
    elif op == "set_property":
        testbed.set_property(request["devpath"], request["name"], request["value"])
    elif op == "remove_device":
        testbed.remove_device(request["devpath"])
    elif op == "add_from_string":
        testbed.add_from_string(request["text"])
    else:
        raise ValueError(f"unknown op {op!r}")


def main():
    testbed = UMockdev.Testbed.new()
    root = testbed.get_root_dir()
    try:
        for fixture in sys.argv[1:]:
            testbed.add_from_file(fixture)
        print(json.dumps({"root": root, "sys": testbed.get_sys_dir()}), flush=True)
        for line in sys.stdin:
            request = json.loads(line)
            if request.get("op") == "quit":
                print(json.dumps({"ok": True}), flush=True)
                break
            try:
                handle(testbed, request)
                reply = {"ok": True}
            except Exception as e:  # a bad request is the client's bug: report it, keep serving
                reply = {"ok": False, "error": f"{type(e).__name__}: {e}"}
            print(json.dumps(reply), flush=True)
    finally:
        # The testbed's finalizer removes its directory (and aborts if someone else did first).
        del testbed


if __name__ == "__main__":
    main()
