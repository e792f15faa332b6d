#!/bin/bash
# The collectives of jars alternated: run.sh OUTDIR NAME... runs /tmp/NAME.jar (the jdet-perf.jar of a commit) for
# each NAME in turn, three rounds, 2 and 4 ranks, a thread per member (tpm) and one thread (one); output
# OUTDIR/NAME-RANKS-DRIVER-ROUND.txt. Here: base = b80c634, optb = 8f5c36d (ab/). JAVA_HOME must be a JDK 25.
# Summary: python3 cmp.py OUTDIR base optb (each cell's three figures and the ratio of the medians).
out=$1; shift
for round in 1 2 3; do
  for n in 2 4; do
    for drv in tpm one; do
      for j in "$@"; do
        extra=""; [ $drv = tpm ] && extra="--thread-per-member"
        java --enable-native-access=ALL-UNNAMED -jar /tmp/$j.jar perf --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks $n --sizes 8,1K,64K --iters 5000 --warmup 2000 -q $extra > $out/$j-$n-$drv-$round.txt 2>&1
      done
    done
  done
done
echo finished > $out/done
