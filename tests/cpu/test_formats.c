/* test_formats.c - scalar formats: E4M3, E2M1, UE8M0, exponent rules, NVFP4, BF16. */
#include "flamia_formats.h"
#include "test_util.h"

static void e4m3_codes(void) {
    int normals = 0;
    for (int c = 0; c < 256; c++) {
        float v = flamia_e4m3_decode((uint8_t)c);
        if ((c & 0x7F) == 0x7F) {
            CHECK(isnan(v), "code 0x%02X must decode to NaN", c);
            CHECK(flamia_e4m3_encode(v) == 0x7F, "NaN must encode to 0x7F");
            continue;
        }
        CHECK(isfinite(v), "code 0x%02X decodes to %g", c, (double)v);
        CHECK(flamia_e4m3_encode(v) == c, "code 0x%02X -> %g -> 0x%02X", c, (double)v, flamia_e4m3_encode(v));
        if ((c & 0x78) && !(c & 0x80)) normals++;
    }
    CHECK(normals == 15 * 8 - 1, "normal positive codes %d", normals);
    /* known bit patterns */
    CHECK(flamia_e4m3_decode(0x7E) == 448.0f, "max");
    CHECK(flamia_e4m3_decode(0x08) == 0.015625f, "min normal 2^-6");
    CHECK(flamia_e4m3_decode(0x01) == 0.001953125f, "min subnormal 2^-9");
    CHECK(flamia_e4m3_decode(0x38) == 1.0f, "one");
    CHECK(flamia_e4m3_decode(0xB8) == -1.0f, "minus one");
    CHECK(flamia_e4m3_encode(-0.0f) == 0x80, "negative zero keeps its sign");
}

static void e4m3_rounding(void) {
    /* ties to even between neighbouring codes, in normals and subnormals */
    for (int c = 0; c < 0x7E; c++) {
        float a = flamia_e4m3_decode((uint8_t)c), b = flamia_e4m3_decode((uint8_t)(c + 1));
        float mid = 0.5f * (a + b); /* exact in FP32 */
        int even = (c & 1) ? c + 1 : c;
        CHECK(flamia_e4m3_encode(mid) == even, "tie %g between 0x%02X and 0x%02X -> 0x%02X", (double)mid, c,
              c + 1, flamia_e4m3_encode(mid));
        CHECK(flamia_e4m3_encode(-mid) == (even | 0x80), "negative tie %g", (double)mid);
        CHECK(flamia_e4m3_encode(nextafterf(mid, 0.0f)) == c, "just below tie %g", (double)mid);
        CHECK(flamia_e4m3_encode(nextafterf(mid, 1e9f)) == c + 1, "just above tie %g", (double)mid);
    }
    /* saturation */
    CHECK(flamia_e4m3_encode(448.0f) == 0x7E, "448");
    CHECK(flamia_e4m3_encode(464.0f) == 0x7E, "464 saturates");
    CHECK(flamia_e4m3_encode(1e9f) == 0x7E, "1e9 saturates");
    CHECK(flamia_e4m3_encode(INFINITY) == 0x7E, "+inf saturates");
    CHECK(flamia_e4m3_encode(-INFINITY) == 0xFE, "-inf saturates");
    CHECK(flamia_e4m3_encode(-500.0f) == 0xFE, "-500 saturates");
    /* below half the smallest subnormal rounds to zero; exactly half is a tie to 0 */
    CHECK(flamia_e4m3_encode(0.0009765625f) == 0x00, "2^-10 ties to zero");
    CHECK(flamia_e4m3_encode(0.00098f) == 0x01, "just above 2^-10");
    CHECK(flamia_e4m3_encode(1e-30f) == 0x00, "tiny");
}

