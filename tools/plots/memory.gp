# SPDX-License-Identifier: MIT
# memory.gp - bytes per distinct token for each interner, on each allocator
# measured, stacked by what they pay for (bench/membytes.c: membytes --json,
# membytes-libc --json). Data: $tmp/memory.dat, one row per bar (interner,
# nparts parts, total, allocator), an empty row between allocators; peers'
# overhead is one part, atomtab's is split by its own memory report.
set datafile columnheaders
set style data histogram
set style histogram rowstacked gap 1
set style fill solid 0.9 border rgb "#ffffff"
set boxwidth 0.7
set yrange [0:*]
set ylabel "bytes per distinct token (lower is better)"
set label 907 corpus at graph 0, graph 1.04 left font ",12" noenhanced
set xtics scale 0
set key outside right top vertical Left reverse samplen 1.5 noautotitle
set label 906 note at screen 0.5, screen 0.07 center font ",10" tc rgb "#444444" noenhanced
set bmargin at screen 0.22
set rmargin at screen 0.76
tick(c) = strcol(1) eq "" ? "" : strcol(1) . "\n" . strcol(c)
plot for [i = 2:nparts + 1] sprintf("%s/memory.dat", tmp) using i:xtic(tick(nparts + 3)) \
        title columnhead(i) lt (i == 2 ? 7 : i == 7 ? 6 : i - 2), \
     "" using 0:(column(nparts + 2) > 0 ? column(nparts + 2) : NaN):(sprintf("%.1f", column(nparts + 2))) \
        with labels offset 0, 0.8 font ",11" notitle
