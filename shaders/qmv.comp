#version 460
// qmv.comp - the quantized (Q4_0, Q8_0) matrix-vector product for 1 .. 8 columns (select.c
// qmv_serves picks the shapes): y_s[c][n] (+)= Σ_k W_s[n][k]·x'[c][k] for up to three weights
// W_0..W_2 of the same type and k stacked as one matrix of rows_end[2] rows (q/k/v as one
// product), each writing its own y_s [COLS][rows_s]; x' = x or its RMSNorm g ⊙ x / rms(x).
// SWIGLU: one weight, W_1 is the up weight of the same shape, y = silu(W_0 x')·(W_1 x').
// Push block: mv_common.glsl's (matmul.c struct push_matvec).
//
// Why not matvec.comp (bench/12): there a lane reads x from memory 16 bytes at a time for the 32
// (Q4_0) or 16 (Q8_0) elements of its weight slot, the lanes' reads 128 (64) bytes apart, so each
// x load touches 32 L1 lines and L1 wavefronts, not DRAM, bound the product. Here the workgroup
// stages x once per chunk of KC elements in shared memory (f32, the norm's gain applied, every
// column: COLS·KC·4 bytes plus a pad vec4 every 8, so that lanes 8 vec4 apart (Q4_0) or 4 apart
// (Q8_0) hit different banks), then each subgroup owns RT consecutive rows and its lanes take the
// 16-byte quant units lane, lane + SG, ... of the chunk in those rows: a subgroup load is SG·16
// contiguous bytes of a row, read once, dequantized in registers and used for every column.
// The lanes' sums meet by subgroupAdd; Σx² (norm) comes from the staging loads and meets through
// shared memory. Grid: x = ceil(rows_end[2] / (NSG·RT)).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_Q4_0
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif
#include "wslot.glsl"

layout(constant_id = 0) const uint SG = 32;   // subgroup size of the device
layout(constant_id = 1) const uint NSG = 4;   // subgroups per workgroup
layout(constant_id = 2) const uint RT = 1;    // rows per subgroup (per matrix)
layout(constant_id = 3) const uint COLS = 1;  // columns (<= 8)
layout(local_size_x_id = 4) in;               // SG·NSG
layout(constant_id = 5) const uint KC = 1024; // k chunk staged at a time (a multiple of 32)
layout(constant_id = 6) const uint U = 2;     // units a lane loads ahead per row

const uint NT = SG * NSG;
const uint XSC = KC / 4u + KC / 32u; // vec4 a column in shared memory, padded
#include "mv_common.glsl" // NW, the push block, locate, mv_store

shared vec4 xs[COLS * XSC];
shared float red[NSG * COLS];

uint xpos(uint i) { return i + (i >> 3); } // vec4 i of a chunk column -> its padded place

