# Helpers shared by the daemon, the CLI, the probes and the sysfs readers.
LIBRARIES += shared
shared_SOURCES := $(wildcard src/shared/*.c)
