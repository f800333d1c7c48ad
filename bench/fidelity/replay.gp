# Simulated against real latencies, one point per request, both policies;
# and each real step's measured time against the profile's price.
#   gnuplot -e "dir='bench/fidelity/results/replay_wide'" bench/fidelity/replay.gp
set terminal svg size 1200,420 dynamic font "sans,11"
set output dir.'/replay.svg'
set datafile separator ','
set multiplot layout 1,3
set logscale xy
set grid
set key top left
set xlabel 'real (s)'
set ylabel 'simulated (s)'
set title 'TTFT per request'
plot dir.'/requests_fifo.csv' skip 1 using 7:8 title 'fifo' pt 7 ps 0.5, \
     dir.'/requests_household.csv' skip 1 using 7:8 title 'household' pt 9 ps 0.5, \
     x title 'y = x' lc rgb 'gray'
set title 'end-to-end latency per request'
plot dir.'/requests_fifo.csv' skip 1 using 9:10 title 'fifo' pt 7 ps 0.5, \
     dir.'/requests_household.csv' skip 1 using 9:10 title 'household' pt 9 ps 0.5, \
     x title 'y = x' lc rgb 'gray'
set title 'step time (real plans, household)'
set xlabel 'measured (s)'
set ylabel 'profile (s)'
plot dir.'/steps_household.csv' skip 1 using 4:5 title 'steps' pt 7 ps 0.3, \
     x title 'y = x' lc rgb 'gray'
unset multiplot
