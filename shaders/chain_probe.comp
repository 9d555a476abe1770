#version 460
// chain_probe.comp - the chained-dispatch self-test (engine.c chain_selftest, LFM2_CHAIN): chained
// links of G workgroups each, run once a device before its first chained step, in stages of one
// and of two side by side. A link waits (chain.glsl); then each workgroup reads one word that a
// workgroup of a link of the stage before (another one: the index is scattered) stored before its
// signal, expects that link's value, and stores its own value for each of its own G words, through
// coherent pointers (no barrier makes them visible). A word that is not there (the device ran a link
// before the stage before had finished, or did not make its stores visible) raises flag. A wait that
// gives up raises the chain's err (no forward progress). src, dst: f32 [G] (src 0: the first link),
// zeroed before; flag: u32, zeroed before.
#include "common.glsl"
#define CHAIN_ID 0 // chain.glsl: CHAIN (the host makes this pipeline with CHAIN = 1 only)
#include "chain.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint64_t src;
    uint64_t dst;
    U32Buf flag;
    float expect; // the value the link that wrote src stored
    float value;  // this link's
    uint groups;  // G
    layout(offset = CHAIN_AT) uint64_t chain; // chain.glsl
} p;

void main()
{
    chain_wait(CHAIN_WORD);
    uint wg = gl_WorkGroupID.x;
    if (gl_LocalInvocationIndex == 0u) {
        if (p.src != 0ul) {
            uint from = uint((uint64_t(wg) * 2654435761ul + 1ul) % uint64_t(p.groups)); // scattered
            if (act_get(p.src, from) != p.expect) atomicOr(p.flag.v[0], 1u);
        }
        act_set(p.dst, wg, p.value);
    }
    chain_signal(CHAIN_WORD);
}
