# SPDX-License-Identifier: MIT
# threads.gp - throughput and CPU time per op of one shared table as
# threads are added (bench/threads.c; bench/sc, string_cache, beside it when
# it ran). Data: $tmp/threads.IMPL.MODE.dat (threads, Mops/s, CPU ns/op) for
# each word of impls and modes (each mode's linetype a word of lts, what it
# does in note); nproc CPUs, marked by a dotted line, since
# past them Mops/s cannot grow; scversion: string_cache's version (" 0.11.0",
# or "" where its JSON does not say).
set multiplot   # the title, subtitle and footnote are drawn with the first panel
set logscale x 2
set xrange [0.85:maxthreads * 1.15]
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64)
set xlabel "threads"
set yrange [0:*]
set bmargin at screen 0.34
set tmargin at screen 0.85
if (nproc > 0) {
    set arrow 1 from nproc, graph 0 to nproc, graph 1 nohead dt 3 lc rgb "#888888" lw 1.5
    set label 905 sprintf(" %d CPUs", nproc) at nproc, graph 0.03 left font ",10" tc rgb "#666666"
}
file(i, m) = sprintf("%s/threads.%s.%s.dat", tmp, word(impls, i), word(modes, m))
name(i) = word(impls, i) eq "atomtab" ? "atomtab" : word(impls, i) . scversion
style(i) = i == 1 ? 1 : 2

set lmargin at screen 0.08
set rmargin at screen 0.48
set ylabel "million ops per second (higher is better)"
unset key
plot for [i = 1:words(impls)] for [m = 1:words(modes)] file(i, m) using 1:2 \
    with linespoints lt int(word(lts, m)) dt style(i) pt (i == 1 ? 7 : 6)

unset label 901; unset label 902; unset label 903
set lmargin at screen 0.58
set rmargin at screen 0.98
set ylabel "CPU ns per op (lower is better; flat: no contention)"
plot for [i = 1:words(impls)] for [m = 1:words(modes)] file(i, m) using 1:3 \
    with linespoints lt int(word(lts, m)) dt style(i) pt (i == 1 ? 7 : 6)

# The key, across both panels: an empty plot in the bottom strip.
unset border; unset tics; unset grid; unset xlabel; unset ylabel; unset arrow; unset label 905
set lmargin at screen 0.08; set rmargin at screen 0.98
set tmargin at screen 0.23; set bmargin at screen 0.07
set label 906 note at screen 0.5, screen 0.045 center font ",10" tc rgb "#444444" noenhanced
set key center center horizontal maxrows 4 Left reverse samplen 3 width 2
plot [1:2] [0:1] for [i = 1:words(impls)] for [m = 1:words(modes)] NaN \
    with linespoints lt int(word(lts, m)) dt style(i) pt (i == 1 ? 7 : 6) title sprintf("%s, %s", name(i), word(modes, m))
unset multiplot
