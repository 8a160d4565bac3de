# The daemon (linkprobed) and the CLI (linkprobectl). Everything but the two main() files goes into
# libdaemon.a so unit tests can link it.
LIBRARIES += daemon
daemon_SOURCES := $(filter-out src/linkprobed.c src/linkprobectl%.c,$(wildcard src/*.c))

DAEMONS += linkprobed
linkprobed_SOURCES := src/linkprobed.c
linkprobed_LIBS := daemon sysfs shared
linkprobed_PKGS := libsystemd libnl-route-3.0 libudev inih json-c libibverbs

PROGRAMS += linkprobectl
linkprobectl_SOURCES := $(wildcard src/linkprobectl*.c)
linkprobectl_LIBS := shared
linkprobectl_PKGS := libsystemd json-c
