/* h5totsv - exports one experiment result file (xp.h schema) to TSV for the pipeline.
 *
 *   h5totsv RESULT.h5 OUTDIR
 *     OUTDIR/meta.tsv              key <TAB> value, one line per root attribute
 *     OUTDIR/<table>.tsv           header line of column names, then one line per row
 *     OUTDIR/<table>.columns.tsv   column <TAB> units <TAB> description
 *   h5totsv --attr RESULT.h5 NAME  prints one root attribute
 *
 * Numbers are printed with 10 significant digits ("nan" for NaN), so gnuplot and the
 * table scripts read them directly. Used by pipelines/export.smk. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "xp_read.h"

static void put_clean(FILE *f, const char *s) {
    for (; *s; s++) fputc((*s == '\t' || *s == '\n' || *s == '\r') ? ' ' : *s, f);
}

static void put_num(FILE *f, double v) {
    if (isnan(v)) fputs("nan", f);
    else if (isinf(v)) fputs(v > 0 ? "inf" : "-inf", f);
    else fprintf(f, "%.10g", v);
}

static FILE *open_out(const char *dir, const char *name, const char *suffix) {
    char path[4096];
    snprintf(path, sizeof path, "%s/%s%s", dir, name, suffix);
    FILE *f = fopen(path, "w");
    if (!f) fprintf(stderr, "h5totsv: cannot write '%s': %s\n", path, strerror(errno));
    return f;
}

int main(int argc, char **argv) {
    char err[512];
    xr_file f;
    if (argc == 4 && !strcmp(argv[1], "--attr")) {
        if (xr_load(argv[2], &f, err, sizeof err)) {
            fprintf(stderr, "h5totsv: %s\n", err);
            return 1;
        }
        const char *v = xr_attr(&f, argv[3]);
        if (!v) {
            fprintf(stderr, "h5totsv: '%s' has no root attribute '%s'\n", argv[2], argv[3]);
            xr_free(&f);
            return 1;
        }
        printf("%s\n", v);
        xr_free(&f);
        return 0;
    }
    if (argc != 3 || argv[1][0] == '-') {
        fprintf(stderr, "usage: h5totsv RESULT.h5 OUTDIR\n       h5totsv --attr RESULT.h5 NAME\n");
        return argc == 2 && !strcmp(argv[1], "--help") ? 0 : 2;
    }
    if (xr_load(argv[1], &f, err, sizeof err)) {
        fprintf(stderr, "h5totsv: %s\n", err);
        return 1;
    }
    if (mkdir(argv[2], 0777) && errno != EEXIST) {
        fprintf(stderr, "h5totsv: cannot create '%s': %s\n", argv[2], strerror(errno));
        return 1;
    }
    int bad = 0;
    FILE *m = open_out(argv[2], "meta", ".tsv");
    if (!m) return 1;
    for (int i = 0; i < f.nattr; i++) {
        put_clean(m, f.keys[i]);
        fputc('\t', m);
        put_clean(m, f.vals[i]);
        fputc('\n', m);
    }
    bad |= fclose(m) != 0;
    for (int t = 0; t < f.ntables; t++) {
        const xr_table *tb = &f.tables[t];
        FILE *o = open_out(argv[2], tb->name, ".tsv"), *c = open_out(argv[2], tb->name, ".columns.tsv");
        if (!o || !c) return 1;
        fprintf(c, "column\tunits\tdescription\n");
        for (int k = 0; k < tb->ncols; k++) {
            fprintf(o, "%s%s", k ? "\t" : "", tb->cols[k].name);
            put_clean(c, tb->cols[k].name);
            fputc('\t', c);
            put_clean(c, tb->cols[k].units);
            fputc('\t', c);
            put_clean(c, tb->cols[k].desc);
            fputc('\n', c);
        }
        fputc('\n', o);
        for (size_t r = 0; r < tb->rows; r++) {
            for (int k = 0; k < tb->ncols; k++) {
                const xr_col *col = &tb->cols[k];
                if (k) fputc('\t', o);
                if (r >= col->n) continue;
                if (col->is_str) put_clean(o, col->s[r][0] ? col->s[r] : "-");
                else put_num(o, col->f[r]);
            }
            fputc('\n', o);
        }
        bad |= fclose(o) != 0;
        bad |= fclose(c) != 0;
    }
    xr_free(&f);
    if (bad) fprintf(stderr, "h5totsv: write error\n");
    return bad;
}
