/* markdown.c - the Markdown report: the text report's content as GitHub tables, for perf notes. */
#include "profile.h"
#include "report_fmt.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void md_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    const struct prof_shape *s = &p->shape;
    char bw[32], sp[128];
    fprintf(out, "## %s %s: layers %d:%d, %d cols, pos %d\n\n", p->tool, p->version, p->shard.a,
            p->shard.b, s->cols, s->pos);
    fprintf(out, "| | |\n|---|---|\n");
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    if (d->has_timestamps)
        fprintf(out, "| timestamps | period %.3f ns, %u valid bits; timing %s |\n",
                d->timestamp_period_ns, d->timestamp_valid_bits, timing_mode_name(p->timing));
    else
        fprintf(out, "| timestamps | **not supported**: per-dispatch tables skipped |\n");
    fprintf(out, "| copy bandwidth | %s GB/s |\n", fmt_sig3(bw, sizeof bw, d->copy_gbps));
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family,
            p->model.dtype, p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| shape | plan %s, %d cols, pos %d, slots %d, logits=%s", s->plan, s->cols,
            s->pos, s->slots, bool_str(s->logits));
    if (strcmp(s->plan, "spec") == 0) fprintf(out, ", drafts of %d tokens", s->draft);
    if (s->logits && s->logit_cols != s->cols) fprintf(out, ", logits of %d columns", s->logit_cols);
    fprintf(out, " |\n");
    char pl[512];
    fprintf(out, "| plan | %s |\n", report_plan_line(pl, sizeof pl, p));
    if (d->has_timestamps && p->busy_us.n_reps)
        fprintf(out, "| GPU busy | %.0f µs/step (median; %s) |\n", p->busy_us.median,
                fmt_spread(sp, sizeof sp, &p->busy_us));
    else
        fprintf(out, "| GPU busy | n/a (no timestamps) |\n");
    if (has_head(p))
        fprintf(out, "| + LM head | %.0f µs/step (median; %s) |\n", p->head_us.median,
                fmt_spread(sp, sizeof sp, &p->head_us));
    fprintf(out, "| wall | %.0f µs (median; %s): %s |\n", p->wall_us.median,
            fmt_spread(sp, sizeof sp, &p->wall_us), wall_meaning(p));
    fprintf(out, "| tok/s/stage | %.1f |\n", p->tok_s);
    if (p->floor_us > 0)
        fprintf(out, "| floor | %.0f µs (weights ÷ copy bandwidth) |\n", p->floor_us);
    fprintf(out, "| command | `%s` |\n\n", p->args);
}

void report_markdown_header(FILE *out, const struct profile *p)
{
    const struct prof_device *d = &p->device;
    char bw[32];
    fprintf(out, "## %s %s: layers %d:%d, pos %d\n\n| | |\n|---|---|\n", p->tool, p->version, p->shard.a,
            p->shard.b, p->shape.pos);
    fprintf(out, "| device | %s |\n| driver | %s |\n| api | %s |\n", d->name, d->driver, d->api);
    fprintf(out, "| copy bandwidth | %s GB/s |\n", fmt_sig3(bw, sizeof bw, d->copy_gbps));
    fprintf(out, "| model | %s %s, %d layers, hidden %d, vocab %d (%s) |\n", p->model.family, p->model.dtype,
            p->model.n_layers, p->model.hidden, p->model.vocab, p->model.source);
    fprintf(out, "| timing | %s, logits=%s |\n\n", timing_mode_name(p->timing), bool_str(p->shape.logits));
}

static void md_row(FILE *out, const char *name, struct est x, const char *note)
{
    char er[64];
    fprintf(out, "| %s | %.0f | %s | %s |\n", name, x.v, fmt_err(er, sizeof er, x), note);
}

