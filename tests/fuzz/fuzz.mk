# libFuzzer targets (clang). Every target is tests/fuzz/fuzz-NAME.c defining LLVMFuzzerTestOneInput(),
# a seed corpus in tests/fuzz/corpus/NAME/, and the libraries it links:
#   FUZZ_TARGETS += NAME; fuzz-NAME_LIBS := ...; fuzz-NAME_PKGS := ...; fuzz-NAME_EXTRA_SOURCES := files
#   linked in directly (linkprobectl's, which is no library)
# From each, the Makefile makes fuzz-NAME-regress (replays the corpus under ASan+UBSan in every
# `make check`) and, in the FUZZ=1 build, fuzz-NAME (libFuzzer; `make fuzz FUZZ_SECONDS=N` runs them
# all; `make check` runs each for a few seconds). A crash found becomes a corpus file: a regression test.
FUZZ_TARGETS += tbt-parse tbt-topology
fuzz-tbt-parse_LIBS := sysfs shared
fuzz-tbt-topology_LIBS := daemon sysfs shared

FUZZ_TARGETS += config probe-output metrics-request parse-util sysfs-uevent
fuzz-config_LIBS := daemon sysfs shared
# [Inhibit] What= is read by the parser Inhibit() uses, which lives beside the sd-bus inhibitors; [Health]
# is checked by the health judge, which formats PCIe links with the tables of sysfs/.
fuzz-config_PKGS := inih libsystemd
fuzz-probe-output_LIBS := daemon shared
fuzz-probe-output_PKGS := json-c libsystemd
fuzz-metrics-request_LIBS := daemon sysfs shared
fuzz-parse-util_LIBS := shared
fuzz-sysfs-uevent_LIBS := sysfs shared

FUZZ_TARGETS += gpu-json
fuzz-gpu-json_LIBS := daemon sysfs shared

# PCIe (issue 16): bus/pci and KFD attribute parsers, device paths, the probe's NVLink member.
FUZZ_TARGETS += pci-parse
fuzz-pci-parse_LIBS := daemon sysfs shared

# Reliability (issue 8): the RDMA attribute parsers, the measurement protocol's decoders, the
# responder fed a byte stream, peer addresses, probe results as the daemon applies them, and the
# persisted peer state.
FUZZ_TARGETS += rdma-parse proto responder peer-address peer-result peers-state
# InfiniBand neighbours (issue 26): the SMP answers a neighbour sends.
FUZZ_TARGETS += ib-smp
fuzz-ib-smp_LIBS := daemon sysfs shared
fuzz-rdma-parse_LIBS := sysfs shared
fuzz-proto_LIBS := netprobe sysfs shared
fuzz-responder_LIBS := netprobe sysfs shared
fuzz-responder_PKGS := $(NETPROBE_PKGS)
# The TCP probe's receive paths (issue 21): a download's frames dropped as they come, RTT replies.
FUZZ_TARGETS += net-client
fuzz-net-client_LIBS := netprobe sysfs shared
fuzz-net-client_PKGS := $(NETPROBE_PKGS)
fuzz-peer-address_LIBS := daemon shared
fuzz-peer-result_LIBS := daemon sysfs shared
fuzz-peers-state_LIBS := daemon sysfs shared

# LLDP (issue 26): frames anyone on the segment sends, parsed in the daemon (src/shared/lldp-parse.c).
FUZZ_TARGETS += lldp-parse
fuzz-lldp-parse_LIBS := shared

define fuzz_template
FUZZ_REGRESSION_PROGRAMS += fuzz-$(1)-regress
fuzz-$(1)-regress_SOURCES := tests/fuzz/fuzz-$(1).c tests/fuzz/fuzz-regress.c $$(fuzz-$(1)_EXTRA_SOURCES)
fuzz-$(1)-regress_LIBS := $$(fuzz-$(1)_LIBS)
fuzz-$(1)-regress_PKGS := $$(or $$(fuzz-$(1)_PKGS),$(PKG_MODULES))
FUZZ_PROGRAMS += fuzz-$(1)
fuzz-$(1)_SOURCES := tests/fuzz/fuzz-$(1).c $$(fuzz-$(1)_EXTRA_SOURCES)
fuzz-$(1)_LIBS := $$(fuzz-$(1)_LIBS)
fuzz-$(1)_PKGS := $$(or $$(fuzz-$(1)_PKGS),$(PKG_MODULES))
fuzz-$(1)_LDLIBS := -fsanitize=fuzzer
endef

# ethtool's netlink replies and notifications (issue 26): the parser the daemon, its replay and the
# monitor group share, and the judgement it feeds.
FUZZ_TARGETS += ethtool-linkmodes
fuzz-ethtool-linkmodes_LIBS := daemon sysfs shared
fuzz-ethtool-linkmodes_PKGS := libnl-3.0 libsystemd
# The subnet sweep (issue 26): linkprobe-probe-fabric's document, its strings from the fabric.
FUZZ_TARGETS += fabric-sweep
fuzz-fabric-sweep_LIBS := daemon sysfs shared

# topology.conf (issue 26): an administrator's file, read by linkprobectl fabric verify --slurm=.
FUZZ_TARGETS += topology-conf
fuzz-topology-conf_EXTRA_SOURCES := src/ctl/fabric/hostlist.c src/ctl/fabric/topology-conf.c
fuzz-topology-conf_LIBS := shared

# A node's snapshot (issue 26): `fabric --snapshots` reads files copied from every node into the model,
# switches, their Links and the sweep's LinkJudgements included; linkprobectl is no library, so its
# sources are linked in as the unit tests of the fabric model link them.
FUZZ_TARGETS += fabric-snapshot
fuzz-fabric-snapshot_EXTRA_SOURCES := $(filter-out src/ctl/linkprobectl-main.c,$(wildcard src/ctl/*.c src/ctl/fabric/*.c))
fuzz-fabric-snapshot_LIBS := shared
fuzz-fabric-snapshot_PKGS := $(PKG_MODULES) libcurl
