// mv_common.glsl - what the matrix-vector family (matvec.comp, qmv.comp, xmv.comp) shares: the push
// block (matmul.c struct push_matvec, field for field), the matrices a row reads, where a stacked
// row's weight and output are, and the output store. Include after kern_common.glsl with WTYPE and
// SWIGLU defined; FADD (xmv.comp) may be defined too.
#ifndef MV_COMMON_GLSL
#define MV_COMMON_GLSL

#ifndef FADD
#define FADD 0
#endif

#if SWIGLU
const uint NW = 2u; // matrices read per row
#else
const uint NW = 1u;
#endif

layout(push_constant) uniform Push {
    uint64_t w[3];      // weight s (SWIGLU: w[1] is the up weight); unused entries 0
    uint64_t ws[3];     // its f16 scales [rows_s][k/32] (Q types)
    uint64_t y[3];      // f32 [COLS][rows_s]
    uint64_t x;         // f32 [COLS][k], 16-byte aligned
    uint64_t gain;      // norm gain [k], 0: no norm
    uint rows_end[3];   // cumulative rows: weight s holds stacked rows rows_end[s-1] .. rows_end[s]-1
    uint k;
    uint flags;         // 1: y += result; 2: gain is (1 + g); gain dtype << 2
    float eps;
} p;

// The weight s and the row in it of stacked row gr.
void locate(uint gr, out uint seg, out uint lrow)
{
    seg = gr < p.rows_end[0] ? 0u : gr < p.rows_end[1] ? 1u : 2u;
    lrow = gr - (seg == 0u ? 0u : p.rows_end[seg - 1u]);
}

// Writes v as output (lrow, column c) of weight seg: y (+)= v, or (FADD, k split over the grid's y)
// added atomically.
void mv_store(uint seg, uint lrow, uint c, float v)
{
    uint rows_s = p.rows_end[seg] - (seg == 0u ? 0u : p.rows_end[seg - 1u]);
    uint oi = c * rows_s + lrow;
#if FADD
    if (gl_NumWorkGroups.y > 1u) {
        atomicAdd(F32Buf(p.y[seg]).v[oi], v);
        return;
    }
#endif
    if ((p.flags & 1u) != 0u) v += act_get(p.y[seg], oi);
    act_set(p.y[seg], oi, v);
}

#endif