static void md_gap_probe(FILE *out, const struct profile *p)
{
    char pl[192];
    const struct gap_probe *g = &p->gap_probe;
    bool ts = g->verdict != VERDICT_UNKNOWN;
    char a[32], b[32], c[32], d[32], sp[128];
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
    fprintf(out, "| term | µs | ± | |\n|---|---:|---|---|\n");
    fprintf(out, "| wall 1× | %.0f | | %s |\n", g->wall1_us,
            g->n_reps ? fmt_spread(sp, sizeof sp, &g->w1) : "");
    fprintf(out, "| wall 2× | %.0f | | %s |\n", g->wall2_us,
            g->n_reps ? fmt_spread(sp, sizeof sp, &g->w2) : "");
    md_row(out, "marginal pass", g->marginal, "kernels + inter-dispatch cost");
    if (ts) {
        fprintf(out, "| kernel-time sum | %.0f | | median; excludes the LM head |\n",
                g->kernel_sum_us);
        snprintf(sp, sizeof sp, "%.0f%% of the marginal pass", 100.0 * g->gaps_share);
        md_row(out, "⇒ inter-dispatch", g->gaps, sp);
    }
    md_row(out, "⇒ fixed submit+poll", g->fixed, "cancels out of the delta");
    if (ts && g->ts_pair_us != 0) {
        snprintf(sp, sizeof sp, "%s µs a timestamp pair", fmt_us(a, sizeof a, g->ts_pair_us));
        md_row(out, "timestamps add", g->ts_add, sp);
    }
    char vb[256];
    fprintf(out, "\n**VERDICT:** %s\n\n", verdict_text(vb, sizeof vb, g));
    if (!g->head) return;
    fprintf(out, "### LM head (vocab %d)\n\n", p->model.vocab);
    fprintf(out, "| term | value |\n|---|---:|\n");
    fprintf(out, "| marginal pass +head | %.0f µs |\n", g->marginal_head_us);
    fprintf(out, "| ⇒ LM head | %.0f µs %s (%.0f%% of a pass WITH the head) |\n", g->lm_head_us,
            fmt_err(sp, sizeof sp, g->lm_head), 100.0 * g->lm_head_share);
    fprintf(out, "| head timestamp sum | %.0f µs (median) |\n", g->head_kernel_sum_us);
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

static void md_tables(FILE *out, const struct profile *p)
{
    fprintf(out, "### by kernel\n\n");
    fprintf(out, "Median per step of each kind's per-rep sum.");
    if (has_head(p))
        fprintf(out, " Mixed denominators: kinds `head.*` are shares of the LM head's sum, not of "
                     "GPU busy.");
    fprintf(out, "\n\n");
    fprintf(out, "| kind | n | total µs | share | avg µs | GB/s | %% of copy | p10–p90 µs |\n");
    fprintf(out, "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < p->n_kinds; k++) {
        const struct prof_kind *pk = &p->by_kind[k];
        char a[32], b[32], bw[32];
        fprintf(out, "| `%s` | %d | %.1f | %.1f%% | %.1f |", pk->kind, pk->n, pk->us.median,
                100.0 * pk->share, safe_div(pk->us.median, pk->n));
        if (pk->bytes + pk->kv_bytes > 0)
            fprintf(out, " %s | %.1f%% |", fmt_sig3(bw, sizeof bw, pk->gbps), 100.0 * pk->bw_share);
        else
            fprintf(out, " | |");
        fprintf(out, " %s–%s |\n", fmt_us(a, sizeof a, pk->us.p10),
                fmt_us(b, sizeof b, pk->us.p90));
    }
    int *idx = top_order(p);
    fprintf(out, "\n### top single dispatches\n\n");
    if (top_mixes(p, idx))
        fprintf(out, "Mixed denominators: `head.*` dispatches are shares of the LM head's sum, the "
                     "others of GPU busy.\n\n");
    fprintf(out, "| step | layer | op | kind | gx | gy | gz | µs | share | p10–p90 µs |\n");
    fprintf(out, "|---:|---:|---|---|---:|---:|---:|---:|---:|---:|\n");
    for (int t = 0; t < n_top(p); t++) {
        const struct prof_dispatch *d = &p->dispatches[idx[t]];
        char a[32], b[32];
        fprintf(out, "| %d | %d | %s | `%s` | %u | %u | %u | %.1f | %.1f%% | %s–%s |\n", d->index,
                d->layer, d->op, d->kind, d->groups[0], d->groups[1], d->groups[2], d->us.median,
                100.0 * dispatch_share(p, d), fmt_us(a, sizeof a, d->us.p10),
                fmt_us(b, sizeof b, d->us.p90));
    }
    fprintf(out, "\n");
    free(idx);
}

static void md_attribution(FILE *out, const struct profile *p)
{
    const struct prof_attribution *a = &p->attribution;
    char x[32], y[32], er[64];
    fprintf(out, "### attribution (no timestamps)\n\n");
    fprintf(out,
            "Each row: the step with that group's dispatches run once more into scratch copies of "
            "their "
            "outputs, minus the plain step; medians of %d paired reps.\n\n",
            a->base_us.n_reps);
    fprintf(
        out,
        "| kind | op | n | diff µs | ± | ts µs | ts > diff |\n|---|---|---:|---:|---|---:|---|\n");
    for (int i = 0; i < a->n_rows; i++) {
        const struct prof_attrib *r = &a->rows[i];
        if (!r->attributable) {
            fprintf(out, "| `%s` | %s | %d | not measured | | | |\n", r->kind, r->op, r->n);
            continue;
        }
        fprintf(out, "| `%s` | %s | %d | %s | %s | %s | %s |\n", r->kind, r->op, r->n,
                fmt_us(x, sizeof x, r->diff.v), fmt_err(er, sizeof er, r->diff),
                r->ts_us > 0 ? fmt_us(y, sizeof y, r->ts_us) : "", r->ts_inflated ? "**yes**" : "");
    }
    fprintf(out, "\n**closure:** Σ diff %s µs %s vs marginal pass %s µs (%+.1f%%)\n\n",
            fmt_us(x, sizeof x, a->sum.v), fmt_err(er, sizeof er, a->sum),
            fmt_us(y, sizeof y, a->marginal.v), 100.0 * a->closure_share);
}

void report_markdown(FILE *out, const struct profile *p)
{
    md_header(out, p);
    if (p->gap_probe.ran) md_gap_probe(out, p);
    if (p->device.has_timestamps && p->n_dispatches > 0 && p->timing != TIMING_NONE)
        md_tables(out, p);
    if (p->attribution.ran) md_attribution(out, p);
}
