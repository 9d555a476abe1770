#version 460
// dn_chunk.comp - the gated delta rule in chunked form ("dn.chunk"), the wide plan's prefill
// kernel: the same function as dn_recurrent.comp (same push block, same per-token preparation:
// l2-normed q·scale and k of key head kh, β = σ(b), g = A·softplus(a + dt)), the same outputs
// and the same final state, computed a chunk of BT = 64 tokens at a time with matrix products.
// Within a chunk (tokens 0 .. L-1, G_i = g_0 + ... + g_i, S the state before the chunk):
//   L[i][j] = β_i (k_i·k_j) e^{G_i - G_j}           (j < i)
//   x_i     = β_i (v_i - e^{G_i} Sᵀk_i)
//   (I + L) V = X                                      (forward substitution: V are the updates
//                                                       d_i of the recurrent form, u - w·S of the
//                                                       WY/UT representation without forming w)
//   o_i     = e^{G_i} Sᵀq_i + Σ_{j<=i} (q_i·k_j) e^{G_i - G_j} V_j
//   S      <- e^{G_{L-1}} S + Σ_j e^{G_{L-1} - G_j} k_j V_jᵀ
// Geometry: one workgroup per (value head, tile of TV state columns) x run (grid x = nv·DV/TV,
// y = run), NT = 256 threads; each tile recomputes the chunk's DK-long products (its share of
// the redundancy is 1/(DV/TV)). Shared: L (then the decayed q·k) [BT][BT], the state tile
// [DK][TV], X/V [BT][TV] and four per-token rows: (BT² + DK·TV + BT·TV + 4·BT)·4 bytes, which the
// host fits to the device (TV = 16: 29.7 KiB at DK = 128; TV = 32: 41 KiB).
// Thread maps: per-token sums 4 lanes a token (BT·4 = NT); q·k and k·k products a 4x4 block a
// thread (16 x 16 blocks = NT, the lower triangle works); X, qᵀS and o 4 lanes a token, TV/4
// columns each; the substitution TV columns x 4 lanes, one barrier a row; the state update
// DK·TV/NT elements a thread.
#extension GL_KHR_shader_subgroup_shuffle : require
#include "kern_common.glsl"
#include "lanes4.glsl" // lanes_add: a sum over 4 consecutive lanes

layout(constant_id = 0) const uint DK = 128; // key head dim, a multiple of 4
layout(constant_id = 1) const uint DV = 128; // value head dim
layout(constant_id = 2) const uint TV = 16;  // state columns a workgroup owns: 4..64, divides DV
layout(local_size_x = 256) in;
const uint NT = 256u;
const uint BT = 64u;                  // chunk length
const uint CPT = TV / 4u;             // columns a thread takes in X, qᵀS and o
const uint EPT = (DK * TV + NT - 1u) / NT; // state elements a thread updates

#define FLAG_TILED 1u
#define FLAG_NEG_A 2u

layout(push_constant) uniform Push { // dn_recurrent.comp's block
    uint64_t qkv;
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
    uint slot_stride;
    uint flags;
    uint dtdtype;
    uint adtype;
    float scale;
} p;

shared float s_L[BT * BT];
shared float s_S[DK * TV];
shared float s_X[BT * TV];
shared float s_qf[BT]; // q's factor (1/|q|·scale); then e^{G_{L-1} - G_j}·k's factor
shared float s_kf[BT];
shared float s_beta[BT];
shared float s_G[BT];

