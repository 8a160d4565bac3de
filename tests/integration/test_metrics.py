# SPDX-License-Identifier: LGPL-2.1-or-later
"""Metrics: Prometheus text validated by promtool, the textfile for node_exporter, the /metrics endpoint
under abuse, and a real Prometheus server scraping the daemon."""

import json
import os
import socket
import subprocess
import time
import urllib.request

import pytest

import lp


def promtool_check(text):
    proc = subprocess.run(["promtool", "check", "metrics"], input=text, capture_output=True, text=True)
    return proc.returncode, proc.stdout + proc.stderr


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_ctl_metrics_are_valid(netns, bus, daemon_factory):
    netns.ip("link", "add", 'we"ird\\x', "type", "veth", "peer", "name", "mx1")
    netns.ip("link", "set", "mx1", "up")
    netns.ip("addr", "add", "10.80.0.1/24", "dev", "mx1")
    daemon_factory(netns)
    out = lp.ctl(bus, "metrics")
    assert out.returncode == 0, out.stderr
    code, problems = promtool_check(out.stdout)
    assert code == 0, problems
    text = out.stdout
    assert 'linkprobe_daemon_state{state="running"} 1' in text
    assert 'linkprobe_link_mtu_bytes{device="lo"} 65536' in text
    assert 'linkprobe_link_info{device="we\\"ird\\\\x",' in text
    assert 'linkprobe_link_address_info{device="mx1",address="10.80.0.1",prefix_length="24",scope="global",' \
           'class="private"} 1' in text
    assert "linkprobe_memory_total_bytes " in text
    # --json makes no sense for the text format: said plainly.
    out = lp.ctl(bus, "metrics", "--json")
    assert out.returncode == 2 and "snapshot" in out.stderr


def test_snapshot(netns, bus, daemon_factory):
    daemon_factory(netns)
    doc = json.loads(lp.ctl(bus, "snapshot").stdout)
    assert doc["Manager"]["State"] == "running"
    assert doc["Node"]["KernelRelease"] and doc["Memory"]["TotalBytes"] > 0
    assert [link["Name"] for link in doc["Objects"]["Link"]] == ["lo"]
    assert doc["Time"].endswith("Z")


def test_textfile_written_atomically_and_only_on_change(netns, tmp_path, daemon_factory):
    textfile = tmp_path / "linkprobe.prom"
    daemon_factory(netns, config=f"[Metrics]\nTextfileDirectory={tmp_path}\nTextfileIntervalSec=200ms\n"
                                 "[Memory]\nPollIntervalSec=0\n")
    deadline = time.monotonic() + 5
    while not textfile.exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert promtool_check(textfile.read_text())[0] == 0
    first = textfile.stat().st_mtime_ns

    # Nothing changes: the file is left alone.
    time.sleep(0.6)
    assert textfile.stat().st_mtime_ns == first

    # A new link is published, so the file follows within the interval.
    netns.ip("link", "add", "tf0", "type", "veth", "peer", "name", "tf1")
    deadline = time.monotonic() + 5
    while 'device="tf0"' not in textfile.read_text() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 'device="tf0"' in textfile.read_text()
    # Only the final file and no temporary one is ever visible to node_exporter's *.prom glob.
    assert [p.name for p in tmp_path.iterdir() if p.name.endswith(".prom")] == ["linkprobe.prom"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".#")]


def test_textfile_directory_unwritable(netns, client, tmp_path, daemon_factory):
    daemon = daemon_factory(netns, config="[Metrics]\nTextfileDirectory=/proc\n")
    assert client.get_all("Manager")["State"] == "running"
    assert daemon.wait_log("metrics textfile"), daemon.log()
    daemon.stop()
    missing = daemon_factory(netns, config=f"[Metrics]\nTextfileDirectory={tmp_path}/missing\n")
    assert missing.wait_log("metrics textfile directory"), missing.log()


def http(netns, port, request):
    """Sends raw bytes from inside the namespace and returns the whole answer."""
    script = ("import socket,sys\n"
              "s=socket.create_connection(('127.0.0.1',int(sys.argv[1])),timeout=5)\n"
              "s.sendall(sys.stdin.buffer.read())\n"
              "out=b''\n"
              "while True:\n"
              "    b=s.recv(65536)\n"
              "    if not b: break\n"
              "    out+=b\n"
              "sys.stdout.buffer.write(out)\n")
    proc = subprocess.run(netns.exec_cmd(["/usr/bin/python3", "-c", script, str(port)]), input=request,
                          capture_output=True, timeout=20)
    return proc.stdout


