/* h5read.c - loads a result file (xp.h schema) into memory (xp_read.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <hdf5.h>

#include "xp_read.h"

static char *attr_text(hid_t a) {
    hid_t t = H5Aget_type(a);
    H5T_class_t cls = H5Tget_class(t);
    char *out = NULL;
    if (cls == H5T_STRING) {
        if (H5Tis_variable_str(t) > 0) {
            char *p = NULL;
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(t)); /* h5py writes UTF-8: no ASCII<->UTF-8 conversion */
            if (H5Aread(a, mt, &p) >= 0 && p) {
                out = strdup(p);
                H5free_memory(p);
            }
            H5Tclose(mt);
        } else {
            size_t n = H5Tget_size(t);
            out = calloc(n + 1, 1);
            if (out && H5Aread(a, t, out) < 0) out[0] = 0;
        }
    } else if (cls == H5T_INTEGER) {
        long long v = 0;
        out = malloc(32);
        if (H5Aread(a, H5T_NATIVE_LLONG, &v) < 0) v = 0;
        if (out) snprintf(out, 32, "%lld", v);
    } else if (cls == H5T_FLOAT) {
        double v = 0;
        out = malloc(40);
        if (H5Aread(a, H5T_NATIVE_DOUBLE, &v) < 0) v = 0;
        if (out) snprintf(out, 40, "%.17g", v);
    } else {
        out = strdup("?");
    }
    H5Tclose(t);
    return out ? out : strdup("");
}

static char *attr_by_name(hid_t obj, const char *name) {
    if (H5Aexists(obj, name) <= 0) return strdup("");
    hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
    if (a < 0) return strdup("");
    char *s = attr_text(a);
    H5Aclose(a);
    return s;
}

typedef struct {
    xr_file *f;
} root_ctx;

static herr_t root_attr_cb(hid_t loc, const char *name, const H5A_info_t *info, void *op) {
    (void)info;
    xr_file *f = op;
    hid_t a = H5Aopen(loc, name, H5P_DEFAULT);
    if (a < 0) return 0;
    f->keys = realloc(f->keys, sizeof(char *) * (size_t)(f->nattr + 1));
    f->vals = realloc(f->vals, sizeof(char *) * (size_t)(f->nattr + 1));
    f->keys[f->nattr] = strdup(name);
    f->vals[f->nattr] = attr_text(a);
    f->nattr++;
    H5Aclose(a);
    return 0;
}

static herr_t col_cb(hid_t g, const char *name, const H5L_info_t *info, void *op) {
    (void)info;
    xr_table *t = op;
    hid_t d = H5Oopen(g, name, H5P_DEFAULT);
    if (d < 0) return -1;
    if (H5Iget_type(d) != H5I_DATASET) {
        H5Oclose(d);
        return 0;
    }
    hid_t sp = H5Dget_space(d);
    int nd = H5Sget_simple_extent_ndims(sp);
    hsize_t dims[4] = {0};
    if (nd != 1) {
        H5Sclose(sp);
        H5Dclose(d);
        return 0; /* only columns */
    }
    H5Sget_simple_extent_dims(sp, dims, NULL);
    t->cols = realloc(t->cols, sizeof(xr_col) * (size_t)(t->ncols + 1));
    xr_col *c = &t->cols[t->ncols++];
    memset(c, 0, sizeof *c);
    snprintf(c->name, sizeof c->name, "%s", name);
    char *u = attr_by_name(d, "units"), *ds = attr_by_name(d, "description");
    snprintf(c->units, sizeof c->units, "%s", u);
    snprintf(c->desc, sizeof c->desc, "%s", ds);
    free(u);
    free(ds);
    c->n = dims[0];
    hid_t ty = H5Dget_type(d);
    int bad = 0;
    if (H5Tget_class(ty) == H5T_STRING) {
        c->is_str = 1;
        c->s = calloc(c->n ? c->n : 1, sizeof(char *));
        if (H5Tis_variable_str(ty) > 0) {
            char **tmp = calloc(c->n ? c->n : 1, sizeof(char *));
            hid_t mt = H5Tcopy(H5T_C_S1);
            H5Tset_size(mt, H5T_VARIABLE);
            H5Tset_cset(mt, H5Tget_cset(ty));
            if (c->n && H5Dread(d, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, tmp) < 0) bad = 1;
            for (size_t i = 0; i < c->n; i++) {
                c->s[i] = strdup(tmp[i] ? tmp[i] : "");
                if (tmp[i]) H5free_memory(tmp[i]);
            }
            free(tmp);
            H5Tclose(mt);
        } else {
            size_t w = H5Tget_size(ty);
            char *buf = calloc(c->n ? c->n : 1, w);
            if (c->n && H5Dread(d, ty, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf) < 0) bad = 1;
            for (size_t i = 0; i < c->n; i++) {
                c->s[i] = calloc(w + 1, 1);
                memcpy(c->s[i], buf + i * w, w);
            }
            free(buf);
        }
    } else {
        c->f = calloc(c->n ? c->n : 1, sizeof(double));
        if (c->n && H5Dread(d, H5T_NATIVE_DOUBLE, H5S_ALL, H5S_ALL, H5P_DEFAULT, c->f) < 0) bad = 1;
    }
    if (c->n > t->rows) t->rows = c->n;
    H5Tclose(ty);
    H5Sclose(sp);
    H5Dclose(d);
    return bad ? -1 : 0;
}

