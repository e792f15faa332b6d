#!/bin/bash
# Collectives with 8 receive slots per peer (BEFORE: main at f25db6c) and 16 (AFTER: CollectiveTuning.AUTO_SLOTS,
# 16 per peer in groups of up to 16), a thread per member, 2 and 4 ranks over UDP, alternating, two rounds, then
# Open MPI over TCP (docs/PERFORMANCE.md, "2026-11-28, night"). Build: ./mvnw -B -q -o -pl jdet-core,jdet-perf -am
# package -DskipTests, copying jdet-perf/target/jdet-perf.jar at each commit.
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
BEFORE=${BEFORE:?jar before} AFTER=${AFTER:?jar after}; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
cd "$(dirname "$0")/../../.."
J="java --enable-native-access=ALL-UNNAMED"
T="--tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --sizes 8,1K,64K,1M --thread-per-member -q"
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for round in 1 2; do
  for n in 2 4; do
    for jar in before after; do
      eval j=\$${jar^^}
      f=$OUT/$jar-$n-$round.txt; stamp "$jar $n ranks" > $f; $J -jar $j perf $T --ranks $n >> $f 2>&1
    done
  done
done
mpicc -O2 -o $OUT/co_bench jdet-benchmarks/mpi/co_bench.c
for n in 2 4; do
  stamp > $OUT/mpi$n.txt; mpirun --allow-run-as-root --oversubscribe -np $n --mca btl tcp,self $OUT/co_bench 8 1024 65536 1048576 >> $OUT/mpi$n.txt 2>&1
done
echo done > $OUT/DONE
