// lanes4.glsl - sum and max over 4 neighbour lanes of a subgroup (lanes 4i .. 4i+3), by shuffle
// butterflies: lavapipe has no clustered subgroup operations. Every lane of the 4 gets the result;
// all 4 must be active. The including shader enables GL_KHR_shader_subgroup_shuffle.
#ifndef LFM2_LANES4_GLSL
#define LFM2_LANES4_GLSL

float lanes_add(float x)
{
    x += subgroupShuffleXor(x, 1u);
    return x + subgroupShuffleXor(x, 2u);
}

float lanes_max(float x)
{
    x = max(x, subgroupShuffleXor(x, 1u));
    return max(x, subgroupShuffleXor(x, 2u));
}

#endif
