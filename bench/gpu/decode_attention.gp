# Decode paged-attention bandwidth as a fraction of copy bandwidth, per batch.
# gnuplot -e "out='x.svg'; data='decode_attention.csv'" decode_attention.gp
set datafile separator ','
set terminal svg size 800,500 dynamic
set output out
set title 'Decode paged attention (Llama-3.1-8B shape, bf16): K/V bandwidth'
set logscale x 2
set xlabel 'context (tokens)'
set ylabel 'fraction of measured copy bandwidth'
set yrange [0:1.1]
set key bottom right
set arrow from graph 0, first 0.8 to graph 1, first 0.8 nohead dashtype 2
plot for [b in "1 16 64 256"] data skip 2 using (column(1) == b+0 ? column(2) : 1/0):6 \
     with linespoints title 'batch '.b
