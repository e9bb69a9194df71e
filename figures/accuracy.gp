# accuracy.gp - 1 - cosine of O and dQ vs FP64 per workload and recipe
# (experiments/accuracy). Log scale: lower is better. Writes OUTBASE.png and OUTBASE.pdf.
# usage: gnuplot -e "datafile='data/runs/cpu/plot/accuracy.tsv'; outbase='figures/accuracy'; colours='#.. #..'" figures/accuracy.gp
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/accuracy.tsv'
if (!exists("outbase")) outbase = 'figures/accuracy'
if (!exists("caption")) caption = ''
if (!exists("colours")) colours = '#7f7f7f #1f77b4 #2ca02c #9467bd #d62728 #ff7f0e'
set datafile separator "\t"
nr = int(system("head -1 '".datafile."' | awk -F'\t' '{print (NF-1)/2}'"))
set logscale y
set format y "10^{%L}"
set grid ytics
set key outside below horizontal font ",9"
set xtics noenhanced nomirror rotate by -30 font ",9"
set offsets 0.3, 0.3, 0, 0
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 font ",11"; set output outbase.".png" }
  if (fmt eq "pdf") { set terminal pdfcairo size 14in,5.6in font ",11"; set output outbase.".pdf" }
  set multiplot layout 1,2 title "Accuracy vs FP64 (1 - cosine; lower is better)\n{/*0.8 ".caption."}"
  set title "O"
  set ylabel "1 - cos(O, O_{FP64})"
  plot for [i=1:nr] datafile using 0:(column(1+i)):xtic(1) with linespoints lw 2 pt 7 lc rgb word(colours, i) title columnheader(1+i) noenhanced
  set title "dQ"
  set ylabel "1 - cos(dQ, dQ_{FP64})"
  plot for [i=1:nr] datafile using 0:(column(1+nr+i)):xtic(1) with linespoints lw 2 pt 7 lc rgb word(colours, i) title columnheader(1+nr+i) noenhanced
  unset multiplot
  set output
}
