/*
 * cpu.c - the CPU probe (which instruction sets this CPU runs) and the one
 * rule every pixel kernel uses to pick its variant (core/internal.h).
 */
#include "internal.h"

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <cpuid.h>
#endif

bool detfeed__cpu_runs(detfeed_isa isa)
{
    switch (isa) {
    case DETFEED_ISA_AUTO:
    case DETFEED_ISA_PORTABLE:
        return true;
#if defined(__x86_64__) || defined(__i386__)
    case DETFEED_ISA_AVX2:
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    case DETFEED_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") &&
               __builtin_cpu_supports("avx512bw") &&
               __builtin_cpu_supports("avx512vbmi") && __builtin_cpu_supports("fma");
#else
    case DETFEED_ISA_AVX2:
    case DETFEED_ISA_AVX512:
        return false;
#endif
    }
    return false;
}

bool detfeed__cpu_has_sha(void)
{
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
    /* By CPUID: __builtin_cpu_supports("sha") is not in every compiler. */
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !(c & bit_SSSE3) || !(c & bit_SSE4_1))
        return false;
    return __get_cpuid_count(7, 0, &a, &b, &c, &d) && (b & bit_SHA);
#else
    return false;
#endif
}

int detfeed__isa_pick(detfeed_isa isa, unsigned variants)
{
    if ((unsigned)isa > DETFEED_ISA_AVX512)
        return -1;
    if (isa == DETFEED_ISA_AUTO) {
        for (int v = DETFEED_ISA_AVX512; v > DETFEED_ISA_PORTABLE; v--)
            if ((variants & DETFEED__ISA_BIT(v)) && detfeed__cpu_runs((detfeed_isa)v))
                return v;
        return DETFEED_ISA_PORTABLE;
    }
    if (isa == DETFEED_ISA_PORTABLE)
        return DETFEED_ISA_PORTABLE;
    return (variants & DETFEED__ISA_BIT(isa)) && detfeed__cpu_runs(isa) ? (int)isa : -1;
}

int detfeed_isa_available(detfeed_isa isa)
{
    return detfeed__isa_pick(isa, DETFEED__ISA_BUILT) >= 0;
}

detfeed_isa detfeed_isa_best(void)
{
    return (detfeed_isa)detfeed__isa_pick(DETFEED_ISA_AUTO, DETFEED__ISA_BUILT);
}
