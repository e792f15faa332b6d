# The 16-core machine at the end of 2026-11-28: the session's end (jdet-perf.jar) against its start a3a8116
# (jdet-perf-before.jar), alternating, on the paths the session's fixes touched: --wait (the link waiter's sleep),
# UDP and fabric latency and rate.
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar"
cat /proc/loadavg
for round in 1 2; do for j in before after; do
  jar=target/bigbox/jdet-perf.jar; [ $j = before ] && jar=target/bigbox/jdet-perf-before.jar
  echo "== round $round $j (load $(cut -d' ' -f1 /proc/loadavg))"
  timeout 40 $JV $jar perf --wait --tests lat-send --sizes 8,4K --baselines udp -q | grep -E "^ +(8|4K) +(lat-send|udp-pingpong) +(jdet/udp|udp) +[0-9]"
  timeout 40 $JV $jar perf --tests lat-send,bw-send,bw-write,bw-atomic --sizes 8 --baselines udp -q | grep -E "^ +8 +(lat-send|bw-send|bw-write|bw-atomic|udp-pingpong) +(jdet/udp|udp) +[0-9]"
  timeout 40 $JV $jar perf --nic loop --tests lat-send,bw-send --sizes 8 --no-baselines -q | grep -E "^ +8 +(lat-send|bw-send) +jdet/loop +[0-9]"
done; done
cat /proc/loadavg
