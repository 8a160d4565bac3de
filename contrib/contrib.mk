# Files for the tools around linkprobe, installed under $(DATADIR)/linkprobe/: Prometheus recording and
# alerting rules and a Grafana dashboard (contrib/prometheus/; linkprobed(8), ALERTING).
CONTRIBDIR ?= $(DATADIR)/linkprobe
CONTRIB_PROMETHEUS := contrib/prometheus/linkprobe-rules.yml contrib/prometheus/linkprobe-dashboard.json

# promtool (Debian's prometheus package, already listed) checks and unit-tests the rules; PyYAML reads
# them in tests/integration/test_prometheus_rules.py.
DEBIAN_TEST_PACKAGES += python3-yaml

define install_contrib
	install -d $(DESTDIR)$(CONTRIBDIR)/prometheus
	install -m 0644 $(CONTRIB_PROMETHEUS) $(DESTDIR)$(CONTRIBDIR)/prometheus/
endef

define uninstall_contrib
	rm -f $(addprefix $(DESTDIR)$(CONTRIBDIR)/prometheus/,$(notdir $(CONTRIB_PROMETHEUS)))
	-rmdir $(DESTDIR)$(CONTRIBDIR)/prometheus $(DESTDIR)$(CONTRIBDIR) 2>/dev/null
endef
