#!/usr/bin/env bash
# The issue-10 comparison after the alpha/beta calibration settles (3afcf6d): jdet over UDP, then Open MPI over TCP,
# back to back, 2 and 4 ranks. Run from the repository root with jdet-perf/target/jdet-perf.jar built and
# /tmp/co_bench compiled from jdet-benchmarks/mpi/co_bench.c (mpicc -O2 -o /tmp/co_bench co_bench.c).
set -u
out=$(dirname "$0")
for n in 2 4; do
  uptime > "$out/jdet-$n.txt"
  java --enable-native-access=ALL-UNNAMED -jar jdet-perf/target/jdet-perf.jar perf \
    --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks $n --sizes 8,1K,64K,1M -q \
    >> "$out/jdet-$n.txt" 2>&1
  uptime > "$out/ompi-$n.txt"
  mpirun --allow-run-as-root --oversubscribe -np $n --mca btl tcp,self /tmp/co_bench 8 1024 65536 1048576 \
    >> "$out/ompi-$n.txt" 2>&1
done
