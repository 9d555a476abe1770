/* markdown.c - the Markdown report: the text report's content as GitHub tables, for perf notes. */
#include "profile.h"
#include "report_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The "gemm path" row (files before the field have none). */
static void md_gemm_path(FILE *out, const struct profile *p)
{
    char gp[160], fb[256];
    if (p->device.gemm_path[0])
        fprintf(out, "| gemm path | %s%s |\n", fmt_gemm_path(gp, sizeof gp, p->device.gemm_path),
                fmt_gemm_fallbacks(fb, sizeof fb, p));
}

static void md_header(FILE *out, const struct profile *p, const struct unit *u)
{
    const struct prof_device *d = &p->device;
    const struct prof_shape *s = &p->shape;
    char bw[32], sp[128], x[32], rf[96];
    fprintf(out, "## %s %s: layers %d:%d, %d cols, pos %d\n\n", p->tool, p->version, p->shard.a,
            p->shard.b, s->cols, s->pos);
    fprintf(out, "| | |\n|---|---|\n");
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    md_gemm_path(out, p);
    if (p->tune[0]) fprintf(out, "| tune | `%s` (kernel-choice overrides, not the defaults) |\n", p->tune);
    if (p->test_hooks[0]) fprintf(out, "| test hooks | `%s` (a test run: not the product's figures) |\n", p->test_hooks);
    if (d->has_timestamps)
        fprintf(out, "| timestamps | period %.3f ns, %u valid bits; timing %s |\n",
                d->timestamp_period_ns, d->timestamp_valid_bits, timing_mode_name(p->timing));
    else
        fprintf(out, "| timestamps | **not supported**: per-dispatch tables skipped |\n");
    fprintf(out, "| copy bandwidth | %s GB/s |\n", fmt_sig3(bw, sizeof bw, d->copy_gbps));
    fprintf(out, "| roof | %s |\n", fmt_roof(rf, sizeof rf, d));
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| shape | plan %s, %d cols, pos %d, slots %d, logits=%s", s->plan, s->cols,
            s->pos, s->slots, bool_str(logits_ran(p)));
    if (strcmp(s->plan, "spec") == 0) fprintf(out, ", drafts of %d tokens", s->draft);
    if (s->logits && !shard_has_head(p))
        fprintf(out, "; logits requested, but this shard has no LM head (only the last stage computes logits)");
    else if (s->logits && s->logit_cols != s->cols)
        fprintf(out, ", logits of %d columns", s->logit_cols);
    fprintf(out, " |\n");
    char pl[512];
    fprintf(out, "| plan | %s |\n", report_plan_line(pl, sizeof pl, p));
    if (d->has_timestamps && p->busy_us.n_reps)
        fprintf(out, "| GPU busy | %s %s/step (median; %s) |\n", fmt_t(x, sizeof x, u, p->busy_us.median, 0), u->name,
                fmt_spread(sp, sizeof sp, u, &p->busy_us));
    else
        fprintf(out, "| GPU busy | n/a (no timestamps) |\n");
    if (has_head(p))
        fprintf(out, "| + LM head | %s %s/step (median; %s) |\n", fmt_t(x, sizeof x, u, p->head_us.median, 0), u->name,
                fmt_spread(sp, sizeof sp, u, &p->head_us));
    fprintf(out, "| wall | %s %s (median; %s): %s |\n", fmt_t(x, sizeof x, u, p->wall_us.median, 0), u->name,
            fmt_spread(sp, sizeof sp, u, &p->wall_us), wall_meaning(p));
    fprintf(out, "| tok/s/stage | %.1f |\n", p->tok_s);
    if (profile_tok_s_head(p) > 0) fprintf(out, "| tok/s/stage with the LM head | %.1f |\n", profile_tok_s_head(p));
    if (p->floor_us > 0)
        fprintf(out, "| floor | %s %s (weights ÷ copy bandwidth) |\n", fmt_t(x, sizeof x, u, p->floor_us, 0), u->name);
    uint64_t flops, exec;
    profile_flops(p, &flops, &exec);
    if (flops > 0) {
        char f[32], fx[32];
        fprintf(out, "| FLOPs | %s useful", fmt_flop(f, sizeof f, (double)flops));
        if (exec > flops) fprintf(out, ", %s executed (the gemm's f16 high and low parts)", fmt_flop(fx, sizeof fx, (double)exec));
        fprintf(out, " |\n");
    }
    fprintf(out, "| command | `%s` |\n\n", p->args);
}

