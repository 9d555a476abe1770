#version 460
// shortconv_wide.comp - the LFM2 short conv of one step, parallel over positions (the wide plan's
// "shortconv.wide"; the same function as shortconv.comp). Per run (the columns of one slot, at
// successive positions) and channel h:
//   u_t = B_t ⊙ X_t;  conv_t = w0·u_{t-2} + w1·u_{t-1} + w2·u_t;  y_t = C_t ⊙ conv_t
// with the u before the run taken from the slot's committed state entry, which then keeps the run's
// last two u (shortconv.comp's mode 0; the wide plan takes no snapshots).
// A 3-tap causal convolution, not a scan: an invocation takes J successive columns of a run and
// slides along them, recomputing u at the two columns before its first from bcx, which nothing
// writes here (so each B, X is read ~(J + 2)/J times, each C once). The run's first invocation
// (columns 0 .. J-1) takes the u before the run from the state and also stores the new state (the
// run's last two u: its own, or from bcx), so the state is read and written by one invocation per
// (run, channel) and no other reads it.
// bcx: f32 [cols][3H] = [B | C | X]; w: [H][3] F32/F16/BF16 (tap 2 = current token);
// state: f32 [slots][n_snap][2][H] ([0] = u_{t-2}, [1] = u_{t-1}); entry cur = slots[slot].cur
// (struct slot_meta, 16 bytes a slot; slots = 0: entry 0) holds the committed state; y: f32 [cols][H].
// Grid: x over channels (64 a group), y = run, z = block of J columns of the run; the z extent
// covers the longest run the step can hold (cols - n_runs + 1), groups past their run's end exit.
#extension GL_EXT_control_flow_attributes : require
#include "kern_common.glsl"

layout(local_size_x = 64) in;

layout(constant_id = 0) const uint J = 8; // columns an invocation takes (kernels.h K_WIDE_CONV_COLS)

layout(push_constant) uniform Push {
    F32Buf bcx;
    uint64_t w;
    F32Buf state;
    F32Buf y;
    U32Buf runs;  // struct run_meta [n_runs]: slot, first_col, n_cols, pos0
    U32Buf slots; // struct slot_meta [n_slots]: cur, pos, draft, pad (0: every slot uses entry 0)
    uint H;
    uint n_runs;
    uint wdtype;
    uint n_snap;
    uint mode; // 0 (the only one served here)
    uint pad;
} p;

float u_at(uint c, uint h)
{
    uint b = c * 3u * p.H + h;
    return act_get(uint64_t(p.bcx), b) * act_get(uint64_t(p.bcx), b + 2u * p.H);
}

// y of column c from u at t-2, t-1, t and the taps.
void put_y(uint c, uint h, vec3 w, float u2, float u1, float u)
{
    float cv = act_get(uint64_t(p.bcx), c * 3u * p.H + p.H + h);
    act_set(uint64_t(p.y), c * p.H + h, cv * (w.x * u2 + w.y * u1 + w.z * u));
}

// The columns j0 .. j0+J-1 of run r, channel h, with the taps w.
void conv(uint h, uint r, uint j0, vec3 w)
{
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    if (j0 >= n) return;
    uint s = 0u;
    float u2, u1; // u at the two columns before the current one
    if (j0 == 0u) {
        uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
        s = (slot * p.n_snap + cur) * 2u * p.H + h;
        u2 = act_get(uint64_t(p.state), s);
        u1 = act_get(uint64_t(p.state), s + p.H);
    } else {
        u2 = u_at(c0 + j0 - 2u, h);
        u1 = u_at(c0 + j0 - 1u, h);
    }
    [[unroll]] for (uint i = 0u; i < J; i++) {
        uint j = j0 + i;
        if (j >= n) break;
        float u = u_at(c0 + j, h);
        put_y(c0 + j, h, w, u2, u1, u);
        u2 = u1;
        u1 = u;
    }
    if (j0 == 0u) { // the new state: the run's last two u (n = 1: the old u_{t-1} and u_0)
        act_set(uint64_t(p.state), s, n <= J ? u2 : u_at(c0 + n - 2u, h));
        act_set(uint64_t(p.state), s + p.H, n <= J ? u1 : u_at(c0 + n - 1u, h));
    }
}

void main()
{
    uint h = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y, j0 = gl_WorkGroupID.z * J;
    if (h >= p.H || r >= p.n_runs) return;
    vec3 w = vec3(wget(p.w, p.wdtype, p.H, 3u, h, 0u), wget(p.w, p.wdtype, p.H, 3u, h, 1u),
                  wget(p.w, p.wdtype, p.H, 3u, h, 2u));
    conv(h, r, j0, w);
}
