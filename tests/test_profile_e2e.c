/* test_profile_e2e.c - the profiler end to end on lavapipe: lfm2-tiny profiled in the decode and
 * prefill shapes, on whole and split shards; every report section is printed, the JSON parses back
 * with every documented field, the Chrome trace has one slice per dispatch, and --compare of a
 * file against itself passes. Timing values are never asserted (they are lavapipe's). */
#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>

#include "profile.h"
#include "testutil.h"

static char out[1 << 20];

static int run(const char *args)
{
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "%s %s", getenv("LFM2_BIN"), args);
    int rc = t_run(cmd, out, sizeof out);
    if (rc) fprintf(stderr, "%s\n-> exit %d\n%s\n", cmd, rc, out);
    return rc;
}

/* Columns the head's norm ran over (its group count), -1 when the profile has no head.rmsnorm. */
static int head_norm_groups(const cJSON *j)
{
    const cJSON *d, *ds = j ? t_json_at(j, "dispatches") : NULL;
    cJSON_ArrayForEach(d, ds)
    {
        const cJSON *k = t_json_at(d, "kind"), *g = t_json_at(d, "groups");
        if (cJSON_IsString(k) && !strcmp(k->valuestring, "head.rmsnorm") && cJSON_IsArray(g))
            return cJSON_GetArrayItem(g, 0)->valueint;
    }
    return -1;
}

/* Shared by the cases: the fixtures folder, the arguments of a run, three files of this run's
 * temporary folder (each case writes the files it reads). */
static const char *fx;
static char args[2048], a_json[512], b_json[512], t_json[512];