void report_markdown_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    char bw[32], rf[96];
    fprintf(out, "## %s %s: layers %d:%d, pos %d\n\n| | |\n|---|---|\n", p->tool, p->version, p->shard.a,
            p->shard.b, p->shape.pos);
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    md_gemm_path(out, p);
    fprintf(out, "| copy bandwidth | %s GB/s |\n", fmt_sig3(bw, sizeof bw, d->copy_gbps));
    fprintf(out, "| roof | %s |\n", fmt_roof(rf, sizeof rf, d));
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family, p->model.dtype,
            p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| timing | %s, logits=%s |\n\n", timing_mode_name(p->timing), bool_str(logits_ran(p)));
}

static void md_row(FILE *out, const struct unit *u, const char *name, struct est x, const char *note)
{
    char er[64], v[32];
    fprintf(out, "| %s | %s | %s | %s |\n", name, fmt_t(v, sizeof v, u, x.v, 0), fmt_err(er, sizeof er, u, x), note);
}

static void md_gap_probe(FILE *out, const struct profile *p, const struct unit *u)
{
    char pl[192];
    const struct gap_probe *g = &p->gap_probe;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    char a[32], b[32], c[32], d[32], sp[128], x[32];
    fprintf(out, "### gap probe (1× vs 2× plan in ONE pass; poll/submit cancel in the delta)\n\n");
    fprintf(
        out,
        "Medians of %d reps on both sides of every subtraction; ± is the standard error from the "
        "MADs.\n\n",
        g->n_reps);
    if (g->dispatches > 0) {
        plan_sentence(pl, sizeof pl, g);
        pl[0] = 'T';
        fprintf(out, "%s.\n\n", pl);
    }
    fprintf(out, "| term | %s | ± | |\n|---|---:|---|---|\n", u->name);
    fprintf(out, "| wall 1× | %s | | %s |\n", fmt_t(x, sizeof x, u, g->wall1_us, 0),
            g->n_reps ? fmt_spread(sp, sizeof sp, u, &g->w1) : "");
    fprintf(out, "| wall 2× | %s | | %s |\n", fmt_t(x, sizeof x, u, g->wall2_us, 0),
            g->n_reps ? fmt_spread(sp, sizeof sp, u, &g->w2) : "");
    md_row(out, u, "marginal pass", g->marginal, "kernels + inter-dispatch cost");
    if (ts) {
        fprintf(out, "| kernel-time sum | %s | | median; excludes the LM head |\n",
                fmt_t(x, sizeof x, u, g->kernel_sum_us, 0));
        snprintf(sp, sizeof sp, "%.0f%% of the marginal pass", 100.0 * g->gaps_share);
        md_row(out, u, "⇒ inter-dispatch", g->gaps, sp);
    }
    md_row(out, u, "⇒ fixed submit+poll", g->fixed, "cancels out of the delta");
    if (ts && g->ts_pair_us != 0) {
        snprintf(sp, sizeof sp, "%s µs a timestamp pair", fmt_us(a, sizeof a, g->ts_pair_us));
        md_row(out, u, "timestamps add", g->ts_add, sp);
    }
    char vb[256];
    fprintf(out, "\n**VERDICT:** %s\n\n", verdict_text(vb, sizeof vb, g));
    if (!g->head) return;
    fprintf(out, "### LM head (vocab %d)\n\n", p->model.vocab);
    fprintf(out, "| term | value |\n|---|---:|\n");
    fprintf(out, "| marginal pass +head | %s %s |\n", fmt_t(x, sizeof x, u, g->marginal_head_us, 0), u->name);
    fprintf(out, "| ⇒ LM head | %s %s %s (%.0f%% of a pass WITH the head) |\n", fmt_t(x, sizeof x, u, g->lm_head_us, 0),
            u->name, fmt_err(sp, sizeof sp, u, g->lm_head), 100.0 * g->lm_head_share);
    fprintf(out, "| head timestamp sum | %s %s (median) |\n", fmt_t(x, sizeof x, u, g->head_kernel_sum_us, 0), u->name);
    if (est_within_noise(g->lm_head)) {
        char hl[192];
        fprintf(out, "\n%s.\n\n", head_inconclusive(hl, sizeof hl, g));
        return;
    }
    fprintf(out, "| GB/s, real size (%s, %s MB) | %s |\n", p->model.dtype,
            fmt_sig3(a, sizeof a, g->head_bytes_real / 1e6), fmt_sig3(b, sizeof b, g->head_gbps));
    fprintf(out, "| GB/s if f16 (%s MB) | %s |\n", fmt_sig3(c, sizeof c, g->head_bytes_f16 / 1e6),
            fmt_sig3(d, sizeof d, g->head_gbps_f16));
    fprintf(out, "| GB/s if q4_0 (%s MB) | %s |\n\n",
            fmt_sig3(a, sizeof a, g->head_bytes_q4_0 / 1e6),
            fmt_sig3(b, sizeof b, g->head_gbps_q4_0));
    if (g->disagree)
        fprintf(out, "**WARNING:** the head's timestamp sum and the subtraction disagree by more "
                     "than 10%%.\n\n");
}

