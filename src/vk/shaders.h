/* shaders.h - the SPIR-V of every shader, embedded at build time (CMake: shaders/, variants.txt). */
#ifndef LFM2_SHADERS_H
#define LFM2_SHADERS_H
#include <stddef.h>
#include <stdint.h>

struct shader_blob {
    const char *name;     /* file name without .comp, or the variant's name */
    const uint32_t *code; /* SPIR-V words */
    size_t size;          /* bytes */
};
/* Terminated by an entry whose name is NULL. */
extern const struct shader_blob shader_blobs[];

#endif
