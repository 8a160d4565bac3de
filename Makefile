# SPDX-License-Identifier: LGPL-2.1-or-later
# linkprobe — build, test, install and run.
#
#   make [all]        build everything into $(BUILD)/
#   make run          install the missing Debian packages for building and running, build, start
#                     linkprobed, show this machine
#   make check        install the missing Debian packages for the tests too, build, run every test layer
#                     (SKIP="e2e ..." leaves layers out: unit fuzz man integration e2e)
#   make bench        side-by-side benchmarks against the anchor tools
#   make install      DESTDIR=... PREFIX=/usr
#   make deps         install missing Debian packages (as root) or say which are missing; deps-run:
#                     only those for building and running
#
# Switches: V=1 shows commands; DEVELOPER=1 adds -Werror and more warnings; SANITIZE=1 builds with
# clang's ASan+UBSan into build-sanitize/ (umockdev's preload does not mix with gcc's ASan runtime).

.DELETE_ON_ERROR:
.SUFFIXES:
.DEFAULT_GOAL := all

VERSION := 0.1

PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
LIBEXECDIR ?= $(PREFIX)/libexec
PROBEDIR ?= $(LIBEXECDIR)/linkprobe
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
SYSCONFDIR ?= $(if $(filter /usr,$(PREFIX)),/etc,$(PREFIX)/etc)
LOCALSTATEDIR ?= /var
DESTDIR ?=

V ?= 0
DEVELOPER ?= 0
SANITIZE ?= 0

ifeq ($(V),1)
  Q :=
  msg =
else
  Q := @
  msg = @printf '  %-6s %s\n' '$(1)' '$(2)';
endif

FUZZ ?= 0
FUZZ_SECONDS ?= 60

ifeq ($(FUZZ),1)
  ifeq ($(origin CC),default)
    CC := clang
  endif
  BUILD ?= build-fuzz
  SANITIZE_FLAGS := -fsanitize=address,undefined,fuzzer-no-link -fno-sanitize-recover=all -fno-omit-frame-pointer
else ifeq ($(SANITIZE),1)
  ifeq ($(origin CC),default)
    CC := clang
  endif
  BUILD ?= build-sanitize
  SANITIZE_FLAGS := -fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer
else
  BUILD ?= build
  SANITIZE_FLAGS :=
endif
# A build directory inside the checkout is named relative to it, however it was given (BUILD=$PWD/build):
# the compiler's dependency files name their targets as the build did, and make must find them again.
override BUILD := $(patsubst $(CURDIR)/%,%,$(abspath $(BUILD)))

# pkg-config is asked once per make run; `make deps` must work before any of these exist, so a
# missing module only fails the targets that compile (see pkgs-present).
PKG_MODULES := libsystemd libnl-3.0 libnl-route-3.0 libudev json-c inih libgvc
TEST_PKG_MODULES := cmocka
ALL_PKG_MODULES = $(PKG_MODULES) $(TEST_PKG_MODULES)
pkg_cflags := $(shell pkg-config --cflags $(PKG_MODULES) 2>/dev/null)
pkg_libs = $(shell pkg-config --libs $(1) 2>/dev/null)

CFLAGS ?= -O2 -g
WARNINGS := -Wall -Wextra -Wno-unused-parameter -Wshadow -Wformat=2 -Wmissing-prototypes \
	-Wstrict-prototypes -Wpointer-arith -Wundef -Wvla -Wimplicit-fallthrough -Wswitch-enum \
	-Wno-missing-field-initializers -Werror=implicit-function-declaration -Werror=incompatible-pointer-types
ifeq ($(DEVELOPER),1)
  WARNINGS += -Werror -Wcast-align -Wmissing-declarations -Wnested-externs -Wwrite-strings
endif

BASE_CFLAGS := -std=gnu11 -D_GNU_SOURCE -fno-strict-aliasing -fstack-protector-strong -fPIE \
	-I. -Isrc -I$(BUILD) -DVERSION='"$(VERSION)"'
ALL_CFLAGS = $(BASE_CFLAGS) $(WARNINGS) $(pkg_cflags) $(SANITIZE_FLAGS) $(CFLAGS) $(EXTRA_CFLAGS)
ALL_LDFLAGS = -pie -Wl,-z,relro,-z,now,--as-needed $(SANITIZE_FLAGS) $(LDFLAGS)

objs = $(patsubst %.c,$(BUILD)/%.o,$(1))

