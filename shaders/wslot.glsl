// wslot.glsl - the 16-byte weight "slot" the matrix-vector kernels (matmul.comp, matvec.comp) read:
// 4 f32, 8 f16/bf16, 16 q8_0 or 32 q4_0 elements of one row (WTYPE, kern_common.glsl codes, set by
// the including kernel). Quarter j of a slot is its elements 4j .. 4j+3, which meet x's vec4
// s·G4 + j for every type (Q4_0: the low nibbles of byte 0..15 are elements 0..15, the high ones
// 16..31, so quarters 0..3 are low nibbles of words 0..3 and quarters 4..7 high nibbles of the same).
#ifndef LFM2_WSLOT_GLSL
#define LFM2_WSLOT_GLSL

#if WTYPE == DT_F32
#define G 4u
#elif WTYPE == DT_F16 || WTYPE == DT_BF16
#define G 8u
#elif WTYPE == DT_Q8_0
#define G 16u
#else
#define G 32u
#endif
#define G4 (G / 4u)

// Quarter j4 of a slot as stored: Q4_0's nibbles (0..15), Q8_0's int8 values, the plain types
// widened (xmv.comp applies a Q type's scale and offset once a slot).
vec4 raw4(uvec4 raw, uint j4)
{
#if WTYPE == DT_F32
    return uintBitsToFloat(raw);
#elif WTYPE == DT_F16
    uvec2 h = j4 == 0u ? raw.xy : raw.zw;
    return vec4(unpackHalf2x16(h.x), unpackHalf2x16(h.y));
#elif WTYPE == DT_BF16
    uvec2 h = j4 == 0u ? raw.xy : raw.zw;
    return vec4(bf16_lo(h.x), bf16_hi(h.x), bf16_lo(h.y), bf16_hi(h.y));
#elif WTYPE == DT_Q8_0
    int q = int(raw[j4]);
    return vec4(bitfieldExtract(q, 0, 8), bitfieldExtract(q, 8, 8), bitfieldExtract(q, 16, 8),
                bitfieldExtract(q, 24, 8));
#else
    uint q = raw[j4 & 3u] >> (j4 >= 4u ? 4u : 0u);
    return vec4(q & 15u, (q >> 8) & 15u, (q >> 16) & 15u, (q >> 24) & 15u);
#endif
}

// Quarter j4 of a slot, widened (sc: the block scale for Q types; Q4_0's offset is 8).
vec4 unpack4(uvec4 raw, float sc, uint j4)
{
#if WTYPE == DT_Q4_0
    return (raw4(raw, j4) - 8.0) * sc;
#elif WTYPE == DT_Q8_0
    return raw4(raw, j4) * sc;
#else
    return raw4(raw, j4);
#endif
}

// Scale of the 32-block holding slot si (Q types; 1 otherwise), scales at sbase.
float block_scale(uint64_t sbase, uint si)
{
#if WTYPE == DT_Q8_0
    return float(F16Buf(sbase).v[si / 2u]);
#elif WTYPE == DT_Q4_0
    return float(F16Buf(sbase).v[si]);
#else
    return 1.0;
#endif
}

#endif
