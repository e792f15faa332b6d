set -u
J="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar target/bigbox/jdet-perf.jar perf"
{ nproc; uname -r; cat /proc/loadavg; grep -m1 "model name" /proc/cpuinfo; } > $OUT/info.txt
timeout 90 $J --tests lat-send,bw-send,bw-write --sizes 8,64,4K,1M --baselines udp,tcp,aeron -q > $OUT/udp.txt 2>&1
timeout 60 $J --nic loop --tests lat-send,bw-send,bw-write --sizes 8,64,1M --baselines aeron -q > $OUT/loop.txt 2>&1
timeout 45 $J --wait --tests lat-send --sizes 8,4K --baselines udp,tcp -q > $OUT/wait.txt 2>&1
for t in 1 2 4 8; do echo "== threads $t"; timeout 40 $J --tests bw-send,bw-write --sizes 8 --qps 8 --threads $t --no-baselines -q; done > $OUT/thr.txt 2>&1
timeout 60 $J --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 2 --sizes 8,64K,1M -q --thread-per-member > $OUT/co2t.txt 2>&1
timeout 60 $J --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 4 --sizes 8,64K,1M -q --thread-per-member > $OUT/co4t.txt 2>&1
timeout 60 $J --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 4 --sizes 8,64K,1M -q > $OUT/co4.txt 2>&1
echo done; cat /proc/loadavg
