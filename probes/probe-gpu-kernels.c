/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe-gpu-kernels.h"

/*
 * Written for OpenCL C 1.2 so every driver in use compiles it. Nothing the host does not read is
 * left for the compiler to delete: stream_read folds every word it loads into a value it compares with
 * a sentinel the host chooses (and never writes in practice, so only reads count), and the FMA
 * kernels store the sum of their chains.
 */
const char gpu_kernel_source[] =
        "#define CAT_(a, b) a##b\n"
        "#define CAT(a, b) CAT_(a, b)\n"
        "#define VEC_1(t) t\n"
        "#define VEC_2(t) CAT(t, 2)\n"
        "#define VEC_4(t) CAT(t, 4)\n"
        "#define VEC_8(t) CAT(t, 8)\n"
        "#define VEC_16(t) CAT(t, 16)\n"
        "#define VEC(t, n) CAT(VEC_, n)(t)\n"
        "\n"
        /* Horizontal folds down to a scalar, one halving step per width. */
        "#define FOLD_1(v, op) (v)\n"
        "#define FOLD_2(v, op) ((v).s0 op (v).s1)\n"
        "#define FOLD_4(v, op) FOLD_2((v).lo op (v).hi, op)\n"
        "#define FOLD_8(v, op) FOLD_4((v).lo op (v).hi, op)\n"
        "#define FOLD_16(v, op) FOLD_8((v).lo op (v).hi, op)\n"
        "#define FOLD(v, n, op) CAT(FOLD_, n)(v, op)\n"
        "\n"
        "#if USE_FMA\n"
        "#define MULADD(x, a, b) fma(x, a, b)\n"
        "#else\n"
        "#define MULADD(x, a, b) mad(x, a, b)\n"
        "#endif\n"
        "\n"
        /* A 32-bit finaliser (good avalanche): every output bit depends on every input bit, so the
         * buffer looks random to any compression a memory controller might do. */
        "static inline uint mix32(uint x) {\n"
        "        x ^= x >> 16; x *= 0x7feb352dU; x ^= x >> 15; x *= 0x846ca68bU; x ^= x >> 16;\n"
        "        return x;\n"
        "}\n"
        "\n"
        "__kernel void fill_random(__global uint16 *buf, uint seed) {\n"
        /* -DNEVER_FINISH=1 (through $LINKPROBE_GPU_KERNEL_OPTIONS) makes the first kernel of a measuring
         * run spin for ever: a run that cannot finish, for the deadline's test, however fast the device
         * and however warm the driver's caches. The counter is volatile, so no compiler may prove that
         * the loop ends or drop it. */
        "#if defined(NEVER_FINISH) && NEVER_FINISH\n"
        "        for (volatile uint spin = 1; spin != 0;)\n"
        "                ;\n"
        "#endif\n"
        "        size_t i = get_global_id(0);\n"
        "        uint h = mix32((uint) i ^ mix32((uint) (i >> 32) + seed));\n"
        "        uint16 v = (uint16) (h) * 0x9e3779b9U +\n"
        "                   (uint16) (1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16);\n"
        "        v ^= v >> 16; v *= 0x7feb352dU; v ^= v >> 15; v *= 0x846ca68bU; v ^= v >> 16;\n"
        "        buf[i] = v;\n"
        "}\n"
        "\n"
        "#define BWT VEC(uint, BW_VEC)\n"
        "__kernel void stream_read(__global const BWT *restrict src, __global uint *restrict out,\n"
        "                          uint sentinel) {\n"
        "        size_t lsz = get_local_size(0);\n"
        "        size_t i = get_group_id(0) * lsz * BW_FETCH + get_local_id(0);\n"
        "        BWT acc = 0;\n"
        "#pragma unroll\n"
        "        for (uint k = 0; k < BW_FETCH; k++)\n"
        "                acc ^= src[i + k * lsz];\n"
        "        uint r = FOLD(acc, BW_VEC, ^);\n"
        "        if (r == sentinel)\n"
        "                out[get_global_id(0)] = r;\n"
        "}\n"
        "\n"
        /* x = x * a + b converges to b / (1 - a) = 1 for the host's a and b: no overflow, no denormals. */
        "#define FMA_KERNEL(name, T, N)                                                   \\\n"
        "__kernel void name(__global float *out, float a, float b, uint iters) {         \\\n"
        "        VEC(T, N) x[CHAINS];                                                     \\\n"
        "        VEC(T, N) va = (VEC(T, N)) ((T) a), vb = (VEC(T, N)) ((T) b);            \\\n"
        "        float seed = (float) (get_global_id(0) & 1023) * 1e-6f;                 \\\n"
        "        _Pragma(\"unroll\")                                                      \\\n"
        "        for (int c = 0; c < CHAINS; c++)                                         \\\n"
        "                x[c] = (VEC(T, N)) ((T) (1.0f + seed + c * 0.0078125f));         \\\n"
        "        for (uint i = 0; i < iters; i++) {                                       \\\n"
        "                _Pragma(\"unroll\")                                              \\\n"
        "                for (int c = 0; c < CHAINS; c++)                                 \\\n"
        "                        x[c] = MULADD(x[c], va, vb);                             \\\n"
        "        }                                                                        \\\n"
        "        VEC(T, N) s = x[0];                                                      \\\n"
        "        _Pragma(\"unroll\")                                                      \\\n"
        "        for (int c = 1; c < CHAINS; c++)                                         \\\n"
        "                s += x[c];                                                       \\\n"
        "        out[get_global_id(0)] = (float) FOLD(s, N, +);                           \\\n"
        "}\n"
        "\n"
        "FMA_KERNEL(fp32_fma, float, FP_VEC)\n"
        "\n"
        "#if WITH_FP16\n"
        "#pragma OPENCL EXTENSION cl_khr_fp16 : enable\n"
        "FMA_KERNEL(fp16_fma, half, HALF_VEC)\n"
        "#endif\n";

