/* h5out.c - result tables, the one HDF5 writer and provenance stamps (xp.h).
 * Plain HDF5 C API (no hdf5_hl needed). Files are written to OUT.tmp.<pid> and renamed
 * onto OUT only after every table was written and the file closed cleanly. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <hdf5.h>

#include "xp.h"

#ifndef XP_SOURCE_ROOT
#define XP_SOURCE_ROOT "."
#endif
#ifndef XP_BUILD_COMMIT
#define XP_BUILD_COMMIT "unknown"
#endif

/* ---------------------------------------------------------------- tables */
typedef struct {
    char name[64], units[32], desc[256];
    xp_coltype type;
    size_t n, cap;
    double *f;
    int64_t *i;
    char **s;
    int set;
} col;

struct xp_table {
    char name[64], desc[512];
    int ncols, cap;
    col *cols;
    size_t rows;
    int in_row;
};

xp_table *xp_table_new(const char *name, const char *description) {
    xp_table *t = calloc(1, sizeof *t);
    if (!t) xp_die("out of memory");
    snprintf(t->name, sizeof t->name, "%s", name);
    snprintf(t->desc, sizeof t->desc, "%s", description ? description : "");
    return t;
}

void xp_table_free(xp_table *t) {
    if (!t) return;
    for (int c = 0; c < t->ncols; c++) {
        free(t->cols[c].f);
        free(t->cols[c].i);
        if (t->cols[c].s)
            for (size_t k = 0; k < t->cols[c].n; k++) free(t->cols[c].s[k]);
        free(t->cols[c].s);
    }
    free(t->cols);
    free(t);
}