static void e2m1(void) {
    const float grid[8] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6};
    for (int c = 0; c < 16; c++) {
        float v = flamia_e2m1_decode((uint8_t)c);
        CHECK(v == ((c & 8) ? -grid[c & 7] : grid[c & 7]), "e2m1 code %d", c);
        if (c != 8) CHECK(flamia_e2m1_encode(v) == c, "e2m1 round trip %d", c);
    }
    for (int c = 0; c < 7; c++) {
        float mid = 0.5f * (grid[c] + grid[c + 1]);
        int even = (c & 1) ? c + 1 : c;
        CHECK(flamia_e2m1_encode(mid) == even, "e2m1 tie %g -> %d", (double)mid, flamia_e2m1_encode(mid));
    }
    CHECK(flamia_e2m1_encode(7.0f) == 7 && flamia_e2m1_encode(-100.0f) == 15, "e2m1 saturation");
    CHECK(flamia_e2m1_encode(NAN) == 7, "e2m1 NaN");
}

/* 2^e exact over its documented range (normals and subnormals), 0 below it */
static void pow2_values(void) {
    for (int e = -149; e <= 127; e++) {
        const float want = (float)ldexp(1.0, e), got = flamia_pow2f(e);
        CHECK(memcmp(&want, &got, sizeof got) == 0, "pow2f(%d) = %a, want %a", e, (double)got, (double)want);
    }
    for (int e = -150; e >= -100000; e--) CHECK(flamia_pow2f(e) == 0.0f && !signbit(flamia_pow2f(e)), "pow2f(%d) != +0", e);
}

/* the CEIL rule's branch-free form equals its definition, flamia_exp_ceil_for(., 448), on
 * every float (including NaN, infinities, subnormals, negatives) */
static void e4m3_exp_ceil_all_floats(void) {
    unsigned long long bad = 0;
    uint32_t first = 0;
    for (uint64_t i = 0; i < (1ull << 32); i++) {
        const float x = flamia_bitsf((uint32_t)i);
        if (flamia_fmt_block_exponent(x, 0) != flamia_exp_ceil_for(x, FLAMIA_E4M3_MAX) && !bad++) first = (uint32_t)i;
    }
    CHECK(bad == 0, "CEIL block exponent differs from flamia_exp_ceil_for on %llu floats (first bits 0x%08x)", bad,
          first);
}

static void exponent_rules(void) {
    CHECK(flamia_block_exponent(448.0f, FLAMIA_EXP_CEIL) == 0, "448 fits at e=0");
    CHECK(flamia_block_exponent(nextafterf(448.0f, 1e9f), FLAMIA_EXP_CEIL) == 1, "just above 448");
    CHECK(flamia_block_exponent(224.0f, FLAMIA_EXP_CEIL) == -1, "224 -> -1");
    CHECK(flamia_block_exponent(1.0f, FLAMIA_EXP_CEIL) == -8, "1 -> -8 (1*2^8=256 <= 448)");
    CHECK(flamia_block_exponent(1.75f, FLAMIA_EXP_CEIL) == -8, "1.75 -> -8 (448 exactly)");
    CHECK(flamia_block_exponent(1.76f, FLAMIA_EXP_CEIL) == -7, "1.76 -> -7");
    CHECK(flamia_block_exponent(0.0f, FLAMIA_EXP_CEIL) == -127, "zero");
    CHECK(flamia_block_exponent(1e-45f, FLAMIA_EXP_CEIL) == -127, "subnormal clamps");
    CHECK(flamia_block_exponent(0x1.0p127f, FLAMIA_EXP_CEIL) == 119, "2^127 -> 119");
    CHECK(flamia_block_exponent(3e38f, FLAMIA_EXP_CEIL) == 120, "3e38 = 1.763 * 2^127 -> 120");
    CHECK(flamia_block_exponent(256.0f, FLAMIA_EXP_FLOOR_OCP) == 0, "floor 256");
    CHECK(flamia_block_exponent(511.0f, FLAMIA_EXP_FLOOR_OCP) == 0, "floor 511 (clamps to 448)");
    CHECK(flamia_block_exponent(512.0f, FLAMIA_EXP_FLOOR_OCP) == 1, "floor 512");
    CHECK(flamia_block_exponent(0.0f, FLAMIA_EXP_FLOOR_OCP) == -127, "floor zero");
    /* CEIL never clamps, over random magnitudes */
    for (int i = 0; i < 100000; i++) {
        float amax = (float)exp2(rng_unif() * 200.0 - 100.0);
        int e = flamia_block_exponent(amax, FLAMIA_EXP_CEIL);
        float scaled = flamia_ldexpf(amax, -e);
        CHECK(scaled <= 448.0f && scaled > 224.0f, "ceil rule amax %g e %d scaled %g", (double)amax, e, (double)scaled);
        int f = flamia_block_exponent(amax, FLAMIA_EXP_FLOOR_OCP);
        float sf = flamia_ldexpf(amax, -f);
        CHECK(sf >= 256.0f && sf < 512.0f, "floor rule amax %g", (double)amax);
        if (g_failures) break;
    }
    CHECK(flamia_ue8m0_encode(0) == 127 && flamia_ue8m0_decode(127) == 1.0f, "ue8m0 one");
    CHECK(flamia_ue8m0_decode(0) == flamia_pow2f(-127), "ue8m0 min");
    CHECK(isnan(flamia_ue8m0_decode(0xFF)), "ue8m0 NaN");
    CHECK(flamia_ue8m0_encode(500) == 254, "ue8m0 clamps");
}

