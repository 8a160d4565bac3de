# Reliability (issue 8): the soak run and what the fault tests need.
#   make soak [SOAK_MINUTES=10]   linkprobed under sustained load (tests/soak/soak.py); not part of make check
# test_valgrind.py runs the daemon under valgrind memcheck in every `make check`.
DEBIAN_TEST_PACKAGES += valgrind

SOAK_MINUTES ?= 10

.PHONY: soak
soak: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)/usr/bin/python3 tests/soak/soak.py --build $(BUILD) --minutes $(SOAK_MINUTES)

# test-sysfs-vanish: devices removed at every point of a read (a --wrap=read hook renames the device's
# directory away when the reader reads a marked file), on umockdev testbeds built with the C API.
test-sysfs-vanish_PKGS += umockdev-1.0
test-sysfs-vanish_LDLIBS := -Wl,--wrap=read
$(BUILD)/tests/unit/test-sysfs-vanish.o: ALL_CFLAGS += $(shell pkg-config --cflags umockdev-1.0 2>/dev/null)
