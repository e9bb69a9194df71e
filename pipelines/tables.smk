# tables.smk - one rule per paper table: paper_tables/<name>.md and .tex, rendered by
# pipelines/scripts/render_tables.py from the experiments' TSV exports. Each caption
# states the hardware, date and commit of the numbers.

RENDER = "pipelines/scripts/render_tables.py"
RENDER_DEPS = [RENDER, "pipelines/scripts/fxtsv.py"]

def tsv(exp):
    return RUNS + "/tsv/" + exp

TABLES += ["paper_tables/%s.%s" % (t, ext) for ext in ("md", "tex") for t in
           ("table_a_latency", "table_b_leak", "table_b2_crossdoc", "accuracy", "accuracy_by_workload",
            "ds_underflow", "table_d_scheduler")]

# Table A is GPU-only: rendered from shipped measurements data/measured/<gpu>/latency*.h5
# (or this run's, on device=cuda), else it says that it needs a GPU run.
MEASURED = sorted(glob.glob(config["measured_dir"] + "/*/latency*.h5"))
if DEVICE == "cuda" and "latency" in EXPERIMENTS:
    MEASURED.append(RUNS + "/latency.h5")

rule table_a_latency:
    input: h5=MEASURED, tool=H5TOTSV, deps=RENDER_DEPS
    output: md="paper_tables/table_a_latency.md", tex="paper_tables/table_a_latency.tex"
    params:
        cfg=CONFIG_JSON,
        files=" ".join("h5_%03d=%s" % (i, f) for i, f in enumerate(MEASURED))
    shell:
        "{PY} {RENDER} table_a_latency --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "h5totsv={input.tool} {params.files}"

rule table_b_leak:
    input: leak=tsv("leak_probe"), outl=tsv("leak_probe_outliers"), deps=RENDER_DEPS
    output:
        md="paper_tables/table_b_leak.md", tex="paper_tables/table_b_leak.tex",
        md2="paper_tables/table_b2_crossdoc.md", tex2="paper_tables/table_b2_crossdoc.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} table_b_leak --md {output.md} --tex {output.tex} --md2 {output.md2} "
        "--tex2 {output.tex2} --config {params.cfg:q} leak={input.leak} leak_outliers={input.outl}"

rule table_accuracy:
    input: acc=tsv("accuracy"), deps=RENDER_DEPS
    output:
        md="paper_tables/accuracy.md", tex="paper_tables/accuracy.tex",
        md2="paper_tables/accuracy_by_workload.md", tex2="paper_tables/accuracy_by_workload.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} accuracy --md {output.md} --tex {output.tex} --md2 {output.md2} --tex2 {output.tex2} "
        "--config {params.cfg:q} accuracy={input.acc}"

rule table_ds_underflow:
    input: ds=tsv("ds_underflow"), deps=RENDER_DEPS
    output: md="paper_tables/ds_underflow.md", tex="paper_tables/ds_underflow.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} ds_underflow --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "ds_underflow={input.ds}"

rule table_d_scheduler:
    input: s=tsv("sched_ablation"), deps=RENDER_DEPS
    output: md="paper_tables/table_d_scheduler.md", tex="paper_tables/table_d_scheduler.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} table_d_scheduler --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "sched_ablation={input.s}"

# ---- one target per experiment, by name: `snakemake -c2 leak_probe`
rule leak_probe:
    input: rules.table_b_leak.output, "figures/leak_probe.png", "figures/leak_probe.pdf"

rule accuracy:
    input: rules.table_accuracy.output, "figures/accuracy.png", "figures/accuracy.pdf"

rule ds_underflow:
    input: rules.table_ds_underflow.output, "figures/ds_underflow.png", "figures/ds_underflow.pdf"

rule sched_ablation:
    input: rules.table_d_scheduler.output, "figures/sched_ablation.png", "figures/sched_ablation.pdf"

rule latency:
    input: rules.table_a_latency.output
