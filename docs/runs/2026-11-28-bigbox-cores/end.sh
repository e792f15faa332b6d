# The 16-core machine at the end of the evening: the session's end (jdet-perf.jar) against its start 12ea24b
# (jdet-perf-before.jar), alternating, two rounds; every issue-7 target at the end; a profile of the fabric's 8 B
# send stream at the end. From the repository root on the device machine, with target/bigbox carried: the jars, and
# a runtime made by ../shared/tools/bigbox-runtime.sh's jlink line with java.management.rmi,jdk.attach added (so
# that jars from before 12ea24b start too; run.sh and lat.sh used the same runtime).
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar"
R="^ +[0-9]+[KM]? +[a-z-]+ +[a-z/-]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ "
d=docs/runs/2026-11-28-bigbox-cores
{ nproc; uname -r; cat /proc/loadavg; } > $OUT/info.txt
for round in 1 2; do for j in before after; do
  jar=target/bigbox/jdet-perf.jar; [ $j = before ] && jar=target/bigbox/jdet-perf-before.jar
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
timeout 40 target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -XX:+UnlockDiagnosticVMOptions \
  -XX:+DebugNonSafepoints -XX:StartFlightRecording=filename=$OUT/end.jfr,settings=$d/profile.jfc \
  -jar target/bigbox/jdet-perf.jar perf --nic loop --tests bw-send --sizes 8 -D 3 --no-baselines -q > $OUT/jfr-run.txt 2>&1
echo "done $(date +%T)"; cat /proc/loadavg
