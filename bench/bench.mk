# Benchmarks: `make bench` runs bench/run-all, which prints a table of ratios against the anchor tools.
# bench/bench-fabric times linkprobectl fabric on a simulated 1,000-node cluster (bench/fabric-sim
# writes its metrics) served by a real Prometheus; bench/bench-topology times fabric topology and verify over
# 10,000 nodes' snapshots (bench/fabric-snapshots writes them).
TEST_PROGRAMS += latency-client
latency-client_SOURCES := bench/latency-client.c
latency-client_LIBS := shared
latency-client_PKGS := libsystemd

TEST_PROGRAMS += gmo-client
gmo-client_SOURCES := bench/gmo-client.c
gmo-client_LIBS := shared
gmo-client_PKGS := libsystemd

TEST_PROGRAMS += gmo-replay
gmo-replay_SOURCES := bench/gmo-replay.c
gmo-replay_PKGS := dbus-1
$(BUILD)/bench/gmo-replay.o: EXTRA_CFLAGS += $(shell pkg-config --cflags dbus-1 2>/dev/null)
# libdbus's headers for bench/gmo-replay (dbus_message_copy() copies bytes; sd-bus re-marshals).
DEBIAN_TEST_PACKAGES += libdbus-1-dev
