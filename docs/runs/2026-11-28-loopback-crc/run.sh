#!/bin/bash
# UDP over loopback without the frame CRC (docs/PERFORMANCE.md, "2026-11-28, late morning: loopback without a CRC").
# BEFORE and AFTER are jdet-perf jars of main before (6c0deb8) and after (a348d14)
# (./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests, then copy jdet-perf/target/jdet-perf.jar).
# Alternates them, two rounds, UDP over 127.0.0.1: bandwidth, latency, and the collectives whose 1 MiB exchanges
# are bound by bytes; then AFTER once with the UDP and TCP baselines, for ratios.
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
BEFORE=${BEFORE:?jar before} AFTER=${AFTER:?jar after}; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
J="java --enable-native-access=ALL-UNNAMED"
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for round in 1 2; do
  for jar in before after; do
    eval j=\$${jar^^}
    f=$OUT/$jar-$round.txt
    stamp "$jar" > $f
    $J -jar $j perf --tests bw-send,bw-write,bw-read --sizes 8,64,4K,64K,1M -D 2 --no-baselines -q >> $f 2>&1
    $J -jar $j perf --tests lat-send,lat-write --sizes 8,4K,64K -D 2 --no-baselines -q >> $f 2>&1
    $J -jar $j perf --tests co-alltoall,co-allreduce,co-bcast --ranks 2 --sizes 64K,1M -q >> $f 2>&1
    $J -jar $j perf --tests co-allreduce,co-allgather --ranks 4 --sizes 64K,1M -q >> $f 2>&1
  done
done
f=$OUT/after-baselines.txt; stamp after > $f
$J -jar $AFTER perf --tests lat-send,bw-send,bw-write --sizes 8,64,64K,1M -D 2 -q >> $f 2>&1
echo done > $OUT/DONE
