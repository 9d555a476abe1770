// chain.glsl - chained dispatches: a dispatch waits on a flag its predecessors raise instead of a
// pipeline barrier (plan.h, "chained dispatches"; bench/28, bench/29).
//
// An untimed plan may record a run of consecutive dispatches with no barrier between them. Each
// carries in its push block, at byte CHAIN_AT, the 64-bit word `chain`: 0 when it is not chained
// (a barrier orders it), else the device address of the step's chain counters (bits 6..47, the
// counters 64-byte aligned), its place s in its stage (bits 0..2), the waiting thread's pause b
// between two reads (bits 3..5: 0 none, else 4 << b dependent integer steps; LFM2_CHAIN_BACKOFF,
// a bench/29 experiment on what the polling costs the running link) and `need` (bits 48..63): the
// links of the stages before its own. A stage is one link, or up to CHAIN_SIBS consecutive links
// with no data between them (products of one input), which run side by side. A link
//   1. issues the loads that depend on no earlier dispatch (weights), then
//   2. waits until `done` >= need (every link of the earlier stages finished: links finish in
//      stage order, so the count of finished links says which), one thread a workgroup spinning
//      on a coherent load, at most CHAIN_MAX_SPINS reads (then it raises `err` and goes on: the
//      host reports the step as failed; Vulkan promises no forward progress across dispatches,
//      in-order devices give it in practice since every workgroup of an earlier link starts
//      before any of a later one),
//   3. reads activations through coherent pointers (no barrier invalidated any cache for it),
//   4. when its last workgroup is done (`groups[s]` counts them), sets groups[s] back to 0 and
//      adds 1 to `done`.
// No link writes anything before its wait, so a link never overwrites what an earlier stage reads.
#ifndef LFM2_CHAIN_GLSL
#define LFM2_CHAIN_GLSL

#include "common.glsl"

#define CHAIN_AT 120
#define CHAIN_MAX_SPINS (1u << 20)

#define CHAIN_SIBS 8 // links of one stage (plan.h PLAN_MAX_SIBS)
layout(buffer_reference, std430, buffer_reference_align = 4) coherent volatile buffer ChainBuf {
    uint done;               // links finished
    uint err;                // 1: a wait gave up
    uint pad[2];
    uint groups[CHAIN_SIBS]; // workgroups finished of the running stage's link s
};
// coherent twins of common.glsl's pointer types, for activations a chained link reads or writes
layout(buffer_reference, std430, buffer_reference_align = 4) coherent buffer CF32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer CVec4Buf { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) coherent buffer CUVec4Buf { uvec4 v[]; };

// The including kernel defines CHAIN_ID, its free constant_id, before the include: CHAIN = 1 makes
// its pipeline one for chained links (its push block then has `uint64_t chain` at CHAIN_AT).
layout(constant_id = CHAIN_ID) const uint CHAIN = 0;
// The chain word (0 where the pipeline is not made for chained links: the host pushes no such field)
#define CHAIN_WORD (CHAIN != 0u ? p.chain : 0UL)

// Activations (what earlier dispatches of the step write): element i of the array at base, of
// floats (act_get, act_set), vec4s (act_get4, act_set4) or uvec4s (act_getu4, act_setu4: 16-byte
// units stored as bits, gemm_xprep.comp's prepared x), through a coherent pointer where the
// pipeline is made for chained links (CHAIN = 1). CHAIN = 2 (LFM2_CHAIN=2, a bench/28 experiment)
// chains with plain pointers, counting on the wait's device fence to make the predecessor's writes
// visible: outside what Vulkan promises.
#define CHAIN_ACCESSORS(T, Buf, CBuf, get, set)                                                     \
    T get(uint64_t base, uint i)                                                                   \
    {                                                                                              \
        if (CHAIN == 1u) return CBuf(base).v[i];                                                   \
        return Buf(base).v[i];                                                                     \
    }                                                                                              \
    void set(uint64_t base, uint i, T v)                                                           \
    {                                                                                              \
        if (CHAIN == 1u) CBuf(base).v[i] = v;                                                      \
        else Buf(base).v[i] = v;                                                                   \
    }
CHAIN_ACCESSORS(float, F32Buf, CF32Buf, act_get, act_set)
CHAIN_ACCESSORS(vec4, Vec4Buf, CVec4Buf, act_get4, act_set4)
CHAIN_ACCESSORS(uvec4, UVec4Buf, CUVec4Buf, act_getu4, act_setu4)

// (a macro: a function returning a buffer reference leaves an undecorated pointer variable in some
// kernels that SPIR-V validation rejects, with Debian 12's glslang)
#define chain_buf(chain) ChainBuf((chain) & 0xffffffffffc0UL)
uint chain_need(uint64_t chain) { return uint(chain >> 48); }
uint chain_sib(uint64_t chain) { return uint(chain) & (CHAIN_SIBS - 1u); }
uint chain_pause(uint64_t chain)
{
    uint b = (uint(chain) >> 3) & 7u;
    return b == 0u ? 0u : 4u << b;
}

// Step 2: every invocation of the workgroup calls it (a workgroup barrier inside).
void chain_wait(uint64_t chain)
{
    if (chain == 0UL) return;
    if (gl_LocalInvocationIndex == 0u) {
        uint need = chain_need(chain), pause = chain_pause(chain), h = need;
        for (uint spins = 0u; spins < CHAIN_MAX_SPINS && chain_buf(chain).done < need; spins++) {
            for (uint j = 0u; j < pause; j++) h = h * 1664525u + 1013904223u;
            if (h == 0x9e3779b9u) spins++; // keeps the pause's steps (a rare extra count is harmless)
        }
        if (chain_buf(chain).done < need) atomicOr(chain_buf(chain).err, 1u);
    }
    memoryBarrierBuffer();
    barrier();
}

// Step 4: every invocation calls it after its last write.
void chain_signal(uint64_t chain)
{
    if (chain == 0UL) return;
    memoryBarrierBuffer();
    barrier();
    if (gl_LocalInvocationIndex == 0u) {
        uint total = gl_NumWorkGroups.x * gl_NumWorkGroups.y * gl_NumWorkGroups.z;
        uint s = chain_sib(chain);
        if (atomicAdd(chain_buf(chain).groups[s], 1u) + 1u == total) {
            chain_buf(chain).groups[s] = 0u;
            memoryBarrierBuffer();
            atomicAdd(chain_buf(chain).done, 1u);
        }
    }
}

#endif