void main()
{
    uint lane = gl_SubgroupInvocationID, sgi = gl_SubgroupID, tid = gl_LocalInvocationIndex;
    uint row_slots = p.k / G, kv4 = p.k / 4u, total = p.rows_end[2];
    uint grow0 = (gl_WorkGroupID.x * NSG + sgi) * RT;
    bool norm = p.gain != 0ul;
    float one = (p.flags & 2u) != 0u ? 1.0 : 0.0;
    uint gdtype = p.flags >> 2;

    // each row's weight: its stacked row picks the weight s and the row in it (rows past the end
    // read the last row and write nothing)
    uint64_t W[NW][RT];
    uint64_t S[NW][RT];
    uint base[RT], seg[RT], lrow[RT];
    [[unroll]] for (uint r = 0u; r < RT; r++) {
        uint gr = min(grow0 + r, total - 1u);
        locate(gr, seg[r], lrow[r]);
        base[r] = lrow[r] * row_slots;
        [[unroll]] for (uint m = 0u; m < NW; m++) {
            uint sm = SWIGLU != 0 ? m : seg[r];
            W[m][r] = p.w[sm];
            S[m][r] = p.ws[sm];
        }
    }

    float acc[NW][RT][COLS];
    float ss[COLS];
    [[unroll]] for (uint c = 0u; c < COLS; c++) {
        ss[c] = 0.0;
        [[unroll]] for (uint m = 0u; m < NW; m++)
            [[unroll]] for (uint r = 0u; r < RT; r++) acc[m][r][c] = 0.0;
    }

    for (uint k0 = 0u; k0 < p.k; k0 += KC) {
        uint klen = min(KC, p.k - k0), n4 = klen / 4u, units = klen / G, s_at = k0 / G;
        // the chunk's first weight units, loaded before the staging so their latency overlaps it
        uvec4 raw[U][NW][RT];
        float sc[U][NW][RT];
        [[unroll]] for (uint u = 0u; u < U; u++) {
            uint s = s_at + min(lane + u * SG, units - 1u);
            [[unroll]] for (uint m = 0u; m < NW; m++)
                [[unroll]] for (uint r = 0u; r < RT; r++) {
                    raw[u][m][r] = UVec4Buf(W[m][r]).v[base[r] + s];
                    sc[u][m][r] = block_scale(S[m][r], base[r] + s);
                }
        }
        if (k0 > 0u) barrier(); // the last chunk's readers are done
        [[unroll]] for (uint c = 0u; c < COLS; c++)
            for (uint i = tid; i < n4; i += NT) {
                vec4 xr = act_get4(p.x, c * kv4 + k0 / 4u + i);
                if (norm) {
                    ss[c] += dot(xr, xr);
                    xr *= one + gain4_at(p.gain, gdtype, k0 / 4u + i);
                }
                xs[c * XSC + xpos(i)] = xr;
            }
        barrier();
        for (uint s0 = lane; s0 < units; s0 += U * SG) {
            if (s0 != lane) {
                [[unroll]] for (uint u = 0u; u < U; u++) {
                    uint s = s_at + min(s0 + u * SG, units - 1u);
                    [[unroll]] for (uint m = 0u; m < NW; m++)
                        [[unroll]] for (uint r = 0u; r < RT; r++) {
                            raw[u][m][r] = UVec4Buf(W[m][r]).v[base[r] + s];
                            sc[u][m][r] = block_scale(S[m][r], base[r] + s);
                        }
                }
            }
            [[unroll]] for (uint u = 0u; u < U; u++) {
                uint s = s0 + u * SG;
                if (s >= units) break;
                [[unroll]] for (uint j4 = 0u; j4 < G4; j4++) {
                    uint i = s * G4 + j4;
                    vec4 xv[COLS];
                    [[unroll]] for (uint c = 0u; c < COLS; c++) xv[c] = xs[c * XSC + xpos(i)];
                    [[unroll]] for (uint m = 0u; m < NW; m++)
                        [[unroll]] for (uint r = 0u; r < RT; r++) {
                            vec4 wv = unpack4(raw[u][m][r], sc[u][m][r], j4);
                            [[unroll]] for (uint c = 0u; c < COLS; c++) acc[m][r][c] += dot(wv, xv[c]);
                        }
                }
            }
        }
    }

    // the norm's Σx²: each thread staged a part of every column
    [[unroll]] for (uint c = 0u; c < COLS; c++) {
        float t = subgroupAdd(ss[c]);
        if (lane == 0u) red[sgi * COLS + c] = t;
    }
    barrier();
    [[unroll]] for (uint c = 0u; c < COLS; c++) {
        float f = 1.0;
        if (norm) {
            float t = 0.0;
            for (uint i = 0u; i < NSG; i++) t += red[i * COLS + c];
            f = inversesqrt(t / float(p.k) + p.eps);
        }
        [[unroll]] for (uint r = 0u; r < RT; r++) {
            float v = subgroupAdd(acc[0][r][c]) * f;
#if SWIGLU
            float v3 = subgroupAdd(acc[1][r][c]) * f;
            v = v / (1.0 + exp(-v)) * v3;
#endif
            // output (r, c) is written by one lane, the lanes taking turns
            if (lane == (r * COLS + c) % SG && grow0 + r < total) mv_store(seg[r], lrow[r], c, v);
        }
    }
}
