# Active measurements: each probe is a standalone program that prints one JSON document (see
# probes/probe-util.h for the envelope and exit codes). The daemon runs them as children.
#   PROBES += linkprobe-probe-NAME; linkprobe-probe-NAME_SOURCES := ...; _LIBS := probe shared; _PKGS := json-c ...
LIBRARIES += probe
probe_SOURCES := probes/probe-util.c

# The measurement protocol, shared by the responder and the TCP/RDMA probes (and their unit tests);
# net-host.c reads the interface's device CPUs through sysfs/.
LIBRARIES += netprobe
netprobe_SOURCES := probes/proto.c probes/proto-bulk.c probes/proto-auth.c probes/proto-identity.c probes/responder-identity.c probes/source-table.c probes/rtt-stats.c probes/frame-io.c \
	probes/net-client.c probes/net-host.c probes/net-streams.c probes/responder.c probes/responder-session.c probes/responder-conn.c probes/responder-bulk.c probes/responder-pump.c probes/responder-rdma.c probes/responder-echo.c \
	probes/rdma-engine.c
NETPROBE_PKGS := libsystemd libcrypto libibverbs json-c
NETPROBE_LDLIBS := -lm -lpthread

PROBES += linkprobe-responder linkprobe-probe-tcp linkprobe-probe-rdma
linkprobe-responder_SOURCES := probes/linkprobe-responder.c
linkprobe-responder_LIBS := netprobe sysfs shared
linkprobe-responder_PKGS := $(NETPROBE_PKGS)
linkprobe-responder_LDLIBS := $(NETPROBE_LDLIBS)

linkprobe-probe-tcp_SOURCES := probes/linkprobe-probe-tcp.c probes/net-probe-cli.c probes/tcp-report.c
linkprobe-probe-tcp_LIBS := probe netprobe sysfs shared
linkprobe-probe-tcp_PKGS := $(NETPROBE_PKGS)
linkprobe-probe-tcp_LDLIBS := $(NETPROBE_LDLIBS)

linkprobe-probe-rdma_SOURCES := probes/linkprobe-probe-rdma.c probes/net-probe-cli.c
linkprobe-probe-rdma_LIBS := probe netprobe sysfs shared
linkprobe-probe-rdma_PKGS := $(NETPROBE_PKGS)
linkprobe-probe-rdma_LDLIBS := $(NETPROBE_LDLIBS)

# libcrypto: HMAC-SHA256 and CRYPTO_memcmp for the pre-shared-key challenge; libibverbs: the RDMA probe.
PKG_MODULES += libcrypto libibverbs
DEBIAN_BUILD_PACKAGES += libssl-dev libibverbs-dev
# The anchors of bench/bench-net (iperf: iperf 2, multi-threaded, for several streams).
DEBIAN_BENCH_PACKAGES += iperf3 iperf sockperf
# sockperf: the anchor the TCP probe's RTT is held to in its accuracy test.
DEBIAN_TEST_PACKAGES += sockperf

# Unit tests of the protocol pieces link the netprobe library (see tests/unit/unit.mk).
NETPROBE_UNIT_TESTS := test-proto test-source-table test-responder test-proto-identity
$(foreach t,$(NETPROBE_UNIT_TESTS),$(eval $(t)_EXTRA_LIBS := netprobe sysfs)$(eval $(t)_EXTRA_LDLIBS := $(NETPROBE_LDLIBS)))

# OpenCL inventory and throughput (linkprobe-probe-gpu(8)); links the ICD loader (ocl-icd), never a
# vendor library, so any vendor's ICD works.
PROBES += linkprobe-probe-gpu
linkprobe-probe-gpu_SOURCES := probes/probe-gpu.c probes/probe-gpu-cl.c probes/probe-gpu-inventory.c \
	probes/probe-gpu-kernels.c probes/probe-gpu-session.c probes/probe-gpu-bandwidth.c probes/probe-gpu-measure.c probes/probe-gpu-transfer.c probes/probe-gpu-nvml.c
linkprobe-probe-gpu_LIBS := probe sysfs shared
linkprobe-probe-gpu_PKGS := OpenCL json-c
# ocl-icd-opencl-dev: the ICD loader (libOpenCL.so, OpenCL.pc) the GPU probe links; opencl-headers: CL/*.h.
# pocl-opencl-icd: an OpenCL CPU device, so the probe's tests measure a real device without a GPU.
# clpeak: the anchor bench/bench-gpu compares against.
DEBIAN_BUILD_PACKAGES += ocl-icd-opencl-dev opencl-headers
DEBIAN_TEST_PACKAGES += pocl-opencl-icd
DEBIAN_BENCH_PACKAGES += clpeak

# The subnet sweep ([Fabric] Sweep=yes, issue 26): libibnetdisc, ibnetdiscover's own library, walks the
# subnet with directed-route SMPs (its retries, timeouts and outstanding-SMP window); hand-rolling the walk
# would duplicate it. libibmad decodes the PortInfo fields it needs to tell an unanswered port.
PROBES += linkprobe-probe-fabric
linkprobe-probe-fabric_SOURCES := probes/linkprobe-probe-fabric.c probes/fabric-subnets.c
linkprobe-probe-fabric_LIBS := probe shared
linkprobe-probe-fabric_PKGS := json-c libibnetdisc libibmad libibumad
PKG_MODULES += libibnetdisc
DEBIAN_BUILD_PACKAGES += libibnetdisc-dev
# ibnetdiscover and ibsim: the anchor and the fabric of bench/bench-sweep (the tests have them already).
DEBIAN_BENCH_PACKAGES += infiniband-diags ibsim-utils
