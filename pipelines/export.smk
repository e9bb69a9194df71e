# export.smk - HDF5 -> TSV (experiments/common/h5totsv.c): meta.tsv, <table>.tsv,
# <table>.columns.tsv per result file, for gnuplot and the table scripts.

rule export:
    input: h5=RUNS + "/{exp}.h5", tool=H5TOTSV
    output: directory(RUNS + "/tsv/{exp}")
    wildcard_constraints: exp="|".join(EXPERIMENTS)
    shell: "rm -rf {output} && {input.tool} {input.h5} {output}"
