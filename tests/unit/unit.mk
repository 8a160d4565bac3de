# cmocka unit tests: one program per tests/unit/test-*.c, linked against everything below src/ but main().
UNIT_TEST_SOURCES := $(wildcard tests/unit/test-*.c)
UNIT_TESTS += $(patsubst tests/unit/%.c,%,$(UNIT_TEST_SOURCES))

define unit_test_template
$(1)_SOURCES := tests/unit/$(1).c
$(1)_LIBS := $($(1)_EXTRA_LIBS) daemon sysfs shared
$(1)_PKGS := $(PKG_MODULES) cmocka
$(1)_LDLIBS := $($(1)_EXTRA_LDLIBS)
endef
$(foreach t,$(patsubst tests/unit/%.c,%,$(UNIT_TEST_SOURCES)),$(eval $(call unit_test_template,$(t))))

# Per-test additions, after the template has set each test's defaults.
# The readers' tests build umockdev testbeds from tests/fixtures/*/*.umockdev with the C API (a plain
# directory tree opened as the sysfs root; no preload needed). --wrap=read lets the RDMA reader's test
# make a GID attribute fail with EINVAL as the kernel does, which no file can.
UMOCKDEV_CFLAGS := $(shell pkg-config --cflags umockdev-1.0 2>/dev/null)
test-infiniband-reader_PKGS += umockdev-1.0
test-infiniband-reader_LDLIBS := -Wl,--wrap=read
$(BUILD)/tests/unit/test-infiniband-reader.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
test-tbt-sysfs_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-tbt-sysfs.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
test-cpu-cache_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-cpu-cache.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
$(BUILD)/tests/unit/test-tbt-sysfs.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
test-rdma-verbs_PKGS += libibverbs
test-rdma-port_PKGS += libibverbs
# The daemon's address parser against the probes' use of it.
test-peer-address_LIBS := daemon netprobe sysfs shared
test-peer-address_LDLIBS := $(NETPROBE_LDLIBS)
test-pci-sysfs_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-pci-sysfs.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
test-pci-derive_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-pci-derive.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
# The pictures are linkprobectl's: all of it but main() is linked in (they read the CLI's model).
test-draw_SOURCES += $(filter-out src/ctl/linkprobectl-main.c,$(wildcard src/ctl/*.c src/ctl/fabric/*.c))
test-draw_PKGS += libcurl
# The ring search is linkprobectl's (src/ctl/), pure C with no bus: its files are linked in directly.
test-ring-search_SOURCES += src/ctl/fabric/ring-search.c src/ctl/fabric/ring-graph.c \
	src/ctl/fabric/ring-heuristic.c src/ctl/fabric/ring-coordinator.c
# Slurm's hostlist expressions and topology.conf (linkprobectl's src/ctl/fabric/, pure C).
test-topology-conf_SOURCES += src/ctl/fabric/hostlist.c src/ctl/fabric/topology-conf.c
# The switch tree reads the fabric model (linkprobectl's JSON helpers): linked as test-draw is.
test-fabric-tree_SOURCES += $(filter-out src/ctl/linkprobectl-main.c,$(wildcard src/ctl/*.c src/ctl/fabric/*.c))
test-fabric-tree_PKGS += libcurl
test-cpu-topology_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-cpu-topology.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
# The subnet sweep's choice of ports is the probe's (probes/, pure C): its file is linked in directly.
test-fabric-subnets_SOURCES += probes/fabric-subnets.c
