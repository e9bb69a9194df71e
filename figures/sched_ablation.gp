# sched_ablation.gp - simulated scheduling efficiency (lower bound / makespan) per workload
# for natural vs longest-first order and static vs dynamic claiming on 132 workers
# (experiments/sched_ablation). Writes OUTBASE.png and OUTBASE.pdf.
# usage: gnuplot -e "datafile='data/runs/cpu/plot/sched_ablation.tsv'; outbase='figures/sched_ablation'" figures/sched_ablation.gp
if (!exists("datafile")) datafile = 'data/runs/cpu/plot/sched_ablation.tsv'
if (!exists("outbase")) outbase = 'figures/sched_ablation'
if (!exists("caption")) caption = ''
if (!exists("colours")) colours = '#d62728 #ff9896 #1f77b4 #aec7e8'
set datafile separator "\t"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set grid ytics
set yrange [0.5:1.05]
set key outside below horizontal font ",9"
set xtics noenhanced nomirror rotate by -30 font ",9"
do for [fmt in "png pdf"] {
  if (fmt eq "png") { set terminal pngcairo size 1400,560 font ",11"; set output outbase.".png" }
  if (fmt eq "pdf") { set terminal pdfcairo size 14in,5.6in font ",11"; set output outbase.".pdf" }
  set multiplot layout 1,2 title "Tile scheduling on 132 workers (simulation): efficiency = lower bound / makespan\n{/*0.8 ".caption."}"
  set title "forward (query tiles)"
  set ylabel "efficiency"
  plot for [i=1:4] datafile using (column(1+i)):xtic(1) title columnheader(1+i) noenhanced lc rgb word(colours, i)
  set title "backward (key tiles)"
  plot for [i=1:4] datafile using (column(5+i)):xtic(1) title columnheader(5+i) noenhanced lc rgb word(colours, i)
  unset multiplot
  set output
}
