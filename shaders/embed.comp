#version 460
// embed.comp - out[c][i] = widen(E[cols[c].token][i]): the token embedding lookup of a step.
// E: [rows][dim] of any weight type (repacked for Q types), dst: f32 [n_cols][dim].
// Grid: x over dim (256 a group), y = column.
#include "kern_common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    uint64_t table; // E, device layout of its dtype
    U32Buf cols;    // struct col_meta [n_cols] (4 u32: token, pos, slot, need_logit)
    F32Buf dst;     // [n_cols][dim]
    uint dim;
    uint rows;      // vocabulary size
    uint dtype;
    uint n_cols;
} p;

void main()
{
    uint i = gl_GlobalInvocationID.x, c = gl_WorkGroupID.y;
    if (i >= p.dim || c >= p.n_cols) return;
    act_set(uint64_t(p.dst), c * p.dim + i, wget(p.table, p.dtype, p.rows, p.dim, p.cols.v[4u * c], i));
}
