/*
 * cv.c - the reference stack: names of OpenCV versions and code paths, and
 * the code path OpenCV's dispatcher would pick on this CPU.
 */
#include "internal.h"

int detfeed_cv_version_parse(const char *name, detfeed_cv_version *out)
{
    static const detfeed__named names[] = {
        {"4", DETFEED_CV_4},
        {"5.0", DETFEED_CV_5_0},
        {"5.1", DETFEED_CV_5_1},
        {"4-debian", DETFEED_CV_4_DEBIAN},
    };
    int v = 0;
    if (out == NULL || detfeed__lookup(names, sizeof names / sizeof names[0], name, &v))
        return DETFEED_EINVAL;
    *out = (detfeed_cv_version)v;
    return DETFEED_OK;
}

int detfeed_cv_cpu_parse(const char *name, detfeed_cv_cpu *out)
{
    static const detfeed__named names[] = {
        {"auto", DETFEED_CV_CPU_AUTO},
        {"sse", DETFEED_CV_CPU_SSE},
        {"avx2", DETFEED_CV_CPU_AVX2},
        {"avx512", DETFEED_CV_CPU_AVX512},
    };
    int v = 0;
    if (out == NULL || detfeed__lookup(names, sizeof names / sizeof names[0], name, &v))
        return DETFEED_EINVAL;
    *out = (detfeed_cv_cpu)v;
    return DETFEED_OK;
}

/* OpenCV's AVX512_SKX level needs F, CD, BW, DQ and VL; its AVX2 level
 * AVX2 and FMA3 (the wheels build AVX2 code with -mfma). */
static detfeed_cv_cpu probe(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512cd") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl"))
        return DETFEED_CV_CPU_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return DETFEED_CV_CPU_AVX2;
#endif
    return DETFEED_CV_CPU_SSE;
}

detfeed_cv_cpu detfeed_cv_cpu_resolve(detfeed_cv_cpu cpu)
{
    switch (cpu) {
    case DETFEED_CV_CPU_SSE:
    case DETFEED_CV_CPU_AVX2:
    case DETFEED_CV_CPU_AVX512:
        return cpu;
    case DETFEED_CV_CPU_AUTO:
        break;
    }
    return probe();
}
