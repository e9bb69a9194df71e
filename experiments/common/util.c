/* util.c - rng, options, progress and small helpers of the experiment drivers (xp.h). */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "xp.h"

/* ------------------------------------------------------------------ rng */
static uint64_t splitmix64(uint64_t *x) {
    uint64_t z = (*x += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

void xp_rng_seed(xp_rng *r, uint64_t seed, uint64_t stream) {
    uint64_t x = seed ^ (stream * 0xD1B54A32D192ED03ull);
    for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
    r->have_spare = 0;
    r->spare = 0;
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t xp_rng_u64(xp_rng *r) { /* xoshiro256** */
    uint64_t *s = r->s;
    uint64_t res = rotl(s[1] * 5, 7) * 9, t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl(s[3], 45);
    return res;
}

double xp_rng_uniform(xp_rng *r) { return (double)(xp_rng_u64(r) >> 11) * 0x1.0p-53; }

double xp_rng_normal(xp_rng *r) {
    if (r->have_spare) {
        r->have_spare = 0;
        return r->spare;
    }
    double u1, u2;
    do u1 = xp_rng_uniform(r);
    while (u1 <= 0.0);
    u2 = xp_rng_uniform(r);
    double rad = sqrt(-2.0 * log(u1)), th = 6.283185307179586 * u2;
    r->spare = rad * sin(th);
    r->have_spare = 1;
    return rad * cos(th);
}

/* --------------------------------------------------------------- helpers */
void xp_die(const char *fmt, ...) {
    va_list ap;
    va_start(ap, fmt);
    fputs("error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

void *xp_xmalloc(size_t n) {
    void *p = malloc(n ? n : 1);
    if (!p) xp_die("out of memory (%zu bytes)", n);
    return p;
}

double xp_now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* --------------------------------------------------------------- options */
int xp_parse_double(const char *what, const char *s, double lo, double hi, double *out) {
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    /* also accept a fraction "1/16" */
    if (end != s && *end == '/') {
        char *end2;
        double d = strtod(end + 1, &end2);
        if (end2 != end + 1 && d != 0) {
            v /= d;
            end = end2;
        }
    }
    if (errno || end == s || *end || !(v >= lo && v <= hi)) {
        fprintf(stderr, "error: %s: '%s' is not a number in [%g, %g]\n", what, s, lo, hi);
        return -1;
    }
    *out = v;
    return 0;
}

int xp_parse_int(const char *what, const char *s, long lo, long hi, int *out) {
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi) {
        fprintf(stderr, "error: %s: '%s' is not an integer in [%ld, %ld]\n", what, s, lo, hi);
        return -1;
    }
    *out = (int)v;
    return 0;
}

char **xp_split_list(const char *s, int *n) {
    int cap = 1;
    for (const char *p = s; *p; p++) cap += *p == ',';
    char **v = xp_xmalloc(sizeof(char *) * (size_t)(cap + 1));
    int k = 0;
    const char *p = s;
    while (1) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        if (len) {
            v[k] = xp_xmalloc(len + 1);
            memcpy(v[k], p, len);
            v[k][len] = 0;
            k++;
        }
        if (!e) break;
        p = e + 1;
    }
    v[k] = NULL;
    if (n) *n = k;
    return v;
}

void xp_strv_free(char **v) {
    if (!v) return;
    for (char **p = v; *p; p++) free(*p);
    free(v);
}

static int cmp_double(const void *a, const void *b) {
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double xp_median(double *v, size_t n) {
    qsort(v, n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

char **xp_recipe_names(const char *recipes, int *n) {
    if (recipes) return xp_split_list(recipes, n);
    int k = 0;
    for (const char *const *p = flamia_recipe_preset_names(); *p; p++) k++;
    char **v = xp_xmalloc(sizeof(char *) * (size_t)(k + 1));
    for (int i = 0; i < k; i++) v[i] = strdup(flamia_recipe_preset_names()[i]);
    v[k] = NULL;
    *n = k;
    return v;
}

int xp_base_recipe(const xp_opts *o, const char *base, const char *varies, flamia_recipe *out) {
    if (o->recipes) {
        fprintf(stderr, "error: %s varies %s: use --base, not --recipes\n", o->experiment, varies);
        return -1;
    }
    if (flamia_recipe_preset(base, out) != FLAMIA_OK) {
        fprintf(stderr, "error: --base: %s\n", flamia_last_error());
        return -1;
    }
    return 0;
}

static const struct option base_options[] = {{"base", required_argument, 0, 1}, {0, 0, 0, 0}};
const struct option *const xp_base_options = base_options;

int xp_base_option(int c, const char *arg, void *ctx) {
    (void)c; /* --base, the only one */
    *(const char **)ctx = arg;
    return 0;
}

xp_opts xp_opts_default(const char *experiment) {
    xp_opts o;
    memset(&o, 0, sizeof o);
    o.experiment = experiment;
    o.seed = 1;
    o.backend = "cpu";
    o.scale = 1.0;
    o.backends_supported = 1;
    xp_input_cfg c = xp_input_defaults();
    o.outliers = c.outliers;
    o.outlier_scale = c.outlier_scale;
    o.oracle = "cpu";
    return o;
}

xp_input_cfg xp_opts_inputs(const xp_opts *o) {
    xp_input_cfg c = xp_input_defaults();
    c.outliers = o->outliers;
    c.outlier_scale = (float)o->outlier_scale;
    return c;
}

int xp_opts_handle(xp_opts *o, int c, const char *arg) {
    switch (c) {
    case XP_OPT_OUTLIERS: return xp_parse_int("--outliers", arg, 0, 256, &o->outliers) ? -1 : 1;
    case XP_OPT_OUTLIER_SCALE:
        return xp_parse_double("--outlier-scale", arg, 1e-3, 1e6, &o->outlier_scale) ? -1 : 1;
    case XP_OPT_SEED: {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(arg, &end, 0);
        if (errno || end == arg || *end) {
            fprintf(stderr, "error: --seed: '%s' is not an unsigned integer\n", arg);
            return -1;
        }
        o->seed = (uint64_t)v;
        return 1;
    }
    case XP_OPT_OUT: o->out = arg; return 1;
    case XP_OPT_BACKEND:
        if (strcmp(arg, "cpu") && strcmp(arg, "cuda")) {
            fprintf(stderr, "error: --backend: '%s' is neither cpu nor cuda\n", arg);
            return -1;
        }
        o->backend = arg;
        return 1;
    case XP_OPT_SCALE: return xp_parse_double("--scale", arg, 1e-6, 1.0, &o->scale) ? -1 : 1;
    case XP_OPT_HEADS: return xp_parse_int("--heads", arg, 1, 256, &o->heads) ? -1 : 1;
    case XP_OPT_WORKLOADS: o->workloads = arg; return 1;
    case XP_OPT_RECIPES: o->recipes = arg; return 1;
    case XP_OPT_QUIET: o->quiet = 1; return 1;
    case XP_OPT_ORACLE:
        if (strcmp(arg, "cpu") && strcmp(arg, "gpu")) {
            fprintf(stderr, "error: --oracle: '%s' is neither cpu nor gpu\n", arg);
            return -1;
        }
        o->oracle = arg;
        return 1;
    case XP_OPT_HELP: return 2;
    default: return 0;
    }
}

/* the common options, appended to each driver's own by xp_parse_options */
static const struct option common_longopts[] = {XP_COMMON_LONGOPTS};

/* 1 when c is the val of one of the n driver options */
static int is_driver_option(const struct option *extra, size_t n, int c) {
    for (size_t i = 0; i < n; i++)
        if (extra[i].val == c) return 1;
    return 0;
}

int xp_parse_options(xp_opts *o, int argc, char **argv, const struct option *extra,
                     int (*handle)(int c, const char *arg, void *ctx), void *ctx,
                     void (*usage)(const xp_opts *defaults)) {
    const xp_opts defaults = *o;
    const size_t n_common = sizeof common_longopts / sizeof common_longopts[0];
    size_t n_extra = 0;
    while (extra && extra[n_extra].name) n_extra++;
    struct option *lo = xp_xmalloc(sizeof *lo * (n_extra + n_common + 1));
    if (n_extra) memcpy(lo, extra, sizeof *lo * n_extra);
    memcpy(lo + n_extra, common_longopts, sizeof common_longopts);
    lo[n_extra + n_common] = (struct option){0, 0, 0, 0};

    int c, r = 0;
    while (!r && (c = getopt_long(argc, argv, "", lo, NULL)) != -1) {
        int h = xp_opts_handle(o, c, optarg);
        if (h == 2) {
            usage(&defaults);
            r = 1;
        } else if (h < 0) {
            r = 2;
        } else if (h == 0 && !is_driver_option(extra, n_extra, c)) { /* getopt's '?' among others */
            fprintf(stderr, "error: unknown option (see --help)\n");
            r = 2;
        } else if (h == 0 && handle(c, optarg, ctx)) {
            r = 2;
        }
    }
    if (!r && optind < argc) {
        fprintf(stderr, "error: unexpected argument '%s' (see --help)\n", argv[optind]);
        r = 2;
    }
    free(lo);
    return r;
}

int xp_opts_finish(xp_opts *o) {
    if (!o->out || !*o->out) {
        fprintf(stderr, "error: %s: --out FILE.h5 is required (see --help)\n", o->experiment);
        return -1;
    }
    size_t n = strlen(o->out);
    if (n < 3 || strcmp(o->out + n - 3, ".h5")) {
        fprintf(stderr, "error: %s: --out '%s' must end in .h5\n", o->experiment, o->out);
        return -1;
    }
    int want = !strcmp(o->backend, "cuda") ? 2 : 1;
    if (!(o->backends_supported & want)) {
        fprintf(stderr, "error: %s: --backend %s is not supported by this driver (supported: %s%s)\n",
                o->experiment, o->backend, (o->backends_supported & 1) ? "cpu " : "",
                (o->backends_supported & 2) ? "cuda" : "");
        return -1;
    }
    if (!strcmp(o->oracle, "gpu") && (!xp_have_gpu_oracle() || !flamia_cuda_available())) {
        fprintf(stderr, "error: %s: --oracle gpu: %s\n", o->experiment,
                xp_have_gpu_oracle() ? "no usable sm_90 GPU" : "this build has no GPU oracle (needs CUDA and cuBLAS)");
        return -1;
    }
    if (want == 2 && !flamia_cuda_available()) {
        fprintf(stderr, "error: %s: --backend cuda: no usable sm_90 GPU or libflamia built without CUDA\n",
                o->experiment);
        return -1;
    }
    if (o->recipes) {
        flamia_recipe r;
        char **v = xp_split_list(o->recipes, NULL);
        for (char **p = v; *p; p++)
            if (flamia_recipe_preset(*p, &r) != FLAMIA_OK) {
                fprintf(stderr, "error: --recipes: %s\n", flamia_last_error());
                xp_strv_free(v);
                return -1;
            }
        xp_strv_free(v);
    }
    return 0;
}

void xp_print_common_usage(const xp_opts *d) {
    printf("Common options:\n"
           "  --out FILE.h5        result file (required); written as FILE.h5.tmp.<pid>, renamed on success\n"
           "  --seed N             input seed (default %llu)\n"
           "  --backend cpu|cuda   where to run (default %s; supported:%s%s)\n"
           "  --scale S            multiply every document length by S in (0,1], e.g. 0.0625 or 1/16\n"
           "                       (default %g; the CPU reference is O(T^2 H D))\n"
           "  --heads N            query heads (default: the workload's, 16; GQA ratio kept)\n"
           "  --workloads LIST     comma list of catalogue names or specs (AxL+B..., logu:T:min:max:seed;\n"
           "                       gqa-SPEC: 16 query heads over 4 kv heads) (default %s)\n"
           "  --recipes LIST       comma list of recipe presets (default %s); PRESET-lsum is the\n"
           "                       preset with l summed over P's rounded values (numerics.md 3.4)\n"
           "  --outliers N         K outlier channels per head (default %d; 0: plain randn)\n"
           "  --outlier-scale X    their multiplier (default %g)\n"
           "  --oracle cpu|gpu     where the FP64 ground truth runs (default cpu; gpu: cuBLAS FP64,\n"
           "                       the same values to FP64 rounding, for full-size workloads)\n"
           "  --quiet              no progress on stderr\n"
           "  --help               this text\n",
           (unsigned long long)d->seed, d->backend, (d->backends_supported & 1) ? " cpu" : "",
           (d->backends_supported & 2) ? " cuda" : "", d->scale,
           d->workloads ? d->workloads : "(driver specific)", d->recipes ? d->recipes : "all presets",
           d->outliers, d->outlier_scale);
    printf("Workload catalogue (data/workloads/catalogue.tsv):");
    int n;
    const xp_catalogue_entry *c = xp_catalogue(&n);
    for (int i = 0; i < n; i++) printf("%s%s", i % 6 ? " " : "\n  ", c[i].name);
    printf("\nRecipes:");
    for (const char *const *p = flamia_recipe_preset_names(); *p; p++) printf(" %s", *p);
    printf("\n");
}

/* -------------------------------------------------------------- progress */
void xp_progress_init(xp_progress *p, const char *label, long total, int quiet) {
    p->label = label;
    p->total = total;
    p->done = 0;
    p->t0 = p->last = xp_now();
    p->quiet = quiet;
}

void xp_progress_step(xp_progress *p, const char *what) {
    p->done++;
    if (p->quiet) return;
    double now = xp_now();
    if (now - p->last < 0.5 && p->done < p->total) return;
    p->last = now;
    double el = now - p->t0;
    double eta = p->done ? el * (double)(p->total - p->done) / (double)p->done : 0;
    fprintf(stderr, "[%s] %ld/%ld (%3.0f%%) elapsed %.1fs eta %.1fs  %s\n", p->label, p->done, p->total,
            100.0 * (double)p->done / (double)(p->total ? p->total : 1), el, eta, what ? what : "");
}

void xp_progress_end(xp_progress *p) {
    if (!p->quiet)
        fprintf(stderr, "[%s] done: %ld cases in %.1fs\n", p->label, p->done, xp_now() - p->t0);
}
