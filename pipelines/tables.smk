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

# Table D's exact-option row on the kernels, from the same measured files as Table A
TABLES += ["paper_tables/table_d_exact_cost.%s" % ext for ext in ("md", "tex")]

rule table_d_exact_cost:
    input: h5=MEASURED, tool=H5TOTSV, deps=RENDER_DEPS
    output: md="paper_tables/table_d_exact_cost.md", tex="paper_tables/table_d_exact_cost.tex"
    params:
        cfg=CONFIG_JSON,
        files=" ".join("h5_%03d=%s" % (i, f) for i, f in enumerate(MEASURED))
    shell:
        "{PY} {RENDER} table_d_gpu --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "h5totsv={input.tool} {params.files}"

# Table D's deterministic-dQ row, from the latency driver's --deterministic runs (their own
# files: the default and deterministic backward of one measurement, not part of Table A).
# device=cuda: this run's pair only (the shipped pair comes from another GPU and commit).
# one GPU's pair: the first <gpu> folder that has both
DETERMINISTIC = next(([d + "/deterministic_default.h5", d + "/deterministic_on.h5"]
                      for d in sorted(glob.glob(config["measured_dir"] + "/*"))
                      if all(os.path.exists(d + "/deterministic_%s.h5" % m) for m in ("default", "on"))), [])
if DEVICE == "cuda" and "deterministic_default" in EXPERIMENTS and "deterministic_on" in EXPERIMENTS:
    DETERMINISTIC = [RUNS + "/deterministic_default.h5", RUNS + "/deterministic_on.h5"]
TABLES += ["paper_tables/table_d_deterministic_cost.%s" % ext for ext in ("md", "tex")]

rule table_d_deterministic_cost:
    input: det=DETERMINISTIC, tool=H5TOTSV, deps=RENDER_DEPS
    output: md="paper_tables/table_d_deterministic_cost.md", tex="paper_tables/table_d_deterministic_cost.tex"
    params:
        cfg=CONFIG_JSON,
        files=" ".join("det_%03d=%s" % (i, f) for i, f in enumerate(DETERMINISTIC))
    shell:
        "{PY} {RENDER} table_d_det --md {output.md} --tex {output.tex} --config {params.cfg:q} "
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

# The sm90 kernels' accuracy and leak probe (experiments *_gpu): this run's files on
# device=cuda, else the first data/measured/<gpu>/<experiment>.h5; a table without either
# says that it needs a GPU run.
def gpu_result(exp):
    if DEVICE == "cuda" and exp in EXPERIMENTS:
        return RUNS + "/" + exp + ".h5"
    found = sorted(glob.glob(config["measured_dir"] + "/*/" + exp + ".h5"))
    return found[0] if found else None

def gpu_inputs(**names):
    """NAME=FILE.h5 arguments for the render script, for the results that exist"""
    return " ".join("%s=%s" % (k, gpu_result(v)) for k, v in names.items() if gpu_result(v))

def gpu_files(*exps):
    return [gpu_result(e) for e in exps if gpu_result(e)]

TABLES += ["paper_tables/%s.%s" % (t, ext) for ext in ("md", "tex") for t in
           ("accuracy_gpu", "accuracy_gpu_by_workload", "table_b_leak_gpu", "table_b2_crossdoc_gpu")]

rule table_accuracy_gpu:
    input:
        h5=gpu_files("accuracy_gpu", "accuracy_paper_gpu"), cpu=tsv("accuracy"), tool=H5TOTSV,
        deps=RENDER_DEPS
    output:
        md="paper_tables/accuracy_gpu.md", tex="paper_tables/accuracy_gpu.tex",
        md2="paper_tables/accuracy_gpu_by_workload.md", tex2="paper_tables/accuracy_gpu_by_workload.tex"
    params: cfg=CONFIG_JSON, files=gpu_inputs(gpu="accuracy_gpu", paper="accuracy_paper_gpu")
    shell:
        "{PY} {RENDER} accuracy_gpu --md {output.md} --tex {output.tex} --md2 {output.md2} --tex2 {output.tex2} "
        "--config {params.cfg:q} h5totsv={input.tool} cpu={input.cpu} {params.files}"

TABLES += ["paper_tables/%s.%s" % (t, ext) for ext in ("md", "tex") for t in
           ("accuracy_gpu_full", "accuracy_gpu_full_by_workload")]

