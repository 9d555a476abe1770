/* cli.c - command-line parsing. */
#include "cli.h"

#include "input.h"
#include "suggest.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void cli_usage(FILE *out)
{
    fprintf(out,
            "usage: lfm2-profile-stage --model DIR|FILE.gguf|NAME (--layers a:b | --full) [options]\n"
            "\n"
            "Profiles one serving batch step of a layer shard on a Vulkan GPU: per-kernel time,\n"
            "dead time between dispatches (--gap-probe) and the LM head's share.\n"
            "\n"
            "model and shard:\n"
            "  --model M         checkpoint folder (config.json + safetensors), .gguf file, or a\n"
            "                    built-in name (--list-models)\n"
            "  --layers a:b      load layers a..b-1 (+ embedding if a = 0, + final norm and head if b = N)\n"
            "  --full            load every layer\n"
            "  --stages K|a:b,.. every stage of a K-way (even) or given pipeline split, profiled in turn;\n"
            "                    per-layer costs, the balanced split, bottleneck, bubble, hand-off\n"
            "  --dtype T         built-in models: bf16 (default), f16, q8_0, q4_0, f32\n"
            "  --seed N          built-in models: weight seed (default 0)\n"
            "  --load-only       load the shard, report what was uploaded, exit\n"
            "step shape:\n"
            "  --cols N          columns (tokens) in the step (default 16)\n"
            "  --pos P           position of the profiled step; warm-up fills 0..P-1 (default 64)\n"
            "  --slots N         prefill shape: N sequences of cols/N successive columns\n"
            "                    (default: decode shape, one column per sequence)\n"
            "  --logits          the columns a serving engine samples want a logit (last stage:\n"
            "                    the LM head runs): every column in the decode shape and with\n"
            "                    --spec, each slot's last column in the prefill shape\n"
            "  --all-logits      --logits for every column, in the prefill shape too (a scoring\n"
            "                    pass)\n"
            "  --spec            speculative verify plan: each slot's columns are a draft (prefill\n"
            "                    layout; drafts of 4 without --slots), every column gets a logit\n"
            "                    and a snapshot of every recurrent state (exclusive with --wide)\n"
            "  --wide            the wide plan: kernels made for many columns (tiled matrix products,\n"
            "                    short conv parallel over positions, tiled prefill attention); below\n"
            "                    6 columns (5 for q4_0) its matrix products are the batch plan's\n"
            "                    (default: plan auto, the plan a serving engine runs at that width:\n"
            "                    wide from 6 columns, 5 for q4_0, batch below)\n"
            "  --cols A,B,...    a list of widths: one row each in the plan crossover table\n"
            "  --plans P,Q       plans to profile at each width (auto, batch, wide, spec); with a list\n"
            "                    of widths or plans the tool prints the plan crossover table\n"
            "  --verbose         with a list: each configuration's full report before the table\n"
            "profiling:\n"
            "  --reps N          profiled repetitions (default 10)\n"
            "  --gap-probe       time the plan 1x and 2x in one command buffer: dead time between\n"
            "                    dispatches, and the LM head's marginal cost\n"
            "  --timing M        full (default: a timestamp pair on every dispatch every rep),\n"
            "                    sampled (each rep timestamps every Nth dispatch, rotating), none\n"
            "  --sample-stride N sampled timing: dispatches between two timestamped ones (default 8)\n"
            "  --attribution     each kind's in-place cost without timestamps: the step with that\n"
            "                    kind run once more into scratch, minus the plain step; closure line\n"
            "  --attribution-ops the same per kind and op\n"
            "  --device N        Vulkan device index (default: first discrete GPU)\n"
            "  --tune K=V,...    kernel-choice overrides for measuring alternatives (repeatable):\n"
            "                    gemm_min_cols gemm_tile gemm_splitk gemm_wdeq_cols xmv_cols\n"
            "                    attn_kv_keys attn_split pool_max (ranges: src/base/tune.h);\n"
            "                    gemm_path=auto|khr|nv|fma|cm2: the wide plan's matrix path\n"
            "                    (cm2: VK_NV_cooperative_matrix2, auto in serving precision);\n"
            "                    recorded in the JSON\n"
            "  --precision P     the wide plan's matrix products: exact (default: f32-accurate, the\n"
            "                    activations as f16 hi + lo, two tensor products) or serving (f16\n"
            "                    activations and weights, one product, as llama.cpp computes);\n"
            "                    in the header and JSON; --compare refuses runs of different ones\n"
            "  --list-devices    list Vulkan devices and exit\n"
            "  --list-models     list built-in models and exit\n"
            "output:\n"
            "  --json FILE       write the profile as JSON (fields: docs/json.md); - is stdout (the\n"
            "                    text report then goes to stderr); with --compare A --current B,\n"
            "                    the comparison as JSON\n"
            "  --markdown        print the tables as Markdown (comparisons and crossover too)\n"
            "  --units U         time unit of the text and Markdown report and the crossover table: us,\n"
            "                    ms, s or auto (default: µs below a 10 ms step, ms below 10 s, else s);\n"
            "                    JSON, CSV and --compare stay in µs\n"
            "  --trace FILE      write a Chrome trace (one slice per dispatch; opens in Perfetto)\n"
            "  --csv FILE        write every table (by kind, top dispatches, crossover, compare) as\n"
            "                    CSV: one file, a first column `table` names each row's table\n"
            "  --html FILE       write one self-contained HTML page: summary, kinds, roofline,\n"
            "                    dispatch timeline, gap probe, crossover chart, comparison\n"
            "  --compare BASE    compare against a saved --json baseline (exit 3 on regression, 5 when the\n"
            "                    reps are too few to tell: rerun with the --reps it names)\n"
            "  --current NEW     with --compare: compare two saved files, no GPU\n"
            "  --threshold PCT   regression threshold in percent (default 10)\n"
            "verification:\n"
            "  --golden FILE     run a golden file's sequences (decode, prefill, mixed) and compare\n"
            "                    with the reference (exit 4 when off by more than 1e-3; 4e-3 for\n"
            "                    --wide --precision serving); with --spec: a draft verify, accept\n"
            "                    half of it, decode on from the snapshot\n"
            "  --help, --version\n"
            "\n"
            "exit codes: 0 ok, 1 runtime failure, 2 bad usage or input, 3 regression, 4 golden failed,\n"
            "5 compare undecided (too few reps)\n");
}

