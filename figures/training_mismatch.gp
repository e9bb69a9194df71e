# training_mismatch.gp - figures/training.gp for the mismatch cases (experiments/training,
# run training_mismatch). usage as training.gp.
if (!exists("outbase")) outbase = 'figures/training_mismatch'
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/training_mismatch.tsv'
heading = 'Training runs: mxfp8 with the forward unlike the backward'
load 'figures/training.gp'
