#version 460
// xmv.comp - the matrix-vector product of few columns with x held in registers (matmul.c
// k_xmv_serves picks the shapes): y_s[c][n] (+)= Σ_k W_s[n][k]·x'[c][k] for up to three weights
// W_0..W_2 of the same type and k stacked as one matrix of rows_end[2] rows (q/k/v as one product),
// each writing its own y_s [COLS][rows_s]; x' = x or its RMSNorm g ⊙ x / rms(x). SWIGLU: W_1 is
// the up weight, y = silu(W_0 x')·(W_1 x').
// Push block: mv_common.glsl's (matmul.c struct push_matvec).
//
// Why (bench/22): at one column every weight element meets one x element, so a kernel that reads x
// for each weight slot moves 2x (BF16) to 8x (Q4_0) the weight bytes again through L1 or shared
// memory (matvec.comp, qmv.comp: Q4_0 at 0.3-0.9 TB/s). Measured, that traffic was not the whole
// bound: this kernel wins for Q8_0/Q4_0 with k <= 4096 (Q4_0 SwiGLU 1.2 TB/s against 0.86), not for
// BF16 or long k, where select.c keeps the others. Here
// a lane owns the same k positions in every row: the 16-byte weight slots kg·SPL·SG + j·SG + lane
// (j < SPL) of each row, so a subgroup load is SG·16 contiguous bytes of a row; the x' elements of
// those slots (SPL·G floats a column) are read once into registers and serve every row the lane
// streams.
//
// Geometry: NSG subgroups a workgroup; KSG of them (the k groups) share a row, each over 1/KSG of
// k (long k not split over workgroups, below), the other factor NSG/KSG are row groups. The
// workgroup stages x (f32, the norm's gain applied, Σx² summed on the way) in shared memory once,
// padded a vec4 every 8 so that lanes G/4 vec4 apart read different banks; one barrier; then each
// subgroup takes NB batches of RB rows: all RB·SPL slot loads (of both matrices for SwiGLU) issued
// before any is used. The lanes' sums meet by subgroupAdd; with KSG > 1 the k groups' sums meet in
// shared memory after a second barrier. Grid: x = ceil(rows_end[2] / ((NSG/KSG)·RB·NB)), y = the
// k splits.
//
// Split k (grid y > 1, FADD variants only; select.c sel_xmv_ksplits: long k, no norm, y += result, not
// SwiGLU): workgroup row z takes k in [z·k/y, (z+1)·k/y) (a multiple of G and of 4) as if it were
// the whole k, stages only that x, and adds its sums into y by float atomic add (y holds the start).
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
#ifndef FADD
#define FADD 0 // 1: k may be split over the grid's y, the sums added into y atomically
#endif
#if FADD
#extension GL_EXT_shader_atomic_float : require
#endif
#include "wslot.glsl"

layout(constant_id = 0) const uint SG = 32;   // subgroup size of the device
layout(constant_id = 1) const uint NSG = 4;   // subgroups per workgroup
layout(constant_id = 2) const uint KSG = 1;   // k groups (divides NSG)
layout(constant_id = 3) const uint SPL = 2;   // slots a lane owns in a row: KSG·SG·SPL >= k / G
layout(local_size_x_id = 4) in;               // SG·NSG
layout(constant_id = 5) const uint RB = 4;    // rows a subgroup loads at once
layout(constant_id = 6) const uint NB = 1;    // batches of RB rows a subgroup takes
layout(constant_id = 7) const uint XV = 576;  // shared vec4 a column of x: > k/4 + k/32
layout(constant_id = 8) const uint COLS = 1;  // columns

// Slots are read as stored (wslot.glsl raw4): the block scale and Q4_0's offset 8 are applied once
// a slot, not once an element, s·Σ(q - 8)·x = s·(Σ q·x - 8·Σx), with Σx of the slot's x computed
// once a lane (bench/22).
#if WTYPE == DT_Q4_0
const float QOFF = 8.0;
#else
const float QOFF = 0.0;
#endif

const uint RG = NSG / KSG; // row groups
const uint ROWS_WG = RG * RB * NB;
#include "mv_common.glsl" // NW, the push block, locate, mv_store

shared vec4 xs[COLS * XV];
shared float red[NSG * COLS];
shared float part[KSG > 1u ? KSG * ROWS_WG * NW * COLS : 1u];

uint xpos(uint i) { return i + (i >> 3); } // vec4 i of x -> its padded place

// Output (gr, c) of stacked row gr: the lanes' (and k groups') sum v (v3: the up product), the
// norm's f.
void store(uint gr, uint c, float v, float v3, float f)
{
    uint seg, lrow;
    locate(gr, seg, lrow);
    v *= f;
#if SWIGLU
    v = v / (1.0 + exp(-v)) * (v3 * f);
#endif
    mv_store(seg, lrow, c, v);
}

// Loads batch r0's RB rows of weight slots (and scales) this lane owns.
void load_rows(uint r0, uint total, uint row_slots, uint slots, uint slot0, uint kg, uint lane,
               out uvec4 raw[RB][NW][SPL], out float sc[RB][NW][SPL])
{
    [[unroll]] for (uint r = 0u; r < RB; r++) {
        uint seg, lrow;
        locate(min(r0 + r, total - 1u), seg, lrow);
        [[unroll]] for (uint m = 0u; m < NW; m++) {
            uint sm = SWIGLU != 0 ? m : seg;
            uint64_t W = p.w[sm], S = p.ws[sm];
            [[unroll]] for (uint j = 0u; j < SPL; j++) {
                uint s = (kg * SPL + j) * SG + lane;
                uint si = lrow * row_slots + slot0 + min(s, slots - 1u);
                raw[r][m][j] = UVec4Buf(W).v[si];
                sc[r][m][j] = block_scale(S, si);
            }
        }
    }
}

