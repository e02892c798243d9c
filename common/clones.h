/* clones.h: function multiversioning of the hot row loops, one definition for all of them.
 * On x86-64 with GCC or Clang a function marked with one of these macros is compiled twice —
 * for the named instruction-set level and for the baseline — and the loader picks one by the
 * CPU (GCC's target_clones; an ifunc resolver). Elsewhere, and in AddressSanitizer builds,
 * the macros are empty and the loops are plain C.
 * Mark only static functions, defined before their first call: Clang (14) resolves a
 * multiversioned function only inside its own translation unit (a call from another file
 * links to the resolver itself), so a function other files call is a plain wrapper around a
 * static clone, e.g. ct_quant_requant_act_row around ct_quant_requant_act_row_clones.
 *   CT_CLONES_AVX2      AVX2 without FMA: float loops round exactly as the baseline does
 *                       (elementwise rows, pooling, quantize / dequantize rows, epilogues).
 *   CT_CLONES_AVX2_FMA  the clones "avx2" and "fma" (the float depthwise Conv of nn_conv.c),
 *                       as separate strings: GCC reads "avx2,fma" the same, Clang warns.
 *   CT_CLONES_V3        x86-64-v3 (AVX2, FMA, BMI): integer loops, exact whichever runs (the
 *                       Tpu reference's row loads, sums and requant rows).
 *   CT_CLONES_V4        x86-64-v4 (AVX-512) and x86-64-v3: integer loops on int64 lanes
 *                       (the requant rows: AVX2 has no 64-bit arithmetic shift, min or max). */
#ifndef CT_COMMON_CLONES_H
#define CT_COMMON_CLONES_H

#include <stdbool.h>

/* CT_X86: x86-64 with GCC or Clang, where functions may carry target attributes and the
 * intrinsics of <immintrin.h>. CT_X86_SIMD: the same outside AddressSanitizer builds — the
 * condition of the clones below and of the hand-written AVX2 / AVX-512 row kernels, so that
 * sanitizer builds check the plain C loops they stand in for. */
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define CT_X86 1
#else
#define CT_X86 0
#endif
#if CT_X86 && !defined(__SANITIZE_ADDRESS__)
#define CT_X86_SIMD 1
#else
#define CT_X86_SIMD 0
#endif

#if CT_X86
/* Does this CPU run AVX2 (AVX-512F)? __builtin_cpu_supports reads the CPU model the loader
 * filled in: a load and a test, nothing to cache. */
static inline bool ct_cpu_avx2(void) { return __builtin_cpu_supports("avx2"); }
static inline bool ct_cpu_avx512(void) { return __builtin_cpu_supports("avx512f"); }
#endif

#if CT_X86_SIMD
#define CT_CLONES_AVX2 __attribute__((target_clones("avx2", "default")))
#define CT_CLONES_AVX2_FMA __attribute__((target_clones("avx2", "fma", "default")))
#define CT_CLONES_V3 __attribute__((target_clones("arch=x86-64-v3", "default")))
#define CT_CLONES_V4 __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))
#else
#define CT_CLONES_AVX2
#define CT_CLONES_AVX2_FMA
#define CT_CLONES_V3
#define CT_CLONES_V4
#endif

#endif
