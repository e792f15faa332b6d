#!/bin/bash
# Fabric batches (docs/PERFORMANCE.md, "2026-11-28, fabric batches"): the jar before the change and the jar after it,
# alternating, two rounds, on the in-process fabric; each bandwidth test measured for 3 s (-D 3), since the default
# 20 bursts of a size after the first are too short on 2 vCPUs (see the section). Usage: run.sh BEFORE.jar AFTER.jar
# (build each with ./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests at its commit).
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
OUT=${OUT:-$(dirname "$0")}; before=$1; after=$2
J="java --enable-native-access=ALL-UNNAMED -jar"
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for round in 1 2; do
  for which in before after; do
    jar=$before; [ $which = after ] && jar=$after
    f=$OUT/$which-$round.txt
    stamp "$which $jar" > $f
    $J $jar perf --nic loop --tests lat-send,lat-write --sizes 8,64 -D 3 --no-baselines -q >> $f 2>&1
    $J $jar perf --nic loop --tests bw-send,bw-write --sizes 8,64,1K -D 3 --baselines aeron -q >> $f 2>&1
  done
done
echo done > $OUT/DONE
