#!/usr/bin/env bash
# What the inline monitors and coverage counting cost each fixed case: every case that must
# hold, run for 1 s on one core under the random scheduler in three ways, in turn (as the
# soak runs by default, with coverage counted; with `--monitors` too; with `--no-coverage`),
# REPS times, for each soak binary given (two builds side by side, case by case). Prints one
# line per case and binary: the medians of schedules a second, the monitors' ratio (with
# monitors / without) and coverage's cost (1 - with / without), then per binary the median
# and the worst over the cases. Numbers, not a test: the machine is noisy, quote medians.
#
#   benches/inline_cost.sh "SOAK_BINARY[ SOAK_BINARY...]" [REPS] [FILTER] > cost.tsv
set -euo pipefail
soaks=${1:-target/release/soak}
reps=${2:-2}
filter=${3:-}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Schedules a second of one 1 s run of case $2/$3 by soak binary $1, with the arguments after.
rate() {
    local soak=$1 scenario=$2 variant=$3
    shift 3
    "$soak" run-one --scenario "$scenario" --variant "$variant" --scheduler random \
        --seed 1 --iterations 1000000000 --time-ms 1000 --out "$work/failures" \
        --status "$work/status" "$@" > /dev/null 2>&1 || true
    tail -n 1 "$work/status" | sed -E 's/.*"schedules":([0-9]+),"elapsed_ms":([0-9]+).*/\1 \2/' |
        awk '{ printf "%.1f\n", $1 * 1000 / ($2 > 0 ? $2 : 1) }'
}

median() { sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

printf 'case\tbinary\tplain\tmonitors\tno_coverage\tmonitors_ratio\tcoverage_cost\n'
first=$(echo "$soaks" | awk '{ print $1 }')
"$first" list | awk '$3 == "Holds" { print $1, $2 }' | grep -- "$filter" |
while read -r scenario variant; do
    for soak in $soaks; do
        : > "$work/plain"; : > "$work/monitors"; : > "$work/bare"
        for _ in $(seq "$reps"); do
            rate "$soak" "$scenario" "$variant" >> "$work/plain"
            rate "$soak" "$scenario" "$variant" --monitors >> "$work/monitors"
            rate "$soak" "$scenario" "$variant" --no-coverage >> "$work/bare"
        done
        awk -v c="$scenario/$variant" -v s="$(basename "$soak")" -v p="$(median < "$work/plain")" \
            -v m="$(median < "$work/monitors")" -v b="$(median < "$work/bare")" \
            'BEGIN { printf "%s\t%s\t%s\t%s\t%s\t%.3f\t%.3f\n", c, s, p, m, b, (p > 0 ? m / p : 0), (b > 0 ? 1 - p / b : 0) }'
    done
done | tee "$work/table"
for soak in $soaks; do
    name=$(basename "$soak")
    awk -F'\t' -v s="$name" '$2 == s { print $6 }' "$work/table" | sort -g > "$work/ratios"
    awk -F'\t' -v s="$name" '$2 == s { print $7 }' "$work/table" | sort -g > "$work/costs"
    printf '# %s: monitors ratio median %s, worst %s; coverage cost median %s, worst %s (%s cases)\n' \
        "$name" "$(median < "$work/ratios")" "$(head -n 1 "$work/ratios")" \
        "$(median < "$work/costs")" "$(tail -n 1 "$work/costs")" "$(wc -l < "$work/ratios")"
done
