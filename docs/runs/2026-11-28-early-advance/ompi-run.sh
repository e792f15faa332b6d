#!/bin/bash
# Open MPI over TCP, then jdet with a thread per member, 2 and 4 ranks, same sizes; twice
source /tmp/env.sh
out=$1; mkdir -p $out
for n in 2 4; do
  mpirun --allow-run-as-root --oversubscribe -np $n --mca btl tcp,self /tmp/ompi/co_bench 8 1024 65536 1048576 > $out/ompi$n.txt 2>&1
  java --enable-native-access=ALL-UNNAMED -jar /work/main/jdet-perf/target/jdet-perf.jar perf --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks $n --sizes 8,1024,65536,1048576 --thread-per-member > $out/jdet$n.txt 2>&1
done
