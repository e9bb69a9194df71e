/* check_result - runs one experiment driver on a tiny workload and checks its HDF5 file.
 *
 *   check_result EXPERIMENT OUT.h5 DRIVER [driver args...]
 *
 * Runs `DRIVER --out OUT.h5 --quiet args...`, then reads OUT.h5 back (experiments/common/
 * h5read.c) and checks: the provenance attributes are present and sane, every table has
 * rows and every column as many values as the table has rows, and values the numerics
 * promise (docs/numerics.md 6): bf16 and mxfp8-exact leak exactly 0, mx-floor leaks,
 * cosines in range, zero rates ordered, scheduler efficiencies in (0, 1], a matched step
 * equal to itself, P-format mismatches visible, packed and padded documents giving the
 * same outputs, and the inference-only exponentials moving O a little, the exact one not at all.
 * Prints "N passed, N failed" and exits non-zero on any failure.
 *
 *   check_result --expect-fail DRIVER [args...]    the driver must exit non-zero and
 *                                                  leave no file behind (--out must be given)
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "xp_read.h"

static int passed, failed;

static void check(int ok, const char *fmt, const char *a, const char *b) {
    if (ok) {
        passed++;
        return;
    }
    failed++;
    fprintf(stderr, "FAIL: ");
    fprintf(stderr, fmt, a ? a : "", b ? b : "");
    fputc('\n', stderr);
}

static int run(char **argv) {
    pid_t p = fork();
    if (p < 0) return -1;
    if (p == 0) {
        execv(argv[0], argv);
        perror("execv");
        _exit(127);
    }
    int st;
    if (waitpid(p, &st, 0) < 0) return -1;
    return WIFEXITED(st) ? WEXITSTATUS(st) : 128;
}

static const xr_col *col(const xr_file *f, const char *table, const char *name) {
    const xr_table *t = xr_get_table(f, table);
    const xr_col *c = t ? xr_get_col(t, name) : NULL;
    check(c != NULL, "missing column %s/%s", table, name);
    return c;
}

/* row indices where a string column equals v */
static int rows_where(const xr_col *c, const char *v, size_t row) { return c && row < c->n && !strcmp(c->s[row], v); }

static void check_common(const xr_file *f, const char *exp) {
    static const char *need[] = {"experiment", "schema_version", "git_commit", "git_dirty", "argv", "seed",
                                 "backend", "device_name", "cpu_model", "gpu_name", "gpu_driver", "utc_time",
                                 "flamia_version", "hdf5_version", NULL};
    for (const char **k = need; *k; k++) check(xr_attr(f, *k) != NULL, "missing root attribute %s%s", *k, "");
    const char *e = xr_attr(f, "experiment");
    check(e && !strcmp(e, exp), "experiment attribute is '%s', expected '%s'", e, exp);
    const char *sv = xr_attr(f, "schema_version");
    check(sv && !strcmp(sv, "1"), "schema_version '%s'%s", sv, "");
    const char *g = xr_attr(f, "git_commit");
    check(g && *g, "empty git_commit%s%s", "", "");
    const char *t = xr_attr(f, "utc_time");
    check(t && strlen(t) == 20 && t[10] == 'T' && t[19] == 'Z', "utc_time '%s' not ISO 8601 UTC%s", t, "");
    check(f->ntables > 0, "no tables%s%s", "", "");
    for (int i = 0; i < f->ntables; i++) {
        const xr_table *tb = &f->tables[i];
        check(tb->rows > 0, "table %s has no rows%s", tb->name, "");
        for (int c = 0; c < tb->ncols; c++) {
            check(tb->cols[c].n == tb->rows, "column %s/%s has a different length", tb->name, tb->cols[c].name);
            if (!tb->cols[c].is_str)
                check(tb->cols[c].units[0] != 0, "numeric column %s/%s has no units", tb->name, tb->cols[c].name);
        }
    }
}