static unsigned width_clamp(unsigned w) {
        /* OpenCL vector types exist for 2, 3, 4, 8 and 16; 3 is not a power of two, so round down. */
        if (w >= 16)
                return 16;
        if (w >= 8)
                return 8;
        if (w >= 4)
                return 4;
        if (w >= 2)
                return 2;
        return 1;
}

void gpu_kernel_config_for_device(const GpuDevice *d, GpuKernelConfig *ret) {
        bool cpu = d->type & CL_DEVICE_TYPE_CPU;
        unsigned fp_width = width_clamp(
                MAX(d->native_vector_width[GPU_SCALAR_FLOAT], d->preferred_vector_width[GPU_SCALAR_FLOAT]));

        *ret = (GpuKernelConfig) {
                /* A CPU loads a whole cache line per AVX-512 load; GPUs coalesce 16-byte lanes. */
                .bandwidth_vector = cpu ? 16 : 4,
                .fetches = 16,
                .fp_vector = fp_width,
                /* 16 chains need 16 vector registers: right for AVX-512's 32, too many for AVX2's 16. A
                 * GPU lane has registers to spare, and more chains only help it. */
                .chains = cpu && fp_width < 16 ? 12 : 16,
                .half_vector = width_clamp(MAX(MAX(d->native_vector_width[GPU_SCALAR_HALF],
                                                   d->preferred_vector_width[GPU_SCALAR_HALF]),
                                               2u)),
                .use_fma = d->single_fp_config & CL_FP_FMA,
                .fp16 = d->fp16,
        };
}

int gpu_kernel_config_to_options(const GpuKernelConfig *c, char *buf, size_t size) {
        int n = snprintf(buf, size,
                         "-DBW_VEC=%u -DBW_FETCH=%u -DFP_VEC=%u -DCHAINS=%u -DHALF_VEC=%u -DUSE_FMA=%d "
                         "-DWITH_FP16=%d",
                         c->bandwidth_vector, c->fetches, c->fp_vector, c->chains, c->half_vector,
                         c->use_fma, c->fp16);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}
