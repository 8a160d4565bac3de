# Thunderbolt/USB4: tbt-dump prints what sysfs/thunderbolt.c and src/tbt-topology.c see below a sysfs
# root as JSON; a test and debugging aid for the boltd side-by-side tests (not installed).
TEST_PROGRAMS += tbt-dump
tbt-dump_SOURCES := src/tools/tbt-dump.c
tbt-dump_LIBS := daemon sysfs shared
tbt-dump_PKGS := json-c
