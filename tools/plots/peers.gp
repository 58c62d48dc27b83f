# SPDX-License-Identifier: MIT
# peers.gp - median ns per op of each backend, per workload, one panel per
# token file (bench/suite.c: atombench --json, and bench/peers.c: atompeers
# --json). Data: $tmp/<dataset>0.dat and <dataset>1.dat (npanels of them),
# the workload then one column per backend (nbackends); xlabel under the
# last panel. Log scale: a miss on libxml2's dict over 200,000 identifiers
# costs 40 times a hit of 3 bytes.
set style data histogram
set style histogram clustered gap 1.2
set style fill solid 0.9 border rgb "#ffffff"
set boxwidth 0.95
set logscale y
set format y "%g"
set yrange [2:*]
set ylabel "ns per op, median (log; lower is better)"
set xtics scale 0
set key inside top left horizontal maxrows 1 samplen 1.5 width 1 opaque box lc rgb "#ffffff"
set multiplot   # the title, subtitle and footnote are drawn with the first panel
panel_h = (0.82 - 0.08 * npanels) / npanels
do for [p = 0:npanels - 1] {
    top = 0.86 - p * (panel_h + 0.08)
    set tmargin at screen top
    set bmargin at screen top - panel_h
    set label 904 (p == 0 ? panel1 : panel2) at graph 0, graph 1.04 left font ",12" noenhanced
    if (p > 0) { unset key; unset label 901; unset label 902; unset label 903 }
    if (p == npanels - 1) { set xlabel xlabel }
    plot for [i = 2:nbackends + 1] sprintf("%s/%s%d.dat", tmp, dataset, p) using i:xtic(1) \
        title columnhead(i) lt (i - 1)
}
unset multiplot