# Debian packages. Components append to these lists. `make run` installs what building and running need
# (BUILD and RUN: run-local is Python with GObject on a dbus-daemon of its own, and shows `busctl tree`);
# `make check` and `make deps` add what the tests need (TEST), `make bench` the anchor tools (BENCH).
# A container or debootstrap minbase image lacks even "important" packages, so the tests' everyday tools
# are named: procps (kill for the unit's ExecReload=, sysctl and pgrep), iputils-ping, and groff-base,
# which renders the manual pages as man(1) does. linkprobectl draws its pictures with Graphviz's library
# (libgvc6, whose cairo plugin makes the PNG); the tests check them with xmllint and rsvg-convert.
DEBIAN_BUILD_PACKAGES := gcc make pkg-config libsystemd-dev libnl-3-dev libnl-route-3-dev libudev-dev \
	libjson-c-dev libinih-dev libgraphviz-dev
DEBIAN_RUN_PACKAGES := dbus python3 python3-gi systemd libgvc6 fonts-dejavu-core
DEBIAN_TEST_PACKAGES := libcmocka-dev clang libclang-rt-14-dev python3-dbus python3-pytest python3-pytest-xdist \
	gir1.2-umockdev-1.0 umockdev iproute2 procps iputils-ping mandoc groff-base prometheus curl jq \
	python3-prometheus-client strace librsvg2-bin libxml2-utils ibsim-utils infiniband-diags
DEBIAN_BENCH_PACKAGES := iproute2 hyperfine python3-yaml

# Every component lists its pieces in its own fragment:
#   static libraries: LIBRARIES += name; name_SOURCES := ...
#   programs: PROGRAMS (bin), DAEMONS (libexec), PROBES (libexec/linkprobe), TEST_PROGRAMS (not installed);
#   name_SOURCES, name_LIBS (our static libraries, in link order), name_PKGS (pkg-config modules)
#   unit tests: UNIT_TESTS += name (a cmocka program run by `make check`)
LIBRARIES :=
PROGRAMS :=
DAEMONS :=
PROBES :=
TEST_PROGRAMS :=
UNIT_TESTS :=
FUZZ_TARGETS :=
FUZZ_REGRESSION_PROGRAMS :=
FUZZ_PROGRAMS :=
MAN_PAGES :=

include src/shared/shared.mk
include sysfs/sysfs.mk
include src/daemon/daemon.mk
include src/ctl/ctl.mk
include src/applet/applet.mk
include probes/probes.mk
include tests/unit/unit.mk
include tests/tools/tools.mk
include tests/fake-ibverbs/fake-ibverbs.mk
include tests/fuzz/fuzz.mk
include man/man.mk
include systemd/systemd.mk
include tests/e2e/e2e.mk
include bench/bench.mk
include tests/reliability.mk
include contrib/contrib.mk

$(foreach t,$(FUZZ_TARGETS),$(eval $(call fuzz_template,$(t))))

ALL_PROGRAMS := $(PROGRAMS) $(DAEMONS) $(PROBES) $(TEST_PROGRAMS) $(UNIT_TESTS) $(FUZZ_REGRESSION_PROGRAMS) \
	$(if $(filter 1,$(FUZZ)),$(FUZZ_PROGRAMS))

define library_template
$(BUILD)/lib$(1).a: $$(call objs,$$($(1)_SOURCES))
	$$(call msg,AR,$$@)rm -f $$@ && ar rcs $$@ $$^
endef

define program_template
$(BUILD)/$(1): $$(call objs,$$($(1)_SOURCES)) $$(patsubst %,$(BUILD)/lib%.a,$$($(1)_LIBS))
	$$(call msg,CCLD,$$@)$$(CC) $$(ALL_LDFLAGS) -o $$@ $$(filter %.o,$$^) $$(filter %.a,$$^) \
		$$(call pkg_libs,$$($(1)_PKGS)) $$($(1)_LDLIBS)
endef

$(foreach l,$(LIBRARIES),$(eval $(call library_template,$(l))))
$(foreach p,$(ALL_PROGRAMS),$(eval $(call program_template,$(p))))

.PHONY: all
all: $(addprefix $(BUILD)/,$(PROGRAMS) $(DAEMONS) $(PROBES) $(TEST_PROGRAMS))

# The directories this build is for, as a header: what embeds a path includes "build-paths.h" and so
# depends on it (-MMD). Like git's GIT-PREFIX, the file is rewritten only when a value changed, so a
# `make install PREFIX=/usr` after a plain `make` recompiles exactly what embeds a path, and a second
# run compiles nothing. It is made before any object (order-only), as the first build's objects have no
# dependency files yet.
BUILD_PATHS := BINDIR LIBEXECDIR PROBEDIR SYSCONFDIR LOCALSTATEDIR DATADIR

