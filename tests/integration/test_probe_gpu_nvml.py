# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobe-probe-gpu's NVML member: without libnvidia-ml.so.1 (this machine) NVML is "absent", not an
error; with a fake library (fake-nvml.c, built here and found through LD_LIBRARY_PATH, the way the probe
dlopen()s the real one) the active NVLinks of each GPU are listed with the kernel's spelling of PCI
addresses, direct links and NVSwitch links told apart, and a failing or lying library never breaks the
document."""

import json
import os
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gpu_schema  # noqa: E402

TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BUILD = os.environ.get("LINKPROBE_BUILD", os.path.join(TOP, "build"))
PROBE = os.path.join(BUILD, "linkprobe-probe-gpu")


@pytest.fixture(scope="module")
def fake_nvml_dir():
    cc = shutil.which("cc") or shutil.which("gcc")
    if not cc:
        pytest.skip("no C compiler to build the fake NVML")
    d = tempfile.mkdtemp(prefix=f"linkprobe-fake-nvml-{os.getpid()}-")
    src = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fake-nvml.c")
    subprocess.run([cc, "-shared", "-fPIC", "-O1", "-Wall", "-Werror", "-o", os.path.join(d, "libnvidia-ml.so.1"), src],
                   check=True, capture_output=True, text=True)
    yield d
    shutil.rmtree(d, ignore_errors=True)


def inventory(env_extra=None):
    env = dict(os.environ, **(env_extra or {}))
    proc = subprocess.run([PROBE], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    gpu_schema.validate(doc)
    return doc["nvml"]


def test_absent_is_not_an_error():
    nvml = inventory({"LD_LIBRARY_PATH": ""})
    assert nvml["status"] == "absent"
    assert "libnvidia-ml.so.1" in nvml["reason"]


def test_nvlinks_from_the_library(fake_nvml_dir):
    nvml = inventory({"LD_LIBRARY_PATH": fake_nvml_dir})
    assert nvml["status"] == "ok"
    devices = {d["pci_bus_id"]: d["nvlinks"] for d in nvml["devices"]}
    assert sorted(devices) == ["0000:18:00.0", "0000:1c:00.0", "0000:3a:00.0", "0000:3e:00.0"]
    # Four active links of twelve, each to the other GPU, in the kernel's spelling.
    assert devices["0000:18:00.0"] == [{"link": k, "version": 3, "remote_pci_bus_id": "0000:1c:00.0",
                                        "remote_type": "gpu"} for k in range(4)]
    assert [l["remote_pci_bus_id"] for l in devices["0000:3a:00.0"]] == [f"0000:0{k % 3 + 1}:00.0" for k in range(6)]
    assert {l["remote_type"] for l in devices["0000:3e:00.0"]} == {"switch"}


def test_a_failing_library_is_reported(fake_nvml_dir):
    nvml = inventory({"LD_LIBRARY_PATH": fake_nvml_dir, "FAKE_NVML_MODE": "init-fail"})
    assert nvml["status"] == "error"
    assert nvml["error"]["name"] == "NVML_ERROR_9"
    assert "Driver Not Loaded" in nvml["error"]["message"]


def test_no_nvlink_and_garbage(fake_nvml_dir):
    nvml = inventory({"LD_LIBRARY_PATH": fake_nvml_dir, "FAKE_NVML_MODE": "no-nvlink"})
    assert nvml["status"] == "ok" and all(d["nvlinks"] == [] for d in nvml["devices"])
    # Remote addresses that are not PCI addresses are left out, never passed on.
    nvml = inventory({"LD_LIBRARY_PATH": fake_nvml_dir, "FAKE_NVML_MODE": "garbage"})
    assert nvml["status"] == "ok" and all(d["nvlinks"] == [] for d in nvml["devices"])
