#version 460
// dn_recurrent.comp - the gated delta rule in recurrent form over the columns of one step, with
// the per-token preparation fused in. For each run (one slot's columns, in order), value head
// vh and token t (docs/models.md, Qwen3.5 Gated DeltaNet, steps 3-5):
//   kh = vh / (nv/nk) (HF grouped heads) or vh % nk (GGUF tiled heads, flag TILED)
//   q = l2norm(q[kh]) · scale,  k = l2norm(k[kh])       (x / sqrt(Σx² + 1e-6))
//   β = σ(b[vh]),  g = A[vh] · softplus(a[vh] + dt[vh]),  A = −exp(A_log) (or ssm_a, flag NEG_A)
//   S ← e^g S;  d = β (v − Sᵀk);  S ← S + k dᵀ;  o = Sᵀq
// qkv: f32 [cols][2·nk·DK + nv·DV] = [q | k | v] (after the conv); b, a: f32 [cols][nv];
// dt, A: [nv] F32/F16/BF16; state: f32 [nv][DK][DV] of entry e of slot s at
// state + (s·n_snap + e)·stride floats (kernels.h); entry cur = slots[s].cur (struct slot_meta;
// slots = 0: entry 0) holds the committed state; o: f32 [cols][nv·DV].
// mode 0 (batch): the state after the run's last column goes back into entry cur.
// mode 1 (spec, kind dn.recurrent.snap): after column i of the run the state as it stands then
//   goes into entry (cur + i + 1) mod n_snap (a whole state a column); entry cur is left alone.
// mode 2: no state write (test hook LFM2_TEST_SKIP_SNAPSHOT: a broken snapshot).
// Geometry: one workgroup per (value head, tile of TILE state columns) x run (grid x =
// nv·DV/TILE, y = run), DKS·TILE threads. Column j of the head's state is held by DKS
// consecutive lanes, lane ks keeping rows ks, ks + DKS, ... (DK/DKS floats in registers); the three
// sums over DK a token needs (|q|², |k|², then Sᵀk and Sᵀq) are butterflies of subgroup shuffles
// over those DKS lanes, so a token costs no barrier and no shared memory. Tokens of a run go in order.
#extension GL_KHR_shader_subgroup_shuffle : require
#include "kern_common.glsl"
#include "lanes4.glsl" // lanes_add: the sum over the DKS = 4 lanes of one state column

layout(constant_id = 0) const uint DK = 128; // key head dim
layout(constant_id = 1) const uint DV = 128; // value head dim
layout(local_size_x_id = 2) in;              // DKS·TILE
#define DKS 4u // lanes sharing one state column (divides DK and the subgroup size)

const uint R = DK / DKS; // state rows a lane keeps

#define FLAG_TILED 1u
#define FLAG_NEG_A 2u

layout(push_constant) uniform Push {
    F32Buf qkv;
    F32Buf b;
    F32Buf a;
    uint64_t dt;
    uint64_t A;
    uint64_t state; // entry 0 of slot 0
    F32Buf o;
    U32Buf runs;  // struct run_meta [n_runs]: slot, first_col, n_cols, pos0
    U32Buf slots; // struct slot_meta [n_slots]: cur, pos, draft, pad (0: every slot uses entry 0)
    uint nk;
    uint nv;
    uint n_runs;
    uint stride; // floats between two state entries
    uint flags;
    uint dtdtype;
    uint adtype;
    float scale; // DK^-1/2
    uint n_snap;
    uint mode;
} p;

// State entry e of a slot (64-bit: a ring of big states may pass 4 G floats).
uint64_t entry(uint slot, uint e)
{
    return p.state + 4ul * uint64_t(slot * p.n_snap + e) * uint64_t(p.stride);
}

void main()
{
    uint t = gl_LocalInvocationIndex, ks = t % DKS, tile = gl_WorkGroupSize.x / DKS, tiles = DV / tile;
    uint vh = gl_WorkGroupID.x / tiles, j = (gl_WorkGroupID.x % tiles) * tile + t / DKS;
    uint r = gl_WorkGroupID.y;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint kh = (p.flags & FLAG_TILED) != 0u ? vh % p.nk : vh / (p.nv / p.nk);
    uint width = 2u * p.nk * DK + p.nv * DV;
    float A = wget1(p.A, p.adtype, vh);
    if ((p.flags & FLAG_NEG_A) == 0u) A = -exp(A);
    float dt = wget1(p.dt, p.dtdtype, vh);

    uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
    uint sbase = (vh * DK + ks) * DV + j; // row ks + DKS·m of the head at sbase + m·DKS·DV
    uint64_t sc = entry(slot, cur);
    float s[R], qv[R], kv[R];
    for (uint m = 0u; m < R; m++) s[m] = act_get(sc, sbase + m * DKS * DV);

    for (uint c = c0; c < c0 + n; c++) {
        uint row = c * width;
        float qq = 0.0, kk = 0.0;
        for (uint m = 0u; m < R; m++) {
            qv[m] = act_get(uint64_t(p.qkv), row + kh * DK + ks + m * DKS);
            kv[m] = act_get(uint64_t(p.qkv), row + (p.nk + kh) * DK + ks + m * DKS);
            qq += qv[m] * qv[m];
            kk += kv[m] * kv[m];
        }
        qq = lanes_add(qq);
        kk = lanes_add(kk);
        float qf = inversesqrt(qq + 1e-6) * p.scale, kf = inversesqrt(kk + 1e-6);
        float v = act_get(uint64_t(p.qkv), row + 2u * p.nk * DK + vh * DV + j);
        float beta = 1.0 / (1.0 + exp(-act_get(uint64_t(p.b), c * p.nv + vh)));
        float x = act_get(uint64_t(p.a), c * p.nv + vh) + dt;
        float u = exp(x), w1 = 1.0 + u; // softplus = log1p(e^x), torch's threshold 20
        float sp = x > 20.0 ? x : (w1 == 1.0 ? u : log(w1) * (u / (w1 - 1.0)));
        float decay = exp(A * sp);
        float sk = 0.0;
        for (uint m = 0u; m < R; m++) {
            s[m] *= decay;
            sk += s[m] * kv[m];
        }
        sk = lanes_add(sk);
        float d = beta * (v - sk * kf) * kf; // k enters the update normalised
        float sq = 0.0;
        for (uint m = 0u; m < R; m++) {
            s[m] += kv[m] * d;
            sq += s[m] * qv[m];
        }
        sq = lanes_add(sq);
        if (ks == 0u) act_set(uint64_t(p.o), c * p.nv * DV + vh * DV + j, sq * qf);
        if (p.mode == 1u) {
            uint64_t sn = entry(slot, (cur + c - c0 + 1u) % p.n_snap);
            for (uint m = 0u; m < R; m++) act_set(sn, sbase + m * DKS * DV, s[m]);
        }
    }
    if (p.mode == 0u)
        for (uint m = 0u; m < R; m++) act_set(sc, sbase + m * DKS * DV, s[m]);
}
