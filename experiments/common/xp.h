/*
 * xp.h - shared plumbing of the FLAMIA-H experiment drivers (experiments/<name>/main.c).
 *
 *   options   getopt_long helpers: --help --seed --out --backend --scale --heads
 *             --workloads --recipes --quiet, parsed the same way by every driver
 *   workloads the paper's workload catalogue (data/workloads/catalogue.tsv is written
 *             from it by `xp_workloads --tsv`) and a spec grammar for custom packs
 *   inputs    deterministic randn inputs with outlier channels (documented below)
 *   tables    results as columns: a table is a set of equal-length 1-D columns, each
 *             with units and a description; one HDF5 group per table
 *   output    one HDF5 file per run, root attributes stamped with provenance, written
 *             to a temporary name and renamed on success (never a half file)
 *   metrics   cosine, relative L2, max relative row change
 *   progress  "cases done / total, elapsed, eta" lines on stderr
 *
 * Schema (schema_version 1), read back by experiments/common/h5totsv.c:
 *   /                 attributes: experiment, schema_version, git_commit, git_dirty, argv,
 *                     seed, backend, device_name, cpu_model, gpu_name, gpu_driver,
 *                     cuda_runtime, utc_time, hostname, flamia_version, hdf5_version,
 *                     compiler, plus driver parameters (scale, heads, ...)
 *   /<table>/         group, attributes: description, rows
 *   /<table>/<col>    1-D dataset (float64, int64 or fixed-length string), attributes:
 *                     units ("1" for dimensionless, "" for labels), description
 */
#ifndef FLAMIA_XP_H
#define FLAMIA_XP_H

#include <stddef.h>
#include <stdint.h>

#include "flamia.h"

#define XP_SCHEMA_VERSION 1

/* ------------------------------------------------------------------ rng */
typedef struct {
    uint64_t s[4];
    int have_spare;
    double spare;
} xp_rng;
void xp_rng_seed(xp_rng *r, uint64_t seed, uint64_t stream);
uint64_t xp_rng_u64(xp_rng *r);
double xp_rng_uniform(xp_rng *r); /* [0, 1) */
double xp_rng_normal(xp_rng *r);  /* N(0, 1), Box-Muller */

/* input generator knobs (see "inputs" below) */
typedef struct {
    int outliers;
    float outlier_scale;
    float dout_scale;
} xp_input_cfg;

/* --------------------------------------------------------------- options */
typedef struct {
    const char *experiment; /* driver name */
    uint64_t seed;
    const char *out;        /* --out FILE.h5 (required) */
    const char *backend;    /* "cpu" or "cuda" */
    double scale;           /* document-length factor, (0, 1] */
    int heads;              /* 0: catalogue's heads; else heads_q override (GQA ratio kept) */
    const char *workloads;  /* comma list of catalogue names / specs */
    const char *recipes;    /* comma list of recipe presets */
    int quiet;
    int backends_supported; /* bit 0: cpu, bit 1: cuda */
    int outliers;           /* K outlier channels per head (--outliers, default 4) */
    double outlier_scale;   /* their multiplier (--outlier-scale, default 20) */
    const char *oracle;     /* where the FP64 ground truth runs: "cpu" (default) or "gpu" (--oracle) */
} xp_opts;

/* Long options every driver accepts; xp_parse_options appends them to the driver's own. */
#define XP_OPT_BASE 1000
enum { XP_OPT_SEED = XP_OPT_BASE, XP_OPT_OUT, XP_OPT_BACKEND, XP_OPT_SCALE, XP_OPT_HEADS,
       XP_OPT_WORKLOADS, XP_OPT_RECIPES, XP_OPT_QUIET, XP_OPT_HELP, XP_OPT_OUTLIERS,
       XP_OPT_OUTLIER_SCALE, XP_OPT_ORACLE };
#define XP_COMMON_LONGOPTS                                                                 \
    {"seed", required_argument, 0, XP_OPT_SEED}, {"out", required_argument, 0, XP_OPT_OUT}, \
    {"backend", required_argument, 0, XP_OPT_BACKEND},                                      \
    {"scale", required_argument, 0, XP_OPT_SCALE},                                          \
    {"heads", required_argument, 0, XP_OPT_HEADS},                                          \
    {"workloads", required_argument, 0, XP_OPT_WORKLOADS},                                  \
    {"recipes", required_argument, 0, XP_OPT_RECIPES},                                      \
    {"quiet", no_argument, 0, XP_OPT_QUIET}, {"help", no_argument, 0, XP_OPT_HELP},          \
    {"outliers", required_argument, 0, XP_OPT_OUTLIERS},                                    \
    {"outlier-scale", required_argument, 0, XP_OPT_OUTLIER_SCALE},                          \
    {"oracle", required_argument, 0, XP_OPT_ORACLE}

