// kern_common.glsl - what the engine's kernels share beyond common.glsl: dtype codes (enum dtype of
// loader.h), scalar reads of small weights of any type, bf16/f16 widening.
//
// Weight layout on the device (kernels.h): row-major [rows][k]; F32/F16/BF16 plain; Q8_0/Q4_0
// repacked: all quant bytes first ([rows][nb] blocks of 32 int8 / 16 nibble bytes), then the f16
// scales [rows][nb] at byte rows*nb*32 (Q8_0) or rows*nb*16 (Q4_0).
#ifndef LFM2_KERN_COMMON_GLSL
#define LFM2_KERN_COMMON_GLSL

#include "common.glsl"

#define DT_F32 0
#define DT_F16 1
#define DT_BF16 2
#define DT_Q8_0 3
#define DT_Q4_0 4

float bf16_lo(uint u) { return uintBitsToFloat(u << 16); }
float bf16_hi(uint u) { return uintBitsToFloat(u & 0xffff0000u); }

// Element (row, i) of a [rows][k] weight of type dt at address base, widened to f32.
// 64-bit address arithmetic: tensors may exceed 2 GiB.
float wget(uint64_t base, uint dt, uint rows, uint k, uint row, uint i)
{
    uint64_t e = uint64_t(row) * k + i;
    if (dt == DT_F32) return F32Buf(base + 4ul * e).v[0];
    if (dt == DT_F16) return float(F16Buf(base + 2ul * e).v[0]);
    if (dt == DT_BF16) return bf16_lo(uint(U16Buf(base + 2ul * e).v[0]));
    uint nb = k / 32u;
    uint64_t blk = uint64_t(row) * nb + i / 32u;
    uint j = i % 32u;
    if (dt == DT_Q8_0) {
        float d = float(F16Buf(base + uint64_t(rows) * nb * 32ul + 2ul * blk).v[0]);
        int q = int(int8_t(U8Buf(base + 32ul * blk + j).v[0]));
        return float(q) * d;
    }
    float d = float(F16Buf(base + uint64_t(rows) * nb * 16ul + 2ul * blk).v[0]);
    uint b = uint(U8Buf(base + 16ul * blk + (j % 16u)).v[0]);
    uint q = j < 16u ? (b & 15u) : (b >> 4);
    return (float(q) - 8.0) * d;
}

// Elements 4·k4 .. 4·k4+3 of a 1-D F32, F16 or BF16 weight (a norm gain) at address base.
vec4 gain4_at(uint64_t base, uint dt, uint k4)
{
    if (dt == DT_F32) return Vec4Buf(base).v[k4];
    uvec2 h = uvec2(U32Buf(base).v[2u * k4], U32Buf(base).v[2u * k4 + 1u]);
    if (dt == DT_F16) return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
    return vec4(bf16_lo(h.x), bf16_hi(h.x), bf16_lo(h.y), bf16_hi(h.y));
}

// Element i of a 1-D weight (norm gain, conv taps).
float wget1(uint64_t base, uint dt, uint i) { return wget(base, dt, 1u, 0u, 0u, i); }

#endif
