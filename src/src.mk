# The daemon (linkprobed) and the CLI (linkprobectl). Everything but the two main() files goes into
# libdaemon.a so unit tests can link it.
LIBRARIES += daemon
daemon_SOURCES := $(filter-out src/linkprobed.c src/linkprobectl%.c,$(wildcard src/*.c))
