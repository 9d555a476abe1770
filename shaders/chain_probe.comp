#version 460
// chain_probe.comp - the chained-dispatch self-test (engine.c chain_selftest, LFM2_CHAIN): a chain
// of these links, G workgroups each, run once a device before its first chained step. Link i
// (0-based) waits (chain.glsl); then each workgroup reads one word that a workgroup of link i - 1
// (another one: the index is scattered) stored before its signal, and stores its own, i + 1, through
// coherent pointers (no barrier makes them visible). A word that is not there (the device ran a link
// before the one before had finished, or did not make its stores visible) raises flag. A wait that
// gives up raises the chain's err (no forward progress). words: f32 [links][G], zeroed before;
// flag: u32, zeroed before.
#include "common.glsl"
#define CHAIN_ID 0 // chain.glsl: CHAIN (the host makes this pipeline with CHAIN = 1 only)
#include "chain.glsl"

layout(local_size_x = 64) in;

layout(push_constant) uniform Push {
    uint64_t words;
    U32Buf flag;
    uint link;   // i
    uint groups; // G
    layout(offset = CHAIN_AT) uint64_t chain; // chain.glsl
} p;

void main()
{
    chain_wait(CHAIN_WORD);
    uint wg = gl_WorkGroupID.x;
    if (gl_LocalInvocationIndex == 0u) {
        if (p.link > 0u) {
            uint from = uint((uint64_t(wg) * 2654435761ul + 1ul) % uint64_t(p.groups)); // scattered
            if (act_get(p.words, (p.link - 1u) * p.groups + from) != float(p.link)) atomicOr(p.flag.v[0], 1u);
        }
        act_set(p.words, p.link * p.groups + wg, float(p.link + 1u));
    }
    chain_signal(CHAIN_WORD);
}
