set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED"
for t in 1 4; do
timeout 60 $JV -XX:StartFlightRecording:filename=$OUT/t$t.jfr,settings=profile -jar target/bigbox/jdet-perf.jar perf --tests bw-send --sizes 8 --qps 4 --threads $t --no-baselines -q -D 3 > $OUT/t$t.txt 2>&1
done
ls -la $OUT
