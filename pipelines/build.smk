# build.smk - builds libflamia and the experiment drivers with meson (set-up folded in:
# a fresh clone needs only `snakemake -c2 tables`). One build folder per pipeline
# (config builddir), configured for the device: cpu disables CUDA, cuda requires it.

BUILD_SOURCES = sorted(
    set(glob.glob("kernels/**/*.[ch]", recursive=True)
        + glob.glob("kernels/**/*.cu*", recursive=True)
        + glob.glob("experiments/**/*.[ch]", recursive=True)
        + glob.glob("**/meson.build", recursive=True)
        + ["meson_options.txt"])
    - set(glob.glob(BUILD + "/**", recursive=True)))

DRIVERS = sorted(set(e["driver"] for e in EXPERIMENTS.values()))

rule build:
    input: BUILD_SOURCES
    output: [driver(d) for d in DRIVERS] + [H5TOTSV]
    params:
        opts=config["meson_options"][DEVICE],
        targets=" ".join(DRIVERS + ["h5totsv"])
    log: "data/runs/logs/build-%s.log" % DEVICE
    shell:
        "( if [ ! -f {BUILD}/build.ninja ]; then meson setup {BUILD} {params.opts}; "
        "else meson setup --reconfigure {BUILD} {params.opts}; fi "
        "&& meson compile -C {BUILD} {params.targets} ) > {log} 2>&1 "
        "|| {{ tail -n 40 {log} >&2; exit 1; }}; touch {output}"
