# Test tools, not installed: what the readers and the topology see below a sysfs root, as JSON.
# rdma-dump (with --verbs, libibverbs too) and tbt-dump; the boltd side-by-side tests
# (tests/integration/test_tbt_*.py) and the RDMA fixture tests use them.
TEST_PROGRAMS += rdma-dump
rdma-dump_SOURCES := tests/tools/rdma-dump.c
rdma-dump_LIBS := daemon sysfs shared
rdma-dump_PKGS := json-c libibverbs

TEST_PROGRAMS += tbt-dump
tbt-dump_SOURCES := tests/tools/tbt-dump.c
tbt-dump_LIBS := daemon sysfs shared
tbt-dump_PKGS := json-c

# umockdev testbeds (the readers' tests and the integration layer) and boltd, the Thunderbolt anchor.
DEBIAN_TEST_PACKAGES += libumockdev-dev bolt

# linkprobed with a replayed ethtool source (issue 26): the daemon's main and libraries plus
# tests/tools/ethtool-replay.c, which answers ethtool requests from a file of recorded kernel messages
# (LINKPROBE_ETHTOOL_REPLAY=FILE). Only this test program honours that variable; linkprobed has no such code.
TEST_PROGRAMS += linkprobed-ethtool-replay
linkprobed-ethtool-replay_SOURCES := src/daemon/linkprobed.c tests/tools/ethtool-replay.c
linkprobed-ethtool-replay_LIBS := $(linkprobed_LIBS)
linkprobed-ethtool-replay_PKGS := $(linkprobed_PKGS)
