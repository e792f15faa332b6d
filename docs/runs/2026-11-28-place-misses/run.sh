#!/bin/bash
# The UDP link keeps looking for fragments to place across 8 short frames instead of 4 (docs/PERFORMANCE.md,
# "2026-11-28, late morning"). BEFORE and AFTER are jdet-perf jars of main at a348d14 (loopback without a CRC) and
# with PLACE_MISSES = 8. Alternates them, two rounds; each line: 2 ranks | 4 ranks, bcast, allgather, alltoall,
# allreduce at 64 KiB and 1 MiB (µs per operation, 100 iterations each).
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
BEFORE=${BEFORE:?jar before} AFTER=${AFTER:?jar after}
for i in 1 2; do for j in BEFORE AFTER; do echo -n "$j: "; for r in 2 4; do
  java --enable-native-access=ALL-UNNAMED -jar ${!j} perf --tests co-bcast,co-allgather,co-alltoall,co-allreduce \
    --ranks $r --sizes 64K,1M --iters 100 -q 2>&1 | grep -E "^[0-9]+ " | awk '{printf "%s ", $2}'; echo -n "| "
done; echo; done; done
