// common.glsl - shared header of every kernel: extensions and buffer-reference types.
//
// Conventions (gpu.h): there are no descriptor sets. Every tensor is passed to a kernel as a
// 64-bit buffer device address in the push constants (at most 128 bytes), declared with one of
// the pointer types below, e.g.
//
//     #include "common.glsl"
//     layout(local_size_x = 256) in;
//     layout(push_constant) uniform Push {
//         F32Buf x;      // (n) input
//         F32Buf y;      // (n) output
//         uint n;
//     } p;
//     void main() { uint i = gl_GlobalInvocationID.x; if (i < p.n) p.y.v[i] = 2.0 * p.x.v[i]; }
//
// Pointer members are 8 bytes and 8-byte aligned in the push block (std430 rules): put them first,
// then the 32-bit scalars. The C side mirrors the block with uint64_t fields (gpu_buf.addr, plus
// a byte offset when a kernel starts inside a buffer: addr + off must keep the type's alignment).
// An address can also be built in the shader: F32Buf(uint64_t(p.x) + 4ul * k).
// Specialization constants are uint32 values for constant_id 0..7 (gpu_pipeline's spec[]).
#ifndef LFM2_COMMON_GLSL
#define LFM2_COMMON_GLSL

#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int64 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require

// Arrays of elements; the alignment is the element's size (16 for the vector types).
layout(buffer_reference, std430, buffer_reference_align = 4) buffer F32Buf { float v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Vec4Buf { vec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer U32Buf { uint v[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer UVec4Buf { uvec4 v[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) buffer I32Buf { int v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer U16Buf { uint16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 2) buffer F16Buf { float16_t v[]; };
layout(buffer_reference, std430, buffer_reference_align = 1) buffer U8Buf { uint8_t v[]; };

// Accessors for activations (what earlier dispatches of the step write): element i of the array at base.
float act_get(uint64_t base, uint i) { return F32Buf(base).v[i]; }
void act_set(uint64_t base, uint i, float v) { F32Buf(base).v[i] = v; }
vec4 act_get4(uint64_t base, uint i) { return Vec4Buf(base).v[i]; }
void act_set4(uint64_t base, uint i, vec4 v) { Vec4Buf(base).v[i] = v; }
uvec4 act_getu4(uint64_t base, uint i) { return UVec4Buf(base).v[i]; }
void act_setu4(uint64_t base, uint i, uvec4 v) { UVec4Buf(base).v[i] = v; }

#endif