static int parse_int(const char *flag, const char *v, long lo, long hi, long *out, struct err *e)
{
    if (!v) return err_set(e, ST_USAGE, "%s needs a value", flag);
    char *end;
    errno = 0;
    long x = strtol(v, &end, 10);
    if (errno || end == v || *end || x < lo || x > hi)
        return err_set(e, ST_USAGE, "%s %s: expected an integer in %ld..%ld", flag, v, lo, hi);
    *out = x;
    return ST_OK;
}

static int parse_layers(const char *v, struct options *o, struct err *e)
{
    if (!v) return err_set(e, ST_USAGE, "--layers needs a value a:b");
    const char *colon = strchr(v, ':');
    char *end;
    if (!colon) return err_set(e, ST_USAGE, "--layers %s: expected a:b (e.g. 0:16)", v);
    errno = 0;
    long a = strtol(v, &end, 10);
    if (errno || end != colon || end == v || a < 0 || a > 100000)
        return err_set(e, ST_USAGE, "--layers %s: expected a:b with integers a < b", v);
    long b = strtol(colon + 1, &end, 10);
    if (errno || *end || end == colon + 1 || b < 0 || b > 100000)
        return err_set(e, ST_USAGE, "--layers %s: expected a:b with integers a < b", v);
    if (a >= b) return err_set(e, ST_USAGE, "--layers %s: empty range (expected a < b)", v);
    o->a = (int)a;
    o->b = (int)b;
    o->layers_set = true;
    return ST_OK;
}