static void check_leak(const xr_file *f) {
    const xr_col *rc = col(f, "summary", "recipe"), *kc = col(f, "summary", "kind"),
                 *o = col(f, "summary", "o_rel_max"), *q = col(f, "summary", "dq_rel_max"),
                 *fl = col(f, "summary", "failed");
    if (!rc || !kc || !o || !q || !fl) return;
    int saw_exact = 0, saw_floor = 0;
    for (size_t r = 0; r < rc->n; r++) {
        char what[128];
        snprintf(what, sizeof what, "%s/%s", rc->s[r], kc->s[r]);
        check(fl->f[r] == 0, "leak_probe %s: perturbed runs failed%s", what, "");
        if (rows_where(rc, "mxfp8-exact", r) || rows_where(rc, "bf16", r)) {
            saw_exact++;
            check(o->f[r] == 0 && q->f[r] == 0, "leak_probe %s: leak must be exactly 0%s", what, "");
        }
        if (rows_where(rc, "mx-floor", r) && !strcmp(kc->s[r], "max2x")) {
            saw_floor++;
            check(o->f[r] > 0 || q->f[r] > 0, "leak_probe %s: mx-floor must leak (> 0)%s", what, "");
        }
        check(!isnan(o->f[r]) && !isnan(q->f[r]), "leak_probe %s: NaN change%s", what, "");
    }
    check(saw_exact > 0, "leak_probe: no exact/bf16 rows%s%s", "", "");
    /* every perturbation kind is on by default */
    static const char *const kinds[] = {"keys2x", "max2x", "x1e4", "spike", "extreme"};
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        int seen = 0;
        for (size_t r = 0; r < kc->n; r++) seen |= !strcmp(kc->s[r], kinds[k]);
        check(seen, "leak_probe: no summary row of kind %s%s", kinds[k], "");
    }
    check(saw_floor > 0, "leak_probe: no mx-floor max2x row%s%s", "", "");
    const xr_table *cd = xr_get_table(f, "cross_doc");
    if (cd) {
        const xr_col *r2 = xr_get_col(cd, "recipe"), *o2 = xr_get_col(cd, "o_rel"), *k2 = xr_get_col(cd, "dk_rel");
        for (size_t r = 0; r2 && o2 && k2 && r < r2->n; r++)
            if (strcmp(r2->s[r], "fp8-tensor"))
                check(o2->f[r] == 0 && k2->f[r] == 0, "cross_doc %s: documents must be independent%s", r2->s[r], "");
    }
}

static void check_accuracy(const xr_file *f) {
    const xr_col *rc = col(f, "accuracy", "recipe");
    static const char *cs[] = {"cos_o", "cos_dq", "cos_dk", "cos_dv"};
    for (int k = 0; k < 4 && rc; k++) {
        const xr_col *c = col(f, "accuracy", cs[k]);
        for (size_t r = 0; c && r < c->n; r++) {
            check(c->f[r] > 0.5 && c->f[r] <= 1.0 + 1e-12, "accuracy %s %s out of (0.5, 1]", rc->s[r], cs[k]);
            if (!strcmp(rc->s[r], "bf16")) check(c->f[r] > 0.999, "accuracy bf16 %s below 0.999%s", cs[k], "");
            if (!strcmp(rc->s[r], "mxfp8")) check(c->f[r] > 0.95, "accuracy mxfp8 %s below 0.95%s", cs[k], "");
        }
    }
}

static void check_ds(const xr_file *f) {
    const xr_col *w = col(f, "ds_rules", "workload"), *ru = col(f, "ds_rules", "rule"),
                 *z = col(f, "ds_rules", "zero_rate");
    if (!w || !ru || !z) return;
    for (size_t r = 0; r < z->n; r++) {
        check(z->f[r] >= 0 && z->f[r] <= 1, "ds_underflow %s zero rate out of [0,1]%s", ru->s[r], "");
        if (!strcmp(ru->s[r], "fixed:0"))
            for (size_t b = 0; b < z->n; b++)
                if (!strcmp(ru->s[b], "block32") && !strcmp(w->s[b], w->s[r]))
                    check(z->f[r] > z->f[b], "ds_underflow %s: fixed:0 must flush more than block32%s", w->s[r], "");
    }
}

/* matched rows equal themselves; a P-format mismatch moves the gradients; cosines in range */
static void check_mismatch(const xr_file *f) {
    const xr_col *cs = col(f, "mismatch", "case"), *vm = col(f, "mismatch", "vs_matched_dq"),
                 *cq = col(f, "mismatch", "cos_dq");
    for (size_t r = 0; cs && vm && cq && r < cs->n; r++) {
        check(cq->f[r] > 0.9 && cq->f[r] <= 1 + 1e-12, "mismatch %s: dQ cosine out of (0.9, 1]%s", cs->s[r], "");
        if (!strcmp(cs->s[r], "matched")) check(vm->f[r] == 0, "mismatch: matched differs from itself%s%s", "", "");
        if (!strcmp(cs->s[r], "p8-p16") || !strcmp(cs->s[r], "p16-p8") || !strcmp(cs->s[r], "p4-p8"))
            check(vm->f[r] > 1e-3, "mismatch %s: P in other formats left dQ unchanged%s", cs->s[r], "");
    }
}

