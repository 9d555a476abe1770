#version 460
// matvec.comp - a matrix-vector product for 1 .. 16 columns (select.c matvec_serves picks the shapes):
// y_s[c][n] (+)= Σ_k W_s[n][k]·x'[c][k] for up to three weights W_0..W_2 of the same type and k,
// stacked as one matrix of rows_end[2] rows (q/k/v as one product: one dispatch, one barrier), each
// writing its own y_s [COLS][rows_s]. x' = x or its RMSNorm g ⊙ x / rms(x) (fused input norm).
// SWIGLU: one weight, W_1 is the up weight of the same shape, y = silu(W_0 x')·(W_1 x').
// W: the device layout of kernels.h (Q types: quant bytes, then the f16 scales); x: f32 [COLS][k].
//
// Geometry: a workgroup is NSG subgroups of SG lanes; subgroup i owns RT consecutive rows (of each
// matrix) and its lanes take the 16-byte weight slots lane, lane + SG, ... of those rows, two slots
// a lane loaded before any is used (the loads in flight are what a step of few columns is bound
// by). Each lane dequantizes a slot once in registers and uses it for every column; an x vec4
// serves the RT rows. The lanes' partial sums meet by subgroupAdd: no shared memory, no barrier.
// Against matmul.comp (bench/12): faster where a row has few slots and there are many rows (the LM
// head at 4.1 TB/s, q/k/v stacked), slower for long k (32 lanes a row keep fewer loads in flight
// than matmul.comp's up to 128) and for several columns (matmul.comp's x loads are broadcasts).
// Σx² (norm) comes from the same x loads. Grid: x = ceil(rows_end[2] / (NSG·RT)).
#extension GL_EXT_control_flow_attributes : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#include "kern_common.glsl"

#ifndef WTYPE
#define WTYPE DT_BF16
#endif
#ifndef SWIGLU
#define SWIGLU 0
#endif
#include "wslot.glsl"
#define U 2u // slots a lane loads ahead per row (plain types)

layout(constant_id = 0) const uint SG = 32;   // subgroup size of the device
layout(constant_id = 1) const uint NSG = 4;   // subgroups per workgroup
layout(constant_id = 2) const uint RT = 1;    // rows per subgroup (per matrix)
layout(constant_id = 3) const uint COLS = 1;  // columns (<= 16)
layout(local_size_x_id = 4) in;               // SG·NSG

#include "mv_common.glsl" // NW, the push block, locate, mv_store

void main()
{
    uint lane = gl_SubgroupInvocationID, sgi = gl_SubgroupID;
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

    for (uint s0 = lane; s0 < row_slots; s0 += U * SG) {
        uvec4 raw[U][NW][RT];
        float sc[U][NW][RT];
        [[unroll]] for (uint u = 0u; u < U; u++) {
            uint s = min(s0 + u * SG, row_slots - 1u);
            [[unroll]] for (uint m = 0u; m < NW; m++)
                [[unroll]] for (uint r = 0u; r < RT; r++) {
                    raw[u][m][r] = UVec4Buf(W[m][r]).v[base[r] + s];
                    sc[u][m][r] = block_scale(S[m][r], base[r] + s);
                }
        }
        [[unroll]] for (uint u = 0u; u < U; u++) {
            uint s = s0 + u * SG;
            if (s >= row_slots) break;
            [[unroll]] for (uint j4 = 0u; j4 < G4; j4++) {
                uint k4 = s * G4 + j4;
                vec4 gv = norm ? one + gain4_at(p.gain, gdtype, k4) : vec4(1.0);
                vec4 xv[COLS];
                [[unroll]] for (uint c = 0u; c < COLS; c++) {
                    vec4 xr = act_get4(p.x, c * kv4 + k4);
                    if (norm) ss[c] += dot(xr, xr);
                    xv[c] = xr * gv;
                }
                [[unroll]] for (uint m = 0u; m < NW; m++)
                    [[unroll]] for (uint r = 0u; r < RT; r++) {
                        vec4 wv = unpack4(raw[u][m][r], sc[u][m][r], j4);
                        [[unroll]] for (uint c = 0u; c < COLS; c++) acc[m][r][c] += dot(wv, xv[c]);
                    }
            }
        }
    }

    [[unroll]] for (uint c = 0u; c < COLS; c++) {
        float f = norm ? inversesqrt(subgroupAdd(ss[c]) / float(p.k) + p.eps) : 1.0;
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