/* --cols 16 or --cols 1,16,64: widths in 1..4096, at most CLI_MAX_WIDTHS. */
static int parse_cols(const char *v, struct options *o, struct err *e)
{
    if (!v) return err_set(e, ST_USAGE, "--cols needs a value (N or a list N,M,...)");
    const char *at = v;
    o->n_cols = 0;
    for (;;) {
        char *end;
        errno = 0;
        long x = strtol(at, &end, 10);
        if (errno || end == at || (*end && *end != ',') || x < 1 || x > 4096)
            return err_set(e, ST_USAGE, "--cols %s: expected integers in 1..4096 separated by commas", v);
        if (o->n_cols == CLI_MAX_WIDTHS)
            return err_set(e, ST_USAGE, "--cols %s: at most %d widths", v, CLI_MAX_WIDTHS);
        o->col_list[o->n_cols++] = (int)x;
        if (!*end) break;
        at = end + 1;
    }
    o->cols = o->col_list[0];
    return ST_OK;
}

/* One name of --plans: auto or a plan_kind_name; -1 when none. */
static int plan_by_name(const char *at, size_t len)
{
    if (len == 4 && !strncmp(at, "auto", 4)) return (int)CLI_PLAN_AUTO;
    for (int k = 0; k < PLAN_COUNT; k++)
        if (strlen(plan_kind_name((enum plan_kind)k)) == len && !strncmp(at, plan_kind_name((enum plan_kind)k), len))
            return k;
    return -1;
}

/* --plans auto,batch,wide: auto or names from plan_kind_name, each once. */
static int parse_plans(const char *v, struct options *o, struct err *e)
{
    if (!v || !*v) return err_set(e, ST_USAGE, "--plans needs a value (e.g. batch,wide)");
    o->n_plans = 0;
    for (const char *at = v; *at;) {
        size_t len = strcspn(at, ",");
        int k = plan_by_name(at, len);
        if (k < 0)
            return err_set(e, ST_USAGE, "--plans %s: expected plan names auto, batch, wide, spec separated by commas", v);
        for (int i = 0; i < o->n_plans; i++)
            if (o->plans[i] == (enum plan_kind)k) return err_set(e, ST_USAGE, "--plans %s: %.*s twice", v, (int)len, at);
        o->plans[o->n_plans++] = (enum plan_kind)k;
        at += len;
        if (*at == ',' && !*++at) return err_set(e, ST_USAGE, "--plans %s: trailing comma", v);
    }
    o->plans_set = true;
    return ST_OK;
}

static int parse_dtype(const char *v, enum dtype *t, struct err *e)
{
    static const struct {
        const char *name;
        enum dtype t;
    } names[] = {{"bf16", DT_BF16}, {"f16", DT_F16}, {"q8_0", DT_Q8_0}, {"q4_0", DT_Q4_0}, {"f32", DT_F32}};
    for (size_t i = 0; v && i < ARRAY_LEN(names); i++)
        if (!strcmp(v, names[i].name)) {
            *t = names[i].t;
            return ST_OK;
        }
    return err_set(e, ST_USAGE, "--dtype %s: expected bf16, f16, q8_0, q4_0 or f32", v ? v : "(missing)");
}

