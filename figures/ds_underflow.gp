# ds_underflow.gp - dS zero rate and dS norm error per dS scale rule
# (experiments/ds_underflow). Writes OUTBASE.png and OUTBASE.pdf.
# usage: gnuplot -e "datafile='data/runs/cpu/plot/ds_underflow.tsv'; outbase='figures/ds_underflow'" figures/ds_underflow.gp
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/ds_underflow.tsv'
if (!exists("outbase")) outbase = 'figures/ds_underflow'
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
set xtics noenhanced nomirror rotate by -20 font ",9"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 font ",11"; set output outbase.".png" }
  if (fmt eq "pdf") { set terminal pdfcairo size 14in,5.6in font ",11"; set output outbase.".pdf" }
  set multiplot layout 1,2 title "dS scale rule ablation (mxfp8 otherwise)\n{/*0.8 ".caption."}"
  set title "nonzero dS entries flushed to zero"
  set ylabel "zero rate (%)"
  unset logscale y
  set yrange [0:*]
  plot for [i=1:nw] datafile using (column(1+i)):xtic(1) title columnheader(1+i) noenhanced lc rgb wc[(i-1)%4+1]
  set title "dS relative norm error"
  set ylabel "||dS_q - dS|| / ||dS||"
  set logscale y
  set yrange [*:*]
  plot for [i=1:nw] datafile using (column(1+nw+i)):xtic(1) title columnheader(1+nw+i) noenhanced lc rgb wc[(i-1)%4+1]
  unset multiplot
  set output
}
