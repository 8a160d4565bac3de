# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobectl probe and gpu when the probe programs cannot run: a failure is reported the moment the
daemon knows it, with the daemon's words, never as a timeout or as "No GPUs"."""

import time

import lp


def test_probe_that_cannot_run_fails_at_once(netns, bus, client, daemon_factory, tmp_path):
    empty = tmp_path / "no-probes"
    empty.mkdir()
    netns.ip("link", "add", "pr0", "type", "veth", "peer", "name", "pr1")
    daemon_factory(netns, env={"LINKPROBE_PROBE_DIR": str(empty)})
    # Twice: the first creates the Peer, the second finds it failed already and fails the same way.
    for attempt in range(2):
        start = time.monotonic()
        out = lp.ctl(bus, "probe", "192.0.2.7")
        took = time.monotonic() - start
        assert out.returncode == 1, out
        assert took < 10, f"attempt {attempt}: {took:.1f} s"
        assert "Probe failed for 192.0.2.7: spawn: cannot run " in out.stderr, out.stderr
        assert str(empty) in out.stderr and "No result" not in out.stderr
        assert "State: failed" in out.stdout and "Last error: spawn: cannot run" in out.stdout


def test_gpu_says_the_probe_could_not_run(netns, bus, client, daemon_factory, tmp_path):
    empty = tmp_path / "no-probes"
    empty.mkdir()
    daemon_factory(netns, gpu=True, env={"LINKPROBE_PROBE_DIR": str(empty)})
    error = lp.wait_for(lambda: client.call(lp.ROOT, "org.freedesktop.DBus.Properties", "Get", "(ss)",
                                            (lp.IFACE + "Manager", "GpuProbeError"))[0], what="GpuProbeError")
    out = lp.ctl(bus, "gpu")
    assert out.returncode == 1 and "No GPUs" not in out.stdout + out.stderr, out
    assert out.stderr.startswith("The GPU probe could not run") and error in out.stderr, out.stderr
    js = lp.ctl(bus, "--json", "gpu")
    assert js.returncode == 1 and js.stdout.strip() == "[]" and error in js.stderr
    status = lp.ctl(bus, "status").stdout
    assert f"GPU probe: failed: {error}" in status, status


def test_daemon_refusal_is_exit_1_with_its_message(netns, bus, daemon_factory):
    """What only the daemon can judge (here: no active RDMA port to probe from) is a failure, said in the
    D-Bus error's own words; what the CLI can judge never reaches it."""
    daemon_factory(netns)
    out = lp.ctl(bus, "--transport=rdma", "probe", "192.0.2.7")
    assert out.returncode == 1, out
    assert out.stderr.strip() == "Cannot probe: No active local RDMA port.", out.stderr
    assert lp.ctl(bus, "--transport=rdma", "probe", "192.0.2.7:99999").returncode == 2
