#version 460
// matmul.comp - y[c][n] (+)= Σ_k W[n][k]·x'[c][k] for the COLS columns of one pass, all rows n;
// x' = x, or its RMSNorm g ⊙ x / rms(x) when a gain is given (fused input norm). With SWIGLU the
// kernel reads a second weight W3 of the same shape and writes silu(W x')·(W3 x').
// W: [rows][k], type WTYPE (compile-time, kern_common.glsl codes), device layout of kernels.h.
// x: f32 [COLS][k], y: f32 [COLS][rows]; accumulation in f32.
//
// Geometry: a workgroup is NSG subgroups of SG lanes; subgroup s owns R consecutive rows; its
// lanes stride over k in 16-byte "slots" (8 bf16/f16, 4 f32, 16 q8_0, 32 q4_0 elements), so a
// subgroup's weight loads are contiguous 16-byte vectors and every weight byte is read once per
// pass. x goes through shared memory in chunks of KC elements per column (KC from the device's
// shared memory size), stored slot-major so that consecutive lanes read consecutive vec4s (no
// bank conflicts); each x vec4 read from shared memory serves R rows (register blocking). The
// lanes' partial sums are reduced with subgroupAdd. With a norm, each subgroup first computes the
// inverse rms of some columns (x is small and cached); the gain scales x as it is loaded and the
// inverse rms scales the final sums (it is one factor per column).
// Grid: x = ceil(rows / (NSG·R)).
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_BF16
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif

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
#define MAXR 8
#define MAXC 16

layout(constant_id = 0) const uint SG = 32;  // subgroup size of the device
layout(constant_id = 1) const uint NSG = 4;  // subgroups per workgroup
layout(constant_id = 2) const uint R = 4;    // rows per subgroup (<= MAXR)
layout(constant_id = 3) const uint COLS = 1; // columns of this pass (<= MAXC)
layout(constant_id = 4) const uint KC = 256; // x chunk, elements per column (multiple of G)
layout(local_size_x_id = 5) in;              // SG * NSG

const uint NSLOT = KC / G; // slots per chunk
const uint XS4 = COLS * KC / 4u;

layout(push_constant) uniform Push {
    uint64_t w;       // W quant / plain bytes
    uint64_t wscale;  // f16 scales [rows][k/32] (Q types)
    uint64_t w3;      // SWIGLU: the up weight
    uint64_t w3scale;
    F32Buf x;         // [COLS][k]
    F32Buf y;         // [COLS][rows]
    uint64_t gain;    // norm gain [k], 0: no norm
    uint rows;
    uint k;
    uint accumulate;  // y += result
    uint gdtype;      // gain dtype
    float eps;
    uint plus1;       // gain is (1 + g)
} p;

shared vec4 xs[XS4];
shared float inv_rms[MAXC];

// The 4 elements j4*4 .. j4*4+3 of a 16-byte slot, widened (sc: the block scale for Q types).
vec4 unpack4(uvec4 raw, float sc, uint j4)
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
                bitfieldExtract(q, 24, 8)) * sc;
#else
    uint q = raw[j4 & 3u] >> (j4 >= 4u ? 4u : 0u);
    return (vec4(q & 15u, (q >> 8) & 15u, (q >> 16) & 15u, (q >> 24) & 15u) - 8.0) * sc;
#endif
}

float block_scale(uint64_t sbase, uint64_t slot_index)
{
#if WTYPE == DT_Q8_0
    return float(F16Buf(sbase + 2ul * (slot_index / 2ul)).v[0]);
#elif WTYPE == DT_Q4_0
    return float(F16Buf(sbase + 2ul * slot_index).v[0]);
#else
    return 1.0;
#endif
}

