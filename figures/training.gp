# training.gp - the training runs' curves (experiments/training): each case's training loss and
# gradient norm by step, moving means over 20 steps. Writes OUTBASE.png and OUTBASE.pdf.
# usage: gnuplot -e "datafile='data/runs/cpu/plot/training.tsv'; outbase='figures/training'" figures/training.gp
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/training.tsv'
if (!exists("outbase")) outbase = 'figures/training'
if (!exists("caption")) caption = ''
if (!exists("heading")) heading = 'Training runs: the presets in both passes'
set datafile separator "\t"
set datafile missing "nan"
nc = int(system("head -1 '".datafile."' | awk -F'\t' '{print (NF-1)/2}'"))
array wc[8] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f"]
set grid
set key top right font ",9" noenhanced
set xlabel "optimizer step"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 font ",11"; set output outbase.".png" }
  if (fmt eq "pdf") { set terminal pdfcairo size 14in,5.6in font ",11"; set output outbase.".pdf" }
  set multiplot layout 1,2 title heading." (moving means over 20 steps)\n{/*0.8 ".caption."}"
  set title "training loss (nats per byte)"
  set logscale y
  plot for [i=1:nc] datafile using 1:(column(1+i)) with lines lw 1.5 lc rgb wc[(i-1)%8+1] title columnheader(1+i)
  set title "gradient norm before clipping"
  plot for [i=1:nc] datafile using 1:(column(1+nc+i)) with lines lw 1.5 lc rgb wc[(i-1)%8+1] title columnheader(1+nc+i)
  unset logscale y
  unset multiplot
  set output
}