void main()
{
    uint t = gl_LocalInvocationIndex, tiles = DV / TV;
    uint vh = gl_WorkGroupID.x / tiles, j0 = (gl_WorkGroupID.x % tiles) * TV, r = gl_WorkGroupID.y;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint kh = (p.flags & FLAG_TILED) != 0u ? vh % p.nk : vh / (p.nv / p.nk);
    uint width = 2u * p.nk * DK + p.nv * DV, qo = kh * DK, ko = (p.nk + kh) * DK, vo = 2u * p.nk * DK + vh * DV + j0;
    uint64_t x = p.qkv;
    float A = wget1(p.A, p.adtype, vh);
    if ((p.flags & FLAG_NEG_A) == 0u) A = -exp(A);
    float dt = wget1(p.dt, p.dtdtype, vh);

    uint sbase = slot * p.slot_stride + vh * DK * DV + j0; // S[d][j0 + col] at sbase + d·DV + col
    for (uint e = t; e < DK * TV; e += NT) s_S[e] = act_get(uint64_t(p.state), sbase + (e / TV) * DV + e % TV);

    uint ti = t / 4u, tl = t % 4u;           // token and lane of the 4-lane maps
    uint bi = t / 16u, bj = t % 16u;          // 4x4 block of the products
    for (uint cs = c0; cs < c0 + n; cs += BT) {
        uint L = min(BT, c0 + n - cs);
        // 1. per-token factors
        {
            float qq = 0.0, kk = 0.0;
            if (ti < L) {
                uint row = (cs + ti) * width;
                for (uint d = tl; d < DK; d += 4u) {
                    float qv = act_get(x, row + qo + d), kv = act_get(x, row + ko + d);
                    qq += qv * qv;
                    kk += kv * kv;
                }
            }
            qq = lanes_add(qq);
            kk = lanes_add(kk);
            if (tl == 0u) {
                float qf = 0.0, kf = 0.0, beta = 0.0, g = 0.0;
                if (ti < L) {
                    uint c = cs + ti;
                    qf = inversesqrt(qq + 1e-6) * p.scale;
                    kf = inversesqrt(kk + 1e-6);
                    beta = 1.0 / (1.0 + exp(-act_get(uint64_t(p.b), c * p.nv + vh)));
                    float xa = act_get(uint64_t(p.a), c * p.nv + vh) + dt;
                    float u = exp(xa), w1 = 1.0 + u; // softplus as dn_recurrent.comp
                    float sp = xa > 20.0 ? xa : (w1 == 1.0 ? u : log(w1) * (u / (w1 - 1.0)));
                    g = A * sp;
                }
                s_qf[ti] = qf;
                s_kf[ti] = kf;
                s_beta[ti] = beta;
                s_G[ti] = g;
            }
        }
        barrier();
        if (t == 0u)
            for (uint i = 1u; i < L; i++) s_G[i] += s_G[i - 1u];
        barrier();

        // 2. the chunk's k·k (into L) and q·k (kept in registers until L is spent)
        float qk[16];
        for (uint m = 0u; m < 16u; m++) qk[m] = 0.0;
        bool blk = bj <= bi && 4u * bi < L;
        if (blk) {
            float kk[16];
            for (uint m = 0u; m < 16u; m++) kk[m] = 0.0;
            uint ri[4], rj[4];
            for (uint m = 0u; m < 4u; m++) {
                ri[m] = (cs + min(4u * bi + m, L - 1u)) * width;
                rj[m] = (cs + min(4u * bj + m, L - 1u)) * width + ko;
            }
            for (uint d = 0u; d < DK; d += 4u) {
                vec4 kj[4];
                for (uint m = 0u; m < 4u; m++) kj[m] = act_get4(x, (rj[m] + d) / 4u);
                for (uint a = 0u; a < 4u; a++) {
                    vec4 ki = act_get4(x, (ri[a] + ko + d) / 4u), qi = act_get4(x, (ri[a] + qo + d) / 4u);
                    for (uint m = 0u; m < 4u; m++) {
                        kk[4u * a + m] += dot(ki, kj[m]);
                        qk[4u * a + m] += dot(qi, kj[m]);
                    }
                }
            }
            for (uint a = 0u; a < 4u; a++)
                for (uint m = 0u; m < 4u; m++) {
                    uint i = 4u * bi + a, j = 4u * bj + m;
                    bool live = i < L && j <= i;
                    float dec = live ? exp(s_G[i] - s_G[j]) : 0.0;
                    s_L[i * BT + j] = j < i && live ? s_beta[i] * s_kf[i] * s_kf[j] * kk[4u * a + m] * dec : 0.0;
                    qk[4u * a + m] = live ? s_qf[i] * s_kf[j] * qk[4u * a + m] * dec : 0.0;
                }
        }

        // 3. x_i = β_i (v_i - e^{G_i} Sᵀk_i) and e^{G_i} Sᵀq_i (registers)
        float qs[CPT];
        uint cg = tl * CPT;
        for (uint m = 0u; m < CPT; m++) qs[m] = 0.0;
        if (ti < L) {
            float xs[CPT];
            for (uint m = 0u; m < CPT; m++) xs[m] = 0.0;
            uint row = (cs + ti) * width;
            for (uint d = 0u; d < DK; d++) {
                float kd = act_get(x, row + ko + d), qd = act_get(x, row + qo + d);
                for (uint m = 0u; m < CPT; m++) {
                    float s = s_S[d * TV + cg + m];
                    xs[m] += kd * s;
                    qs[m] += qd * s;
                }
            }
            float eg = exp(s_G[ti]);
            for (uint m = 0u; m < CPT; m++) {
                s_X[ti * TV + cg + m] = s_beta[ti] * (act_get(x, row + vo + cg + m) - eg * s_kf[ti] * xs[m]);
                qs[m] *= eg * s_qf[ti];
            }
        }
        barrier();

        // 4. (I + L) V = X, row by row, in place
        {
            uint col = t / 4u;
            bool act = col < TV;
            for (uint i = 1u; i < L; i++) {
                float acc = 0.0;
                if (act)
                    for (uint j = tl; j < i; j += 4u) acc += s_L[i * BT + j] * s_X[j * TV + col];
                acc = lanes_add(acc);
                if (act && tl == 0u) s_X[i * TV + col] -= acc;
                barrier();
            }
        }
        barrier();

        // 5. the decayed q·k into L's place
        if (blk)
            for (uint a = 0u; a < 4u; a++)
                for (uint m = 0u; m < 4u; m++) s_L[(4u * bi + a) * BT + 4u * bj + m] = qk[4u * a + m];
        barrier();

        // 6. o_i = e^{G_i} Sᵀq_i + Σ_{j<=i} qk[i][j] V_j
        if (ti < L) {
            uint orow = (cs + ti) * p.nv * DV + vh * DV + j0 + cg;
            for (uint j = 0u; j <= ti; j++) {
                float l = s_L[ti * BT + j];
                for (uint m = 0u; m < CPT; m++) qs[m] += l * s_X[j * TV + cg + m];
            }
            for (uint m = 0u; m < CPT; m++) act_set(uint64_t(p.o), orow + m, qs[m]);
        }
        // (step 6 reads neither s_qf nor s_S)
        float gl = s_G[L - 1u];
        if (t < L) s_qf[t] = exp(gl - s_G[t]) * s_kf[t];
        barrier();

        // 7. S <- e^{G_{L-1}} S + Σ_j e^{G_{L-1} - G_j} k_j V_jᵀ
        {
            float acc[EPT];
            float eg = exp(gl);
            uint col = t % TV; // NT is a multiple of TV: one column a thread
            for (uint m = 0u; m < EPT; m++) {
                uint e = t + NT * m;
                acc[m] = e < DK * TV ? eg * s_S[e] : 0.0;
            }
            for (uint j = 0u; j < L; j++) {
                float w = s_qf[j] * s_X[j * TV + col];
                uint rk = (cs + j) * width + ko;
                for (uint m = 0u; m < EPT; m++) {
                    uint e = t + NT * m;
                    if (e < DK * TV) acc[m] += w * act_get(x, rk + e / TV);
                }
            }
            for (uint m = 0u; m < EPT; m++) {
                uint e = t + NT * m;
                if (e < DK * TV) s_S[e] = acc[m];
            }
        }
        barrier();
    }
    for (uint e = t; e < DK * TV; e += NT) act_set(uint64_t(p.state), sbase + (e / TV) * DV + e % TV, s_S[e]);
}