.PHONY: build-paths-check
$(BUILD)/build-paths.h: build-paths-check
	@mkdir -p $(@D)
	@{ echo '/* Generated by the Makefile: the directories this build was made for. */'; \
	  $(foreach v,$(BUILD_PATHS),echo '#define $(v) "$($(v))"';) } > $@.tmp; \
	if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi

$(BUILD)/%.o: %.c | pkgs-present $(BUILD)/build-paths.h
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(ALL_CFLAGS) -MMD -MP -c -o $@ $<

-include $(shell find $(BUILD) -name '*.d' 2>/dev/null)

.PHONY: pkgs-present
pkgs-present:
	@missing=''; for m in $(PKG_MODULES); do pkg-config --exists $$m || missing="$$missing $$m"; done; \
	if [ -n "$$missing" ]; then \
		echo "Missing pkg-config modules:$$missing. Run 'make deps' (as root) to install them." >&2; exit 1; \
	fi

# ---------------------------------------------------------------------------------------------------
# Dependencies

.PHONY: deps deps-run deps-bench
# Installs only what dpkg says is missing ($(1); $(2) says what for), with apt's own progress on the
# terminal. The package lists are refreshed first where there are none (a fresh machine or container),
# and otherwise only when an install from them fails (they may be out of date). A temporary policy-rc.d
# keeps the packages we install only for their tools (prometheus for promtool, bolt for boltd) from
# starting services.
define install_packages
	$(Q)missing=''; for p in $(sort $(1)); do \
		dpkg-query -W -f='$${Status}' $$p 2>/dev/null | grep -q 'install ok installed' || missing="$$missing $$p"; \
	done; \
	if [ -z "$$missing" ]; then exit 0; fi; \
	if [ "$$(id -u)" != 0 ]; then \
		echo "Missing Debian packages for $(2):$$missing"; \
		echo "Run 'make $@' as root, or: apt-get install -y$$missing"; exit 1; \
	fi; \
	echo "Installing $$(echo $$missing | wc -w) Debian packages for $(2):$$missing"; \
	export DEBIAN_FRONTEND=noninteractive; \
	guard=''; if [ ! -e /usr/sbin/policy-rc.d ]; then \
		printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d && guard=1; \
	fi; \
	status=0; \
	if ! ls /var/lib/apt/lists/ 2>/dev/null | grep -q '_Packages'; then \
		echo "No package lists yet: apt-get update first."; apt-get update || status=$$?; \
	fi; \
	if [ $$status = 0 ] && ! apt-get install -y --no-install-recommends $$missing; then \
		echo "apt-get install failed; refreshing the package lists (apt-get update) and trying again."; \
		{ apt-get update && apt-get install -y --no-install-recommends $$missing; } || status=$$?; \
	fi; \
	if [ -n "$$guard" ]; then rm -f /usr/sbin/policy-rc.d; fi; \
	exit $$status
endef

deps-run:
	$(call install_packages,$(DEBIAN_BUILD_PACKAGES) $(DEBIAN_RUN_PACKAGES),building and running)

deps:
	$(call install_packages,$(DEBIAN_BUILD_PACKAGES) $(DEBIAN_RUN_PACKAGES) $(DEBIAN_TEST_PACKAGES),building and testing)

deps-bench:
	$(call install_packages,$(DEBIAN_BUILD_PACKAGES) $(DEBIAN_RUN_PACKAGES) $(DEBIAN_TEST_PACKAGES) \
		$(DEBIAN_BENCH_PACKAGES),benchmarking)

# ---------------------------------------------------------------------------------------------------
# Running and testing

.PHONY: run run-now check check-now unit integration bench bench-now
run: deps-run
	$(Q)$(MAKE) --no-print-directory run-now

run-now: all
	$(Q)/usr/bin/python3 tests/run-local --build $(BUILD)

# The unit tests and fuzz regressions always run under ASan+UBSan (a second build in
# build-sanitize/); the integration layers use this build, or the sanitized one with SANITIZE=1.
# The sub-makes name their build directory: a BUILD= given on the command line reaches them too.
# SKIP= leaves layers out (make check SKIP=e2e). The tests run in this make, not a sub-make, so that a
# failure adds one line of make's after the totals (.ci/run repeats the totals after it).
ifeq ($(SANITIZE),1)
  SANITIZED_BUILD = $(BUILD)
else
  SANITIZED_BUILD = build-sanitize