static herr_t group_cb(hid_t root, const char *name, const H5L_info_t *info, void *op) {
    (void)info;
    xr_file *f = op;
    hid_t g = H5Oopen(root, name, H5P_DEFAULT);
    if (g < 0) return -1;
    if (H5Iget_type(g) != H5I_GROUP) {
        H5Oclose(g);
        return 0;
    }
    f->tables = realloc(f->tables, sizeof(xr_table) * (size_t)(f->ntables + 1));
    xr_table *t = &f->tables[f->ntables++];
    memset(t, 0, sizeof *t);
    snprintf(t->name, sizeof t->name, "%s", name);
    char *d = attr_by_name(g, "description");
    snprintf(t->desc, sizeof t->desc, "%s", d);
    free(d);
    hsize_t idx = 0;
    herr_t e = H5Literate(g, H5_INDEX_CRT_ORDER, H5_ITER_INC, &idx, col_cb, t);
    if (e < 0 && t->ncols == 0) {
        idx = 0;
        e = H5Literate(g, H5_INDEX_NAME, H5_ITER_INC, &idx, col_cb, t);
    }
    H5Gclose(g);
    return e < 0 ? -1 : 0;
}

int xr_load(const char *path, xr_file *f, char *err, size_t errlen) {
    memset(f, 0, sizeof *f);
    H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
    hid_t file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
    if (file < 0) {
        snprintf(err, errlen, "cannot open '%s' as HDF5", path);
        return -1;
    }
    hsize_t idx = 0;
    int bad = H5Aiterate2(file, H5_INDEX_NAME, H5_ITER_INC, &idx, root_attr_cb, f) < 0;
    idx = 0;
    if (!bad) bad = H5Literate(file, H5_INDEX_NAME, H5_ITER_INC, &idx, group_cb, f) < 0;
    H5Fclose(file);
    if (bad) {
        snprintf(err, errlen, "reading '%s' failed", path);
        xr_free(f);
        return -1;
    }
    return 0;
}

void xr_free(xr_file *f) {
    for (int i = 0; i < f->nattr; i++) {
        free(f->keys[i]);
        free(f->vals[i]);
    }
    free(f->keys);
    free(f->vals);
    for (int i = 0; i < f->ntables; i++) {
        xr_table *t = &f->tables[i];
        for (int c = 0; c < t->ncols; c++) {
            free(t->cols[c].f);
            if (t->cols[c].s)
                for (size_t k = 0; k < t->cols[c].n; k++) free(t->cols[c].s[k]);
            free(t->cols[c].s);
        }
        free(t->cols);
    }
    free(f->tables);
    memset(f, 0, sizeof *f);
}

const char *xr_attr(const xr_file *f, const char *key) {
    for (int i = 0; i < f->nattr; i++)
        if (!strcmp(f->keys[i], key)) return f->vals[i];
    return NULL;
}

const xr_table *xr_get_table(const xr_file *f, const char *name) {
    for (int i = 0; i < f->ntables; i++)
        if (!strcmp(f->tables[i].name, name)) return &f->tables[i];
    return NULL;
}

const xr_col *xr_get_col(const xr_table *t, const char *name) {
    for (int i = 0; i < t->ncols; i++)
        if (!strcmp(t->cols[i].name, name)) return &t->cols[i];
    return NULL;
}
