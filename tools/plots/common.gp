# SPDX-License-Identifier: MIT
# common.gp - what every chart shares: the SVG terminal, fonts, colours, the
# title with its subtitle (machine, date, commit) and the footnote (the
# command). tools/bench-plots.py sets out, tmp, title, subtitle, footnote
# before this file (and width, height when a chart needs another size) and
# runs the chart's own .gp after it.
if (!exists("width")) width = 900
if (!exists("height")) height = 520
set terminal svg size width,height fixed enhanced font "sans-serif,13" background rgb "white"
set output out
set encoding utf8

set label 901 title at screen 0.5, screen 0.965 center font ",16" noenhanced
set label 902 subtitle at screen 0.5, screen 0.925 center font ",11" tc rgb "#555555" noenhanced
set label 903 footnote at screen 0.01, screen 0.02 left font ",9" tc rgb "#777777" noenhanced
set tmargin at screen 0.86
set bmargin at screen 0.18

set border 3 lc rgb "#444444"
set tics nomirror tc rgb "#222222"
set grid ytics mytics lc rgb "#e4e4e4" lw 1 dt 1
set key noenhanced

# One colour per series, the same in every chart (Okabe-Ito: colour-blind safe).
set linetype 1 lc rgb "#0072B2" lw 2 pt 7 ps 0.9
set linetype 2 lc rgb "#E69F00" lw 2 pt 5 ps 0.9
set linetype 3 lc rgb "#009E73" lw 2 pt 9 ps 1.0
set linetype 4 lc rgb "#CC79A7" lw 2 pt 13 ps 1.0
set linetype 5 lc rgb "#56B4E9" lw 2 pt 11 ps 1.0
set linetype 6 lc rgb "#D55E00" lw 2 pt 3 ps 0.9
set linetype 7 lc rgb "#999999" lw 2 pt 1 ps 0.9
set linetype 8 lc rgb "#000000" lw 2 pt 2 ps 0.9
set linetype cycle 8
