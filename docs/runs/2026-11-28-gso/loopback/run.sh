#!/usr/bin/env bash
# Loopback, where the change should change nothing (frames of 64 KiB: at these sizes no runs, no aggregates, placing as before):
# each LABEL=JAR in turn, two rounds. From the repository root, a JDK 25 as JAVA_HOME or first on the PATH:
#   docs/runs/2026-11-28-gso/loopback/run.sh before=3afcf6d.jar gro=f3b5de4.jar
set -u
java=${JAVA_HOME:+$JAVA_HOME/bin/}java
out=$(cd "$(dirname "$0")" && pwd)
for round in 1 2; do
  for pair in "$@"; do
    jar=${pair#*=}; label=${pair%%=*}
    { echo "# $label ($jar), $(uptime)"
      "$java" --enable-native-access=ALL-UNNAMED -jar "$jar" perf --tests lat-send,bw-write,bw-send \
        --sizes 8,64K,1M -D 1 --no-baselines -q
      "$java" --enable-native-access=ALL-UNNAMED -jar "$jar" perf --tests co-allgather,co-alltoall --ranks 2 \
        --sizes 64K,1M -q
    } >> "$out/$label.txt" 2>&1
  done
done
