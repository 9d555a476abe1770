#version 460
// gemm_reduce.comp - the split-k sums of a matrix product (gemm_cm2.comp with k splits): y[i] +=
// Σ_{s < parts} part[s·n + i] for i < n. The product's first k range already wrote (or added to)
// y; its other ranges wrote their partial sums into part, one [cols][rows] plane each, so y ends
// as the whole sum (with the residual where the product accumulates). Summed in order s = 0, 1, ...
// on top of y, in f32.
// Dispatch: any number of 256-wide groups along x (at most maxComputeWorkGroupCount[0]); each
// invocation strides over the whole grid, so a fixed grid covers any n < 2^31.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    F32Buf y;    // (n) the output, holding the first range's sum
    F32Buf part; // (parts · n) the other ranges' sums
    uint n;
    uint parts;
} p;

void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) {
        float s = p.y.v[i];
        for (uint j = 0u; j < p.parts; j++) s += p.part.v[j * p.n + i];
        p.y.v[i] = s;
    }
}
