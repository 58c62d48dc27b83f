# SPDX-License-Identifier: MIT
# ab-ratio.awk - B/A of two atomabtest outputs, the first with build A
# linked as itself and B renamed, the second with their places swapped
# (whose ratios are A/B): per workload, the geometric mean of both runs'
# B/A, best and mean (tools/ab.sh, tools/device-run.sh).
# usage: awk -f ab-ratio.awk OUT-AB OUT-BA
FNR == NR && NF == 7 && $2 ~ /^[0-9.]+$/ { b[$1] = $6; m[$1] = $7; next }
NF == 7 && $2 ~ /^[0-9.]+$/ && ($1 in b) {
    printf "  %-8s %6.3f %6.3f\n", $1, sqrt(b[$1] / $6), sqrt(m[$1] / $7)
}
