# Active measurements: each probe is a standalone program that prints one JSON document (see
# probes/probe-util.h for the envelope and exit codes). The daemon runs them as children.
#   PROBES += linkprobe-probe-NAME; linkprobe-probe-NAME_SOURCES := ...; _LIBS := probe shared; _PKGS := json-c ...
LIBRARIES += probe
probe_SOURCES := probes/probe-util.c
