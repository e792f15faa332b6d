#!/bin/bash
# Shared-memory batches (docs/PERFORMANCE.md, "2026-11-28, later"): the jar before the change and after it,
# alternating, two rounds, both ends in one JVM on one shm group, each step measured for 2 s.
# Usage: run.sh BEFORE.jar AFTER.jar (each built with ./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests).
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
OUT=${OUT:-$(dirname "$0")}; before=$1; after=$2
for round in 1 2; do
  for which in before after; do
    jar=$before; [ $which = after ] && jar=$after
    f=$OUT/$which-$round.txt
    echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $which $jar" > $f
    java --enable-native-access=ALL-UNNAMED -jar $jar perf --nic shm:sb$round --tests lat-send,lat-write,bw-send,bw-write \
      --sizes 8,64 -D 2 --no-baselines -q >> $f 2>&1
  done
done