/* Flags that would be silently ignored together, and two outputs on one file: exit 2. */
static int cli_check_conflicts(const struct options *o, struct err *e)
{
    const char *out_flag = o->json ? "--json" : o->trace ? "--trace" : o->compare ? "--compare" : o->csv ? "--csv"
                           : o->html ? "--html" : NULL;
    if (o->load_only && (o->golden || out_flag))
        return err_set(e, ST_USAGE, "--load-only and %s: --load-only only loads the shard and reports the upload "
                       "(drop one of them)", o->golden ? "--golden" : out_flag);
    if (o->golden && out_flag)
        return err_set(e, ST_USAGE, "--golden and %s: a golden run checks numbers and writes no profile (drop one "
                       "of them)", out_flag);
    /* two saved files compared: the flags that shape a live run would be ignored (--stages has
     * its own message, stages.c) */
    if (o->compare && o->current && !o->stages) {
        struct tune dflt = tune_default();
        const char *live = o->model                                ? "--model"
                           : o->layers_set || o->full              ? (o->full ? "--full" : "--layers")
                           : o->shape_set                          ? "--cols/--pos/--slots/--logits"
                           : o->dtype_set                          ? "--dtype"
                           : o->seed_set                           ? "--seed"
                           : o->precision != PRECISION_EXACT       ? "--precision"
                           : memcmp(&o->tune, &dflt, sizeof dflt) ? "--tune"
                                                                   : NULL;
        if (live)
            return err_set(e, ST_USAGE, "--compare A --current B compares two saved files: %s shapes a live run and "
                           "would be ignored (drop it, or drop --current to profile live against A)", live);
    }
    const char *outs[4] = {o->json, o->trace, o->csv, o->html};
    static const char *const names[4] = {"--json", "--trace", "--csv", "--html"};
    for (int i = 0; i < 4; i++)
        for (int j = i + 1; j < 4; j++)
            if (outs[i] && outs[j] && outfile_same(outs[i], outs[j]))
                return err_set(e, ST_USAGE, "%s %s and %s %s name the same file (expected two different files)",
                               names[i], outs[i], names[j], outs[j]);
    return ST_OK;
}

/* Every flag cli_parse knows, for "did you mean". */
static const char *const cli_flags[] = {
    "--model", "--layers", "--full", "--dtype", "--seed", "--load-only", "--cols", "--pos", "--slots",
    "--logits", "--all-logits", "--spec", "--wide", "--plans", "--reps", "--gap-probe", "--timing",
    "--sample-stride", "--attribution", "--attribution-ops", "--device", "--list-devices", "--list-models",
    "--json", "--markdown", "--trace", "--compare", "--current", "--threshold", "--golden", "--help",
    "--version", "--verbose", "--csv", "--html", "--units", "--precision"};

/* An argument no flag matches: exit 2, naming the closest flag when one is close. */
static int unknown_flag(const char *a, struct err *e)
{
    const char *near = suggest_closest(a, cli_flags, (int)ARRAY_LEN(cli_flags));
    if (near) return err_set(e, ST_USAGE, "unknown argument %s: did you mean %s? (see --help)", a, near);
    return err_set(e, ST_USAGE, "unknown argument %s (see --help)", a);
}