void main()
{
    uint lane = gl_SubgroupInvocationID, sgi = gl_SubgroupID, tid = gl_LocalInvocationIndex;
    // this workgroup's k: [kz, kz + kper) (all of it unless split)
    uint kper = p.k / gl_NumWorkGroups.y, kz = gl_WorkGroupID.y * kper;
    uint row_slots = p.k / G, slots = kper / G, slot0 = kz / G, kv4 = kper / 4u, total = p.rows_end[2];
    uint rg = sgi / KSG, kg = sgi % KSG;
    uint wrow0 = gl_WorkGroupID.x * ROWS_WG;
    bool norm = p.gain != 0ul;
    float one = (p.flags & 2u) != 0u ? 1.0 : 0.0;
    uint gdtype = p.flags >> 2;

    // x' staged once: the norm's gain applied, Σx² from the same loads
    [[unroll]] for (uint c = 0u; c < COLS; c++) {
        float ss = 0.0;
        for (uint i = tid; i < kv4; i += SG * NSG) {
            uint xi = (c * p.k + kz) / 4u + i;
            vec4 xr = act_get4(p.x, xi);
            if (norm) {
                ss += dot(xr, xr);
                xr *= one + gain4_at(p.gain, gdtype, kz / 4u + i);
            }
            xs[c * XV + xpos(i)] = xr;
        }
        float t = subgroupAdd(ss);
        if (lane == 0u) red[sgi * COLS + c] = t;
    }
    barrier();
    float f[COLS];
    [[unroll]] for (uint c = 0u; c < COLS; c++) {
        f[c] = 1.0;
        if (norm) {
            float tt = 0.0;
            for (uint i = 0u; i < NSG; i++) tt += red[i * COLS + c];
            f[c] = inversesqrt(tt / float(p.k) + p.eps);
        }
    }

    // this lane's x: the elements of its slots (0 past the row's end)
    vec4 xv[COLS][SPL][G4];
    float xsum[COLS][SPL]; // Σx of a slot (Q4_0's offset)
    [[unroll]] for (uint j = 0u; j < SPL; j++) {
        uint s = (kg * SPL + j) * SG + lane;
        [[unroll]] for (uint c = 0u; c < COLS; c++) {
            xsum[c][j] = 0.0;
            [[unroll]] for (uint q = 0u; q < G4; q++) {
                xv[c][j][q] = s < slots ? xs[c * XV + xpos(s * G4 + q)] : vec4(0.0);
                xsum[c][j] += dot(xv[c][j][q], vec4(1.0));
            }
        }
    }

    for (uint b = 0u; b < NB; b++) {
        uint r0 = wrow0 + (b * RG + rg) * RB;
        if (r0 >= total) break;
        // each batch's weights load after the staging (as measured in bench/22-24)
        uvec4 raw[RB][NW][SPL];
        float sc[RB][NW][SPL];
        load_rows(r0, total, row_slots, slots, slot0, kg, lane, raw, sc);
        [[unroll]] for (uint r = 0u; r < RB; r++) {
            float acc[NW][COLS];
            [[unroll]] for (uint m = 0u; m < NW; m++) {
                [[unroll]] for (uint c = 0u; c < COLS; c++) acc[m][c] = 0.0;
                [[unroll]] for (uint j = 0u; j < SPL; j++) {
                    float d[COLS];
                    [[unroll]] for (uint c = 0u; c < COLS; c++) d[c] = 0.0;
                    [[unroll]] for (uint q = 0u; q < G4; q++) {
                        vec4 wv = raw4(raw[r][m][j], q);
                        [[unroll]] for (uint c = 0u; c < COLS; c++) d[c] += dot(wv, xv[c][j][q]);
                    }
                    [[unroll]] for (uint c = 0u; c < COLS; c++)
                        acc[m][c] += sc[r][m][j] * (d[c] - QOFF * xsum[c][j]);
                }
                [[unroll]] for (uint c = 0u; c < COLS; c++) acc[m][c] = subgroupAdd(acc[m][c]);
            }
            uint gr = r0 + r, at = (b * RG + rg) * RB + r;
            [[unroll]] for (uint c = 0u; c < COLS; c++) {
                if (KSG == 1u) {
                    if (lane == (r * COLS + c) % SG && gr < total) store(gr, c, acc[0][c], acc[NW - 1u][c], f[c]);
                } else if (lane == 0u) {
                    [[unroll]] for (uint m = 0u; m < NW; m++)
                        part[((kg * ROWS_WG + at) * COLS + c) * NW + m] = acc[m][c];
                }
            }
        }
    }

    // long k: the k groups' sums meet here
    if (KSG > 1u) {
        barrier();
        for (uint i = tid; i < ROWS_WG * COLS; i += SG * NSG) {
            uint at = i / COLS, c = i % COLS, gr = wrow0 + at;
            if (gr >= total) break;
            float v[NW];
            [[unroll]] for (uint m = 0u; m < NW; m++) {
                v[m] = 0.0;
                for (uint g = 0u; g < KSG; g++) v[m] += part[((g * ROWS_WG + at) * COLS + c) * NW + m];
            }
            store(gr, c, v[0], v[NW - 1u], f[c]);
        }
    }
}
