# A test-only libibverbs.so.1 (tests/fake-ibverbs/fake-ibverbs.h says what it models and why it
# replaces the library rather than plugging a provider into it). Never installed: the RDMA tests put
# $(BUILD)/fake-ibverbs first on LD_LIBRARY_PATH. Its objects are built a second time as PIC for the
# shared library; test-fake-ibverbs links the ordinary ones.
FAKE_IBVERBS_SOURCES := $(wildcard tests/fake-ibverbs/*.c)
FAKE_IBVERBS_PIC_OBJS := $(patsubst %.c,$(BUILD)/pic/%.o,$(FAKE_IBVERBS_SOURCES))
FAKE_IBVERBS_LIB := $(BUILD)/fake-ibverbs/libibverbs.so.1

$(BUILD)/pic/%.o: %.c | pkgs-present
	@mkdir -p $(dir $@)
	$(call msg,CC,$@)$(CC) $(filter-out -fPIE,$(ALL_CFLAGS)) -fPIC -fvisibility=hidden -MMD -MP -c -o $@ $<

$(FAKE_IBVERBS_LIB): $(FAKE_IBVERBS_PIC_OBJS) tests/fake-ibverbs/libibverbs.map
	@mkdir -p $(dir $@)
	$(call msg,CCLD,$@)$(CC) -shared -Wl,-soname,libibverbs.so.1 \
		-Wl,--version-script=tests/fake-ibverbs/libibverbs.map $(SANITIZE_FLAGS) $(LDFLAGS) \
		-o $@ $(FAKE_IBVERBS_PIC_OBJS) -lpthread

all: $(FAKE_IBVERBS_LIB)

# The fake's own unit test links its ordinary objects and builds its devices from the RDMA fixtures.
test-fake-ibverbs_SOURCES += $(FAKE_IBVERBS_SOURCES)
test-fake-ibverbs_PKGS += umockdev-1.0
$(BUILD)/tests/unit/test-fake-ibverbs.o: ALL_CFLAGS += $(UMOCKDEV_CFLAGS)