rule table_accuracy_gpu_full:
    input: h5=gpu_files("accuracy_full_gpu"), tool=H5TOTSV, deps=RENDER_DEPS
    output:
        md="paper_tables/accuracy_gpu_full.md", tex="paper_tables/accuracy_gpu_full.tex",
        md2="paper_tables/accuracy_gpu_full_by_workload.md", tex2="paper_tables/accuracy_gpu_full_by_workload.tex"
    params: cfg=CONFIG_JSON, files=gpu_inputs(gpu="accuracy_full_gpu")
    shell:
        "{PY} {RENDER} accuracy_gpu --md {output.md} --tex {output.tex} --md2 {output.md2} --tex2 {output.tex2} "
        "--config {params.cfg:q} h5totsv={input.tool} full=1 {params.files}"

# The acceptance ratios of issues 4 and 5 (GPU only, needs PyTorch on the GPU machine): ours and
# the peers timed in one process, alternated (experiments/latency/ratios.py). device=cuda
# measures them in this run; otherwise the shipped data/measured/<gpu>/ratios_gpu.h5.
# Without PyTorch in the pipeline's Python the shipped measurement stays (and the log says so).
import importlib.util
RATIOS = sorted(glob.glob(config["measured_dir"] + "/*/ratios_gpu.h5"))[:1]
if DEVICE == "cuda" and importlib.util.find_spec("torch") is None:
    print("tables.smk: no PyTorch for %s: the acceptance ratios come from %s" % (PY, RATIOS or "nowhere"),
          file=sys.stderr)
elif DEVICE == "cuda":
    RATIOS = [RUNS + "/ratios_gpu.h5"]

    # Table A's nine workloads (the catalogue); the logu-* layouts from this run's latency file (random lengths)
    rule run_ratios:
        input: built=driver("latency"), lat=RUNS + "/latency.h5", script="experiments/latency/ratios.py"
        output: RUNS + "/ratios_gpu.h5"
        params: wl=",".join(config["workloads"])
        log: RUNS + "/logs/ratios_gpu.log"
        shell:
            "FLAMIA_LIB={BUILD}/kernels/libflamia.so {PY} {input.script} --out {output} --layouts {input.lat} "
            "--workloads {params.wl} --rounds 6 > {log} 2>&1 || {{ tail -n 20 {log} >&2; exit 1; }}"

TABLES += ["paper_tables/acceptance_ratios.%s" % ext for ext in ("md", "tex")]

rule table_acceptance_ratios:
    input: h5=RATIOS, tool=H5TOTSV, deps=RENDER_DEPS + ["experiments/latency/ratios.py"]
    output: md="paper_tables/acceptance_ratios.md", tex="paper_tables/acceptance_ratios.tex"
    params: cfg=CONFIG_JSON, files=" ".join("ratios=" + f for f in RATIOS)
    shell:
        "{PY} {RENDER} acceptance_ratios --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "h5totsv={input.tool} {params.files}"

TABLES += ["paper_tables/osum_ablation.%s" % ext for ext in ("md", "tex")]

rule table_osum_ablation:
    input: h5=gpu_files("osum_ablation_gpu"), tool=H5TOTSV, deps=RENDER_DEPS
    output: md="paper_tables/osum_ablation.md", tex="paper_tables/osum_ablation.tex"
    params: cfg=CONFIG_JSON, files=gpu_inputs(osum="osum_ablation_gpu")
    shell:
        "{PY} {RENDER} osum_ablation --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "h5totsv={input.tool} {params.files}"

TABLES += ["paper_tables/packed_memory.%s" % ext for ext in ("md", "tex")]

rule table_packed_memory:
    input: h5=gpu_files("packed_memory_gpu"), tool=H5TOTSV, deps=RENDER_DEPS
    output: md="paper_tables/packed_memory.md", tex="paper_tables/packed_memory.tex"
    params: cfg=CONFIG_JSON, files=gpu_inputs(packed="packed_memory_gpu")
    shell:
        "{PY} {RENDER} packed_memory --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "h5totsv={input.tool} {params.files}"