/* Defaults every driver starts from (then sets experiment, workloads, scale, backends). */
xp_opts xp_opts_default(const char *experiment);
/* The input configuration the options select. */
xp_input_cfg xp_opts_inputs(const xp_opts *o);
/* Handles a common option. Returns 1 when handled, 0 when c is not common, -1 on a
 * bad value (message already printed); XP_OPT_HELP returns 2 (caller prints usage). */
int xp_opts_handle(xp_opts *o, int c, const char *arg);
/* getopt_long over the driver's own options `extra` (ended by a zero entry; NULL for none;
 * their val fields neither '?' nor XP_OPT_*) plus the common ones, which xp_opts_handle
 * takes. Each driver option goes to handle(c, arg, ctx) (may be NULL when there are none):
 * 0 when taken, nonzero after printing why. Returns 0 to go on; 1 after --help, with
 * usage(&defaults) printed, defaults being *o as passed in (the caller exits 0); 2 on any
 * error, already printed: a bad value, an unknown option, an unexpected argument (the
 * caller exits 2). */
struct option; /* <getopt.h> */
int xp_parse_options(xp_opts *o, int argc, char **argv, const struct option *extra,
                     int (*handle)(int c, const char *arg, void *ctx), void *ctx,
                     void (*usage)(const xp_opts *defaults));
/* Checks required options (--out) and backend support; prints why and returns -1. */
int xp_opts_finish(xp_opts *o);
/* Prints the common options' help (with the driver's defaults) to stdout. */
void xp_print_common_usage(const xp_opts *defaults);

/* Parsing helpers: return 0 on success, -1 with a message on stderr. */
int xp_parse_double(const char *what, const char *s, double lo, double hi, double *out);
int xp_parse_int(const char *what, const char *s, long lo, long hi, int *out);
/* Splits a comma list into a NULL-terminated array of strings (free with xp_strv_free). */
char **xp_split_list(const char *s, int *n);
void xp_strv_free(char **v);
/* The median of v[0..n), n >= 1 (the mean of the middle two when n is even); sorts v in
 * place, so v[0] is then the minimum. */
double xp_median(double *v, size_t n);
/* The recipe list of --recipes, or every preset when it is NULL (free with xp_strv_free). */
char **xp_recipe_names(const char *recipes, int *n);
/* Drivers that vary one recipe take it as --base: refuses --recipes (saying the driver varies
 * `varies`) and an unknown preset, with a message; 0 or -1. */
int xp_base_recipe(const xp_opts *o, const char *base, const char *varies, flamia_recipe *out);
/* --base RECIPE as a driver's only own option: xp_parse_options(&o, argc, argv, xp_base_options,
 * xp_base_option, &base, usage) sets the const char *base */
extern const struct option *const xp_base_options;
int xp_base_option(int c, const char *arg, void *ctx);

/* ------------------------------------------------------------- workloads */
typedef struct {
    char name[64];      /* catalogue name or the spec */
    char kind[16];      /* equal, skewed, variable, gqa, custom */
    char spec[96];      /* e.g. "4x4096", "8192+32x256", "logu:16384:32:8192:16" */
    int num_docs;
    int total_tokens;
    int32_t *cu_seqlens; /* [num_docs + 1] */
    int heads_q, heads_kv, head_dim;
    double scale;
    int max_len;
} xp_workload;

typedef struct {
    const char *name, *kind, *spec;
    int heads_q, heads_kv, head_dim;
    const char *note;
} xp_catalogue_entry;
const xp_catalogue_entry *xp_catalogue(int *n);
/* Builds a workload from a catalogue name or a spec ("AxL+B+CxM", "logu:T:min:max:seed"), lengths multiplied by scale (rounded, at least 1), heads_q replaced
 * by heads when > 0 (GQA ratio kept). Returns 0, or -1 with a reason in err. */
int xp_workload_make(const char *name_or_spec, double scale, int heads, xp_workload *w, char *err,
                     size_t errlen);
void xp_workload_free(xp_workload *w);
/* Every workload of the comma list o->workloads at o->scale and o->heads: an array of *n (at
 * least one element allocated), or NULL after printing "error: <why>" (a driver then exits 2).
 * Free with xp_workloads_free. */
