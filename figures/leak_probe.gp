# leak_probe.gp - Table B as a figure: max relative change of earlier O and dQ per recipe
# and perturbation kind (experiments/leak_probe). Exact zeros are drawn at 1e-9 and
# labelled "0". Writes OUTBASE.png and OUTBASE.pdf.
# usage (pipelines/figures.smk does this):
#   gnuplot -e "datafile='data/runs/cpu/plot/leak_probe.tsv'; outbase='figures/leak_probe'" figures/leak_probe.gp
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/leak_probe.tsv'
if (!exists("outbase")) outbase = 'figures/leak_probe'
if (!exists("caption")) caption = ''
set datafile separator "\t"
nk = int(system("head -1 '".datafile."' | awk -F'\t' '{print (NF-1)/2}'"))
array kc[5] = ["#9467bd", "#1f77b4", "#ff7f0e", "#2ca02c", "#d62728"]
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set logscale y
set yrange [5e-10:300]
set format y "10^{%L}"
set grid ytics
set key top left horizontal font ",9"
set xtics noenhanced nomirror rotate by -20 font ",9"
set ytics ("0" 1e-9, "10^{-8}" 1e-8, "10^{-6}" 1e-6, "10^{-4}" 1e-4, "10^{-2}" 1e-2, "1" 1, "10^{2}" 100)
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 font ",11"; set output outbase.".png" }
  if (fmt eq "pdf") { set terminal pdfcairo size 14in,5.6in font ",11"; set output outbase.".pdf" }
  set multiplot layout 1,2 title "Leak probe: earlier positions' max relative change when later positions are perturbed\n{/*0.8 ".caption."}"
  set title "O"
  set ylabel "max row ||{/Symbol D}O|| / ||O||"
  plot for [i=1:nk] datafile using (column(1+i)):xtic(1) title columnheader(1+i) noenhanced lc rgb kc[(i-1)%5+1]
  set title "dQ"
  set ylabel "max row ||{/Symbol D}dQ|| / ||dQ||"
  plot for [i=1:nk] datafile using (column(1+nk+i)):xtic(1) title columnheader(1+nk+i) noenhanced lc rgb kc[(i-1)%5+1]
  unset multiplot
  set output
}
