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
