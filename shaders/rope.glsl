// rope.glsl - RoPE as torch computes it, shared by attn_prep.comp and attention.comp's fused prep:
// inv_freq_i = theta^(-2i/rope_dims) formed as r^i in float-float (r = theta^(-2/rope_dims) as a hi +
// lo pair from the host: pow in f32 is off by several ulps), the angle pos·inv_freq_i in f32, its
// sine and cosine after a two-step reduction to [-pi, pi]. Pairs: NeoX halves (i, i + rope_dims/2)
// or, interleaved, (2i, 2i+1); dims past rope_dims pass through.
#ifndef LFM2_ROPE_GLSL
#define LFM2_ROPE_GLSL

// sin and cos of a (an f32 angle, as torch computes it) after reducing a to [-pi, pi] in two steps
// (2*pi = C1 + C2, C1 with few mantissa bits), so large positions keep their accuracy.
vec2 sincos_reduced(float a)
{
    const float C1 = 6.28125, C2 = 1.9353071795864769e-3;
    float n = round(a * 0.15915494309189535);
    float r = (a - n * C1) - n * C2;
    return vec2(sin(r), cos(r));
}

// Float-float product (about 48 bits), kept exact by `precise` (no reassociation).
vec2 ff_mul(vec2 a, vec2 b)
{
    precise float hi = a.x * b.x;
    precise float lo = fma(a.x, b.x, -hi) + (a.x * b.y + a.y * b.x);
    precise float s = hi + lo;
    precise float e = lo - (s - hi);
    return vec2(s, e);
}

// theta^(-2i/rope_dims) = r^i by repeated squaring in float-float (r = (hi, lo)).
float inv_freq(uint i, vec2 r)
{
    vec2 acc = vec2(1.0, 0.0), base = r;
    for (; i != 0u; i >>= 1) {
        if ((i & 1u) != 0u) acc = ff_mul(acc, base);
        base = ff_mul(base, base);
    }
    return acc.x + acc.y;
}

// Sine and cosine of pair i's angle at position pos.
vec2 rope_sincos(uint i, uint pos, vec2 r) { return sincos_reduced(float(pos) * inv_freq(i, r)); }

// Element i (< rope_dims) of a head: its pair, its partner, and whether it is the pair's first.
uint rope_pair(uint i, uint half_rd, bool inter) { return inter ? i / 2u : i % half_rd; }
uint rope_partner(uint i, uint half_rd, bool inter) { return inter ? (i ^ 1u) : (i < half_rd ? i + half_rd : i - half_rd); }
bool rope_first(uint i, uint half_rd, bool inter) { return inter ? (i % 2u) == 0u : i < half_rd; }

// Element i rotated: x its value, xp its partner's, sc its pair's (sin, cos).
float rope_rotate(float x, float xp, vec2 sc, bool first) { return first ? x * sc.y - xp * sc.x : x * sc.y + xp * sc.x; }

#endif
