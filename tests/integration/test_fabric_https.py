# SPDX-License-Identifier: LGPL-2.1-or-later
"""linkprobectl fabric --prometheus= against a real Prometheus behind what sites put in front of it:
HTTPS with a certificate of their own CA and basic authentication (Prometheus' own --web.config.file),
and a proxy. The server runs in a network namespace of the test's, on its loopback, and scrapes one
node's linkprobe series served there; the certificate is made by the test with openssl, the password
hash with bcrypt. The CLI reads the node through TLS when it is given the CA, and fails clearly, naming
the URL (never the password) and curl's error, with a wrong password or a certificate it cannot
trust."""

import http.server
import os
import select
import socket
import subprocess
import threading

import pytest

import lp
from linkprobe_net import in_netns

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="network namespaces need root")

NODE = "ab" * 16
PASSWORD = "correct horse battery staple"


def need_tools():
    if not os.access("/usr/bin/prometheus", os.X_OK):
        pytest.skip("no Prometheus server installed (Debian package prometheus)")
    if not os.access("/usr/bin/openssl", os.X_OK):
        pytest.skip("no openssl to make the certificate (Debian package openssl)")
    try:
        import bcrypt  # noqa: F401
    except ImportError:
        pytest.skip("no bcrypt to hash the password (Debian package python3-bcrypt)")


def self_signed(directory, name):
    """A self-signed certificate for 127.0.0.1 (its own CA) and its key: (cert, key)."""
    cert, key = os.path.join(directory, f"{name}.crt"), os.path.join(directory, f"{name}.key")
    lp.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
            "-keyout", key, "-out", cert, "-days", "2", "-subj", f"/CN={name}",
            "-addext", "subjectAltName=IP:127.0.0.1"])
    return cert, key


def serve(ns, handler):
    """An HTTP server on the namespace's loopback, in a thread: (server, port)."""
    with in_netns(ns):
        server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, server.server_address[1]


class Metrics(http.server.BaseHTTPRequestHandler):
    """One node's series, as linkprobed exports them."""

    def do_GET(self):
        body = (f'linkprobe_node_identity_info{{node_id="{NODE}",nodename="node-tls"}} 1\n'
                f'linkprobe_node_info{{boot_id="{"cd" * 16}"}} 1\n').encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