/* decode shape, whole model, head and gap probe */
static void case_decode(void)
{
    /* --units us: the seed's headings word for word, as a script pins them (auto may print ms on lavapipe) */
    snprintf(args, sizeof args,
             "--model %s/lfm2-tiny --full --cols 4 --pos 8 --reps 3 --logits --gap-probe --units us --json %s --trace %s", fx,
             a_json, t_json);
    T_CHECK(run(args) == 0, "profile run");
    const char *sections[] = {"lfm2-profile-stage", "device:", "timestamps", "-- summary --", "tok/s at 4 cols: ",
                              "with it (from kernel time)\n", "× the weight-bytes floor", "-- head kernels", "== batch step profile: 4 cols, pos 8, layers 0:6",
                              "GPU busy", "µs/step", "tok/s/stage", "+ LM head", "-- gap probe", "wall 1×", "wall 2×",
                              "marginal pass", "kernel-time sum", "inter-dispatch", "fixed submit+poll", "VERDICT",
                              "timestamps add", "-- LM head (vocab 1000) --", "-- by kernel --",
                              "-- top single dispatches --", "matmul_swiglu.bf16", "matmul_shortconv.bf16", "attn.decode_prep",
                              "embed.bf16", "head.matmul.bf16", "head.rmsnorm"};
    for (size_t i = 0; i < ARRAY_LEN(sections); i++) T_CHECK(strstr(out, sections[i]), "section '%s' missing", sections[i]);

    cJSON *j = t_json_file(a_json);
    T_CHECK(j, "JSON parses");
    const char *fields[] = {"tool", "version", "args", "device.name", "device.driver", "device.api",
                            "device.timestamp_period_ns", "device.timestamp_valid_bits", "device.copy_gbps",
                            "model.family", "model.n_layers", "model.hidden", "model.vocab", "model.dtype",
                            "model.source", "shard.a", "shard.b", "shape.plan", "shape.cols", "shape.pos",
                            "shape.slots", "shape.logits", "busy_us.mean", "busy_us.median", "busy_us.min",
                            "busy_us.reps", "head_us.median", "wall_us.median", "dispatches", "by_kind",
                            "gap_probe.wall1_us", "gap_probe.wall2_us", "gap_probe.marginal_us",
                            "gap_probe.kernel_sum_us", "gap_probe.gaps_us", "gap_probe.gaps_share",
                            "gap_probe.fixed_us", "gap_probe.verdict", "lm_head.lm_head_us", "lm_head.gbps",
                            "lm_head.gbps_f16", "lm_head.gbps_q4_0", "lm_head.disagree"};
    for (size_t i = 0; j && i < ARRAY_LEN(fields); i++) T_CHECK(t_json_at(j, fields[i]), "JSON field %s missing", fields[i]);
    int n_disp = 0;
    if (j) {
        const cJSON *d = t_json_at(j, "dispatches");
        n_disp = cJSON_GetArraySize(d);
        /* lfm2-tiny: embed + 4 conv layers x 4 (the short conv in in_proj's epilogue) + 2 attention
         * layers x 5 (q/k/v as one product at 4 columns, the prep fused into attention) = 27 layer
         * dispatches, + 2 head */
        T_CHECK(n_disp == 29, "%d dispatches, expected 29", n_disp);
        /* the gap probe's plan (layers, no head): 27 dispatches, each one stage here (every dispatch of a
         * one-sequence LFM2 step reads what the one before wrote) */
        const cJSON *gd = t_json_at(j, "gap_probe.dispatches"), *gb = t_json_at(j, "gap_probe.barriers");
        T_CHECK(gd && gb && gd->valueint == 27 && gb->valueint == 27, "gap probe plan: %d dispatches, %d barriers",
                gd ? gd->valueint : -1, gb ? gb->valueint : -1);
        T_CHECK(strstr(out, "(the plan: 27 dispatches in 27 stages"), "gap probe plan line\n%s", out);
        const cJSON *e;
        cJSON_ArrayForEach(e, d)
        {
            T_CHECK(t_json_at(e, "kind") && t_json_at(e, "layer") && t_json_at(e, "op") && t_json_at(e, "groups") && t_json_at(e, "bytes") &&
                        t_json_at(e, "us.reps") && cJSON_GetArraySize(t_json_at(e, "us.reps")) == 3,
                    "dispatch fields");
            /* the kernel variant: its pipeline and constants (none for some: the embedding) */
            const cJSON *pl = t_json_at(e, "pipeline"), *sp = t_json_at(e, "spec");
            T_CHECK(cJSON_IsString(pl) && pl->valuestring[0] && cJSON_IsArray(sp) &&
                        cJSON_GetArraySize(sp) <= PROF_MAX_SPEC,
                    "dispatch pipeline and spec");
        }
        {
            /* the matrix products name their shader module and weight type */
            bool mm = false;
            cJSON_ArrayForEach(e, d)
            {
                const cJSON *k = t_json_at(e, "kind"), *pl = t_json_at(e, "pipeline");
                if (cJSON_IsString(k) && !strcmp(k->valuestring, "matmul.bf16") && cJSON_IsString(pl))
                    mm = mm || strstr(pl->valuestring, "bf16") != NULL;
            }
            T_CHECK(mm, "a matmul.bf16 dispatch names a bf16 pipeline");
        }
        {
            /* attention reads the KV pool: each of the 4 decode columns (slots) attends to keys
             * 0..8, lfm2-tiny's one kv head of 64 dims costs 2 x 64 x 4 B a key: 36 x 512 B a
             * dispatch; every other dispatch reads none, and the kind's GB/s counts it */
            int n_attn = 0;
            cJSON_ArrayForEach(e, d)
            {
                const cJSON *k = t_json_at(e, "kind"), *kv = t_json_at(e, "kv_bytes");
                bool attn = cJSON_IsString(k) && !strncmp(k->valuestring, "attn.decode", 11);
                n_attn += attn;
                T_CHECK(cJSON_IsNumber(kv) && kv->valuedouble == (attn ? 36.0 * 512.0 : 0.0), "%s: kv_bytes %g",
                        cJSON_IsString(k) ? k->valuestring : "?", cJSON_IsNumber(kv) ? kv->valuedouble : -1.0);
            }
            T_CHECK(n_attn == 2, "%d attention dispatches, expected lfm2-tiny's 2", n_attn);
            const cJSON *bk = t_json_at(j, "by_kind"), *row;
            bool seen = false;
            cJSON_ArrayForEach(row, bk)
            {
                const cJSON *k = t_json_at(row, "kind");
                if (!cJSON_IsString(k) || strncmp(k->valuestring, "attn.decode", 11)) continue;
                seen = true;
                T_CHECK(t_json_at(row, "kv_bytes")->valuedouble == 2 * 36.0 * 512.0 && t_json_at(row, "gbps")->valuedouble > 0,
                        "by_kind %s: kv_bytes and GB/s", k->valuestring);
            }
            T_CHECK(seen, "an attention row in by_kind");
        }
        T_CHECK(!strcmp(t_json_at(j, "model.family")->valuestring, "lfm2"), "family");
        T_CHECK(t_json_at(j, "shard.b")->valueint == 6 && t_json_at(j, "shape.cols")->valueint == 4, "shard/shape");
        cJSON_Delete(j);
    }
    struct profile p;
    struct err e;
    T_CHECK(report_json_read(a_json, &p, &e) == ST_OK, "report_json_read: %s", e.msg);
    T_CHECK(p.n_dispatches == 29 && p.n_kinds >= 7, "read back %d dispatches %d kinds", p.n_dispatches, p.n_kinds);
    profile_free(&p);

    cJSON *t = t_json_file(t_json);
    T_CHECK(t, "trace parses");
    int slices = 0;
    const cJSON *ev;
    cJSON_ArrayForEach(ev, t_json_at(t, "traceEvents"))
    {
        const cJSON *ph = t_json_at(ev, "ph");
        slices += ph && cJSON_IsString(ph) && !strcmp(ph->valuestring, "X");
    }
    T_CHECK(slices == n_disp, "%d trace slices for %d dispatches", slices, n_disp);
    cJSON_Delete(t);

    snprintf(args, sizeof args, "--compare %s --current %s", a_json, a_json);
    T_CHECK(run(args) == 0, "compare against itself");
}

