# mismatch.gp - how far one training step's gradients move when the backward recomputes P
# unlike the forward (experiments/mismatch). Writes OUTBASE.png and OUTBASE.pdf.
# usage: gnuplot -e "datafile='data/runs/cpu/plot/mismatch.tsv'; outbase='figures/mismatch'" figures/mismatch.gp
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/mismatch.tsv'
if (!exists("outbase")) outbase = 'figures/mismatch'
if (!exists("caption")) caption = ''
set datafile separator "\t"
nw = int(system("head -1 '".datafile."' | awk -F'\t' '{print (NF-1)/2}'"))
array wc[4] = ["#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"]
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set key top left font ",9"
set logscale y
set yrange [1e-5:1]
set format y "%.0e"
set xtics noenhanced nomirror rotate by -20 font ",9"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 font ",11"; set output outbase.".png" }
  if (fmt eq "pdf") { set terminal pdfcairo size 14in,5.6in font ",11"; set output outbase.".pdf" }
  set multiplot layout 1,2 title "Forward/backward mismatch, one step: change from the matched gradients (mxfp8 otherwise)\n{/*0.8 ".caption."}"
  set title "dQ"
  set ylabel "relative L2 change vs the matched step"
  plot for [i=1:nw] datafile using (column(1+i)):xtic(1) title columnheader(1+i) noenhanced lc rgb wc[(i-1)%4+1]
  set title "dK"
  plot for [i=1:nw] datafile using (column(1+nw+i)):xtic(1) title columnheader(1+nw+i) noenhanced lc rgb wc[(i-1)%4+1]
  unset multiplot
  set output
}
