# run.smk - runs each experiment once: data/runs/<device>/<experiment>.h5.
# An experiment is an entry of config["experiments"]: its driver, the backends the driver
# supports, its arguments and (for the CPU) its scale. Progress goes to the log.

def run_args(name):
    e = EXPERIMENTS[name]
    backend = "cuda" if DEVICE == "cuda" and "cuda" in e.get("backends", ["cpu"]) else "cpu"
    scale = e.get("scale", config["scale"]) if backend == "cpu" else e.get("scale", 1.0)
    return "--backend %s --scale %s --seed %s %s" % (backend, scale, config["seed"], e.get("args", ""))

rule run:
    input: lambda wc: driver(EXPERIMENTS[wc.exp]["driver"])
    output: RUNS + "/{exp}.h5"
    wildcard_constraints: exp="|".join(EXPERIMENTS)
    params: args=lambda wc: run_args(wc.exp)
    log: RUNS + "/logs/{exp}.log"
    benchmark: RUNS + "/logs/{exp}.time.tsv"
    shell: "{input} --out {output} {params.args} 2> {log} || {{ tail -n 20 {log} >&2; exit 1; }}"
