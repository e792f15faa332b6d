#!/bin/bash
# Small sends and writes acknowledged every quarter of their four windows, the ack pushed out of the pass at once
# (docs/PERFORMANCE.md, "2026-11-28, night"). BEFORE and AFTER are jdet-perf jars of main before (0ad6777) and after (f014226)
# (./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests, then copy jdet-perf/target/jdet-perf.jar).
# Alternates them, two rounds, UDP, the in-process fabric and shared memory.
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
BEFORE=${BEFORE:?jar before} AFTER=${AFTER:?jar after}; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
J="java --enable-native-access=ALL-UNNAMED"
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for round in 1 2; do
  for jar in before after; do
    eval j=\$${jar^^}
    f=$OUT/$jar-$round.txt
    stamp "$jar" > $f
    $J -jar $j perf --tests bw-send,bw-write --sizes 8,64,4K,64K,1M -D 2 --no-baselines -q >> $f 2>&1
    $J -jar $j perf --nic loop --tests bw-send,bw-write --sizes 8,64,4K -D 2 --no-baselines -q >> $f 2>&1
    $J -jar $j perf --nic shm:ack-$jar-$round --tests bw-send,bw-write --sizes 8,64,4K -D 2 --no-baselines -q >> $f 2>&1
    $J -jar $j perf --tests lat-send,bw-read --sizes 8,64K -D 2 --no-baselines -q >> $f 2>&1
  done
done
echo done > $OUT/DONE
