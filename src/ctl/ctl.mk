# linkprobectl: the command-line client. It talks to the daemon over D-Bus only, so it links nothing
# of the daemon's.
PROGRAMS += linkprobectl
linkprobectl_SOURCES := $(wildcard src/ctl/*.c)
linkprobectl_LIBS := shared
linkprobectl_PKGS := libsystemd json-c libgvc