/* prefill shape, markdown */
static void case_prefill_markdown(void)
{
    snprintf(args, sizeof args, "--model %s/lfm2-tiny --full --cols 6 --slots 2 --pos 5 --reps 2 --markdown", fx);
    T_CHECK(run(args) == 0, "prefill profile");
    T_CHECK(strstr(out, "attn.prefill") && strstr(out, "|"), "prefill markdown");
}

/* split shards: a first stage without head, a last stage fed seeded hidden_in */
static void case_split_shards(void)
{
    snprintf(args, sizeof args, "--model %s/lfm2-tiny --layers 0:3 --cols 4 --pos 4 --reps 2 --gap-probe", fx);
    T_CHECK(run(args) == 0 && strstr(out, "layers 0:3") && !strstr(out, "-- LM head"), "stage 0:3");
    snprintf(args, sizeof args, "--model %s/lfm2-tiny/model-q4_0.gguf --layers 3:6 --cols 4 --pos 4 --reps 2 --logits", fx);
    T_CHECK(run(args) == 0 && strstr(out, "head.matmul.q4_0") && !strstr(out, "embed."), "stage 3:6 q4_0");
}

/* the trace of a stage without a head names no LM-head thread */
static void case_trace_no_head(void)
{
    snprintf(args, sizeof args, "--model %s/lfm2-tiny --layers 0:3 --cols 2 --pos 2 --reps 2 --trace %s", fx, t_json);
    T_CHECK(run(args) == 0, "trace without head");
    cJSON *t = t_json_file(t_json);
    T_CHECK(t, "trace parses");
    char *txt = t ? cJSON_PrintUnformatted(t) : NULL;
    T_CHECK(txt && strstr(txt, "layer plan") && !strstr(txt, "LM head"), "no LM-head thread without a head");
    free(txt);
    cJSON_Delete(t);
}

/* sampled timing and the attribution mode: every dispatch gets its reps, the closure line prints */
static void case_sampled_attribution(void)
{
    snprintf(args, sizeof args,
             "--model %s/lfm2-tiny --full --cols 2 --pos 2 --reps 3 --logits --timing sampled --sample-stride 4 "
             "--attribution --json %s",
             fx, a_json);
    T_CHECK(run(args) == 0, "sampled + attribution");
    T_CHECK(strstr(out, "timing: sampled") && strstr(out, "-- attribution") && strstr(out, "closure: Σ diff") &&
                strstr(out, "head.matmul.bf16") && strstr(out, "-- gap probe"),
            "sampled + attribution report\n%s", out);
    cJSON *j = t_json_file(a_json);
    T_CHECK(j && !strcmp(t_json_at(j, "timing")->valuestring, "sampled") &&
                cJSON_GetArraySize(t_json_at(j, "dispatches[5].us.reps")) == 3 && t_json_at(j, "attribution.rows[0].diff") &&
                t_json_at(j, "attribution.closure") && t_json_at(j, "gap_probe.wall1.reps") &&
                cJSON_GetArraySize(t_json_at(j, "gap_probe.wall1.reps")) == 3,
            "sampled + attribution JSON");
    cJSON_Delete(j);
}

/* a list of widths and plans: one profile each, then the crossover table; a plan that is not
 * built yet is a row saying so */
static void case_crossover(void)
{
    snprintf(args, sizeof args, "--model %s/lfm2-tiny --full --cols 1,2,4 --plans batch,wide --pos 2 --reps 2 --logits",
             fx);
    T_CHECK(run(args) == 0, "crossover");
    const char *xt = strstr(out, "-- plan crossover");
    T_CHECK(xt && strstr(xt, "\n      1  batch") && strstr(xt, "\n      4  batch") && strstr(xt, "× floor"),
            "crossover table\n%s", out);
    T_CHECK(xt && (strstr(xt, "wide   failed") || strstr(xt, "\n      4  wide")), "wide row\n%s", out);
}

