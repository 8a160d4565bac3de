# SPDX-License-Identifier: LGPL-2.1-or-later
"""Both ends' link modes through ethtool's netlink family (issue 26 item 2).

A real veth in the test's namespace, asked of the real kernel: veth reports no link modes, so nothing is
judged and the Link says why. Then the test build's daemon (linkprobed-ethtool-replay, the daemon with
tests/tools/ethtool-replay.c linked in) answers ethtool requests for the same kind of veth from a file of
kernel messages built as the kernel's documentation specifies (ethtool_messages.py): a ConnectX-4 Lx that
trained at 10G against a switch port that also does 25G is degraded, with Health agreeing; the switch
port renegotiates and it recovers; the cable is pulled and the driver's extended state becomes
LinkDownReason. Each step is a real link event (RTM_NEWLINK) that makes the daemon ask again; the bus,
`linkprobectl show`/`list` and the metrics are checked at each."""

import os
import re

import pytest

import ethtool_messages as em
import fabric_queries
import lp
from lp import wait_for
from test_alerts_fire import METRICS_PORT, PROMETHEUS_PORT, Held, start_prometheus

LINK = lp.IFACE + "Link"
REPLAY = os.path.join(lp.BUILD, "linkprobed-ethtool-replay")


def link(client, name):
    return client.link_by_name(name)


def metric(text, family, device):
    m = re.search(rf'^{family}\{{[^}}]*device="{re.escape(device)}"[^}}]*\}} (\S+)$', text, re.M)
    return float(m.group(1)) if m else None


def test_veth_reports_no_link_modes(netns, client, daemon_factory):
    netns.ip("link", "add", "ev0", "type", "veth", "peer", "name", "ev1")
    netns.ip("link", "set", "ev0", "up")
    netns.ip("link", "set", "ev1", "up")
    daemon_factory(netns)

    def answered():
        lk = link(client, "ev0")
        return lk if lk and lk.get("DegradedReason", "").startswith("unknown: the driver") else None

    lk = wait_for(answered, what="the veth's link modes asked")
    assert lk["Degraded"] is False
    assert lk["DegradedReason"] == "unknown: the driver reports no link modes"
    assert lk["SupportedSpeedsMbps"] == [] and lk["PartnerSpeedsMbps"] == []
    assert lk["BestCommonSpeedMbps"] == 0
    assert lk["LinkDownReason"] == ""
    assert lk["SpeedMbps"] == 10000  # the kernel's answer, as sysfs says it
    assert lk["Health"] != "degraded"
    # Not asked at all: the loopback says so rather than nothing.
    lo = link(client, "lo")
    assert lo["Degraded"] is False and lo["DegradedReason"] == "unknown: not an Ethernet link"