int cli_parse(int argc, char **argv, struct options *o, struct err *e)
{
    memset(o, 0, sizeof *o);
    o->cols = 16;
    o->pos = 64;
    o->reps = 10;
    o->device = -1;
    o->dtype = DT_BF16;
    o->threshold = 10.0;
    o->n_cols = 1;
    o->col_list[0] = o->cols;
    o->timing = TIMING_FULL;
    o->tune = tune_default();
    size_t used = 0;
    for (int i = 0; i < argc; i++) {
        int n = snprintf(o->argline + used, sizeof o->argline - used, "%s%s", i ? " " : "", argv[i]);
        if (n < 0 || (size_t)n >= sizeof o->argline - used) break;
        used += (size_t)n;
    }
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        long x;
        int st = ST_OK;
        bool takes = true;
        if (!strcmp(a, "--model")) {
            if (!v) return err_set(e, ST_USAGE, "--model needs a value (folder, .gguf or built-in name)");
            o->model = v;
        } else if (!strcmp(a, "--stages")) {
            if (!v) return err_set(e, ST_USAGE, "--stages needs a value: K (an even split) or ranges a:b,b:c,...");
            o->stages = v;
        } else if (!strcmp(a, "--layers")) {
            st = parse_layers(v, o, e);
        } else if (!strcmp(a, "--cols")) {
            st = parse_cols(v, o, e);
            o->shape_set = true;
        } else if (!strcmp(a, "--plans")) {
            st = parse_plans(v, o, e);
        } else if (!strcmp(a, "--timing")) {
            if (v && !strcmp(v, "full")) o->timing = TIMING_FULL;
            else if (v && !strcmp(v, "sampled")) o->timing = TIMING_SAMPLED;
            else if (v && !strcmp(v, "none")) o->timing = TIMING_NONE;
            else return err_set(e, ST_USAGE, "--timing %s: expected full, sampled or none", v ? v : "(missing)");
        } else if (!strcmp(a, "--sample-stride")) {
            if (!(st = parse_int(a, v, 1, 4096, &x, e))) o->sample_stride = (int)x;
        } else if (!strcmp(a, "--pos")) {
            if (!(st = parse_int(a, v, 0, 1 << 20, &x, e))) o->pos = (int)x;
            o->shape_set = true;
        } else if (!strcmp(a, "--slots")) {
            if (!(st = parse_int(a, v, 1, 4096, &x, e))) o->slots = (int)x;
            o->shape_set = true;
        } else if (!strcmp(a, "--reps")) {
            if (!(st = parse_int(a, v, 1, 100000, &x, e))) o->reps = (int)x;
        } else if (!strcmp(a, "--device")) {
            if (!(st = parse_int(a, v, 0, 1024, &x, e))) o->device = (int)x;
        } else if (!strcmp(a, "--seed")) {
            if (!(st = parse_int(a, v, 0, 0x7fffffffL, &x, e))) {
                o->seed = (uint64_t)x;
                o->seed_set = true;
            }
        } else if (!strcmp(a, "--tune")) {
            st = tune_parse(&o->tune, v, e);
        } else if (!strcmp(a, "--precision")) {
            static const char *const precisions[] = {"exact", "serving"};
            const char *near = v ? suggest_closest(v, precisions, 2) : NULL;
            if (!precision_parse(v, &o->precision))
                return err_set(e, ST_USAGE, "--precision %s: expected exact or serving%s%s%s", v ? v : "(missing)",
                               near ? " (did you mean " : "", near ? near : "", near ? "?)" : "");
        } else if (!strcmp(a, "--dtype")) {
            st = parse_dtype(v, &o->dtype, e);
            o->dtype_set = true;
        } else if (!strcmp(a, "--json") || !strcmp(a, "--trace") || !strcmp(a, "--compare") ||
                   !strcmp(a, "--current") || !strcmp(a, "--golden") || !strcmp(a, "--csv") ||
                   !strcmp(a, "--html")) {
            if (!v) return err_set(e, ST_USAGE, "%s needs a file name", a);
            const char **dst = !strcmp(a, "--json")      ? &o->json
                               : !strcmp(a, "--trace")   ? &o->trace
                               : !strcmp(a, "--compare") ? &o->compare
                               : !strcmp(a, "--current") ? &o->current
                               : !strcmp(a, "--csv")     ? &o->csv
                               : !strcmp(a, "--html")    ? &o->html
                                                         : &o->golden;
            *dst = v;
        } else if (!strcmp(a, "--units")) {
            if (!report_units_parse(v, &o->units))
                return err_set(e, ST_USAGE, "--units %s: expected us, ms, s or auto", v ? v : "(missing)");
        } else if (!strcmp(a, "--threshold")) {
            char *end;
            if (!v) return err_set(e, ST_USAGE, "--threshold needs a percentage");
            o->threshold = strtod(v, &end);
            if (end == v || *end || !(o->threshold >= 0 && o->threshold < 1e6))
                return err_set(e, ST_USAGE, "--threshold %s: expected a percentage >= 0", v);
        } else if (!strcmp(a, "--attribution") || !strcmp(a, "--attribution-ops")) {
            takes = false;
            o->attribution = !strcmp(a, "--attribution") ? 1 : 2;
        } else {
            takes = false;
            bool *flag = !strcmp(a, "--full")           ? &o->full
                         : !strcmp(a, "--wide")         ? &o->wide
                         : !strcmp(a, "--spec")         ? &o->spec
                         : !strcmp(a, "--logits")       ? &o->logits
                         : !strcmp(a, "--all-logits")   ? &o->all_logits
                         : !strcmp(a, "--gap-probe")    ? &o->gap_probe
                         : !strcmp(a, "--list-devices") ? &o->list_devices
                         : !strcmp(a, "--list-models")  ? &o->list_models
                         : !strcmp(a, "--load-only")    ? &o->load_only
                         : !strcmp(a, "--markdown")     ? &o->markdown
                         : !strcmp(a, "--verbose")      ? &o->verbose
                         : (!strcmp(a, "--help") || !strcmp(a, "-h")) ? &o->help
                         : !strcmp(a, "--version")      ? &o->version
                                                        : NULL;
            if (!flag) return unknown_flag(a, e);
            *flag = true;
        }
        if (st) return st;
        if (takes) i++;
    }
    if (o->all_logits) o->logits = true;
    if (o->logits) o->shape_set = true;
    if (o->golden) { /* the golden's own shapes run: the step-shape flags are ignored (docs/design.md) */
        o->n_cols = 1;
        o->slots = 0;
    }
    if (o->wide && o->spec) return err_set(e, ST_USAGE, "--wide and --spec are different plans: give one");
    if (o->plans_set && (o->wide || o->spec))
        return err_set(e, ST_USAGE, "--plans and %s: give the plans in --plans only", o->wide ? "--wide" : "--spec");
    if (!o->plans_set) {
        /* golden mode runs the batch plan unless --wide / --spec asks (docs/design.md); a profile runs auto */
        o->plans[0] = o->wide ? PLAN_WIDE : o->spec ? PLAN_SPEC : o->golden ? PLAN_BATCH : CLI_PLAN_AUTO;
        o->n_plans = 1;
    }
    /* the spec plan's checks, whether --spec or --plans ...,spec named it */
    bool spec = false;
    for (int k = 0; k < o->n_plans; k++) spec |= o->plans[k] == PLAN_SPEC;
    if (spec && !o->slots && !o->golden) {
        for (int i = 0; i < o->n_cols; i++)
            if (o->col_list[i] % SPEC_DEFAULT_DRAFT)
                return err_set(e, ST_USAGE, "%s --cols %d: without --slots drafts are %d tokens, so --cols must be a "
                               "multiple of %d (or give --slots)", o->spec ? "--spec" : "--plans with spec",
                               o->col_list[i], SPEC_DEFAULT_DRAFT, SPEC_DEFAULT_DRAFT);
        if (o->spec && o->n_cols == 1) o->slots = o->cols / SPEC_DEFAULT_DRAFT; /* otherwise per plan (main.c) */
    }
    if (o->golden && o->plans[0] == CLI_PLAN_AUTO) o->plans[0] = PLAN_BATCH; /* golden's shapes, not a width */
    if (o->sample_stride && o->timing != TIMING_SAMPLED)
        return err_set(e, ST_USAGE, "--sample-stride %d needs --timing sampled", o->sample_stride);
    bool many = o->n_cols > 1 || o->n_plans > 1;
    if (many && (o->json || o->trace || (o->compare && !o->current) || o->golden))
        return err_set(e, ST_USAGE, "%s takes one width and one plan; a list of widths or plans gives the crossover table only",
                       o->json ? "--json" : o->trace ? "--trace" : o->golden ? "--golden" : "--compare");
    for (int i = 0; o->slots && i < o->n_cols; i++)
        if (o->slots > o->col_list[i] || o->col_list[i] % o->slots)
            return err_set(e, ST_USAGE, "--slots %d: expected a divisor of every --cols width (%d is not a multiple)",
                           o->slots, o->col_list[i]);
    if (o->slots && (o->slots > o->cols || o->cols % o->slots))
        return err_set(e, ST_USAGE, "--slots %d: expected a divisor of --cols %d (each slot gets cols/slots columns)",
                       o->slots, o->cols);
    if (o->current && !o->compare) return err_set(e, ST_USAGE, "--current needs --compare BASE.json");
    if (o->layers_set && o->full) return err_set(e, ST_USAGE, "--layers and --full: give one");
    return cli_check_conflicts(o, e);
}
