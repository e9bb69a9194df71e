/* scale_shift_rule.h - the scale-shift tests' rule for one value that a shift scales by 2^-e
 * (K x 2^e with the softmax scale x 2^-e scales dK by 2^-e): the shifted value times 2^e
 * equals the unshifted one, or, where either run's value is at or below the normal range
 * (the outputs are BF16 values, whose subnormal step is 2^-133), lies within the coarser of
 * the two runs' steps in the unshifted units. Used by tests/cpu/test_scale_shift.c (the
 * reference) and tests/gpu/test_gpu_scale_shift.c (the training call). */
#ifndef FLAMIA_SCALE_SHIFT_RULE_H
#define FLAMIA_SCALE_SHIFT_RULE_H

#include <math.h>

static inline int scale_shift_matches(double shifted, double base, int e) {
    const double back = ldexp(shifted, e); /* exact in double */
    if (back == base) return 1;
    /* 2^-126 itself counts: a value rounded up from below */
    const int sub = fabs(shifted) <= 0x1.0p-126 || fabs(base) <= 0x1.0p-126;
    return sub && fabs(back - base) <= ldexp(1.0, (e > 0 ? e : 0) - 133);
}

#endif
