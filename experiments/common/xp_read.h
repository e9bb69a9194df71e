/* xp_read.h - reads an experiment result file (schema in xp.h) back into memory.
 * Used by h5totsv (HDF5 -> TSV export for the pipeline) and the driver tests. */
#ifndef FLAMIA_XP_READ_H
#define FLAMIA_XP_READ_H

#include <stddef.h>

typedef struct {
    char name[64], units[32], desc[256];
    int is_str;
    size_t n;
    double *f;  /* numeric columns (int64 converted) */
    char **s;   /* string columns */
} xr_col;

typedef struct {
    char name[64], desc[512];
    int ncols;
    xr_col *cols;
    size_t rows;
} xr_table;

typedef struct {
    int nattr;
    char **keys, **vals; /* root attributes as text */
    int ntables;
    xr_table *tables;
} xr_file;

/* Loads every root attribute and every group of 1-D columns. 0, or -1 with err set. */
int xr_load(const char *path, xr_file *f, char *err, size_t errlen);
void xr_free(xr_file *f);
const char *xr_attr(const xr_file *f, const char *key); /* NULL when absent */
const xr_table *xr_get_table(const xr_file *f, const char *name);
const xr_col *xr_get_col(const xr_table *t, const char *name);

#endif
