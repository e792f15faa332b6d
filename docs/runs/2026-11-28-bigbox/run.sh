# The 16-core run of 2026-11-28 (main a3a8116): every issue-7 target, the thread scaling, collectives.
# Run from the repository root on the device machine, after ../shared/tools/bigbox-runtime.sh here.
set -u
J="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar target/bigbox/jdet-perf.jar perf"
{ nproc; uname -r; cat /proc/loadavg; grep -m1 "model name" /proc/cpuinfo; } > $OUT/info.txt
timeout 120 $J --tests lat-send,lat-write,bw-send,bw-write --sizes 8,64,4K,64K,1M --baselines udp,tcp,aeron -q > $OUT/udp.txt 2>&1
timeout 60 $J --nic loop --tests lat-send,lat-write,bw-send,bw-write --sizes 8,64,1M --baselines aeron -q > $OUT/loop.txt 2>&1
timeout 45 $J --wait --tests lat-send --sizes 8,4K --baselines udp,tcp -q > $OUT/wait.txt 2>&1
for t in 1 2 4; do echo "== qps 4 threads $t"; timeout 30 $J --tests bw-send,bw-write --sizes 8,64 --qps 4 --threads $t --no-baselines -q; done > $OUT/thr.txt 2>&1
timeout 45 $J --tests co-barrier,co-bcast,co-allgather,co-alltoall,co-allreduce --ranks 4 --sizes 8,64K,1M -q --thread-per-member > $OUT/co4t.txt 2>&1
echo done; cat /proc/loadavg