class Proxy(http.server.BaseHTTPRequestHandler):
    """A forward proxy: CONNECT tunnels (https://), and plain requests answered as an empty Prometheus
    would (http://, their absolute URL and headers kept to be looked at)."""
    seen = []
    netns = None  # where its connections are made: each handler thread starts in the test's own

    def do_CONNECT(self):
        Proxy.seen.append(("CONNECT", self.path, dict(self.headers)))
        host, port = self.path.rsplit(":", 1)
        with in_netns(Proxy.netns):
            upstream = socket.create_connection((host, int(port)), timeout=10)
        self.send_response(200, "Connection established")
        self.end_headers()
        ends = [self.connection, upstream]
        try:
            while True:
                readable, _, _ = select.select(ends, [], [], 10)
                if not readable:
                    return
                for s in readable:
                    data = s.recv(65536)
                    if not data:
                        return
                    (upstream if s is self.connection else self.connection).sendall(data)
        finally:
            upstream.close()

    def do_GET(self):
        Proxy.seen.append(("GET", self.path, dict(self.headers)))
        body = b'{"status":"success","data":{"resultType":"vector","result":[]}}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def secured(tmp_path_factory):
    """A Prometheus with TLS and basic authentication on 127.0.0.1:9090 of a namespace of its own,
    scraping one node there: (namespace, directory, url without credentials)."""
    need_tools()
    import bcrypt

    d = str(tmp_path_factory.mktemp("prom-tls"))
    cert, key = self_signed(d, "prometheus")
    self_signed(d, "stranger")
    with open(os.path.join(d, "password"), "w") as f:
        f.write(PASSWORD + "\n")
    with open(os.path.join(d, "wrong-password"), "w") as f:
        f.write("not the password\n")
    hashed = bcrypt.hashpw(PASSWORD.encode(), bcrypt.gensalt(rounds=4)).decode()
    with open(os.path.join(d, "web.yml"), "w") as f:
        f.write(f"tls_server_config:\n  cert_file: {cert}\n  key_file: {key}\n"
                f"basic_auth_users:\n  ops: '{hashed}'\n")
    ns = lp.NetNS()
    server = proc = None
    try:
        server, port = serve(ns.name, Metrics)
        with open(os.path.join(d, "prometheus.yml"), "w") as f:
            f.write("global:\n  scrape_interval: 1s\nscrape_configs:\n  - job_name: linkprobe\n"
                    f"    static_configs:\n      - targets: ['127.0.0.1:{port}']\n")
        proc = subprocess.Popen(ns.exec_cmd([
            "/usr/bin/prometheus", f"--config.file={d}/prometheus.yml", f"--storage.tsdb.path={d}/data",
            f"--web.config.file={d}/web.yml", "--web.listen-address=127.0.0.1:9090"]),
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        url = "https://127.0.0.1:9090"

        def scraped():
            out = ctl(ns, f"--prometheus=https://ops:{PASSWORD.replace(' ', '%20')}@127.0.0.1:9090",
                      f"--prometheus-ca-file={cert}")
            assert proc.poll() is None, "Prometheus exited"
            return out.returncode == 0 and "node-tls" in out.stdout

        lp.wait_for(scraped, 90, "Prometheus up, behind TLS, with the node scraped")
        yield ns, d, url
    finally:
        lp.stop_process(proc, 10)
        if server:
            server.shutdown()
            server.server_close()
        ns.delete()


def ctl(ns, *args, env=None):
    return lp.run(ns.exec_cmd(["env", *(env or []), lp.CTL, "--no-pager", "fabric", "--json", "--timeout=20s", *args]),
                  check=False)


def test_https_with_basic_auth_and_the_ca(secured):
    ns, d, url = secured
    out = ctl(ns, f"--prometheus={url}", f"--prometheus-ca-file={d}/prometheus.crt", "--prometheus-user=ops",
              f"--prometheus-password-file={d}/password")
    assert out.returncode == 0, out.stderr
    assert '"node-tls"' in out.stdout and NODE in out.stdout
    # The same with the credentials in the URL (a path prefix of slashes is the API's root).
    out = ctl(ns, f"--prometheus=https://ops:{PASSWORD.replace(' ', '%20')}@127.0.0.1:9090/",
              f"--prometheus-ca-file={d}/prometheus.crt")
    assert out.returncode == 0 and "node-tls" in out.stdout, out.stderr


def test_wrong_password_is_said_and_not_shown(secured):
    ns, d, url = secured
    out = ctl(ns, f"--prometheus={url}", f"--prometheus-ca-file={d}/prometheus.crt", "--prometheus-user=ops",
              f"--prometheus-password-file={d}/wrong-password")
    assert out.returncode == 1, out
    assert f"Cannot query Prometheus at {url}: authentication failed" in out.stderr and "HTTP 401" in out.stderr
    out = ctl(ns, "--prometheus=https://ops:hunter2@127.0.0.1:9090", f"--prometheus-ca-file={d}/prometheus.crt")
    assert out.returncode == 1 and "authentication failed" in out.stderr, out
    assert "hunter2" not in out.stderr and "https://ops:xxxxx@127.0.0.1:9090" in out.stderr, out.stderr
    # No credentials at all: the same.
    out = ctl(ns, f"--prometheus={url}", f"--prometheus-ca-file={d}/prometheus.crt")
    assert out.returncode == 1 and "authentication failed" in out.stderr, out


def test_untrusted_certificate(secured):
    ns, d, url = secured
    auth = ["--prometheus-user=ops", f"--prometheus-password-file={d}/password"]
    # Neither the system's CAs nor another self-signed certificate vouch for it.
    for ca in ([], [f"--prometheus-ca-file={d}/stranger.crt"]):
        out = ctl(ns, f"--prometheus={url}", *ca, *auth)
        assert out.returncode == 1, out
        assert f"Cannot query Prometheus at {url}: its certificate is not trusted" in out.stderr, out.stderr
        assert "(curl: " in out.stderr and "certificate" in out.stderr.split("(curl: ")[1], out.stderr
    out = ctl(ns, f"--prometheus={url}", f"--prometheus-ca-file={d}/no-such-ca.crt", *auth)
    assert out.returncode == 1 and "Cannot query Prometheus at" in out.stderr, out


def test_through_proxies(secured):
    """https_proxy: a CONNECT tunnel to the real server, TLS and authentication end to end; http_proxy:
    the request goes to the proxy, with the bearer token, and no_proxy is honoured."""
    ns, d, url = secured
    Proxy.netns = ns.name
    server, port = serve(ns.name, Proxy)
    try:
        Proxy.seen.clear()
        proxy = f"http://127.0.0.1:{port}"
        out = ctl(ns, f"--prometheus={url}", f"--prometheus-ca-file={d}/prometheus.crt", "--prometheus-user=ops",
                  f"--prometheus-password-file={d}/password", env=[f"https_proxy={proxy}"])
        assert out.returncode == 0 and "node-tls" in out.stdout, out.stderr
        assert [s[:2] for s in Proxy.seen] == [("CONNECT", "127.0.0.1:9090")], Proxy.seen

        Proxy.seen.clear()
        with open(os.path.join(d, "token"), "w") as f:
            f.write("s3cr3t-token\n")
        out = ctl(ns, "--prometheus=http://prometheus.example:9090/prom", f"--prometheus-token-file={d}/token",
                  env=[f"http_proxy={proxy}"])
        assert out.returncode == 0, out.stderr
        assert Proxy.seen and all(p.startswith("http://prometheus.example:9090/prom/api/v1/query?query=")
                                  for _, p, _ in Proxy.seen), Proxy.seen
        assert all(h.get("Authorization") == "Bearer s3cr3t-token" for _, _, h in Proxy.seen), Proxy.seen

        # no_proxy: straight to the server, which the proxy never sees.
        Proxy.seen.clear()
        out = ctl(ns, f"--prometheus={url}", f"--prometheus-ca-file={d}/prometheus.crt", "--prometheus-user=ops",
                  f"--prometheus-password-file={d}/password", env=[f"https_proxy={proxy}", "no_proxy=127.0.0.1"])
        assert out.returncode == 0 and not Proxy.seen, (out.stderr, Proxy.seen)
    finally:
        server.shutdown()
        server.server_close()


def test_options_that_cannot_be_used(secured):
    ns, d, url = secured
    for args, message in (
            ([f"--prometheus-ca-file={d}/prometheus.crt"], "belong to --prometheus=URL"),
            ([f"--prometheus={url}", "--prometheus-user=ops"], "go together"),
            ([f"--prometheus={url}", "--prometheus-user=ops", f"--prometheus-password-file={d}/password",
              f"--prometheus-token-file={d}/password"], "pick one"),
            (["--prometheus=https://ops:x@127.0.0.1:9090", "--prometheus-user=ops",
              f"--prometheus-password-file={d}/password"], "give one"),
            (["--prometheus=ftp://127.0.0.1:9090"], "http:// or https://"),
            (["--prometheus=https://127.0.0.1:9090/?x=1"], "expected http[s]://")):
        out = ctl(ns, *args)
        assert out.returncode == 2 and message in out.stderr, (args, out.stderr)
    out = ctl(ns, f"--prometheus={url}", "--prometheus-user=ops", f"--prometheus-password-file={d}/none")
    assert out.returncode == 1 and "Cannot read --prometheus-password-file=" in out.stderr, out.stderr
