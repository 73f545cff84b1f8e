#!/usr/bin/env bash
# What the inline monitors and coverage counting cost each fixed case: every case that must
# hold, run for 1 s on one core under the random scheduler in three ways, side by side and
# in turn (with `--monitors`, as the soak runs by default, and with `--no-coverage`), each
# REPS times; prints one line per case with the medians of schedules a second and the two
# ratios, then the medians and the worst over the cases. Numbers, not a test: the machine
# is noisy, quote medians.
#
#   benches/inline_cost.sh [SOAK_BINARY] [REPS] [FILTER] > cost.tsv
set -euo pipefail
soak=${1:-target/release/soak}
reps=${2:-2}
filter=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Schedules a second of one 1 s run of case $1/$2 with the extra arguments after them.
rate() {
    local scenario=$1 variant=$2
    shift 2
    "$soak" run-one --scenario "$scenario" --variant "$variant" --scheduler random \
        --seed 1 --iterations 1000000000 --time-ms 1000 --out "$work/failures" \
        --status "$work/status" "$@" > /dev/null 2>&1 || true
    tail -n 1 "$work/status" | sed -E 's/.*"schedules":([0-9]+),"elapsed_ms":([0-9]+).*/\1 \2/' |
        awk '{ printf "%.1f\n", $1 * 1000 / ($2 > 0 ? $2 : 1) }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf 'case\tplain\tmonitors\tno_coverage\tmonitors_ratio\tcoverage_cost\n'
"$soak" list | awk '$3 == "Holds" { print $1, $2 }' | grep -- "$filter" |
while read -r scenario variant; do
    : > "$work/plain"; : > "$work/monitors"; : > "$work/bare"
    for _ in $(seq "$reps"); do
        rate "$scenario" "$variant" >> "$work/plain"
        rate "$scenario" "$variant" --monitors >> "$work/monitors"
        rate "$scenario" "$variant" --no-coverage >> "$work/bare"
    done
    plain=$(median < "$work/plain")
    monitors=$(median < "$work/monitors")
    bare=$(median < "$work/bare")
    awk -v c="$scenario/$variant" -v p="$plain" -v m="$monitors" -v b="$bare" \
        'BEGIN { printf "%s\t%s\t%s\t%s\t%.3f\t%.3f\n", c, p, m, b, (p > 0 ? m / p : 0), (b > 0 ? 1 - p / b : 0) }'
done