void xp_table_col(xp_table *t, const char *name, xp_coltype type, const char *units, const char *desc) {
    if (t->rows) xp_die("table %s: column %s added after rows", t->name, name);
    if (t->ncols == t->cap) {
        t->cap = t->cap ? 2 * t->cap : 16;
        t->cols = realloc(t->cols, sizeof(col) * (size_t)t->cap);
        if (!t->cols) xp_die("out of memory");
    }
    col *c = &t->cols[t->ncols++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    snprintf(c->units, sizeof c->units, "%s", units ? units : "");
    snprintf(c->desc, sizeof c->desc, "%s", desc ? desc : "");
    c->type = type;
}

static col *find(xp_table *t, const char *name) {
    for (int c = 0; c < t->ncols; c++)
        if (!strcmp(t->cols[c].name, name)) return &t->cols[c];
    xp_die("table %s has no column %s", t->name, name);
}

static void grow(col *c) {
    if (c->n < c->cap) return;
    c->cap = c->cap ? 2 * c->cap : 64;
    if (c->type == XP_F64) c->f = realloc(c->f, sizeof(double) * c->cap);
    if (c->type == XP_I64) c->i = realloc(c->i, sizeof(int64_t) * c->cap);
    if (c->type == XP_STR) c->s = realloc(c->s, sizeof(char *) * c->cap);
    if (!c->f && !c->i && !c->s) xp_die("out of memory");
}

void xp_row_begin(xp_table *t) {
    if (t->in_row) xp_die("table %s: row_begin inside a row", t->name);
    t->in_row = 1;
    for (int c = 0; c < t->ncols; c++) {
        col *k = &t->cols[c];
        grow(k);
        k->set = 0;
        if (k->type == XP_F64) k->f[k->n] = NAN;
        if (k->type == XP_I64) k->i[k->n] = 0;
        if (k->type == XP_STR) k->s[k->n] = NULL;
    }
}

void xp_set_s(xp_table *t, const char *name, const char *v) {
    col *c = find(t, name);
    if (c->type != XP_STR) xp_die("table %s: column %s is not a string", t->name, name);
    free(c->s[c->n]);
    c->s[c->n] = strdup(v ? v : "");
}

void xp_set_f(xp_table *t, const char *name, double v) {
    col *c = find(t, name);
    if (c->type == XP_I64) c->i[c->n] = (int64_t)v;
    else if (c->type == XP_F64) c->f[c->n] = v;
    else xp_die("table %s: column %s is a string", t->name, name);
}

void xp_set_i(xp_table *t, const char *name, int64_t v) {
    col *c = find(t, name);
    if (c->type == XP_I64) c->i[c->n] = v;
    else if (c->type == XP_F64) c->f[c->n] = (double)v;
    else xp_die("table %s: column %s is a string", t->name, name);
}

void xp_row_end(xp_table *t) {
    if (!t->in_row) xp_die("table %s: row_end outside a row", t->name);
    for (int c = 0; c < t->ncols; c++) {
        col *k = &t->cols[c];
        if (k->type == XP_STR && !k->s[k->n]) k->s[k->n] = strdup("");
        k->n++;
    }
    t->rows++;
    t->in_row = 0;
}

size_t xp_table_rows(const xp_table *t) { return t->rows; }

double xp_get_f(const xp_table *t, const char *name, size_t row) {
    const col *c = find((xp_table *)t, name);
    if (row >= c->n) xp_die("table %s: row %zu out of range", t->name, row);
    if (c->type == XP_F64) return c->f[row];
    if (c->type == XP_I64) return (double)c->i[row];
    xp_die("table %s: column %s is a string", t->name, name);
}

const char *xp_get_s(const xp_table *t, const char *name, size_t row) {
    const col *c = find((xp_table *)t, name);
    if (row >= c->n) xp_die("table %s: row %zu out of range", t->name, row);
    if (c->type != XP_STR) xp_die("table %s: column %s is not a string", t->name, name);
    return c->s[row];
}

/* ------------------------------------------------------------ provenance */
static void run_cmd(const char *cmd, char *buf, size_t n) {
    buf[0] = 0;
    FILE *p = popen(cmd, "r");
    if (!p) return;
    size_t k = fread(buf, 1, n - 1, p);
    buf[k] = 0;
    pclose(p);
    while (k && (buf[k - 1] == '\n' || buf[k - 1] == '\r' || buf[k - 1] == ' ')) buf[--k] = 0;
}

void xp_git_info(char *commit, size_t n, int *dirty) {
    char cmd[1024], out[4096];
    *dirty = -1;
    /* FLAMIA_GIT_COMMIT wins: a copied tree (the lent GPU machine) can carry a .git
     * whose HEAD is not the commit of its files */
    const char *env = getenv("FLAMIA_GIT_COMMIT");
    if (env && *env) {
        snprintf(commit, n, "%s", env);
        return;
    }
    snprintf(cmd, sizeof cmd, "git -C '%s' rev-parse HEAD 2>/dev/null", XP_SOURCE_ROOT);
    run_cmd(cmd, out, sizeof out);
    if (strlen(out) == 40) {
        snprintf(commit, n, "%s", out);
        /* dirty = uncommitted changes to the code that produces numbers (generated
         * tables and figures do not count) */
        snprintf(cmd, sizeof cmd,
                 "git -C '%s' status --porcelain --untracked-files=no -- kernels experiments "
                 "meson.build meson_options.txt 2>/dev/null | wc -l",
                 XP_SOURCE_ROOT);
        run_cmd(cmd, out, sizeof out);
        *dirty = atoi(out) > 0;
    } else {
        snprintf(commit, n, "%s", XP_BUILD_COMMIT);
    }
}

void xp_cpu_model(char *buf, size_t n) {
    snprintf(buf, n, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f) return;
    char line[512];
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "model name", 10)) {
            char *c = strchr(line, ':');
            if (c) {
                c++;
                while (*c == ' ' || *c == '\t') c++;
                c[strcspn(c, "\n")] = 0;
                snprintf(buf, n, "%s", c);
            }
            break;
        }
    fclose(f);
}

void xp_gpu_info(char *name, size_t n, char *driver, size_t m) {
    char out[1024];
    run_cmd("command -v nvidia-smi >/dev/null 2>&1 && nvidia-smi --query-gpu=name,driver_version "
            "--format=csv,noheader 2>/dev/null | head -n 1",
            out, sizeof out);
    char *comma = strchr(out, ',');
    if (!out[0] || !comma) {
        snprintf(name, n, "none");
        snprintf(driver, m, "none");
        return;
    }
    *comma = 0;
    char *d = comma + 1;
    while (*d == ' ') d++;
    snprintf(name, n, "%s", out);
    snprintf(driver, m, "%s", d);
}

void xp_utc_now(char *buf, size_t n) {
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* ---------------------------------------------------------------- output */
struct xp_out {
    hid_t file;
    char final[4096], tmp[4200];
    int failed;
};

static int attr_str(hid_t loc, const char *name, const char *v) {
    hid_t t = H5Tcopy(H5T_C_S1);
    size_t len = strlen(v);
    H5Tset_size(t, len ? len : 1);
    H5Tset_strpad(t, H5T_STR_NULLPAD);
    H5Tset_cset(t, H5T_CSET_UTF8);
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, t, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, t, len ? v : "");
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    H5Tclose(t);
    return (a < 0 || e < 0) ? -1 : 0;
}

