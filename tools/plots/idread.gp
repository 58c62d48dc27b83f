# SPDX-License-Identifier: MIT
# idread.gp - ns per read of el.id by id length, one line per mode (C:
# bench/idread.c; Node: bench/node-idread.js). Data: `data`, the length then
# one column per mode (ncols columns in all), each mode's linetype a word of
# lts; nlengths rows. Log scale: the modes are orders of magnitude apart.
set xlabel "id length (bytes)"
set ylabel "ns per read, median (log scale; lower is better)"
set logscale y
set format y "%g"
set xrange [-0.3:nlengths - 0.7]
set bmargin at screen 0.40
set key at screen 0.08, screen 0.17 left center vertical maxrows 4 Left reverse samplen 2.5
plot for [i = 2:ncols] data using 0:i:xtic(1) with linespoints lt int(word(lts, i - 1)) \
    title columnhead(i)