def test_replayed_nic_degraded_recovers_and_goes_down(netns, client, bus, tmp_path, daemon_factory):
    replies = str(tmp_path / "ethtool-replies")
    nic = em.CONNECTX4_LX_25G
    em.write_replies(replies,
                     em.linkmodes(name="enp0", supported=nic, advertised=nic, partner=em.SWITCH_PORT_25G,
                                  speed=10000, lanes=1),
                     em.linkstate(name="enp0", link=True))
    netns.ip("link", "add", "enp0", "type", "veth", "peer", "name", "enp0p")
    netns.ip("link", "set", "enp0p", "up")
    netns.ip("link", "set", "enp0", "up")
    daemon = daemon_factory(netns, program=REPLAY, env={"LINKPROBE_ETHTOOL_REPLAY": replies})
    assert "ethtool replay: answering from" in daemon.log()

    lk = wait_for(lambda: (lambda l: l if l and l["Degraded"] else None)(link(client, "enp0")),
                  what="the 25G NIC at 10G judged degraded")
    assert lk["SupportedSpeedsMbps"] == [1000, 10000, 25000]
    assert lk["PartnerSpeedsMbps"] == [10000, 25000]
    assert lk["BestCommonSpeedMbps"] == 25000
    assert lk["SpeedMbps"] == 10000
    assert lk["DegradedReason"] == "10000 Mb/s while both ends support 25000 Mb/s"
    # One verdict: Health says the same, word for word, without the watch (which it says it lacks).
    assert lk["Health"] == "degraded"
    assert lk["HealthReason"].startswith(lk["DegradedReason"]), lk["HealthReason"]
    assert lp.one_verdict_violations(client.objects()) == []
    # The Summary's DegradedLinks names it, with the same reason.
    summary = client.get_all("Summary")
    assert (lk["Path"], "enp0", lk["DegradedReason"]) in [tuple(d) for d in summary["DegradedLinks"]], summary
    assert lk["LinkDownReason"] == ""
    # The veth's peer is asked of the real kernel (the file does not name it).
    assert link(client, "enp0p")["DegradedReason"] == "unknown: the driver reports no link modes"

    show = lp.ctl(bus, "show", "enp0", netns=netns, check=True).stdout
    assert "10000 Mb/s while both ends support 25000 Mb/s" in show
    assert re.search(r"Best common:\s+25 Gb/s", show), show
    listing = lp.ctl(bus, "list", netns=netns, check=True, env={"COLUMNS": "200"}).stdout
    assert re.search(r"^.*enp0 .*10 Gb/s \(of 25 Gb/s\)", listing, re.M), listing
    metrics = lp.ctl(bus, "metrics", netns=netns, check=True).stdout
    assert metric(metrics, "linkprobe_link_degraded", "enp0") == 1
    assert metric(metrics, "linkprobe_link_best_common_speed_bytes", "enp0") == 25000 * 125000
    assert metric(metrics, "linkprobe_link_speed_bytes", "enp0") == 10000 * 125000
    assert metric(metrics, "linkprobe_link_degraded", "enp0p") == 0

    # The switch port renegotiates at 25G; a link event (here an MTU change) makes the daemon ask again.
    em.write_replies(replies,
                     em.linkmodes(name="enp0", supported=nic, advertised=nic, partner=em.SWITCH_PORT_25G,
                                  speed=25000, lanes=1, verbose=True),
                     em.linkstate(name="enp0", link=True))
    netns.ip("link", "set", "enp0", "mtu", "1400")
    lk = wait_for(lambda: (lambda l: l if l and l["SpeedMbps"] == 25000 else None)(link(client, "enp0")),
                  what="the NIC at 25G")
    assert lk["Degraded"] is False and lk["DegradedReason"] == ""
    assert lk["Health"] != "degraded"
    assert client.get_all("Summary")["DegradedLinks"] == []
    metrics = lp.ctl(bus, "metrics", netns=netns, check=True).stdout
    assert metric(metrics, "linkprobe_link_degraded", "enp0") == 0

    # The cable is pulled: the carrier goes, the driver names why, and nothing is judged.
    em.write_replies(replies,
                     em.linkmodes(name="enp0", supported=nic, advertised=nic, speed=None, duplex=None),
                     em.linkstate(name="enp0", link=False, ext_state=em.EXT_STATE_CABLE_ISSUE, ext_substate=1))
    netns.ip("link", "set", "enp0p", "down")
    lk = wait_for(lambda: (lambda l: l if l and l["LinkDownReason"] else None)(link(client, "enp0")),
                  what="the link-down reason")
    assert lk["LinkDownReason"] == "cable issue: unsupported cable"
    assert lk["Carrier"] is False
    assert lk["Degraded"] is False and lk["DegradedReason"] == "unknown: the link is down"
    assert lk["PartnerSpeedsMbps"] == [] and lk["BestCommonSpeedMbps"] == 0
    show = lp.ctl(bus, "show", "enp0", netns=netns, check=True).stdout
    assert "cable issue: unsupported cable" in show

    # Plugged in again, but the partner is gone: autonegotiation names it.
    em.write_replies(replies,
                     em.linkmodes(name="enp0", supported=nic, advertised=nic, speed=None, duplex=None),
                     em.linkstate(name="enp0", link=False, ext_state=em.EXT_STATE_AUTONEG, ext_substate=1))
    netns.ip("link", "set", "enp0", "mtu", "1500")
    wait_for(lambda: link(client, "enp0")["LinkDownReason"] == "autonegotiation: no partner detected",
             what="autonegotiation's reason")


def test_replay_file_with_garbage_is_skipped(netns, client, tmp_path, daemon_factory):
    """A message that does not parse is skipped with a warning; the others still answer."""
    replies = str(tmp_path / "ethtool-replies")
    good = em.linkmodes(name="enq0", supported=em.CONNECTX4_LX_25G, advertised=em.CONNECTX4_LX_25G,
                        partner=["10000baseKR/Full"], speed=10000)
    # A compact bitset whose VALUE is shorter than its SIZE says.
    bad = em.message(em.LINKMODES_GET_REPLY, em.header(name="enq0") +
                     em.nest(em.LINKMODES_OURS, em.u32(em.BITSET_SIZE, 125), em.attr(em.BITSET_VALUE, b"\1\0\0\0"),
                             em.attr(em.BITSET_MASK, b"\1\0\0\0")))
    em.write_replies(replies, good, bad)
    netns.ip("link", "add", "enq0", "type", "veth", "peer", "name", "enq1")
    netns.ip("link", "set", "enq1", "up")
    netns.ip("link", "set", "enq0", "up")
    daemon = daemon_factory(netns, program=REPLAY, env={"LINKPROBE_ETHTOOL_REPLAY": replies})
    lk = wait_for(lambda: (lambda l: l if l and l["BestCommonSpeedMbps"] else None)(link(client, "enq0")),
                  what="the good message's answer")
    # Both ends share only 10G, and the link runs at it: not degraded.
    assert lk["BestCommonSpeedMbps"] == 10000 and lk["Degraded"] is False and lk["DegradedReason"] == ""
    assert daemon.wait_log("skipping a message that does not parse"), daemon.log()