static int attr_num(hid_t loc, const char *name, hid_t type, const void *v) {
    hid_t sp = H5Screate(H5S_SCALAR);
    hid_t a = H5Acreate2(loc, name, type, sp, H5P_DEFAULT, H5P_DEFAULT);
    herr_t e = a < 0 ? -1 : H5Awrite(a, type, v);
    if (a >= 0) H5Aclose(a);
    H5Sclose(sp);
    return (a < 0 || e < 0) ? -1 : 0;
}

void xp_out_attr_s(xp_out *f, const char *name, const char *v) {
    if (attr_str(f->file, name, v ? v : "")) f->failed = 1;
}
void xp_out_attr_f(xp_out *f, const char *name, double v) {
    if (attr_num(f->file, name, H5T_NATIVE_DOUBLE, &v)) f->failed = 1;
}
void xp_out_attr_i(xp_out *f, const char *name, int64_t v) {
    if (attr_num(f->file, name, H5T_NATIVE_INT64, &v)) f->failed = 1;
}

static int isalnum_c(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* argv as one shell-quoted line */
static void join_argv(int argc, char **argv, char *buf, size_t n) {
    size_t k = 0;
    buf[0] = 0;
    for (int i = 0; i < argc && k + 4 < n; i++) {
        const char *a = argv[i];
        int plain = *a != 0;
        for (const char *p = a; *p; p++)
            if (!(isalnum_c(*p) || strchr("-_./=:,+%@", *p))) plain = 0;
        if (i) buf[k++] = ' ';
        if (plain) {
            k += (size_t)snprintf(buf + k, n - k, "%s", a);
        } else {
            buf[k++] = '\'';
            for (const char *p = a; *p && k + 6 < n; p++) {
                if (*p == '\'') {
                    memcpy(buf + k, "'\\''", 4);
                    k += 4;
                } else
                    buf[k++] = *p;
            }
            buf[k++] = '\'';
        }
        if (k >= n) k = n - 1;
        buf[k] = 0;
    }
}

xp_out *xp_out_open(const xp_opts *o, int argc, char **argv) {
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    xp_out *f = calloc(1, sizeof *f);
    if (!f) xp_die("out of memory");
    snprintf(f->final, sizeof f->final, "%s", o->out);
    snprintf(f->tmp, sizeof f->tmp, "%s.tmp.%ld", o->out, (long)getpid());
    f->file = H5Fcreate(f->tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
    if (f->file < 0) {
        fprintf(stderr, "error: %s: cannot create '%s' (does the folder exist and is it writable?)\n",
                o->experiment, f->tmp);
        free(f);
        return NULL;
    }
    char buf[8192], b2[256];
    int dirty;
    xp_out_attr_s(f, "experiment", o->experiment);
    xp_out_attr_i(f, "schema_version", XP_SCHEMA_VERSION);
    xp_git_info(buf, sizeof buf, &dirty);
    xp_out_attr_s(f, "git_commit", buf);
    xp_out_attr_i(f, "git_dirty", dirty);
    join_argv(argc, argv, buf, sizeof buf);
    xp_out_attr_s(f, "argv", buf);
    xp_out_attr_i(f, "seed", (int64_t)o->seed);
    xp_out_attr_s(f, "backend", o->backend);
    xp_out_attr_s(f, "oracle", o->oracle); /* where the FP64 ground truth ran */
    char cpu[256], gpu[256], drv[128];
    xp_cpu_model(cpu, sizeof cpu);
    xp_gpu_info(gpu, sizeof gpu, drv, sizeof drv);
    xp_out_attr_s(f, "cpu_model", cpu);
    xp_out_attr_s(f, "gpu_name", gpu);
    xp_out_attr_s(f, "gpu_driver", drv);
    xp_out_attr_s(f, "device_name", !strcmp(o->backend, "cuda") ? gpu : cpu);
    xp_out_attr_s(f, "cuda_runtime", !strcmp(o->backend, "cuda") ? xp_cuda_runtime() : "n/a");
    xp_out_attr_i(f, "cpu_cores", sysconf(_SC_NPROCESSORS_ONLN));
    xp_utc_now(b2, sizeof b2);
    xp_out_attr_s(f, "utc_time", b2);
    if (gethostname(b2, sizeof b2)) snprintf(b2, sizeof b2, "unknown");
    b2[sizeof b2 - 1] = 0;
    xp_out_attr_s(f, "hostname", b2);
    xp_out_attr_s(f, "flamia_version", flamia_version_string());
    unsigned maj, min, rel;
    H5get_libversion(&maj, &min, &rel);
    snprintf(b2, sizeof b2, "%u.%u.%u", maj, min, rel);
    xp_out_attr_s(f, "hdf5_version", b2);
#if defined(__clang__)
    xp_out_attr_s(f, "compiler", "clang " __VERSION__);
#elif defined(__GNUC__)
    xp_out_attr_s(f, "compiler", "gcc " __VERSION__);
#else
    xp_out_attr_s(f, "compiler", "unknown");
#endif
    xp_out_attr_f(f, "scale", o->scale);
    xp_out_attr_i(f, "heads", o->heads);
    xp_out_attr_i(f, "outliers", o->outliers);
    xp_out_attr_f(f, "outlier_scale", o->outlier_scale);
    xp_out_attr_s(f, "inputs", "q, k, v, dout ~ N(0,1) (xoshiro256**, Box-Muller); k: `outliers` channels per kv "
                               "head x outlier_scale (experiments/common/compute.c)");
    if (f->failed) {
        fprintf(stderr, "error: %s: writing attributes to '%s' failed\n", o->experiment, f->tmp);
        xp_out_abort(f);
        return NULL;
    }
    return f;
}

int xp_out_table(xp_out *f, const xp_table *t) {
    hid_t gcpl = H5Pcreate(H5P_GROUP_CREATE);
    H5Pset_link_creation_order(gcpl, H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    hid_t g = H5Gcreate2(f->file, t->name, H5P_DEFAULT, gcpl, H5P_DEFAULT);
    H5Pclose(gcpl);
    if (g < 0) {
        fprintf(stderr, "error: cannot create group /%s in '%s'\n", t->name, f->tmp);
        f->failed = 1;
        return -1;
    }
    int bad = attr_str(g, "description", t->desc);
    int64_t rows = (int64_t)t->rows;
    bad |= attr_num(g, "rows", H5T_NATIVE_INT64, &rows);
    hsize_t dims[1] = {t->rows};
    for (int c = 0; c < t->ncols && !bad; c++) {
        const col *k = &t->cols[c];
        hid_t sp = H5Screate_simple(1, dims, NULL);
        hid_t ft, mt;
        char *packed = NULL;
        const void *data;
        size_t width = 1;
        if (k->type == XP_F64) {
            ft = H5Tcopy(H5T_IEEE_F64LE);
            mt = H5Tcopy(H5T_NATIVE_DOUBLE);
            data = k->f;
        } else if (k->type == XP_I64) {
            ft = H5Tcopy(H5T_STD_I64LE);
            mt = H5Tcopy(H5T_NATIVE_INT64);
            data = k->i;
        } else {
            for (size_t r = 0; r < t->rows; r++)
                if (strlen(k->s[r]) > width) width = strlen(k->s[r]);
            packed = calloc(t->rows ? t->rows : 1, width);
            if (!packed) xp_die("out of memory");
            for (size_t r = 0; r < t->rows; r++) memcpy(packed + r * width, k->s[r], strlen(k->s[r]));
            ft = H5Tcopy(H5T_C_S1);
            H5Tset_size(ft, width);
            H5Tset_strpad(ft, H5T_STR_NULLPAD);
            H5Tset_cset(ft, H5T_CSET_UTF8);
            mt = H5Tcopy(ft);
            data = packed;
        }
        hid_t d = H5Dcreate2(g, k->name, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
        if (d < 0 || (t->rows && H5Dwrite(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)) bad = 1;
        if (d >= 0) {
            bad |= attr_str(d, "units", k->units);
            bad |= attr_str(d, "description", k->desc);
            H5Dclose(d);
        }
        free(packed);
        H5Tclose(ft);
        H5Tclose(mt);
        H5Sclose(sp);
    }
    H5Gclose(g);
    if (bad) {
        fprintf(stderr, "error: writing table /%s to '%s' failed\n", t->name, f->tmp);
        f->failed = 1;
        return -1;
    }
    return 0;
}

int xp_out_commit(xp_out *f) {
    int bad = f->failed;
    if (H5Fclose(f->file) < 0) bad = 1;
    f->file = -1;
    if (!bad && rename(f->tmp, f->final) != 0) {
        perror("error: rename");
        bad = 1;
    }
    if (bad) {
        remove(f->tmp);
        fprintf(stderr, "error: '%s' not written\n", f->final);
    }
    free(f);
    return bad ? -1 : 0;
}

void xp_out_abort(xp_out *f) {
    if (!f) return;
    if (f->file >= 0) H5Fclose(f->file);
    remove(f->tmp);
    free(f);
}

int xp_out_base_table(const xp_opts *o, int argc, char **argv, const char *base, const xp_table *t) {
    xp_out *f = xp_out_open(o, argc, argv);
    if (!f) return 1;
    xp_out_attr_s(f, "workloads", o->workloads);
    xp_out_attr_s(f, "base_recipe", base);
    xp_out_table(f, t);
    return xp_out_commit(f) ? 1 : 0;
}