/* the exact exponential's row is the reference point (no change); the approximations move O, by
 * a little: O's cosine against FP64 drops by less than 1e-3, its own change stays under 10 % */
static void check_inference_exp(const xr_file *f) {
    const xr_col *e = col(f, "inference_exp", "exp"), *ref = col(f, "inference_exp", "ref"),
                 *cc = col(f, "inference_exp", "cos_change"), *rc = col(f, "inference_exp", "rel_change"),
                 *dr = col(f, "inference_exp", "cos_o_drop"), *co = col(f, "inference_exp", "cos_o"),
                 *cm = col(f, "inference_exp", "code_match"), *cz = col(f, "inference_exp", "code_match_nonzero");
    int approx = 0;
    double kept_e4m3 = NAN, kept_e2m1 = NAN; /* Mitchell's codes kept with 8-bit and with 4-bit P */
    for (size_t r = 0; e && ref && cc && rc && dr && co && cm && cz && r < e->n; r++) {
        check(co->f[r] > 0.99 && co->f[r] <= 1 + 1e-12, "inference_exp %s: O cosine out of (0.99, 1]%s", e->s[r], "");
        if (!strcmp(e->s[r], ref->s[r])) {
            check(cc->f[r] == 0 && rc->f[r] == 0 && dr->f[r] == 0 && cm->f[r] == 1 && cz->f[r] == 1,
                  "inference_exp: %s differs from itself%s", e->s[r], "");
            continue;
        }
        approx++;
        check(rc->f[r] > 1e-3 && rc->f[r] < 0.15, "inference_exp %s: O's change not in (1e-3, 0.15)%s", e->s[r], "");
        check(fabs(dr->f[r]) < 1e-3, "inference_exp %s: O's cosine vs FP64 moved by 1e-3 or more%s", e->s[r], "");
        check(cm->f[r] > 0.3 && cm->f[r] < 1 && cz->f[r] <= cm->f[r], "inference_exp %s: codes kept out of (0.3, 1)%s",
              e->s[r], "");
        if (!strcmp(e->s[r], "mitchell")) kept_e4m3 = cm->f[r];
        if (!strcmp(e->s[r], "p4-mitchell")) kept_e2m1 = cm->f[r];
    }
    check(approx == 4, "inference_exp: %s%s", "the four approximations' rows missing", "");
    check(kept_e2m1 > kept_e4m3 + 0.2, "inference_exp: E2M1 does not absorb Mitchell's error (%s)%s",
          "codes kept with 4-bit P not above 8-bit P's by 0.2", "");
}

/* training: every case learns (loss down, finite gradients); the exact case's two evaluations
 * are one and the same; the curve holds every step */
static void check_training(const xr_file *f) {
    const xr_col *c = col(f, "training", "case"), *st = col(f, "training", "steps"),
                 *l0 = col(f, "training", "loss_first"), *lf = col(f, "training", "loss_final"),
                 *gn = col(f, "training", "grad_norm_max"), *es = col(f, "training", "eval_self"),
                 *ee = col(f, "training", "eval_exact"), *cs = col(f, "curve", "step");
    double steps = 0;
    for (size_t r = 0; c && st && l0 && lf && gn && es && ee && r < c->n; r++) {
        steps += st->f[r];
        check(lf->f[r] < l0->f[r] && l0->f[r] > 5.0 && l0->f[r] < 6.0,
              "training %s: the loss did not fall from ~ln 256%s", c->s[r], "");
        check(isfinite(gn->f[r]) && gn->f[r] > 0, "training %s: gradient norm not finite and positive%s", c->s[r], "");
        check(isfinite(es->f[r]) && isfinite(ee->f[r]), "training %s: an evaluation loss is not finite%s", c->s[r], "");
        if (!strcmp(c->s[r], "exact"))
            check(es->f[r] == ee->f[r], "training: the exact case's self and exact evaluations differ%s%s", "", "");
        else
            check(es->f[r] != ee->f[r], "training %s: a quantized attention evaluated like the FP64 one%s", c->s[r], "");
    }
    check(cs && (double)cs->n == steps, "training: the curve does not hold every step%s%s", "", "");
}

