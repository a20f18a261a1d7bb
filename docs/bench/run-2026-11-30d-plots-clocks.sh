#!/usr/bin/env bash
# Issue 8, third session: the plots with GPU clocks sampled.
cd "$(dirname "$0")"
export MIEN_FONT=$PWD/DejaVuSans.ttf
nvidia-smi --query-gpu=timestamp,clocks.sm,memory.used,power.draw --format=csv -lms 100 > "$OUT/smi.csv" 2>&1 &
S=$!
sleep 1
timeout 400 ./mien bench --plot "$OUT/plots" 2>&1 | tr '\r' '\n' | grep -v "^$" | awk '{ print strftime("%T"), $0; fflush() }' > "$OUT/progress.txt"
kill $S