def test_monitor_group_notifications_are_followed(netns, daemon_factory):
    """`ethtool -s` on a tap (tun's driver keeps what it is told) makes the kernel send LINKMODES_NTF to
    ethtool's monitor group: the daemon hears it for that link, without polling."""
    netns.ip("tuntap", "add", "dev", "etap0", "mode", "tap")
    netns.ip("link", "set", "etap0", "up")
    daemon = daemon_factory(netns, args=["--log-level=debug"])
    lp.run(netns.exec_cmd(["ethtool", "-s", "etap0", "speed", "1000", "duplex", "full", "autoneg", "off"]))
    assert daemon.wait_log("link modes or settings changed"), daemon.log()
    line = next(l for l in daemon.log().splitlines() if "link modes or settings changed" in l)
    assert "etap0" in line, line


def test_degraded_with_the_watch_on_is_one_verdict(netns, client, tmp_path, daemon_factory):
    """With the watch sampling, nothing else to say: HealthReason is DegradedReason, word for word, and the
    verdict survives every sample."""
    replies = str(tmp_path / "ethtool-replies")
    nic = em.CONNECTX4_LX_25G
    em.write_replies(replies, em.linkmodes(name="enw0", supported=nic, advertised=["10000baseKR/Full"],
                                           partner=em.SWITCH_PORT_25G, speed=10000, lanes=1))
    netns.ip("link", "add", "enw0", "type", "veth", "peer", "name", "enw1")
    netns.ip("link", "set", "enw1", "up")
    netns.ip("link", "set", "enw0", "up")
    daemon_factory(netns, program=REPLAY, env={"LINKPROBE_ETHTOOL_REPLAY": replies},
                   config="[Watch]\nIntervalSec=100ms\n")
    want = "10000 Mb/s while both ends support 25000 Mb/s (this end does not advertise it)"
    lk = wait_for(lambda: (lambda l: l if l and l["HealthReason"] == want else None)(link(client, "enw0")),
                  what="the sampled link's one verdict")
    assert lk["Health"] == "degraded" and lk["Degraded"] is True and lk["DegradedReason"] == want
    assert lk["RxErrors"] != 2 ** 64 - 1  # sampled
    assert lp.one_verdict_violations(client.objects()) == []


def test_link_degraded_alert_is_held(netns, client, tmp_path, daemon_factory):
    """LinkprobeLinkDegraded (contrib/prometheus/linkprobe-rules.yml) on the real Prometheus, scraping the test
    build's daemon whose replayed 25G NIC trained at 10G: the series the rule reads is one the exporter sets."""
    if not os.access("/usr/bin/prometheus", os.X_OK):
        pytest.skip("no Prometheus server installed (Debian package prometheus)")
    replies = str(tmp_path / "ethtool-replies")
    nic = em.CONNECTX4_LX_25G
    em.write_replies(replies, em.linkmodes(name="enal0", supported=nic, advertised=nic, partner=em.SWITCH_PORT_25G,
                                           speed=10000, lanes=1))
    netns.ip("link", "add", "enal0", "type", "veth", "peer", "name", "enal1")
    netns.ip("link", "set", "enal1", "up")
    netns.ip("link", "set", "enal0", "up")
    daemon_factory(netns, program=REPLAY, env={"LINKPROBE_ETHTOOL_REPLAY": replies},
                   config=f"[Watch]\nIntervalSec=100ms\n[Metrics]\nListenAddress=127.0.0.1:{METRICS_PORT}\n")
    wait_for(lambda: link(client, "enal0")["Degraded"], what="the link judged degraded")
    prom = start_prometheus(netns, str(tmp_path))
    try:
        held = Held(fabric_queries.Prometheus(netns.name, f"http://127.0.0.1:{PROMETHEUS_PORT}"))
        held.wait("LinkprobeLinkDegraded", timeout=60)
        assert "LinkprobeLinkFlapping" not in held.names
    finally:
        lp.stop_process(prom)