/* a device without timestamps: a clear header line, no per-dispatch tables, still the gap probe */
static void case_no_timestamps(void)
{
    setenv("LFM2_TEST_NO_TIMESTAMPS", "1", 1);
    snprintf(args, sizeof args, "--model %s/lfm2-tiny --full --cols 2 --pos 3 --reps 2 --logits --gap-probe --json %s", fx,
             a_json);
    T_CHECK(run(args) == 0, "profile without timestamps");
    T_CHECK(strstr(out, "no timestamps") && strstr(out, "-- gap probe") && strstr(out, "marginal pass") &&
                !strstr(out, "-- top single dispatches --"),
            "no-timestamp report\n%s", out);
    unsetenv("LFM2_TEST_NO_TIMESTAMPS");
    cJSON *j = t_json_file(a_json);
    T_CHECK(j && cJSON_IsFalse(t_json_at(j, "device.has_timestamps")) && t_json_at(j, "gap_probe.marginal_us"),
            "no-timestamp JSON");
    cJSON_Delete(j);
}

/* the wide plan: tagged in the header and the JSON, its own short-conv and prefill attention */
static void case_wide(void)
{
    snprintf(args, sizeof args,
             "--model %s/lfm2-tiny --full --wide --cols 8 --slots 2 --pos 5 --reps 2 --logits --json %s", fx, a_json);
    T_CHECK(run(args) == 0, "wide profile");
    T_CHECK(strstr(out, "wide=true") && strstr(out, "shortconv.wide") && strstr(out, "attn.prefill"), "wide report\n%s",
            out);
    cJSON *j = t_json_file(a_json);
    T_CHECK(j && !strcmp(t_json_at(j, "shape.plan")->valuestring, "wide"), "wide JSON shape.plan");
    /* the prefill shape samples each slot's last column: the head's norm runs over 2 columns */
    T_CHECK(j && t_json_at(j, "shape.logit_cols")->valueint == 2, "prefill shape: logit_cols 2");
    T_CHECK(head_norm_groups(j) == 2, "prefill shape: head.rmsnorm over %d columns, expected 2", head_norm_groups(j));
    T_CHECK(strstr(out, "logits: each slot's last column (2 of 8"), "the report says which columns have logits\n%s", out);
    cJSON_Delete(j);
    snprintf(args, sizeof args,
             "--model %s/lfm2-tiny --full --wide --cols 8 --slots 2 --pos 5 --reps 2 --all-logits --json %s", fx, b_json);
    T_CHECK(run(args) == 0, "wide profile, every logit");
    j = t_json_file(b_json);
    T_CHECK(j && t_json_at(j, "shape.logit_cols")->valueint == 8 && cJSON_IsTrue(t_json_at(j, "shape.logits")),
            "--all-logits: logit_cols 8");
    T_CHECK(head_norm_groups(j) == 8, "--all-logits: head.rmsnorm over %d columns, expected 8", head_norm_groups(j));
    T_CHECK(!strstr(out, "logits: each slot's last column"), "--all-logits report\n%s", out);
    cJSON_Delete(j);
    snprintf(args, sizeof args, "--compare %s --current %s", a_json, b_json);
    T_CHECK(run(args) == 2 && strstr(out, "shape logit_cols differs"), "compare refuses other logit columns\n%s", out);
}

/* Σ flops of the dispatches of one op in one layer (an op may take several dispatches: passes). */
static double op_flops(const cJSON *j, int layer, const char *op, const char *field)
{
    double sum = 0;
    const cJSON *d;
    cJSON_ArrayForEach(d, t_json_at(j, "dispatches"))
    {
        if (t_json_at(d, "layer")->valueint == layer && !strcmp(t_json_at(d, "op")->valuestring, op))
            sum += t_json_at(d, field)->valuedouble;
    }
    return sum;
}

/* FLOP counts and the arithmetic roof in the JSON and the report: lfm2-tiny (hidden 128, ffn 256,
 * 2 q heads of 64, vocab 1000), exact FLOPs per op for the batch and the wide plan; lavapipe has no
 * cooperative matrices, so the roof is the FMA twin's and executed FLOPs equal the useful ones. */