def test_http_endpoint(netns, daemon_factory):
    port = 9479
    daemon = daemon_factory(netns, config=f"[Metrics]\nListenAddress=127.0.0.1:{port}\n")
    answer = http(netns, port, b"GET /metrics HTTP/1.1\r\nHost: x\r\n\r\n")
    head, _, body = answer.partition(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200 OK")
    assert b"Content-Type: text/plain; version=0.0.4" in head
    assert int(head.split(b"Content-Length: ")[1].split(b"\r\n")[0]) == len(body)
    assert promtool_check(body.decode())[0] == 0

    answer = http(netns, port, b"HEAD /metrics HTTP/1.0\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 200 OK") and answer.endswith(b"\r\n\r\n")
    assert http(netns, port, b"GET /secret HTTP/1.1\r\n\r\n").startswith(b"HTTP/1.1 404")
    answer = http(netns, port, b"DELETE /metrics HTTP/1.1\r\n\r\n")
    assert answer.startswith(b"HTTP/1.1 405") and b"Allow: GET, HEAD" in answer
    assert http(netns, port, b"\x00\x01garbage\r\n\r\n").startswith(b"HTTP/1.1 400")
    assert http(netns, port, b"A" * 10000).startswith(b"HTTP/1.1 400")
    assert daemon.proc.poll() is None


def test_http_idle_connections_do_not_lock_out_scrapers(netns, daemon_factory):
    port = 9479
    daemon = daemon_factory(netns, config=f"[Metrics]\nListenAddress=127.0.0.1:{port}\n")
    # 40 connections that never send a request, held open by one process in the namespace...
    holder = subprocess.Popen(netns.exec_cmd(["/usr/bin/python3", "-c",
                                              "import socket,sys,time\n"
                                              "c=[socket.create_connection(('127.0.0.1',int(sys.argv[1]))) "
                                              "for _ in range(40)]\n"
                                              "print('held',flush=True)\n"
                                              "time.sleep(60)\n", str(port)]),
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "held"
        # ...and a scraper is still served at once.
        start = time.monotonic()
        answer = http(netns, port, b"GET /metrics HTTP/1.1\r\n\r\n")
        assert answer.startswith(b"HTTP/1.1 200 OK")
        assert time.monotonic() - start < 3
        with open(f"/proc/{daemon.proc.pid}/status") as f:
            rss_kib = int(next(line.split()[1] for line in f if line.startswith("VmRSS:")))
        assert len(os.listdir(f"/proc/{daemon.proc.pid}/fd")) < 40
        assert rss_kib < 32 * 1024
    finally:
        holder.kill()
        holder.wait()


def test_http_bad_listen_address(netns, tmp_path):
    conf = tmp_path / "bad.conf"
    conf.write_text("[Metrics]\nListenAddress=localhost:80\n")
    proc = lp.run([lp.DAEMON, f"--config={conf}", "--bus-address=unix:path=/nonexistent"], check=False)
    assert proc.returncode == 78 and "ListenAddress" in proc.stderr


def test_prometheus_scrapes_the_daemon(netns, tmp_path, daemon_factory):
    if not os.access("/usr/bin/prometheus", os.X_OK):
        pytest.skip("no Prometheus server installed (Debian package prometheus)")
    port = 9479
    netns.ip("link", "add", "pm0", "type", "veth", "peer", "name", "pm1")
    daemon_factory(netns, config=f"[Metrics]\nListenAddress=127.0.0.1:{port}\n")
    (tmp_path / "prometheus.yml").write_text(f"""
global:
  scrape_interval: 1s
scrape_configs:
  - job_name: linkprobe
    static_configs:
      - targets: ['127.0.0.1:{port}']
""")
    web = 9090
    prom = subprocess.Popen(netns.exec_cmd([
        "/usr/bin/prometheus", f"--config.file={tmp_path}/prometheus.yml", f"--storage.tsdb.path={tmp_path}/data",
        f"--web.listen-address=127.0.0.1:{web}"]), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        query = "http://127.0.0.1:{}/api/v1/query?query=linkprobe_link_mtu_bytes%7Bdevice%3D%22pm0%22%7D".format(web)
        result = None
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            out = subprocess.run(netns.exec_cmd(["curl", "-s", query]), capture_output=True, text=True).stdout
            try:
                data = json.loads(out)
            except json.JSONDecodeError:
                data = None
            if data and data.get("status") == "success" and data["data"]["result"]:
                result = data["data"]["result"]
                break
            time.sleep(0.5)
        assert result, "Prometheus never stored a sample from the daemon"
        assert result[0]["metric"]["job"] == "linkprobe" and result[0]["value"][1] == "1500"
        targets = json.loads(subprocess.run(netns.exec_cmd(["curl", "-s", f"http://127.0.0.1:{web}/api/v1/targets"]),
                                            capture_output=True, text=True).stdout)
        assert targets["data"]["activeTargets"][0]["health"] == "up"
    finally:
        prom.terminate()
        prom.wait(10)
