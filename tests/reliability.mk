# Reliability (issue 8): the soak run and what the fault tests need.
#   make soak [SOAK_MINUTES=10]   linkprobed under sustained load (tests/soak/soak.py); not part of make check
# test_valgrind.py runs the daemon under valgrind memcheck in every `make check`.
DEBIAN_TEST_PACKAGES += valgrind

SOAK_MINUTES ?= 10

.PHONY: soak
soak: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)/usr/bin/python3 tests/soak/soak.py --build $(BUILD) --minutes $(SOAK_MINUTES)