xp_workload *xp_workloads_make(const xp_opts *o, int *n);
void xp_workloads_free(xp_workload *ws, int n);
flamia_shape xp_workload_shape(const xp_workload *w);
/* sum over documents of len*(len+1)/2 : causal (query, key) pairs per head */
double xp_workload_causal_pairs(const xp_workload *w);

/* ---------------------------------------------------------------- inputs */
/* Inputs of one packed attention call, [T][H][D] floats.
 *  q, k, v, dout ~ N(0, 1) (independent streams derived from seed);
 *  k: `outliers` head-dim channels per kv head (chosen per head by the seed) multiplied by
 *     `outlier_scale` (default 4 channels x 20), the outlier-K-channel pattern of real
 *     models that breaks fixed pre-scales (PAPER.md, "data-dependent pre-scale");
 *  dout additionally multiplied by dout_scale (default 1: block scaling is scale-free,
 *  only the FIXED dS rule of ds_underflow depends on it). */
xp_input_cfg xp_input_defaults(void);
typedef struct {
    size_t nq, nkv; /* element counts */
    float *q, *k, *v, *dout;
} xp_inputs;
int xp_inputs_make(const xp_workload *w, uint64_t seed, const xp_input_cfg *cfg, xp_inputs *in);
int xp_inputs_copy(const xp_inputs *src, xp_inputs *dst);
void xp_inputs_free(xp_inputs *in);
/* floats -> a new array of their BF16 bit patterns (round to nearest even; free it), and back
 * (exact): the host side of the BF16 tensors the CUDA calls take */
uint16_t *xp_to_bf16(const float *x, size_t n);
void xp_from_bf16(const uint16_t *b, float *x, size_t n);

/* ------------------------------------------------------------ attention */
/* Results of one training call (forward + backward) on the CPU reference. */
typedef struct {
    size_t nq, nkv, nlse;
    float *o, *lse, *dq, *dk, *dv;
    flamia_ref_stats stats;
} xp_result;
int xp_result_alloc(xp_result *r, const xp_workload *w);
void xp_result_free(xp_result *r);
/* forward + backward_ex with the CPU reference; prints flamia_last_error on failure */
int xp_run_ref(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in, xp_result *out);
/* forward + backward on the backend the options name: cpu = xp_run_ref; cuda = BF16
 * inputs through flamia_cuda_quantize/forward/backward (common/cuda_run.c). Returns 0,
 * 1 when the backend could run the forward only (dq, dk, dv set to NaN), -1 on error. */
int xp_run(const xp_opts *o, const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in, xp_result *out);
const char *xp_cuda_runtime(void); /* CUDA runtime/driver versions, or "n/a ..." */
/* the forward alone on the GPU (--backend cuda): open uploads the inputs as BF16 and quantizes
 * them once (NULL with a message on failure: no CUDA, an API error); run makes `warmup`
 * untimed and `iters` timed flamia_cuda_forward calls, *ms their median by CUDA events (NaN
 * for iters 0; at least one call is made); output copies the last call's O as floats after
 * checking the workspace's non-finite record (flamia_cuda_check_finite). run and output
 * return 0, or -1 with a message. */
typedef struct xp_cuda_fwd xp_cuda_fwd;
xp_cuda_fwd *xp_cuda_fwd_open(const flamia_recipe *rc, const xp_workload *w, const xp_inputs *in);
int xp_cuda_fwd_run(xp_cuda_fwd *h, int warmup, int iters, double *ms);
int xp_cuda_fwd_output(xp_cuda_fwd *h, float *o);
void xp_cuda_fwd_close(xp_cuda_fwd *h);
typedef struct {
    size_t nq, nkv;
    double *o, *lse, *dq, *dk, *dv;
} xp_result64;
/* the FP64 ground truth (flamia_ref64_*) where --oracle says: cpu, or gpu (flamia_cuda_ref64,
 * cuBLAS; the same values to FP64 rounding, seconds instead of minutes at full size) */
int xp_run_ref64(const xp_opts *o, const xp_workload *w, const xp_inputs *in, xp_result64 *out);
/* the inputs the options describe (seed, outliers, dO scale: xp_opts_inputs) and their FP64
 * ground truth, the first step of every accuracy-style experiment's workload loop; -1 with a
 * message (nothing left allocated) when the oracle fails */
