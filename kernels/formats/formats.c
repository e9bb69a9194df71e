/* formats.c - the public C entry points of the scalar formats (flamia_formats.h). */
#include "flamia.h"
#include "flamia_formats.h"

uint8_t flamia_e4m3_encode(float x) { return flamia_fmt_e4m3_encode(x); }
float flamia_e4m3_decode(uint8_t code) { return flamia_fmt_e4m3_decode(code); }
uint8_t flamia_e2m1_encode(float x) { return flamia_fmt_e2m1_encode(x); }
float flamia_e2m1_decode(uint8_t code) { return flamia_fmt_e2m1_decode(code); }
int flamia_block_exponent(float amax, flamia_exp_rule rule) {
    return flamia_fmt_block_exponent(amax, rule == FLAMIA_EXP_FLOOR_OCP);
}
uint8_t flamia_ue8m0_encode(int e) { return (uint8_t)(flamia_clamp_exp(e) + 127); }
float flamia_ue8m0_decode(uint8_t code) {
    return code == 0xFF ? flamia_bitsf(0x7fc00000u) : flamia_pow2f((int)code - 127);
}
