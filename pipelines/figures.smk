# figures.smk - one rule per figure: plot-ready TSV (pipelines/scripts/plotdata.py), then
# the figure's gnuplot script (figures/<name>.gp) writes figures/<name>.png and .pdf.

FIGURE_SOURCES = {  # figure -> experiment whose export it reads
    "leak_probe": "leak_probe",
    "accuracy": "accuracy",
    "ds_underflow": "ds_underflow",
    "mismatch": "mismatch",
    "sched_ablation": "sched_ablation",
    "training": "training",
    "training_mismatch": "training_mismatch",
}
FIGURES += ["figures/%s.%s" % (f, ext) for f in FIGURE_SOURCES for ext in ("png", "pdf")]

def colour_words(keys):
    return " ".join(config["colours"].get(k, "#000000") for k in keys)

rule figure:
    input:
        tsv=lambda wc: RUNS + "/tsv/" + FIGURE_SOURCES[wc.fig],
        gp="figures/{fig}.gp",
        script="pipelines/scripts/plotdata.py"
    output: png="figures/{fig}.png", pdf="figures/{fig}.pdf"
    wildcard_constraints: fig="|".join(FIGURE_SOURCES)
    params:
        cfg=CONFIG_JSON,
        data=lambda wc: RUNS + "/plot/" + wc.fig + ".tsv",
        colours=lambda wc: colour_words(config["recipes"]) if wc.fig == "accuracy" else colour_words(
            ["natural_static", "natural_dynamic", "longest_first_static", "longest_first_dynamic"])
    shell:
        "{PY} {input.script} {wildcards.fig} {input.tsv} {params.data} --config {params.cfg:q} && "
        "gnuplot -e \"datafile='{params.data}'; outbase='figures/{wildcards.fig}'; "
        "colours='{params.colours}'; caption='$(cat {params.data}.caption)'\" {input.gp}"
