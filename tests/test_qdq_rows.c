/* test_qdq_rows.c: the AVX-512 QuantizeLinear / DequantizeLinear rows (ops/qdq_rows.c)
 * against the ONNX formulas written here with C99's nearbyintf (round half to even in the
 * default mode): q = saturate(nearbyint(x / s) + zp), NaN -> 0 (as ct_kern_qdq's generic
 * path); dq = (x - zp) · s; for u8 and i8, on every 4099th float bit pattern (±inf, NaN,
 * subnormals, huge values), ties (k + 0.5 scaled), rows of every length to 33 (masked tails),
 * and every 8-bit input. Skipped where the CPU lacks AVX-512 (the rows then decline). */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "ops/qdq_rows.h"
#include "tests/testutil.h"

enum { NV = (int)(((uint64_t)1 << 32) / 4099) + 1 };

static int32_t ref_q(float x, float s, int32_t zp, bool u8) {
  float r = x / s;
  if (r != r) return 0;
  double v = (double)nearbyintf(r) + zp, lo = u8 ? 0 : -128, hi = u8 ? 255 : 127;
  return (int32_t)(v < lo ? lo : v > hi ? hi : v);
}

START_TEST(test_q_rows) {
  float *x = malloc(sizeof *x * (NV + 64));
  uint8_t *y = malloc(NV + 64);
  ck_assert(x && y);
  for (int i = 0; i < NV; i++) {
    uint32_t u = (uint32_t)((uint64_t)i * 4099);
    memcpy(&x[i], &u, sizeof u);
  }
  for (int i = 0; i < 64; i++) x[NV + i] = (float)(i - 32) * 0.5f * 0.25f; /* ties of s = 0.25 */
  static const float scales[3] = {0.25f, 0.0173f, 3.0f};
  static const int32_t zps[2][2] = {{0, 131}, {0, -7}}; /* u8, i8 */
  for (int t = 0; t < 2; t++)
    for (int k = 0; k < 2; k++)
      for (int si = 0; si < 3; si++) {
        bool u8 = t == 0;
        int32_t zp = zps[t][k];
        float s = scales[si], lo = (float)((u8 ? 0 : -128) - zp), hi = (float)((u8 ? 255 : 127) - zp);
        if (!ct_qdq_q_row512(x, y, u8, NV + 64, s, zp, lo, hi)) {
          printf("test_qdq_rows: no AVX-512 here, the rows decline (checked)\n");
          free(x), free(y);
          return;
        }
        for (int i = 0; i < NV + 64; i++) {
          int32_t got = u8 ? y[i] : (int8_t)y[i], want = ref_q(x[i], s, zp, u8);
          if (got != want) ck_abort_msg("q(%a / %g + %d): got %d, want %d", x[i], s, zp, got, want);
        }
        for (int64_t n = 0; n <= 33; n++) { /* tails: bytes past n untouched */
          uint8_t r[40];
          memset(r, 0xAB, sizeof r);
          ck_assert(ct_qdq_q_row512(x + NV, r, u8, n, s, zp, lo, hi));
          for (int64_t i = 0; i < 40; i++)
            ck_assert_int_eq(i < n ? (u8 ? r[i] : (int8_t)r[i]) : r[i], i < n ? ref_q(x[NV + i], s, zp, u8) : 0xAB);
        }
      }
  free(x), free(y);
}
END_TEST

START_TEST(test_dq_rows) {
  uint8_t x[256 + 7];
  float y[256 + 7];
  for (int i = 0; i < 263; i++) x[i] = (uint8_t)(i * 37);
  for (int t = 0; t < 2; t++) {
    bool u8 = t == 0;
    if (!ct_qdq_dq_row512(x, u8, y, 263, 0.0173f, u8 ? 131 : -7)) return;
    for (int i = 0; i < 263; i++) {
      int32_t v = u8 ? x[i] : (int8_t)x[i];
      float want = (float)(v - (u8 ? 131 : -7)) * 0.0173f;
      ck_assert_msg(memcmp(&y[i], &want, sizeof want) == 0, "dq(%d): got %a, want %a", v, y[i], want);
    }
    for (int64_t n = 0; n <= 33; n++) {
      float r[40];
      for (int i = 0; i < 40; i++) r[i] = -1.0f;
      ck_assert(ct_qdq_dq_row512(x, u8, r, n, 2.0f, 0));
      for (int64_t i = 0; i < 40; i++)
        ck_assert(r[i] == (i < n ? (float)(u8 ? x[i] : (int8_t)x[i]) * 2.0f : -1.0f));
    }
  }
}
END_TEST

int main(void) {
  Suite *s = suite_create("qdq_rows");
  TCase *tc = tcase_create("core");
  tcase_set_timeout(tc, 60);
  tcase_add_test(tc, test_q_rows);
  tcase_add_test(tc, test_dq_rows);
  suite_add_tcase(s, tc);
  return ct_test_run_suite(s);
}
