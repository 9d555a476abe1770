#version 460
// winit.comp - fills a weight of a built-in model on the device. Element e of the row-major
// [rows][k] tensor gets v_e from a counter-based hash of (seed, tensor, e): mode 0 normal
// b + a·N(0,1) (Box–Muller), 1 uniform in [a, b), 2 log of uniform in [a, b). Stored as dtype:
// F32/F16/BF16 plain, Q8_0 (d = amax/127, q = round(v/d)) and Q4_0 (d = m/-8 with m the value of
// largest magnitude, q = clamp(floor(v/d + 8.5), 0, 15)) per 32-block into the repacked layout.
// Grid: one invocation per 32 consecutive elements; x (64 a group) and y together count them
// (x is capped at 65535 groups): block = x + y · (groups_x · 64).
#include "kern_common.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint64_t w;
    uint rows;
    uint k;
    uint seed;
    uint tensor;
    uint dtype;
    uint mode;
    float a;
    float b;
} p;

uint pcg(uint v)
{
    uint s = v * 747796405u + 2891336453u;
    uint w = ((s >> ((s >> 28u) + 4u)) ^ s) * 277803737u;
    return (w >> 22u) ^ w;
}

// Uniform in (0, 1): 24 random bits, centred in their interval.
float rnd(uint e, uint stream)
{
    uint h = pcg(p.seed ^ pcg(p.tensor + pcg(e ^ pcg(stream + 0x9e3779b9u))));
    return (float(h >> 8) + 0.5) * (1.0 / 16777216.0);
}

float value(uint e)
{
    float u = rnd(e, 0u);
    if (p.mode == 1u) return p.a + (p.b - p.a) * u;
    if (p.mode == 2u) return log(p.a + (p.b - p.a) * u);
    return p.b + p.a * sqrt(-2.0 * log(u)) * cos(6.283185307179586 * rnd(e, 1u));
}

uint bf16_bits(float v)
{
    uint u = floatBitsToUint(v);
    return (u + 0x7fffu + ((u >> 16) & 1u)) >> 16;
}

void main()
{
    uint blk = gl_GlobalInvocationID.x + gl_GlobalInvocationID.y * gl_NumWorkGroups.x * 64u;
    uint64_t n = uint64_t(p.rows) * p.k;
    uint64_t e0 = uint64_t(blk) * 32ul;
    if (e0 >= n) return;
    uint cnt = uint(min(32ul, n - e0));
    float v[32];
    for (uint j = 0u; j < 32u; j++) v[j] = j < cnt ? value(uint(e0) + j) : 0.0;

    if (p.dtype == DT_F32 || p.dtype == DT_F16 || p.dtype == DT_BF16) {
        for (uint j = 0u; j < cnt; j++) {
            uint64_t e = e0 + j;
            if (p.dtype == DT_F32) F32Buf(p.w + 4ul * e).v[0] = v[j];
            else if (p.dtype == DT_F16) F16Buf(p.w + 2ul * e).v[0] = float16_t(v[j]);
            else U16Buf(p.w + 2ul * e).v[0] = uint16_t(bf16_bits(v[j]));
        }
        return;
    }
    uint64_t nblk = n / 32ul;
    if (p.dtype == DT_Q8_0) {
        float amax = 0.0;
        for (uint j = 0u; j < 32u; j++) amax = max(amax, abs(v[j]));
        float d = amax / 127.0, id = d != 0.0 ? 1.0 / d : 0.0;
        for (uint j = 0u; j < 8u; j++) {
            uint word = 0u;
            for (uint i = 0u; i < 4u; i++) {
                float x = v[4u * j + i] * id;
                int q = int(sign(x) * floor(abs(x) + 0.5));
                word |= (uint(q) & 255u) << (8u * i);
            }
            U32Buf(p.w + 32ul * blk + 4ul * j).v[0] = word;
        }
        F16Buf(p.w + nblk * 32ul + 2ul * blk).v[0] = float16_t(d);
        return;
    }
    float m = 0.0;
    for (uint j = 0u; j < 32u; j++)
        if (abs(v[j]) > abs(m)) m = v[j];
    float d = m / -8.0, id = d != 0.0 ? 1.0 / d : 0.0;
    for (uint j = 0u; j < 4u; j++) {
        uint word = 0u;
        for (uint i = 0u; i < 4u; i++) {
            uint b = 4u * j + i;
            uint lo = uint(clamp(floor(v[b] * id + 8.5), 0.0, 15.0));
            uint hi = uint(clamp(floor(v[b + 16u] * id + 8.5), 0.0, 15.0));
            word |= (lo | (hi << 4)) << (8u * i);
        }
        U32Buf(p.w + 16ul * blk + 4ul * j).v[0] = word;
    }
    F16Buf(p.w + nblk * 16ul + 2ul * blk).v[0] = float16_t(d);
}
