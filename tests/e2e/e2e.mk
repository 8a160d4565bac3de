# End-to-end tests: boot a Debian 12 container with linkprobe installed (tests/e2e/test_system.py).
# `make check` runs them too (tests/run-tests); this target runs only them.
.PHONY: check-e2e e2e-image
check-e2e: deps
	$(Q)$(MAKE) --no-print-directory all
	$(Q)/usr/bin/python3 tests/run-tests --build $(BUILD) --only e2e

# Builds or refreshes the cached image (tests/e2e/cache/) without running anything.
e2e-image:
	$(Q)/usr/bin/python3 tests/e2e/e2e_image.py
