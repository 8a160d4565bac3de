# RDMA: the class/infiniband reader lives in sysfs/. Included after tests/unit/unit.mk so the unit
# tests below can add to what the unit-test template gave them.
DEBIAN_TEST_PACKAGES += libumockdev-dev

# The reader's tests build umockdev testbeds from tests/fixtures/rdma/*.umockdev with the C API
# (no preload needed: the reader takes the testbed's sys directory as its root). --wrap=read lets the
# test make a GID attribute fail with EINVAL as the kernel does, which no file can.
UMOCKDEV_CFLAGS := $(shell pkg-config --cflags umockdev-1.0 2>/dev/null)
test-infiniband-reader_PKGS += umockdev-1.0
test-infiniband-reader_LDLIBS := -Wl,--wrap=read
$(BUILD)/tests/unit/test-infiniband-reader.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