void main()
{
    uint lane = gl_SubgroupInvocationID, sg = gl_SubgroupID, tid = gl_LocalInvocationIndex;
    uint row0 = (gl_WorkGroupID.x * NSG + sg) * R;
    uint row_slots = p.k / G;
    bool norm = p.gain != 0ul;

    float acc[MAXR][MAXC];
#if SWIGLU
    float acc3[MAXR][MAXC];
#endif
    uint64_t slot0[MAXR]; // index of the first slot of each row (rows past the end: the last row)
    for (uint r = 0u; r < R; r++) {
        slot0[r] = uint64_t(min(row0 + r, p.rows - 1u)) * row_slots;
        for (uint c = 0u; c < COLS; c++) {
            acc[r][c] = 0.0;
#if SWIGLU
            acc3[r][c] = 0.0;
#endif
        }
    }

    if (norm) {
        for (uint c = sg; c < COLS; c += NSG) {
            float ss = 0.0;
            for (uint i = lane; i < p.k; i += SG) {
                float v = p.x.v[c * p.k + i];
                ss += v * v;
            }
            ss = subgroupAdd(ss);
            if (lane == 0u) inv_rms[c] = inversesqrt(ss / float(p.k) + p.eps);
        }
    }
    float one = p.plus1 != 0u ? 1.0 : 0.0;

    for (uint k0 = 0u; k0 < p.k; k0 += KC) {
        uint kc = min(KC, p.k - k0);
        barrier(); // the previous chunk is consumed
        for (uint i = tid; i < COLS * kc; i += SG * NSG) {
            uint c = i / kc, kk = i - c * kc;
            float v = p.x.v[c * p.k + k0 + kk];
            if (norm) v *= one + wget1(p.gain, p.gdtype, k0 + kk);
            uint s = kk / G, j = kk % G;
            xs[(c * G4 + j / 4u) * NSLOT + s][j % 4u] = v;
        }
        barrier();
        uint nslot = kc / G, gslot = k0 / G;
        for (uint s = lane; s < nslot; s += SG) {
            uvec4 raw[MAXR];
            float sc[MAXR];
#if SWIGLU
            uvec4 raw3[MAXR];
            float sc3[MAXR];
#endif
            for (uint r = 0u; r < R; r++) {
                uint64_t si = slot0[r] + gslot + s;
                raw[r] = UVec4Buf(p.w + 16ul * si).v[0];
                sc[r] = block_scale(p.wscale, si);
#if SWIGLU
                raw3[r] = UVec4Buf(p.w3 + 16ul * si).v[0];
                sc3[r] = block_scale(p.w3scale, si);
#endif
            }
            for (uint j4 = 0u; j4 < G4; j4++) {
                vec4 wv[MAXR];
#if SWIGLU
                vec4 wv3[MAXR];
#endif
                for (uint r = 0u; r < R; r++) {
                    wv[r] = unpack4(raw[r], sc[r], j4);
#if SWIGLU
                    wv3[r] = unpack4(raw3[r], sc3[r], j4);
#endif
                }
                for (uint c = 0u; c < COLS; c++) {
                    vec4 xv = xs[(c * G4 + j4) * NSLOT + s];
                    for (uint r = 0u; r < R; r++) {
                        acc[r][c] += dot(wv[r], xv);
#if SWIGLU
                        acc3[r][c] += dot(wv3[r], xv);
#endif
                    }
                }
            }
        }
    }

    for (uint r = 0u; r < R; r++) {
        uint row = row0 + r;
        for (uint c = 0u; c < COLS; c++) {
            float v = subgroupAdd(acc[r][c]);
#if SWIGLU
            float v3 = subgroupAdd(acc3[r][c]);
#endif
            if (lane == 0u && row < p.rows) {
                float f = norm ? inv_rms[c] : 1.0;
                v *= f;
#if SWIGLU
                v = v / (1.0 + exp(-v)) * (v3 * f);
#endif
                uint o = c * p.rows + row;
                if (p.accumulate != 0u) v += p.y.v[o];
                p.y.v[o] = v;
            }
        }
    }
}
