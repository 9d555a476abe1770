/* test_spirv.c - a check of every embedded kernel's SPIR-V that needs no device: no variable holds
 * a PhysicalStorageBuffer pointer without an AliasedPointer or RestrictPointer decoration. SPIR-V
 * requires one; Debian 12's glslang leaves it off for a buffer reference returned by a function in
 * some kernels (bench/28), and the validation layers only see the kernels a device can run, so the
 * cooperative-matrix kernels (which lavapipe cannot make) would reach the H200 unchecked. Also:
 * every blob is whole SPIR-V (magic, word count, instruction lengths). The scanner is checked on
 * two hand-made modules, one with the fault. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common.h"
#include "shaders.h"
#include "testutil.h"

enum {
    SPV_MAGIC = 0x07230203,
    OP_TYPE_POINTER = 32,
    OP_VARIABLE = 59,
    OP_DECORATE = 71,
    SC_PHYSICAL_STORAGE_BUFFER = 5349,
    DEC_RESTRICT_POINTER = 5355,
    DEC_ALIASED_POINTER = 5356,
};

/* The scan: returns the number of undecorated pointer variables (first one's id in *bad_id), or -1
 * with *why set when the words are not well-formed SPIR-V. */
static int scan(const uint32_t *w, size_t n, uint32_t *bad_id, const char **why)
{
    if (n < 5 || w[0] != SPV_MAGIC) {
        *why = "no SPIR-V header";
        return -1;
    }
    uint32_t bound = w[3];
    if (bound == 0 || bound > (1u << 22)) {
        *why = "id bound out of range";
        return -1;
    }
    /* per id: 1 a pointer type into PhysicalStorageBuffer, 2 a pointer type to such a pointer
     * (a variable of that type holds one), 4 decorated Aliased/RestrictPointer */
    unsigned char *flags = calloc(bound, 1);
    uint32_t *var_ids = calloc(n, sizeof *var_ids);
    CHECK(flags && var_ids);
    size_t n_vars = 0;
    int rc = 0;
    for (size_t i = 5; i < n;) {
        uint32_t op = w[i] & 0xffff, len = w[i] >> 16;
        if (len == 0 || len > n - i) {
            *why = "instruction runs past the end";
            rc = -1;
            break;
        }
        const uint32_t *a = w + i + 1;
        if (op == OP_TYPE_POINTER && len >= 4 && a[0] < bound && a[2] < bound) {
            if (a[1] == SC_PHYSICAL_STORAGE_BUFFER) flags[a[0]] |= 1;
            if (flags[a[2]] & 1) flags[a[0]] |= 2; /* the pointee is declared before the pointer */
        }
        if (op == OP_DECORATE && len >= 3 && a[0] < bound &&
            (a[1] == DEC_ALIASED_POINTER || a[1] == DEC_RESTRICT_POINTER))
            flags[a[0]] |= 4;
        if (op == OP_VARIABLE && len >= 4 && a[0] < bound && a[1] < bound && (flags[a[0]] & 2))
            var_ids[n_vars++] = a[1];
        i += len;
    }
    for (size_t v = 0; rc >= 0 && v < n_vars; v++)
        if (!(flags[var_ids[v]] & 4)) {
            if (rc == 0) *bad_id = var_ids[v];
            rc++;
        }
    free(var_ids);
    free(flags);
    return rc;
}

/* A module of the shape in question: %f = float, %p = PSB pointer to %f, %pp = Function pointer to
 * %p, %v = variable of %pp, decorated AliasedPointer when `decorated`. */
static void check_scanner(void)
{
    for (int decorated = 0; decorated < 2; decorated++) {
        uint32_t w[32] = {SPV_MAGIC, 0x00010500, 0, 8, 0};
        size_t n = 5;
        if (decorated) {
            w[n++] = 3u << 16 | OP_DECORATE;
            w[n++] = 5; /* %v */
            w[n++] = DEC_ALIASED_POINTER;
        }
        w[n++] = 3u << 16 | 22; /* OpTypeFloat %2 32 */
        w[n++] = 2;
        w[n++] = 32;
        w[n++] = 4u << 16 | OP_TYPE_POINTER; /* %3 PSB %2 */
        w[n++] = 3;
        w[n++] = SC_PHYSICAL_STORAGE_BUFFER;
        w[n++] = 2;
        w[n++] = 4u << 16 | OP_TYPE_POINTER; /* %4 Function %3 */
        w[n++] = 4;
        w[n++] = 7;
        w[n++] = 3;
        w[n++] = 4u << 16 | OP_VARIABLE; /* %5 = OpVariable %4 Function */
        w[n++] = 4;
        w[n++] = 5;
        w[n++] = 7;
        uint32_t bad = 0;
        const char *why = "";
        int rc = scan(w, n, &bad, &why);
        T_CHECK(rc == (decorated ? 0 : 1) && (decorated || bad == 5),
                "scanner on a hand-made module (%s): %d undecorated (id %u), expected %d",
                decorated ? "decorated" : "undecorated", rc, bad, decorated ? 0 : 1);
        /* cut short: an instruction past the end is refused, not read */
        T_CHECK(scan(w, n - 2, &bad, &why) == -1, "scanner on a truncated module: refused");
    }
}

/* Every embedded blob: whole words, well-formed, no undecorated buffer-reference variable. */
static void check_blobs(void)
{
    int n = 0;
    for (const struct shader_blob *b = shader_blobs; b->name; b++, n++) {
        uint32_t bad = 0;
        const char *why = "";
        T_CHECK(b->size % 4 == 0, "%s: %zu bytes, not whole words", b->name, b->size);
        int rc = scan(b->code, b->size / 4, &bad, &why);
        T_CHECK(rc >= 0, "%s: %s", b->name, why);
        T_CHECK(rc <= 0,
                "%s: %d variables hold a buffer reference with no AliasedPointer/RestrictPointer (first: %%%u)",
                b->name, rc, bad);
    }
    T_CHECK(n > 80, "%d embedded kernels, expected every variant (more than 80)", n);
    printf("%d embedded kernels scanned\n", n);
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    T_CASE("scanner", "", check_scanner());
    T_CASE("blobs", "", check_blobs());
    return t_finish();
}
