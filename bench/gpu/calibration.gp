# Measured vs fitted step time; held-out compositions marked.
# gnuplot -e "out='x.svg'; data='calibration_points.csv'; profile='p.toml'" calibration.gp
set datafile separator ','
set terminal svg size 700,600 dynamic
set output out
set title 'Step-time fit on the CUDA executor (Llama-3.1-8B shape)'
set logscale xy
set xlabel 'measured step time (s)'
set ylabel 'fitted step time (s)'
set key top left
plot data skip 1 using ($10 == 0 ? $8 : 1/0):9 with points pt 7 ps 0.6 title 'fitted', \
     data skip 1 using ($10 == 1 ? $8 : 1/0):9 with points pt 6 ps 1.2 title 'held out', \
     x with lines dashtype 2 title 'y = x'
