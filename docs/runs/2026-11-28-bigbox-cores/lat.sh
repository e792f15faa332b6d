# UDP one-way latency at 8 B on the 16-core machine, three jars alternating, three rounds: the evening's start
# 12ea24b (before), 0003c4d (the release-store engine lock, the poll without the ring lock, retirements without
# atomic adds: mid) and its end (after: a starving lock() goes next, appends without the ring lock).
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar"
R="^ +[0-9]+[KM]? +[a-z-]+ +[a-z/-]+ +[0-9.]+ +[0-9.]+ +[0-9.]+ "
for round in 1 2 3; do for j in before mid after; do
  jar=target/bigbox/jdet-perf.jar; [ $j != after ] && jar=target/bigbox/jdet-perf-$j.jar
  echo "== round $round $j (load $(cut -d' ' -f1 /proc/loadavg))"
  timeout 25 $JV $jar perf --tests lat-send,lat-write --sizes 8 --no-baselines -q | grep -E "$R"
done; done > $OUT/lat.txt 2>&1
cat /proc/loadavg