endif
RUN_TESTS = /usr/bin/python3 tests/run-tests --build $(BUILD) --sanitized-build $(SANITIZED_BUILD) \
	--fuzz-build build-fuzz --fuzz-seconds $(CHECK_FUZZ_SECONDS) --jobs $(CHECK_JOBS) $(if $(SKIP),--skip '$(SKIP)')

# Tests, fuzz targets and integration test files run CHECK_JOBS at a time, and the three builds with as many
# jobs: most integration tests wait on daemons and timers, so two share even one core well. The tests that
# time what they measure (marked alone) still run by themselves.
CHECK_JOBS ?= 2

.PHONY: check-build
check: deps
	$(Q)rm -f $(BUILD)/test-totals
	$(Q)$(MAKE) --no-print-directory -j$(CHECK_JOBS) check-build
	$(Q)$(RUN_TESTS)

check-now: check-build
	$(Q)$(RUN_TESTS)

check-build: all $(addprefix $(BUILD)/,$(UNIT_TESTS))
	$(Q)$(MAKE) --no-print-directory FUZZ=1 BUILD=build-fuzz fuzz-programs
ifneq ($(SANITIZE),1)
	$(Q)$(MAKE) --no-print-directory SANITIZE=1 BUILD=build-sanitize sanitized-tests
endif

# make check gives every fuzz target a few seconds; `make fuzz FUZZ_SECONDS=N` as long as you like.
CHECK_FUZZ_SECONDS ?= 5

.PHONY: update-interfaces
# Rewrites systemd/interfaces/*.xml (installed to share/dbus-1/interfaces) from the running daemon, with
# the org.gtk.GDBus.DocString of every member from systemd/interfaces/docstrings.txt; make check fails
# while they differ, or while a member has no description.
update-interfaces: all
	$(Q)LINKPROBE_UPDATE_INTERFACES=1 LINKPROBE_BUILD=$(abspath $(BUILD)) /usr/bin/python3 -m pytest -q \
		-p no:cacheprovider tests/integration/test_introspection.py

.PHONY: fuzz fuzz-programs
fuzz-programs: $(addprefix $(BUILD)/,$(FUZZ_PROGRAMS))

fuzz: deps
	$(Q)$(MAKE) --no-print-directory FUZZ=1 BUILD=build-fuzz fuzz-programs
	$(Q)/usr/bin/python3 tests/fuzz/run-fuzz --build build-fuzz --seconds $(FUZZ_SECONDS)

.PHONY: sanitized-tests
sanitized-tests: $(addprefix $(BUILD)/,$(UNIT_TESTS) $(FUZZ_REGRESSION_PROGRAMS))

unit: $(addprefix $(BUILD)/,$(UNIT_TESTS))
	$(Q)/usr/bin/python3 tests/run-tests --build $(BUILD) --sanitized-build $(BUILD) --only unit

bench: deps-bench
	$(Q)$(MAKE) --no-print-directory bench-now

bench-now: all
	$(Q)BUILD=$(BUILD) ./bench/run-all

# ---------------------------------------------------------------------------------------------------
# Installing

.PHONY: install uninstall
install: all $(INSTALL_EXTRA)
	install -d $(DESTDIR)$(BINDIR) $(DESTDIR)$(LIBEXECDIR) $(DESTDIR)$(PROBEDIR)
	$(if $(PROGRAMS),install -m 0755 $(addprefix $(BUILD)/,$(PROGRAMS)) $(DESTDIR)$(BINDIR)/)
	$(if $(DAEMONS),install -m 0755 $(addprefix $(BUILD)/,$(DAEMONS)) $(DESTDIR)$(LIBEXECDIR)/)
	$(if $(PROBES),install -m 0755 $(addprefix $(BUILD)/,$(PROBES)) $(DESTDIR)$(PROBEDIR)/)
	$(install_man)
	$(install_systemd)
	$(install_contrib)
	$(install_applet)

uninstall:
	rm -f $(addprefix $(DESTDIR)$(BINDIR)/,$(PROGRAMS)) $(addprefix $(DESTDIR)$(LIBEXECDIR)/,$(DAEMONS))
	rm -f $(addprefix $(DESTDIR)$(PROBEDIR)/,$(PROBES))
	-rmdir $(DESTDIR)$(PROBEDIR) 2>/dev/null
	$(uninstall_man)
	$(uninstall_systemd)
	$(uninstall_contrib)
	$(uninstall_applet)

.PHONY: clean
clean:
	rm -rf build build-sanitize build-fuzz
