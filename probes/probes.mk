# Active measurements: each probe is a standalone program that prints one JSON document (see
# probes/probe-util.h for the envelope and exit codes). The daemon runs them as children.
#   PROBES += linkprobe-probe-NAME; linkprobe-probe-NAME_SOURCES := ...; _LIBS := probe shared; _PKGS := json-c ...
LIBRARIES += probe
probe_SOURCES := probes/probe-util.c

# OpenCL inventory and throughput (linkprobe-probe-gpu(8)); links the ICD loader (ocl-icd), never a
# vendor library, so any vendor's ICD works.
PROBES += linkprobe-probe-gpu
linkprobe-probe-gpu_SOURCES := probes/probe-gpu.c probes/probe-gpu-cl.c probes/probe-gpu-inventory.c \
	probes/probe-gpu-kernels.c probes/probe-gpu-measure.c
linkprobe-probe-gpu_LIBS := probe shared
linkprobe-probe-gpu_PKGS := OpenCL json-c
# ocl-icd-opencl-dev: the ICD loader (libOpenCL.so, OpenCL.pc) the GPU probe links; opencl-headers: CL/*.h.
# pocl-opencl-icd: an OpenCL CPU device, so the probe's tests measure a real device without a GPU.
# clpeak: the anchor bench/bench-gpu compares against.
DEBIAN_BUILD_PACKAGES += ocl-icd-opencl-dev opencl-headers
DEBIAN_TEST_PACKAGES += pocl-opencl-icd
DEBIAN_BENCH_PACKAGES += clpeak