static void check_sched(const xr_file *f) {
    const xr_col *e = col(f, "makespan", "efficiency"), *m = col(f, "makespan", "makespan"),
                 *lb = col(f, "makespan", "lower_bound"), *bt = col(f, "build_time", "total_ms");
    for (size_t r = 0; e && m && lb && r < e->n; r++) {
        check(e->f[r] > 0 && e->f[r] <= 1 + 1e-12, "sched_ablation: efficiency out of (0, 1]%s%s", "", "");
        check(m->f[r] >= lb->f[r] - 1e-9, "sched_ablation: makespan below the lower bound%s%s", "", "");
    }
    for (size_t r = 0; bt && r < bt->n; r++) check(bt->f[r] >= 0, "sched_ablation: negative build time%s%s", "", "");
}

/* packed vs padded: the real tokens' outputs bit-identical (document-aligned blocks, tiles and
 * frames; padding after every real token), padding never smaller, times measured */
static void check_packed(const xr_file *f) {
    static const char *outs[] = {"differing_o", "differing_lse", "differing_dq", "differing_dk", "differing_dv"};
    const xr_col *w = col(f, "packed_memory", "workload"), *pt = col(f, "packed_memory", "packed_tokens"),
                 *qt = col(f, "packed_memory", "padded_tokens"), *pb = col(f, "packed_memory", "packed_tensor_bytes"),
                 *qb = col(f, "packed_memory", "padded_tensor_bytes"), *pm = col(f, "packed_memory", "packed_train_ms"),
                 *qm = col(f, "packed_memory", "padded_train_ms");
    for (size_t r = 0; w && pt && qt && pb && qb && pm && qm && r < w->n; r++) {
        check(qt->f[r] >= pt->f[r] && qb->f[r] >= pb->f[r], "packed_memory %s: padded smaller than packed%s", w->s[r], "");
        check(pm->f[r] >= 0 && qm->f[r] >= 0, "packed_memory %s: no time measured%s", w->s[r], "");
        for (size_t i = 0; i < sizeof outs / sizeof outs[0]; i++) {
            const xr_col *d = col(f, "packed_memory", outs[i]);
            check(d && d->f[r] == 0, "packed_memory %s: padded and packed outputs differ (%s)", w->s[r], outs[i]);
        }
    }
}

int main(int argc, char **argv) {
    if (argc >= 3 && !strcmp(argv[1], "--expect-fail")) {
        const char *out = NULL;
        for (int i = 2; i + 1 < argc; i++)
            if (!strcmp(argv[i], "--out")) out = argv[i + 1];
        if (out) remove(out);
        int rc = run(argv + 2);
        check(rc != 0 && rc != 127, "driver %s exited 0 (or could not start) on bad input%s", argv[2], "");
        struct stat sb;
        if (out) check(stat(out, &sb) != 0, "driver left a file '%s' behind after failing%s", out, "");
        printf("%d passed, %d failed\n", passed, failed);
        return failed ? 1 : 0;
    }
    if (argc < 4) {
        fprintf(stderr, "usage: check_result EXPERIMENT OUT.h5 DRIVER [args...]\n"
                        "       check_result --expect-fail DRIVER [args...]\n");
        return 2;
    }
    const char *exp = argv[1], *out = argv[2];
    char **dargv = calloc((size_t)argc + 4, sizeof(char *));
    int k = 0;
    dargv[k++] = argv[3];
    dargv[k++] = "--out";
    dargv[k++] = (char *)out;
    dargv[k++] = "--quiet";
    for (int i = 4; i < argc; i++) dargv[k++] = argv[i];
    remove(out);
    int rc = run(dargv);
    free(dargv);
    check(rc == 0, "driver %s failed%s", exp, "");
    if (rc == 0) {
        xr_file f;
        char err[256];
        if (xr_load(out, &f, err, sizeof err)) {
            check(0, "%s%s", err, "");
        } else {
            check_common(&f, exp);
            if (!strcmp(exp, "leak_probe")) check_leak(&f);
            else if (!strcmp(exp, "accuracy")) check_accuracy(&f);
            else if (!strcmp(exp, "ds_underflow")) check_ds(&f);
            else if (!strcmp(exp, "sched_ablation")) check_sched(&f);
            else if (!strcmp(exp, "mismatch")) check_mismatch(&f);
            else if (!strcmp(exp, "training")) check_training(&f);
            else if (!strcmp(exp, "inference_exp")) check_inference_exp(&f);
            else if (!strcmp(exp, "packed_memory")) check_packed(&f);
            xr_free(&f);
        }
    }
    printf("%d passed, %d failed\n", passed, failed);
    return failed ? 1 : 0;
}
