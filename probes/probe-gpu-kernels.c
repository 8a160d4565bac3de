/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "probe-gpu-kernels.h"

/*
 * Written for OpenCL C 1.2 so every driver in use compiles it. One source, two kinds of program: the
 * bandwidth program (-DBW_ALL=1, or -DBW_VEC=W for one load width) and the main program (-DFP_VEC). Nothing the host does
 * not read is left for the compiler to delete: stream_read_* fold every word they load into a value
 * they compare with a sentinel the host chooses (and never writes in practice, so only reads count),
 * and the FMA kernels store the sum of their chains.
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
        /* The bandwidth kernels, stream_read_block_W and stream_read_grid_W for W uint lanes per load:
         * -DBW_ALL=1 makes a program of every width, -DBW_VEC=W one of that width alone (for a driver
         * whose compiler rejects some width, so that it costs only itself). Both read BW_FETCH loads
         * per work-item from `first` (in loads) on, the two ways clpeak reads: "block" has a work-group
         * read one contiguous block, its loads strided by the work-group size (clpeak's local offset);
         * "grid" strides every load by the whole launch (clpeak's global offset). Which is faster
         * depends on the device's memory system. */
        "#define STREAM_READ(W, name, base, stride)                                       \\\n"
        "__kernel void CAT(name, W)(__global const VEC(uint, W) *restrict src,           \\\n"
        "                           __global uint *restrict out, uint sentinel, ulong first) { \\\n"
        "        size_t i = (size_t) first + (base), step = (stride);                     \\\n"
        "        VEC(uint, W) acc = 0;                                                    \\\n"
        "        _Pragma(\"unroll\")                                                      \\\n"
        "        for (uint k = 0; k < BW_FETCH; k++)                                      \\\n"
        "                acc ^= src[i + k * step];                                        \\\n"
        "        uint r = FOLD(acc, W, ^);                                                \\\n"
        "        if (r == sentinel)                                                       \\\n"
        "                out[get_global_id(0)] = r;                                       \\\n"
        "}\n"
        "#define STREAM_READ_BOTH(W)                                                      \\\n"
        "        STREAM_READ(W, stream_read_block_,                                       \\\n"
        "                    get_group_id(0) * get_local_size(0) * BW_FETCH + get_local_id(0), \\\n"
        "                    get_local_size(0))                                           \\\n"
        "        STREAM_READ(W, stream_read_grid_, get_global_id(0), get_global_size(0))\n"
        "#ifdef BW_VEC\n"
        "STREAM_READ_BOTH(BW_VEC)\n"
        "#elif defined(BW_ALL) && BW_ALL\n"
        "STREAM_READ_BOTH(1)\n"
        "STREAM_READ_BOTH(2)\n"
        "STREAM_READ_BOTH(4)\n"
        "STREAM_READ_BOTH(8)\n"
        "STREAM_READ_BOTH(16)\n"
        "#endif\n"
        "\n"
        /* The main program (-DFP_VEC): the fill and the FMA kernels. */
        "#ifdef FP_VEC\n"
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
        "#endif\n"
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
        int n = snprintf(buf, size, "-DFP_VEC=%u -DCHAINS=%u -DHALF_VEC=%u -DUSE_FMA=%d -DWITH_FP16=%d",
                         c->fp_vector, c->chains, c->half_vector, c->use_fma, c->fp16);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}

int gpu_bandwidth_options(const GpuKernelConfig *c, unsigned width, char *buf, size_t size) {
        int n = width > 0 ? snprintf(buf, size, "-DBW_VEC=%u -DBW_FETCH=%u", width, c->fetches)
                          : snprintf(buf, size, "-DBW_ALL=1 -DBW_FETCH=%u", c->fetches);
        return n < 0 || (size_t) n >= size ? -ENOBUFS : 0;
}
