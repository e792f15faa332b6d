#!/bin/bash
# Collectives with and without the rendezvous (-Djdet.co.rendezvous.bytes: the default 65536, or never), one thread
# per member and one thread for all, and Open MPI over TCP, 2 and 4 ranks, back to back (docs/PERFORMANCE.md,
# "2026-11-28, collectives by rendezvous"). Build first: ./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
cd "$(dirname "$0")/../../.."; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
J="java --enable-native-access=ALL-UNNAMED"
T="--tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --sizes 8,1K,64K,1M -q"
mpicc -O2 -o $OUT/co_bench jdet-benchmarks/mpi/co_bench.c
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for n in 2 4; do
  for mode in "" "--thread-per-member"; do
    for rv in 9223372036854775807 65536; do
      f=$OUT/co$n${mode:+t}-rv$([ $rv = 65536 ] && echo on || echo off).txt
      stamp "$rv $mode" > $f; $J -Djdet.co.rendezvous.bytes=$rv -jar jdet-perf/target/jdet-perf.jar perf $T --ranks $n $mode >> $f 2>&1
    done
  done
  stamp > $OUT/mpi$n.txt; mpirun --allow-run-as-root --oversubscribe -np $n --mca btl tcp,self $OUT/co_bench 8 1024 65536 1048576 >> $OUT/mpi$n.txt 2>&1
done
echo done > $OUT/DONE
