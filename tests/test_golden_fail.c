/* test_golden_fail.c - the golden check can fail: a copy of a fixture's golden with one logit
 * changed (sequence 1, token 5) must fail exactly the three checks of sequence 1 (decode, prefill,
 * mixed) and exit 4, while the untouched sequences still pass. For every family with an engine
 * (lfm2-tiny, qwen35-tiny, glm-ocr-tiny), in the batch plan at exact's bar (1e-3) and in the wide
 * plan in serving precision at its bar (4e-3: the changed logit, >= 1e-2 off, still fails). */
#include <stdlib.h>
#include <string.h>

#include "loader.h"
#include "testutil.h"

/* The run of a golden with logits[1][5][7] changed (flags: after --golden; header: how its header
 * line ends): exit 4, the three checks of sequence 1 fail, the others pass. */
static void golden_fails(const char *fx, const char *model, const char *golden, const char *flags,
                         const char *header)
{
    static char out[1 << 16];
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "%s --model %s/%s --full --golden %s%s", getenv("LFM2_BIN"), fx,
             model, golden, flags);
    int rc = t_run(cmd, out, sizeof out);
    T_CHECK(rc == 4, "%s%s: exit %d, expected 4\n%s", model, flags, rc, out);
    const char *fails[] = {"golden decode seq 1 logits", "golden prefill seq 1 logits",
                           "golden mixed seq 1 logits"};
    for (size_t i = 0; i < ARRAY_LEN(fails); i++) {
        const char *line = strstr(out, fails[i]);
        const char *eol = line ? strchr(line, '\n') : NULL;
        T_CHECK(line && eol && eol - line > 4 && !strncmp(eol - 4, "FAIL", 4),
                "%s%s: '%s' should FAIL\n%s", model, flags, fails[i], out);
    }
    T_CHECK(strstr(out, "golden decode seq 0 logits") && strstr(out, "golden: 6/9 checks passed"),
            "%s%s: others pass\n%s", model, flags, out);
    /* stdout's header line before the checks: the device and driver that ran them, the golden's
     * shape, plan, precision and bar (out holds stderr's error line too, where the shell put it) */
    const char *hdr = strstr(out, "lfm2-profile-stage " LFM2_VERSION "  device: "),
               *first = strstr(out, "golden decode seq 0");
    T_CHECK(hdr && first && hdr < first && strstr(hdr, "  driver: ") &&
                strstr(hdr, ": 3 sequences of 16 tokens, layers 0:") && strstr(hdr, header),
            "%s%s: golden header\n%s", model, flags, out);
}

static void one_logit_changed(const char *fx, const char *model)
{
    char src_path[512], dst_path[512];
    snprintf(src_path, sizeof src_path, "%s/%s/golden.safetensors", fx, model);
    snprintf(dst_path, sizeof dst_path, "%s/golden-one-logit-%s.safetensors", t_tmpdir(), model);

    struct model_source s;
    struct err e;
    T_CHECK(source_open(&s, src_path, &e) == ST_OK, "open %s: %s", src_path, e.msg);
    const struct tensor_view *lg = source_find(&s, "logits");
    T_CHECK(lg && lg->dtype == DT_F32 && lg->n_dims == 3, "%s: logits tensor", model);
    if (!lg) return;
    size_t size = s.maps[0].size, off = (size_t)(lg->data - s.maps[0].base);
    uint8_t *copy = malloc(size);
    memcpy(copy, s.maps[0].base, size);
    int64_t T = lg->shape[1], V = lg->shape[2];
    size_t at = off + 4 * (size_t)((1 * T + 5) * V + 7); /* logits[1][5][7] */
    float v;
    memcpy(&v, copy + at, 4);
    v += 1.0f; /* LFM2 logits reach tens, GLM's a few units: ≥ 1e-2 relative, ten times the
                  tolerance */
    memcpy(copy + at, &v, 4);
    source_close(&s);
    T_CHECK(t_write_file(dst_path, copy, size) == 0, "write %s", dst_path);
    free(copy);
    golden_fails(fx, model, dst_path, "", ", batch plan, precision exact (tolerance 1e-03), gemm path ");
    golden_fails(fx, model, dst_path, " --wide --precision serving",
                 ", wide plan, precision serving (tolerance 4e-03), gemm path ");
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    const char *fx = argc > 1 ? argv[1] : "tests/fixtures";
    T_CASE("lfm2", "", one_logit_changed(fx, "lfm2-tiny"));
    T_CASE("qwen35", "", one_logit_changed(fx, "qwen35-tiny"));
    T_CASE("glm_ocr", "", one_logit_changed(fx, "glm-ocr-tiny"));
    return t_finish();
}
