# The 16-core machine, 2026-11-28 evening: main (jdet-perf.jar) against the engine lock released with a release
# store (jdet-perf-lock.jar, branch experiment/release-lock), alternating, two rounds; then every issue-7 target at
# main, and the UDP link between two network namespaces over a veth pair of MTU 1500 (GSO and GRO). From the
# repository root on the device machine, with target/bigbox carried (a jlink runtime and the jars). Outputs here:
# ab.txt as ab-lock.txt, udp/loop/wait.txt as start-*.txt. The namespace part did not run: the device machine
# has no iproute2 (ip: command not found).
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar"
R="^ +[0-9]+[KM]? +[a-z-]+ +[a-z/-]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ "
{ nproc; uname -r; cat /proc/loadavg; } > $OUT/info.txt
for round in 1 2; do for j in head lock; do
  jar=target/bigbox/jdet-perf.jar; [ $j = lock ] && jar=target/bigbox/jdet-perf-lock.jar
  echo "== round $round $j (load $(cut -d' ' -f1 /proc/loadavg))"
  timeout 30 $JV $jar perf --nic loop --tests lat-send,bw-send,bw-write --sizes 8 --no-baselines -q | grep -E "$R"
  timeout 30 $JV $jar perf --tests lat-send,bw-send,bw-write --sizes 8 --no-baselines -q | grep -E "$R"
  for t in 1 4; do echo "-- qps 4 threads $t"
    timeout 20 $JV $jar perf --tests bw-write --sizes 8 --qps 4 --threads $t --no-baselines -q | grep -E "$R"; done
done; done > $OUT/ab.txt 2>&1
echo "ab done $(date +%T)"
timeout 110 $JV target/bigbox/jdet-perf.jar perf --tests lat-send,lat-write,bw-send,bw-write --sizes 8,64,4K,64K,1M \
  --baselines udp,tcp,aeron -q > $OUT/udp.txt 2>&1
timeout 50 $JV target/bigbox/jdet-perf.jar perf --nic loop --tests lat-send,lat-write,bw-send,bw-write \
  --sizes 8,64,1M --baselines aeron -q > $OUT/loop.txt 2>&1
timeout 40 $JV target/bigbox/jdet-perf.jar perf --wait --tests lat-send --sizes 8,4K --baselines udp,tcp -q \
  > $OUT/wait.txt 2>&1
echo "targets done $(date +%T)"
JAVA_HOME=$PWD/target/bigbox/jre TESTS=lat-send,bw-write SIZES=64K,1M OUT=$OUT timeout 120 \
  bash docs/runs/2026-11-28-gso/run.sh main=target/bigbox/jdet-perf.jar
echo "done $(date +%T)"; cat /proc/loadavg
