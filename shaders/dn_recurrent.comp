#version 460
// dn_recurrent.comp - the gated delta rule in recurrent form over the columns of one step, with
// the per-token preparation fused in. For each run (one slot's columns, in order), value head
// vh and token t (MODELS.md, Qwen3.5 Gated DeltaNet, steps 3-5):
//   kh = vh / (nv/nk) (HF grouped heads) or vh % nk (GGUF tiled heads, flag TILED)
//   q = l2norm(q[kh]) · scale,  k = l2norm(k[kh])       (x / sqrt(Σx² + 1e-6))
//   β = σ(b[vh]),  g = A[vh] · softplus(a[vh] + dt[vh]),  A = −exp(A_log) (or ssm_a, flag NEG_A)
//   S ← e^g S;  d = β (v − Sᵀk);  S ← S + k dᵀ;  o = Sᵀq
// qkv: f32 [cols][2·nk·DK + nv·DV] = [q | k | v] (after the conv); b, a: f32 [cols][nv];
// dt, A: [nv] F32/F16/BF16; state: f32 per slot at slot·slot_stride floats, [nv][DK][DV];
// o: f32 [cols][nv·DV].
// Geometry: one workgroup per (value head, DV tile of TILE columns) x run (grid x = nv·DV/TILE,
// y = run). Thread j owns column j of the head's state (DK floats in registers), so the update is
// thread-local; q and k of the token are staged in shared memory and every thread forms their
// norms itself (DK FMAs, the same order as the update's). Tokens of a run go in order.
#include "kern_common.glsl"

layout(constant_id = 0) const uint DK = 128;  // key head dim
layout(constant_id = 1) const uint DV = 128;  // value head dim
layout(local_size_x_id = 2) in;               // TILE: state columns a workgroup owns (divides DV)
#define TILE gl_WorkGroupSize.x

#define FLAG_TILED 1u
#define FLAG_NEG_A 2u

layout(push_constant) uniform Push {
    F32Buf qkv;
    F32Buf b;
    F32Buf a;
    uint64_t dt;
    uint64_t A;
    F32Buf state;
    F32Buf o;
    U32Buf runs; // struct run_meta [n_runs]: slot, first_col, n_cols, pos0
    uint nk;
    uint nv;
    uint n_runs;
    uint slot_stride; // floats between two slots' states
    uint flags;
    uint dtdtype;
    uint adtype;
    float scale;      // DK^-1/2
} p;

shared float qs[DK];
shared float ks[DK];

void main()
{
    uint tiles = DV / TILE;
    uint vh = gl_WorkGroupID.x / tiles, j = (gl_WorkGroupID.x % tiles) * TILE + gl_LocalInvocationIndex;
    uint r = gl_WorkGroupID.y, t = gl_LocalInvocationIndex;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint kh = (p.flags & FLAG_TILED) != 0u ? vh % p.nk : vh / (p.nv / p.nk);
    uint width = 2u * p.nk * DK + p.nv * DV;
    float A = wget1(p.A, p.adtype, vh);
    if ((p.flags & FLAG_NEG_A) == 0u) A = -exp(A);
    float dt = wget1(p.dt, p.dtdtype, vh);

    uint sbase = slot * p.slot_stride + vh * DK * DV + j;
    float s[DK];
    for (uint i = 0u; i < DK; i++) s[i] = p.state.v[sbase + i * DV];

    for (uint c = c0; c < c0 + n; c++) {
        uint row = c * width;
        barrier(); // the previous token's q, k are read by every thread
        for (uint i = t; i < DK; i += TILE) {
            qs[i] = p.qkv.v[row + kh * DK + i];
            ks[i] = p.qkv.v[row + p.nk * DK + kh * DK + i];
        }
        barrier();
        float qq = 0.0, kk = 0.0;
        for (uint i = 0u; i < DK; i++) {
            qq += qs[i] * qs[i];
            kk += ks[i] * ks[i];
        }
        float qf = inversesqrt(qq + 1e-6) * p.scale, kf = inversesqrt(kk + 1e-6);
        float v = p.qkv.v[row + 2u * p.nk * DK + vh * DV + j];
        float beta = 1.0 / (1.0 + exp(-p.b.v[c * p.nv + vh]));
        float x = p.a.v[c * p.nv + vh] + dt;
        float u = exp(x), w1 = 1.0 + u; // softplus = log1p(e^x), torch's threshold 20
        float sp = x > 20.0 ? x : (w1 == 1.0 ? u : log(w1) * (u / (w1 - 1.0)));
        float decay = exp(A * sp);
        float kv = 0.0;
        for (uint i = 0u; i < DK; i++) {
            s[i] *= decay;
            kv += s[i] * ks[i];
        }
        float d = beta * (v - kv * kf);
        float out_v = 0.0;
        for (uint i = 0u; i < DK; i++) {
            s[i] += ks[i] * kf * d;
            out_v += s[i] * qs[i];
        }
        p.o.v[c * p.nv * DV + vh * DV + j] = out_v * qf;
    }
    for (uint i = 0u; i < DK; i++) p.state.v[sbase + i * DV] = s[i];
}
