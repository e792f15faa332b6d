#!/bin/bash
# Long sends, RDMA writes and read responses over UDP received straight into place (UdpPlacement): the jar before ($BEFORE, main at
# 3493175 plus the perf tool's collective fixes) and after ($AFTER), alternating, two rounds: bandwidth against the
# raw UDP stream of the same run, then 1 MiB collectives (their rendezvous writes are long writes) with a thread per
# member, 4 ranks. docs/PERFORMANCE.md, "2026-11-28, evening". Build the after jar first:
# ./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
cd "$(dirname "$0")/../../.."; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
BEFORE=${BEFORE:-/tmp/before.jar}; AFTER=${AFTER:-jdet-perf/target/jdet-perf.jar}
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for round in 1 2; do
  for which in before after; do
    jar=$BEFORE; [ $which = after ] && jar=$AFTER
    f=$OUT/bw-$which-$round.txt; stamp "$jar" > $f
    java --enable-native-access=ALL-UNNAMED -jar $jar perf --tests bw-send,bw-write,bw-read --sizes 64K,256K,1M,4M -D 2 --baselines udp -q >> $f 2>&1
  done
done
for round in 1 2; do
  for which in before after; do
    jar=$BEFORE; [ $which = after ] && jar=$AFTER
    f=$OUT/co-$which-$round.txt; stamp "$jar" > $f
    java --enable-native-access=ALL-UNNAMED -jar $jar perf --tests co-bcast,co-allgather,co-alltoall,co-allreduce \
      --sizes 1M --ranks 4 --thread-per-member >> $f 2>&1
  done
done
echo done > $OUT/DONE
