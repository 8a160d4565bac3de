# Peer paths: src/peer*.c, reconcile.c, persist.c and responder-supervisor.c are part of libdaemon.a
# (src.mk's wildcard). Included after tests/unit/unit.mk so it can add to what the template gave.
# test-peer-address checks the daemon's address parser against the probes' own (libnetprobe).
test-peer-address_LIBS := daemon netprobe sysfs shared
test-peer-address_LDLIBS := $(NETPROBE_LDLIBS)