int xp_inputs_with_truth(const xp_opts *o, const xp_workload *w, xp_inputs *in, xp_result64 *truth);
/* 1 when this build has the GPU oracle (CUDA and cuBLAS found) */
int xp_have_gpu_oracle(void);
/* the GPU oracle's call (common/cuda_run.c); -1 with a message when the build lacks it */
int xp_ref64_gpu(const flamia_shape *s, const xp_inputs *in, xp_result64 *r);
void xp_result64_free(xp_result64 *r);

/* --------------------------------------------------------------- metrics */
/* over tokens [t0, t1) of a [T][H][D] tensor (all heads) */
double xp_cosine_f64(const float *a, const double *ref, int t0, int t1, int H, int D);
double xp_rel_l2_f64(const float *a, const double *ref, int t0, int t1, int H, int D);
/* max over (token in [t0,t1), head) of ||a-b||_2 / ||b||_2 (rows with ||b|| = 0 count
 * their ||a|| alone); a NaN anywhere gives NaN */
double xp_max_row_rel_change(const float *a, const float *b, int t0, int t1, int H, int D);
/* ||a - b||_F / ||b||_F over tokens [t0, t1), all heads (NaN anywhere gives NaN) */
double xp_rel_fro_change(const float *a, const float *b, int t0, int t1, int H, int D);
/* fraction of elements in [t0, t1) that differ bitwise */
double xp_changed_fraction(const float *a, const float *b, int t0, int t1, int H, int D);
double xp_cosine_ff(const float *a, const float *b, int t0, int t1, int H, int D);

/* ---------------------------------------------------------------- tables */
typedef enum { XP_STR, XP_F64, XP_I64 } xp_coltype;
typedef struct xp_table xp_table;
xp_table *xp_table_new(const char *name, const char *description);
void xp_table_free(xp_table *t);
/* units: "1" dimensionless, "" labels, else a unit ("ms", "s", "tiles", ...) */
void xp_table_col(xp_table *t, const char *name, xp_coltype type, const char *units,
                  const char *description);
void xp_row_begin(xp_table *t);
void xp_set_s(xp_table *t, const char *col, const char *v);
void xp_set_f(xp_table *t, const char *col, double v);
void xp_set_i(xp_table *t, const char *col, int64_t v);
void xp_row_end(xp_table *t); /* unset cells: "" / NaN / 0 */
size_t xp_table_rows(const xp_table *t);
/* read back a cell of a finished row (numeric columns as double) */
double xp_get_f(const xp_table *t, const char *col, size_t row);
const char *xp_get_s(const xp_table *t, const char *col, size_t row);

/* ---------------------------------------------------------------- output */
typedef struct xp_out xp_out;
/* Creates OUT.tmp.<pid> beside --out and stamps the provenance attributes. NULL on error. */
xp_out *xp_out_open(const xp_opts *o, int argc, char **argv);
void xp_out_attr_s(xp_out *f, const char *name, const char *v);
void xp_out_attr_f(xp_out *f, const char *name, double v);
void xp_out_attr_i(xp_out *f, const char *name, int64_t v);
int xp_out_table(xp_out *f, const xp_table *t);
/* Closes and renames onto --out. Returns 0, or -1 (temporary removed). */
int xp_out_commit(xp_out *f);
void xp_out_abort(xp_out *f); /* closes and removes the temporary */
/* The whole file of a driver that varies one recipe (--base): provenance, attributes workloads
 * and base_recipe, and its one table. 0, or 1 when nothing was written. */
int xp_out_base_table(const xp_opts *o, int argc, char **argv, const char *base, const xp_table *t);

/* provenance (also used by the output) */
void xp_git_info(char *commit, size_t n, int *dirty);
void xp_cpu_model(char *buf, size_t n);
void xp_gpu_info(char *name, size_t n, char *driver, size_t m); /* "none" without nvidia-smi */
void xp_utc_now(char *buf, size_t n);

/* -------------------------------------------------------------- progress */
typedef struct {
    const char *label;
    long total, done;
    double t0, last;
    int quiet;
} xp_progress;
void xp_progress_init(xp_progress *p, const char *label, long total, int quiet);
void xp_progress_step(xp_progress *p, const char *what); /* done++, print at most 2/s */
void xp_progress_end(xp_progress *p);
double xp_now(void); /* monotonic seconds */

/* --------------------------------------------------------------- helpers */
void *xp_xmalloc(size_t n); /* exits with a message on failure */
void xp_die(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2), noreturn))
#endif
    ;

#endif
