#!/bin/bash
# The collectives' rendezvous threshold by link (docs/PERFORMANCE.md, "2026-11-28, late morning"): BEFORE is main at
# 408a96c (64 KiB everywhere), AFTER with CollectiveTuning.AUTO_RENDEZVOUS (16 KiB over memory, 32 KiB over UDP).
# Alternates them, two rounds, per link; each line: 2 ranks | 4 ranks, allreduce, allgather, alltoall, bcast at
# 16, 24, 32 and 48 KiB (µs per operation, 1000 iterations each).
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
BEFORE=${BEFORE:?jar before} AFTER=${AFTER:?jar after}
for nic in loop shm:rvauto udp:127.0.0.1; do for i in 1 2; do for j in BEFORE AFTER; do
  echo -n "$nic $j: "; for r in 2 4; do
    java --enable-native-access=ALL-UNNAMED -jar ${!j} perf --nic $nic \
      --tests co-allreduce,co-allgather,co-alltoall,co-bcast --ranks $r --sizes 16K,24K,32K,48K --iters 1000 -q \
      2>&1 | grep -E "^[0-9]+ " | awk '{printf "%s ", $2}'; echo -n "| "
  done; echo
done; done; done
