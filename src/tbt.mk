# Thunderbolt/USB4: the bus/thunderbolt reader lives in sysfs/, the tree and link logic in
# src/tbt-topology.c and src/tbt-link.c (part of libdaemon.a). Included after tests/unit/unit.mk so
# the unit tests below can add to what the unit-test template gave them.
DEBIAN_TEST_PACKAGES += libumockdev-dev bolt

# tbt-dump: what the reader and the topology see below a sysfs root, as JSON; used by the boltd
# side-by-side tests (tests/integration/test_tbt_*.py), not installed.
TEST_PROGRAMS += tbt-dump
tbt-dump_SOURCES := tests/tools/tbt-dump.c
tbt-dump_LIBS := daemon sysfs shared
tbt-dump_PKGS := json-c

# The reader's tests build umockdev testbeds from tests/fixtures/thunderbolt/*.umockdev with the C
# API (a plain directory tree opened as the sysfs root; no preload needed).
test-tbt-sysfs_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-tbt-sysfs.o: ALL_CFLAGS += $(shell pkg-config --cflags umockdev-1.0 2>/dev/null)