/* One by-kind table: the layer kinds (head false) or the head's (head true), shares of that set's
 * summed medians (so each table's shares add up to 100 %). */
static void md_kind_table(FILE *out, const struct profile *p, const struct unit *u, bool head)
{
    char s[32], b[32];
    if (head)
        fprintf(out, "### LM head kernels\n\nShares of the head kinds' sum, %s %s (the LM head runs beside GPU busy).\n\n",
                fmt_t(s, sizeof s, u, profile_kinds_sum(p, true), 1), u->name);
    else
        fprintf(out, "### by kernel\n\nMedian per step of each kind's per-rep sum; shares of the layer kinds' sum, %s %s "
                     "(GPU busy's median, %s %s, is the median of the per-rep sums).\n\n",
                fmt_t(s, sizeof s, u, profile_kinds_sum(p, false), 1), u->name,
                fmt_t(b, sizeof b, u, p->busy_us.median, 1), u->name);
    fprintf(out, "| kind | n | total %s | share | avg %s | GB/s | %% of copy | FLOP/s | %% of roof | p10–p90 %s |\n",
            u->name, u->name, u->name);
    fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        if (prof_kind_is_head(pk->kind) != head) continue;
        char a[32], c[32], bw[32], m[32], avg[32];
        fprintf(out, "| `%s` | %d | %s | %.1f%% | %s |", pk->kind, pk->n, fmt_t(m, sizeof m, u, pk->us.median, 1),
                100.0 * pk->share, fmt_t(avg, sizeof avg, u, safe_div(pk->us.median, pk->n), 1));
        if (pk->bytes + pk->kv_bytes > 0)
            fprintf(out, " %s | %.1f%% |", fmt_sig3(bw, sizeof bw, pk->gbps), 100.0 * pk->bw_share);
        else
            fprintf(out, " | |");
        if (pk->flops > 0)
            fprintf(out, " %s | %.1f%% |", fmt_flop_rate(bw, sizeof bw, pk->tflops), 100.0 * pk->roof_share);
        else
            fprintf(out, " | |");
        fprintf(out, " %s–%s |\n", fmt_t(a, sizeof a, u, pk->us.p10, -1), fmt_t(c, sizeof c, u, pk->us.p90, -1));
    }
    fprintf(out, "\n");
}