static void nvfp4_and_bf16(void) {
    /* a group whose values sit exactly on the grid round-trips */
    float x[16];
    for (int i = 0; i < 16; i++) x[i] = (float)(i % 8) * 0.5f * ((i & 1) ? -1.0f : 1.0f);
    float amax = 3.5f;
    int eg = flamia_exp_ceil_for(amax, FLAMIA_NVFP4_GROUP_MAX);
    uint8_t sc = flamia_nvfp4_scale(amax, eg);
    float maxerr = 0;
    for (int i = 0; i < 16; i++) {
        float r = flamia_nvfp4_value(flamia_nvfp4_code(x[i], sc, eg), sc, eg);
        maxerr = fmaxf(maxerr, fabsf(r - x[i]));
        CHECK(fabsf(r) <= amax * 1.07f, "nvfp4 value %g beyond amax", (double)r);
    }
    CHECK(maxerr <= amax / 6.0f, "nvfp4 error %g", (double)maxerr);
    CHECK(flamia_nvfp4_code(1.0f, 0, 0) == 0, "zero scale gives code 0");
    CHECK(flamia_round_bf16(1.0f + 0x1.0p-8f) == 1.0f, "bf16 tie to even (down)");
    CHECK(flamia_round_bf16(1.0f + 0x1.8p-8f) == 1.0f + 0x1.0p-7f, "bf16 round up");
    CHECK(isnan(flamia_round_bf16(NAN)), "bf16 NaN");
    CHECK(flamia_ilog2f(1e-45f) == -149, "ilog2 of min subnormal");
    CHECK(flamia_ldexpf(1.0f, -149) == 1e-45f && flamia_ldexpf(1e-45f, 149) == 1.0f, "ldexp range");
}

/* flamia_scale2 rounds x 2^k once: against the double product (exact for 24-bit x) rounded to
 * float, for every k in [-189, 254] and x at both ends of [1/2, 2) and random in between */
static void scale2_all_k(void) {
    long bad = 0, n = 0;
    for (int k = -189; k <= 254; k++)
        for (int i = 0; i < 2000; i++) {
            float x = i == 0 ? 0.5f : i == 1 ? nextafterf(2.0f, 0.0f) : i == 2 ? 1.0f : (float)(0.5 + 1.5 * rng_unif());
            if (x >= 2.0f) x = nextafterf(2.0f, 0.0f);
            const float want = (float)ldexp((double)x, k), got = flamia_scale2(x, k);
            n++;
            if (memcmp(&want, &got, sizeof want) != 0 && bad++ < 5)
                fprintf(stderr, "  scale2(%a, %d) = %a, want %a\n", (double)x, k, (double)got, (double)want);
        }
    CHECK(bad == 0, "flamia_scale2: %ld of %ld products not rounded once", bad, n);
}

int main(void) {
    test_seed_init("test_formats");
    scale2_all_k();
    e4m3_codes();
    e4m3_rounding();
    e2m1();
    pow2_values();
    e4m3_exp_ceil_all_floats();
    exponent_rules();
    nvfp4_and_bf16();
    return TEST_EXIT();
}
