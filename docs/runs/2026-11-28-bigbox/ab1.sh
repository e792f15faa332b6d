# A/B on the 16-core machine: main a3a8116 (before) against the UDP look ahead off the engine lock (after).
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar"
for j in before after; do
  jar=target/bigbox/jdet-perf.jar; [ $j = before ] && jar=target/bigbox/jdet-perf-before.jar
  for t in 1 2 4; do echo "== $j qps 4 threads $t"; timeout 30 $JV $jar perf --tests bw-send,bw-write --sizes 8,64 --qps 4 --threads $t --no-baselines -q | grep -E "jdet/udp +all"; done
  echo "== $j qps 8 threads 8"; timeout 30 $JV $jar perf --tests bw-send,bw-write --sizes 8 --qps 8 --threads 8 --no-baselines -q | grep -E "jdet/udp +all"
  echo "== $j lat"; timeout 40 $JV $jar perf --tests lat-send,bw-send --sizes 8,4K --baselines udp -q | grep -E "^ +(8|4K) +(lat-send|bw-send|udp-pingpong) +(jdet/udp|udp) +[0-9]"
done > $OUT/ab1.txt 2>&1
cat $OUT/ab1.txt
