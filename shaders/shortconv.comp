#version 460
// shortconv.comp - the middle of the LFM2 short-conv block over one step. For each run (the
// columns of one slot, at successive positions) and channel h:
//   u_t = B_t ⊙ X_t;  conv_t = w0·u_{t-2} + w1·u_{t-1} + w2·u_t;  y_t = C_t ⊙ conv_t
// with the u before the run taken from the slot's committed state.
// bcx: f32 [cols][3H] = [B | C | X]; w: [H][3] F32/F16/BF16 (tap 2 = current token);
// state: f32 [slots][n_snap][2][H] ([0] = u_{t-2}, [1] = u_{t-1}); entry cur = slots[slot].cur
// (struct slot_meta, 16 bytes a slot; slots = 0: entry 0) holds the committed state;
// y: f32 [cols][H].
// mode 0 (batch): the run's last two u go back into entry cur.
// mode 1 (spec, kind shortconv.snap): after column i of the run the window as it stands then goes
//   into entry (cur + i + 1) mod n_snap, so snapshot i+1 exists for every prefix the engine may
//   accept; entry cur (snapshot 0) is left as it was.
// mode 2: no state write (test hook LFM2_TEST_SKIP_SNAPSHOT: a broken snapshot).
// Grid: x over channels (64 a group), y = run. One invocation owns (run, channel): race-free.
#include "kern_common.glsl"

layout(local_size_x = 64) in;

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
    uint mode;
    uint pad;
} p;

void main()
{
    uint h = gl_GlobalInvocationID.x, r = gl_WorkGroupID.y;
    if (h >= p.H || r >= p.n_runs) return;
    uint slot = p.runs.v[4u * r], c0 = p.runs.v[4u * r + 1u], n = p.runs.v[4u * r + 2u];
    uint cur = uint64_t(p.slots) == 0ul ? 0u : p.slots.v[4u * slot];
    float w0 = wget(p.w, p.wdtype, p.H, 3u, h, 0u);
    float w1 = wget(p.w, p.wdtype, p.H, 3u, h, 1u);
    float w2 = wget(p.w, p.wdtype, p.H, 3u, h, 2u);
    uint base = slot * p.n_snap * 2u * p.H + h; // entry e of the slot at base + e·2H
    uint s = base + cur * 2u * p.H;
    float u2 = act_get(uint64_t(p.state), s), u1 = act_get(uint64_t(p.state), s + p.H);
    for (uint c = c0; c < c0 + n; c++) {
        uint b = c * 3u * p.H + h;
        float u = act_get(uint64_t(p.bcx), b) * act_get(uint64_t(p.bcx), b + 2u * p.H);
        act_set(uint64_t(p.y), c * p.H + h, act_get(uint64_t(p.bcx), b + p.H) * (w0 * u2 + w1 * u1 + w2 * u));
        u2 = u1;
        u1 = u;
        if (p.mode == 1u) {
            uint sn = base + ((cur + c - c0 + 1u) % p.n_snap) * 2u * p.H;
            act_set(uint64_t(p.state), sn, u2);
            act_set(uint64_t(p.state), sn + p.H, u1);
        }
    }
    if (p.mode == 0u) {
        act_set(uint64_t(p.state), s, u2);
        act_set(uint64_t(p.state), s + p.H, u1);
    }
}
