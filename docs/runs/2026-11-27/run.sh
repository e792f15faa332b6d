#!/bin/bash
# The quiet runs of 2026-11-27 (docs/PERFORMANCE.md, "2026-11-27"): outputs go to $OUT. As 2026-11-23-after/run.sh,
# plus the collectives with a thread per member.
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
cd "$(dirname "$0")/../../.."
OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
./mvnw -B -q -o install -DskipTests > $OUT/build.txt 2>&1 || { echo build failed; exit 1; }
J="java --enable-native-access=ALL-UNNAMED -jar jdet-perf/target/jdet-perf.jar perf"
run() { n=$1; shift; echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg): $*" > $OUT/$n.txt; $J "$@" >> $OUT/$n.txt 2>&1; echo "== end $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" >> $OUT/$n.txt; }
run udp --tests lat-send,lat-write,bw-send,bw-write --sizes 8,64,4K,64K,1M --baselines udp,tcp,aeron -q --json $OUT/udp.json
run loop --nic loop --tests lat-send,bw-send,bw-write --sizes 8,64,1M --baselines aeron -q --json $OUT/loop.json
run wait --wait --tests lat-send --sizes 8,4K --baselines udp,tcp -q
run waitloop --nic loop --wait --tests lat-send --sizes 8,4K -q
run thr1 --tests bw-send,bw-write --sizes 8,64 --qps 4 --threads 1 --no-baselines -q
run thr4 --tests bw-send,bw-write --sizes 8,64 --qps 4 --threads 4 --no-baselines -q
run plain --tests lat-send,bw-write --sizes 8,1M --no-baselines -q
run auth --secure auth --tests lat-send,bw-write --sizes 8,1M --no-baselines -q
run enc --secure encrypt --tests lat-send,bw-write --sizes 8,1M --no-baselines -q
run co2 --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 2 --sizes 8,1K,64K,1M -q
run co4 --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 4 --sizes 8,1K,64K,1M -q
run co2t --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 2 --sizes 8,1K,64K,1M -q --thread-per-member
run co4t --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 4 --sizes 8,1K,64K,1M -q --thread-per-member
mpicc -O2 -o $OUT/co_bench jdet-benchmarks/mpi/co_bench.c
for n in 2 4; do echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg)" > $OUT/mpi$n.txt; mpirun --allow-run-as-root --oversubscribe -np $n --mca btl tcp,self $OUT/co_bench 8 1024 65536 1048576 >> $OUT/mpi$n.txt 2>&1; done
echo done > $OUT/DONE