rule table_b_leak_gpu:
    input: h5=gpu_files("leak_probe_gpu", "leak_probe_outliers_gpu"), tool=H5TOTSV, deps=RENDER_DEPS
    output:
        md="paper_tables/table_b_leak_gpu.md", tex="paper_tables/table_b_leak_gpu.tex",
        md2="paper_tables/table_b2_crossdoc_gpu.md", tex2="paper_tables/table_b2_crossdoc_gpu.tex"
    params: cfg=CONFIG_JSON, files=gpu_inputs(leak="leak_probe_gpu", leak_outliers="leak_probe_outliers_gpu")
    shell:
        "{PY} {RENDER} table_b_leak --md {output.md} --tex {output.tex} --md2 {output.md2} "
        "--tex2 {output.tex2} --config {params.cfg:q} h5totsv={input.tool} {params.files}"

rule table_ds_underflow:
    input: ds=tsv("ds_underflow"), deps=RENDER_DEPS
    output: md="paper_tables/ds_underflow.md", tex="paper_tables/ds_underflow.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} ds_underflow --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "ds_underflow={input.ds}"

TABLES += ["paper_tables/table_mismatch.%s" % ext for ext in ("md", "tex")]

rule table_mismatch:
    input: m=tsv("mismatch"), deps=RENDER_DEPS
    output: md="paper_tables/table_mismatch.md", tex="paper_tables/table_mismatch.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} mismatch --md {output.md} --tex {output.tex} --config {params.cfg:q} mismatch={input.m}"

TABLES += ["paper_tables/table_inference_exp.%s" % ext for ext in ("md", "tex")]

rule table_inference_exp:
    input: e=tsv("inference_exp"), outl=tsv("inference_exp_outliers"), deps=RENDER_DEPS
    output: md="paper_tables/table_inference_exp.md", tex="paper_tables/table_inference_exp.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} inference_exp --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "inference_exp={input.e} inference_exp_outliers={input.outl}"

TABLES += ["paper_tables/%s.%s" % (t, ext) for t in ("table_training", "table_training_wide") for ext in ("md", "tex")]

rule table_training:
    input:
        t=tsv("training"), m=tsv("training_mismatch"), s=tsv("training_seed2"), w=tsv("training_wide"),
        f=tsv("training_wide_fix"), x=tsv("training_wide_exact"), deps=RENDER_DEPS
    output:
        md="paper_tables/table_training.md", tex="paper_tables/table_training.tex",
        md2="paper_tables/table_training_wide.md", tex2="paper_tables/table_training_wide.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} training --md {output.md} --tex {output.tex} --md2 {output.md2} --tex2 {output.tex2} "
        "--config {params.cfg:q} training={input.t} training_mismatch={input.m} training_seed2={input.s} "
        "training_wide={input.w} training_wide_fix={input.f} training_wide_exact={input.x}"

rule table_d_scheduler:
    input: s=tsv("sched_ablation"), deps=RENDER_DEPS
    output: md="paper_tables/table_d_scheduler.md", tex="paper_tables/table_d_scheduler.tex"
    params: cfg=CONFIG_JSON
    shell:
        "{PY} {RENDER} table_d_scheduler --md {output.md} --tex {output.tex} --config {params.cfg:q} "
        "sched_ablation={input.s}"

# ---- one target per experiment, by name: `snakemake -c2 leak_probe`
rule leak_probe:
    input: rules.table_b_leak.output, rules.table_b_leak_gpu.output, "figures/leak_probe.png", "figures/leak_probe.pdf"

rule accuracy:
    input: rules.table_accuracy.output, rules.table_accuracy_gpu.output, rules.table_accuracy_gpu_full.output, "figures/accuracy.png", "figures/accuracy.pdf"

rule ds_underflow:
    input: rules.table_ds_underflow.output, "figures/ds_underflow.png", "figures/ds_underflow.pdf"

rule mismatch:
    input: rules.table_mismatch.output, "figures/mismatch.png", "figures/mismatch.pdf"

rule inference_exp:
    input: rules.table_inference_exp.output

rule training:
    input: rules.table_training.output, expand("figures/{f}.{e}", f=["training", "training_mismatch"], e=["png", "pdf"])

rule sched_ablation:
    input: rules.table_d_scheduler.output, "figures/sched_ablation.png", "figures/sched_ablation.pdf"

rule latency:
    input: rules.table_a_latency.output, rules.table_d_exact_cost.output

rule deterministic:
    input: rules.table_d_deterministic_cost.output

rule osum_ablation:
    input: rules.table_osum_ablation.output

rule packed_memory:
    input: rules.table_packed_memory.output

rule acceptance_ratios:
    input: rules.table_acceptance_ratios.output
