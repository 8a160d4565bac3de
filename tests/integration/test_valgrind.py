# SPDX-License-Identifier: LGPL-2.1-or-later
"""The integration daemon once under valgrind memcheck, through a whole life: links and addresses in a
namespace, the GPU probe on PoCL (quick), a peer measured through the responder the daemon serves, the
metrics endpoint scraped, links flapped and removed, Refresh(), then SIGTERM. No memory error, no definite
leak. (The probes and the responder are children, run natively: --trace-children=no.)

valgrind 3.19 does not know openat2() (syscall 437) and answers ENOSYS; the sysfs reader then falls back to
openat(), which is its documented path for old kernels and seccomp filters."""

import json
import os
import re
import signal
import subprocess
import time

import pytest

import faults
import lp
from kernel_compare import wait_consistent

GPU = lp.IFACE + "Gpu"
PEER = lp.IFACE + "Peer"


@pytest.mark.skipif(not os.access("/usr/bin/valgrind", os.X_OK), reason="valgrind is not installed (make deps)")
@pytest.mark.skipif(faults.sanitized(),
                    reason="this build has AddressSanitizer, which valgrind cannot run; `make check` runs this test")
def test_daemon_under_memcheck(bus, netns, tmp_path):
    ns = netns
    log = tmp_path / "memcheck.log"
    ns.batch([f"link add m{i}a type veth peer name m{i}b" for i in range(10)] +
             [f"link set m{i}a up" for i in range(10)] + [f"addr add 10.88.{i}.1/24 dev m{i}a" for i in range(10)])
    inventory = subprocess.run([os.path.join(lp.BUILD, "linkprobe-probe-gpu")], capture_output=True, text=True,
                               timeout=60)
    n_gpus = len(json.loads(inventory.stdout or "{}").get("devices") or [])
    config = ("[Responder]\nListen=127.0.0.1:7471\n[Peers]\nAddress=127.0.0.1\n"
              "[Reconciler]\nTickSec=100ms\nTcpDurationSec=100ms\nTcpSamples=5\n"
              "[Metrics]\nListenAddress=127.0.0.1:9477\n"
              "[Gpu]\nTTLSec=1h\nQuick=yes\nRandomizedDelaySec=0\n"
              "[Watch]\nIntervalSec=100ms\n")
    memcheck = ["valgrind", "--leak-check=full", "--errors-for-leak-kinds=definite", "--show-leak-kinds=definite",
                "--error-exitcode=99", "--num-callers=30", f"--log-file={log}"]
    started = time.monotonic()
    daemon = lp.Daemon(bus, prefix=["ip", "netns", "exec", ns.name, *memcheck], config=config, gpu=True,
                       env={"LINKPROBE_PROBE_DIR": lp.BUILD})
    client = lp.Client(bus)
    try:
        ready = time.monotonic() - started
        assert wait_consistent(client, ns, timeout=30) == []

        def settled():
            objects = client.objects()
            g = [p[GPU]["ProbeState"] for p in objects.values() if GPU in p]
            p = [p[PEER]["ProbeState"] for p in objects.values() if PEER in p]
            return len(g) == n_gpus and all(s == "ok" for s in g) and p and all(s == "ok" for s in p)
        assert faults.wait_for(settled, timeout=60, interval=0.2), client.objects()
        scraped = subprocess.run(ns.exec_cmd(["curl", "-sf", "http://127.0.0.1:9477/metrics"]), capture_output=True,
                                 text=True, timeout=30).stdout
        assert "linkprobe_link_up{" in scraped, scraped[:2000]
        ns.batch([f"link set m{i}a down" for i in range(10)] + [f"link del m{i}a" for i in range(5)])
        assert wait_consistent(client, ns, timeout=30) == []
        client.call(lp.ROOT, lp.IFACE + "Manager", "Refresh")
        rss = faults.rss_kib(faults.daemon_pid(daemon))
    finally:
        client.close()
        daemon.proc.send_signal(signal.SIGTERM)
        try:
            code = daemon.proc.wait(60)
        finally:
            daemon.stop()
    report = log.read_text()
    errors = re.search(r"ERROR SUMMARY: (\d+) errors", report)
    definite = re.search(r"definitely lost: ([\d,]+) bytes in ([\d,]+) blocks", report)
    heap = re.search(r"total heap usage: ([\d,]+) allocs, ([\d,]+) frees, ([\d,]+) bytes allocated", report)
    faults.record("valgrind-memcheck", exit_code=code, errors=int(errors.group(1)) if errors else None,
                  definitely_lost_bytes=int(definite.group(1).replace(",", "")) if definite else 0,
                  allocs=heap.group(1) if heap else None, frees=heap.group(2) if heap else None,
                  gpus=n_gpus, ready_seconds=round(ready, 2), total_seconds=round(time.monotonic() - started, 2),
                  rss_kib_under_valgrind=rss)
    assert code == 0, report[-4000:]
    assert errors and errors.group(1) == "0", report[-4000:]
    assert not definite or definite.group(1) == "0", report[-4000:]
