#!/bin/bash
# Collectives, jdet over UDP (one thread / a thread per member) and Open MPI over TCP, 2 and 4 ranks, back to back
# (docs/PERFORMANCE.md, "2026-11-27, evening"). Build first: ./mvnw -B -q -o install -DskipTests
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
cd "$(dirname "$0")/../../.."; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
J="java --enable-native-access=ALL-UNNAMED -jar jdet-perf/target/jdet-perf.jar perf"
T="--tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --sizes 8,1K,64K,1M -q"
mpicc -O2 -o $OUT/co_bench jdet-benchmarks/mpi/co_bench.c
for n in 2 4; do
 echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" > $OUT/co$n.txt; $J $T --ranks $n >> $OUT/co$n.txt 2>&1
 echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" > $OUT/co${n}t.txt; $J $T --ranks $n --thread-per-member >> $OUT/co${n}t.txt 2>&1
 echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" > $OUT/mpi$n.txt; mpirun --allow-run-as-root --oversubscribe -np $n --mca btl tcp,self $OUT/co_bench 8 1024 65536 1048576 >> $OUT/mpi$n.txt 2>&1
done
echo done > $OUT/DONE