static void md_tables(FILE *out, const struct profile *p, const struct unit *u)
{
    md_kind_table(out, p, u, false);
    if (has_head(p)) md_kind_table(out, p, u, true);
    int *idx = top_order(p);
    fprintf(out, "### top single dispatches\n\n");
    if (top_mixes(p, idx))
        fprintf(out, "Mixed denominators: `head.*` dispatches are shares of the LM head's sum, the "
                     "others of GPU busy.\n\n");
    else
        fprintf(out, "Shares of GPU busy's median.\n\n");
    fprintf(out, "| step | layer | op | kind | gx | gy | gz | %s | share | p10–p90 %s |\n", u->name, u->name);
    fprintf(out, "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (int t = 0; t < n_top(p); t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        char a[32], b[32], m[32];
        fprintf(out, "| %d | %d | %s | `%s` | %u | %u | %u | %s | %.1f%% | %s–%s |\n", d->index, d->layer, d->op,
                d->kind, d->groups[0], d->groups[1], d->groups[2], fmt_t(m, sizeof m, u, d->us.median, 1),
                100.0 * dispatch_share(p, d), fmt_t(a, sizeof a, u, d->us.p10, -1), fmt_t(b, sizeof b, u, d->us.p90, -1));
    }
    fprintf(out, "\n");
    free(idx);
}

static void md_attribution(FILE *out, const struct profile *p, const struct unit *u)
{
    const struct prof_attribution *a = &p->attribution;
    char x[32], y[32], er[64];
    fprintf(out, "### attribution (no timestamps)\n\n");
    fprintf(out,
            "Each row: the step with that group's dispatches run once more into scratch copies of "
            "their "
            "outputs, minus the plain step; medians of %d paired reps.\n\n",
            a->base_us.n_reps);
    fprintf(out, "| kind | op | n | diff %s | ± | ts %s | ts > diff |\n|---|---|---:|---:|---|---:|---|\n", u->name,
            u->name);
    for (int i = 0; i < a->n_rows; i++) {
        const struct prof_attrib *r = &a->rows[i];
        if (!r->attributable) {
            fprintf(out, "| `%s` | %s | %d | not measured | | | |\n", r->kind, r->op, r->n);
            continue;
        }
        fprintf(out, "| `%s` | %s | %d | %s | %s | %s | %s |\n", r->kind, r->op, r->n,
                fmt_t(x, sizeof x, u, r->diff.v, -1), fmt_err(er, sizeof er, u, r->diff),
                r->ts_us > 0 ? fmt_t(y, sizeof y, u, r->ts_us, -1) : "", r->ts_inflated ? "**yes**" : "");
    }
    fprintf(out, "\n**closure:** Σ diff %s %s %s vs marginal pass %s %s (%+.1f%%)\n\n",
            fmt_t(x, sizeof x, u, a->sum.v, -1), u->name, fmt_err(er, sizeof er, u, a->sum),
            fmt_t(y, sizeof y, u, a->marginal.v, -1), u->name, 100.0 * a->closure_share);
}

/* The summary block as a bullet list (summary.c says what it holds). */
static void md_summary(FILE *out, const struct profile *p, const struct unit *u)
{
    struct summary s;
    summary_lines(p, u, &s);
    fprintf(out, "### summary\n\n");
    for (int i = 0; i < s.n; i++) fprintf(out, "- %s\n", s.line[i]);
    fprintf(out, "\n");
}

void report_markdown_in(FILE *out, const struct profile *p, enum report_units units)
{
    struct unit u = unit_of(units, p);
    md_header(out, p, &u);
    md_summary(out, p, &u);
    if (p->gap_probe.ran) md_gap_probe(out, p, &u);
    if (p->device.has_timestamps && p->n_dispatches > 0 && p->timing != TIMING_NONE)
        md_tables(out, p, &u);
    if (p->attribution.ran) md_attribution(out, p, &u);
}

void report_markdown(FILE *out, const struct profile *p)
{
    report_markdown_in(out, p, UNITS_AUTO);
}
