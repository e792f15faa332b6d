# A/B on the 16-core machine, alternating: main a3a8116 (before), the UDP look ahead alone (lookahead), and the
# look ahead with posts combined by the engine's holder (after, jdet-perf.jar).
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar"
jar() { case $1 in before) echo target/bigbox/jdet-perf-before.jar;; lookahead) echo target/bigbox/jdet-perf-lookahead.jar;; *) echo target/bigbox/jdet-perf.jar;; esac; }
cat /proc/loadavg
for round in 1 2; do
  for j in before after; do
    for s in "4 1" "4 4" "8 8"; do set -- $s
      echo "== round $round $j qps $1 threads $2 (load $(cut -d' ' -f1 /proc/loadavg))"
      timeout 30 $JV $(jar $j) perf --tests bw-send,bw-write --sizes 8 --qps $1 --threads $2 --no-baselines -q | grep -E "jdet/udp +all"
    done
  done
done
echo "== lookahead qps 4 threads 4"; timeout 30 $JV $(jar lookahead) perf --tests bw-send,bw-write --sizes 8 --qps 4 --threads 4 --no-baselines -q | grep -E "jdet/udp +all"
for j in before after; do echo "== $j lat"; timeout 40 $JV $(jar $j) perf --tests lat-send --sizes 8,4K --baselines udp -q | grep -E "^ +(8|4K) +(lat-send|udp-pingpong) +(jdet/udp|udp) +[0-9]"; done
cat /proc/loadavg
