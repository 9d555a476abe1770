#version 460
// copy.comp - dst[i] = src[i] for i < n, over 16-byte words: the copy kernel behind
// gpu_copy_bandwidth (one read and one write of every byte).
// Dispatch: any number of 256-wide groups along x (at most maxComputeWorkGroupCount[0]); each
// invocation strides over the whole grid, so a fixed grid covers any n < 2^31.
#include "common.glsl"

layout(local_size_x = 256) in;

layout(push_constant) uniform Push {
    UVec4Buf src; // (n) 16-byte words
    UVec4Buf dst; // (n) 16-byte words
    uint n;
} p;

void main()
{
    uint stride = gl_NumWorkGroups.x * gl_WorkGroupSize.x;
    for (uint i = gl_GlobalInvocationID.x; i < p.n; i += stride) p.dst.v[i] = p.src.v[i];
}
