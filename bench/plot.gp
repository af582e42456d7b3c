# SPDX-License-Identifier: Apache-2.0
# The benchmark table as bar charts, one panel per column, bars per pool
# clustered by worker count. pp_bench writes the data (plot.dat); run with
#   gnuplot -e "datafile='plot.dat'; outfile='bench.png'" plot.gp
# (make bench-plot does). Lower is better in every panel.
if (!exists("datafile")) datafile = 'bench/results/plot.dat'
if (!exists("outfile")) outfile = 'bench/results/bench.png'
set terminal pngcairo size 1600,800 font ",10"
set output outfile
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.85 border -1
set boxwidth 0.9
set key top left font ",8"
set grid ytics
set yrange [0:*]
set xlabel "workers"
titles = "'W1 ns/task (1 producer)' 'W2 ns/task (4 producers)' 'W3 median round trip us' \
'W3 p99 round trip us' 'W4 idle CPU s (4 workers, 2 s)' 'W5 bursts wall ms' 'W5 bursts CPU ms' \
'W6 nested fan-out ns/task'"
set multiplot layout 2,4 title "parkpool benchmark (lower is better)"
# W2 and W6: apr_thread_pool is 10-3000 times slower there; a log scale
# keeps the other bars visible.
do for [i=0:7] {
    if (i == 1 || i == 7) {
        set logscale y; set yrange [*:*]
        set title word(titles, i + 1)." (log scale)" noenhanced
    } else {
        unset logscale y; set yrange [0:*]
        set title word(titles, i + 1) noenhanced
    }
    plot for [col=2:*] datafile index i using col:xtic(1) title columnheader(col) noenhanced
}
unset multiplot