static void case_flops_roof(void)
{
    static const struct {
        const char *plan; /* the shape's flags */
        int cols;
        double pairs; /* (column, key) pairs of the step's attention */
        int logit_cols;
    } c[] = {
        {"--cols 4 --pos 5", 4, 4 * 6, 4}, /* decode (auto -> batch): 4 slots of one column at 5, 6 keys each */
        {"--wide --cols 8 --slots 2 --pos 5", 8, 2 * (4 * 5 + 4 * 5 / 2), 2}, /* prefill: 2 slots of 4 columns from 5 */
    };
    for (size_t i = 0; i < ARRAY_LEN(c); i++) {
        snprintf(args, sizeof args, "--model %s/lfm2-tiny --full %s --reps 1 --logits --json %s", fx, c[i].plan, t_json);
        T_CHECK(run(args) == 0, "%s profile", c[i].plan);
        T_CHECK(strstr(out, "roof: FMA roof ") && strstr(out, "(f32 FMA: no cooperative matrices)") &&
                    strstr(out, "  (FLOPs: ") && strstr(out, "-bound: "),
                "%s: the report names the roof, the FLOPs and why the bound applies\n%s", c[i].plan, out);
        cJSON *j = t_json_file(t_json);
        T_CHECK(j && t_json_at(j, "device.roof_tflops")->valuedouble > 0 &&
                    !strcmp(t_json_at(j, "device.roof_path")->valuestring, "f32 FMA"),
                "%s: device.roof_tflops and roof_path", c[i].plan);
        if (!j) continue;
        double cols = c[i].cols;
        T_CHECK(op_flops(j, 0, "ffn_down", "flops") == 2 * 128 * 256 * cols, "%s ffn_down %g", c[i].plan,
                op_flops(j, 0, "ffn_down", "flops"));
        T_CHECK(op_flops(j, 0, "ffn_gate_up", "flops") == 4 * 256 * 128 * cols, "%s ffn_gate_up (SwiGLU) %g", c[i].plan,
                op_flops(j, 0, "ffn_gate_up", "flops"));
        T_CHECK(op_flops(j, 2, "attn", "flops") == 4 * 2 * 64 * c[i].pairs, "%s attention %g, expected %g", c[i].plan,
                op_flops(j, 2, "attn", "flops"), 4 * 2 * 64 * c[i].pairs);
        T_CHECK(op_flops(j, -1, "lm_head", "flops") == 2 * 1000 * 128 * c[i].logit_cols, "%s lm_head %g", c[i].plan,
                op_flops(j, -1, "lm_head", "flops"));
        double sum = 0, exec = 0;
        const cJSON *d;
        cJSON_ArrayForEach(d, t_json_at(j, "dispatches"))
        {
            sum += t_json_at(d, "flops")->valuedouble;
            exec += t_json_at(d, "flops_exec")->valuedouble;
        }
        T_CHECK(sum > 0 && t_json_at(j, "flops")->valuedouble == sum && exec == sum &&
                    t_json_at(j, "flops_exec")->valuedouble == sum,
                "%s: the step's FLOPs are its dispatches' (%g), executed = useful without cooperative matrices", c[i].plan,
                sum);
        const char *kind = t_json_at(j, "bound.kind")->valuestring;
        double in = t_json_at(j, "bound.intensity")->valuedouble, bal = t_json_at(j, "bound.balance")->valuedouble;
        T_CHECK(bal > 0 && !strcmp(kind, in > bal ? "compute" : "memory"), "%s: bound %s at %g FLOP/byte, balance %g",
                c[i].plan, kind, in, bal);
        cJSON_Delete(j);
    }
}

int main(int argc, char **argv)
{
    t_init(argc, argv);
    fx = argc > 1 ? argv[1] : "tests/fixtures";
    const char *dir = t_tmpdir();
    snprintf(a_json, sizeof a_json, "%s/a.json", dir);
    snprintf(b_json, sizeof b_json, "%s/b.json", dir);
    snprintf(t_json, sizeof t_json, "%s/t.json", dir);
    T_CASE("decode", "", case_decode());
    T_CASE("prefill_markdown", "", case_prefill_markdown());
    T_CASE("split_shards", "", case_split_shards());
    T_CASE("trace_no_head", "", case_trace_no_head());
    T_CASE("sampled_attribution", "", case_sampled_attribution());
    T_CASE("crossover", "", case_crossover());
    T_CASE("no_timestamps", "", case_no_timestamps());
    T_CASE("wide", "", case_wide());
    T_CASE("flops_roof", "", case_flops_roof());
    return t_finish();
}
