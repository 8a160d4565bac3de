# linkprobectl: the command-line client. It talks to the daemon over D-Bus only, so it links nothing
# of the daemon's.
PROGRAMS += linkprobectl
linkprobectl_SOURCES := $(wildcard src/ctl/*.c src/ctl/fabric/*.c)
linkprobectl_LIBS := shared
linkprobectl_PKGS := libsystemd json-c libgvc libcurl
# libcurl: fabric --prometheus= reaches a Prometheus behind HTTPS, authentication and proxies.
DEBIAN_BUILD_PACKAGES += libcurl4-openssl-dev
# tests/integration/test_fabric_https.py: a Prometheus behind TLS (a certificate made with openssl) and
# basic authentication (the password hashed with bcrypt).
DEBIAN_TEST_PACKAGES += openssl python3-bcrypt
# tests/integration/test_fabric_topology.py: a real slurmctld (22.05, topology/tree) reads the topology.conf
# fabric topology writes, and scontrol shows what it read.
DEBIAN_TEST_PACKAGES += slurmctld slurm-client
