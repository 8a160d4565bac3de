#!/usr/bin/python3
# SPDX-License-Identifier: LGPL-2.1-or-later
"""The cached Debian 12 root the end-to-end tests boot with systemd-nspawn.

The image is built once by debootstrap into tests/e2e/cache/<key>/root and rebuilt only when its recipe
(suite, variant, package list, the customisation below) changes: the key is a hash of that recipe, so
editing PACKAGES is enough to get a fresh image. Each test run boots a throw-away overlay (or copy) of it,
never the cache itself.

Run directly to build or refresh the cache:  tests/e2e/e2e_image.py [--print-path]
"""

import argparse
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
CACHE = os.environ.get("LINKPROBE_E2E_CACHE", os.path.join(HERE, "cache"))
SUITE = "bookworm"
VARIANT = "minbase"
MIRROR = os.environ.get("LINKPROBE_E2E_MIRROR", "http://deb.debian.org/debian")

# systemd and dbus to boot and run the service; the libraries linkprobed and its probes link against
# (runtime names of the -dev packages in the Makefile's DEBIAN_BUILD_PACKAGES); udevadm and umockdev to
# run the udev rule against mock devices (no udevd runs in the container: /sys is read-only). The
# in-container checks are a bash script, so no python3; iproute2 for the health check, which makes a veth
# flap. LINKPROBE_E2E_EXTRA_PACKAGES (space-separated)
# adds packages for debugging, e.g. strace; it is part of the recipe, so the cache follows it.
PACKAGES = [
    "systemd", "dbus", "libsystemd0", "libudev1", "libnl-3-200", "libnl-route-3-200", "libnl-genl-3-200",
    "libjson-c5", "libinih1", "ocl-icd-libopencl1", "libibverbs1", "libibumad3", "libibmad5", "libibnetdisc5",
    "libpci3", "libcurl4", "libgvc6", "udev", "umockdev", "iproute2",
] + os.environ.get("LINKPROBE_E2E_EXTRA_PACKAGES", "").split()

# Bumped when the customisation in _customise() changes, so the key changes with it.
RECIPE_VERSION = 1


def recipe_key():
    recipe = f"{RECIPE_VERSION}|{SUITE}|{VARIANT}|{MIRROR}|{' '.join(sorted(PACKAGES))}"
    return f"{SUITE}-{hashlib.sha256(recipe.encode()).hexdigest()[:12]}"


def image_path():
    return os.path.join(CACHE, recipe_key(), "root")


def cannot_build_reason():
    """Why this machine cannot build the image, or None."""
    if os.geteuid() != 0:
        return "building the e2e image needs root (debootstrap)"
    if not shutil.which("debootstrap"):
        return "debootstrap is not installed (apt-get install debootstrap)"
    return None


def _customise(root):
    """Make the image boot fast and quietly under nspawn; everything here is part of the recipe."""
    wants = os.path.join(root, "etc/systemd/system")
    # No login prompts on the console: the test unit powers the container off when it is done.
    for unit in ("console-getty.service", "getty@.service", "systemd-networkd-wait-online.service"):
        link = os.path.join(wants, unit)
        if not os.path.lexists(link):
            os.symlink("/dev/null", link)
    # An empty machine-id makes systemd treat the first boot of every copy alike (no preset churn
    # survives into the cache because the cache itself is never booted).
    with open(os.path.join(root, "etc/machine-id"), "w"):
        pass
    with open(os.path.join(root, "etc/hostname"), "w") as f:
        f.write("linkprobe-e2e\n")


def build(log=sys.stderr):
    """Returns the path of an up-to-date image root, building it if needed (takes minutes)."""
    path = image_path()
    if os.path.isfile(os.path.join(os.path.dirname(path), "complete")):
        return path
    reason = cannot_build_reason()
    if reason:
        raise RuntimeError(reason)
    os.makedirs(CACHE, exist_ok=True)
    with open(os.path.join(CACHE, ".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if os.path.isfile(os.path.join(os.path.dirname(path), "complete")):
            return path
        key_dir = os.path.dirname(path)
        tmp = key_dir + ".tmp"
        shutil.rmtree(tmp, ignore_errors=True)
        os.makedirs(tmp)
        start = time.monotonic()
        cmd = ["debootstrap", f"--variant={VARIANT}", f"--include={','.join(PACKAGES)}", SUITE,
               os.path.join(tmp, "root"), MIRROR]
        print(f"e2e: building image: {' '.join(cmd)}", file=log, flush=True)
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        if proc.returncode != 0:
            tail = "\n".join(proc.stdout.splitlines()[-30:])
            shutil.rmtree(tmp, ignore_errors=True)
            raise RuntimeError(f"debootstrap failed (exit {proc.returncode}):\n{tail}")
        _customise(os.path.join(tmp, "root"))
        elapsed = time.monotonic() - start
        with open(os.path.join(tmp, "complete"), "w") as f:
            f.write(f"built {time.strftime('%Y-%m-%dT%H:%M:%S')} in {elapsed:.0f}s\n")
        shutil.rmtree(key_dir, ignore_errors=True)
        os.rename(tmp, key_dir)
        # Drop images of older recipes: each is a few hundred MB.
        for name in os.listdir(CACHE):
            old = os.path.join(CACHE, name)
            if name != os.path.basename(key_dir) and not name.startswith(".") and os.path.isdir(old):
                shutil.rmtree(old, ignore_errors=True)
        print(f"e2e: image ready in {elapsed:.0f}s: {path}", file=log, flush=True)
        return path


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--print-path", action="store_true", help="print the image path, build nothing")
    args = parser.parse_args()
    if args.print_path:
        print(image_path())
        return 0
    try:
        print(build())
    except RuntimeError as e:
        print(f"e2e: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
