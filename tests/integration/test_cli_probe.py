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
        assert str(empty) in out.stderr and "No result" not in out.stderr and "[Responder]" not in out.stderr
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


def test_refused_probe_names_the_responder(netns, bus, daemon_factory):
    """Nothing accepts probes on the far node (here: no responder on 127.0.0.1): the sentence says the
    far node needs one, and how it gets one."""
    daemon_factory(netns)
    out = lp.ctl(bus, "probe", "127.0.0.1")
    assert out.returncode == 1, out
    assert out.stderr.count("\n") == 1, out.stderr
    assert out.stderr.startswith("Probe failed for 127.0.0.1: ECONNREFUSED: "), out.stderr
    assert "the far node needs linkprobed's responder, [Responder] Listen= in its linkprobed.conf" in out.stderr


def test_failed_gpu_probe_says_its_error_once(netns, bus, daemon_factory):
    """probe gpu that fails as a whole: the error once, on stderr, not again under the table nor once per
    device."""
    from test_gpu import FakeProbe, config

    fake = FakeProbe()
    try:
        daemon_factory(netns, gpu=True, env=fake.env(), config=config())
        lp.wait_for(lambda: lp.ctl(bus, "gpu").stdout.count(" ok ") == 2, what="two measured GPUs")
        fake.set(measure="error")
        out = lp.ctl(bus, "probe", "gpu")
        assert out.returncode == 1, out
        assert (out.stdout + out.stderr).count("CL_OUT_OF_RESOURCES") == 1, (out.stdout, out.stderr)
        assert out.stderr == "The GPU probe failed: CL_OUT_OF_RESOURCES: clCreateContext failed\n", out.stderr
        assert "2 GPUs listed." in out.stdout and out.stdout.count("failed") == 2  # each device's state
        # gpu afterwards reports the last run's failure once too, as what happened, not as its own failure.
        later = lp.ctl(bus, "gpu")
        assert later.returncode == 0 and later.stdout.count("CL_OUT_OF_RESOURCES") == 1, later.stdout
        assert later.stdout.rstrip().endswith("The last GPU probe run failed: CL_OUT_OF_RESOURCES: "
                                              "clCreateContext failed")
    finally:
        fake.remove()


def test_gpu_probe_that_cannot_run_says_so_once(netns, bus, daemon_factory, tmp_path):
    """A probe program that cannot run at all, and so no device: said once as well."""
    empty = tmp_path / "no-probes"
    empty.mkdir()
    daemon_factory(netns, gpu=True, env={"LINKPROBE_PROBE_DIR": str(empty)})
    lp.wait_for(lambda: "could not run" in lp.ctl(bus, "gpu").stderr, what="the failed inventory")
    out = lp.ctl(bus, "probe", "gpu")
    assert out.returncode == 1 and out.stdout == "", out
    assert out.stderr.count("\n") == 1 and out.stderr.startswith("The GPU probe could not run"), out.stderr
