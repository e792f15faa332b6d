set -u
J="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar target/bigbox/jdet-perf.jar perf"
for n in 1 4 8; do
  echo "== $n processes, each its own pair of UDP NICs, 8 B bw-send (load $(cut -d' ' -f1 /proc/loadavg))"
  for i in $(seq $n); do timeout 60 $J --tests bw-send --sizes 8 --no-baselines -q > /tmp/p$n-$i.txt 2>&1 & done; wait
  grep -h -E "^ +8 +bw-send +jdet/udp +[0-9]" /tmp/p$n-*.txt
done > $OUT/procs.txt 2>&1
timeout 60 $J --tests lat-send,bw-write --sizes 8,1M --no-baselines -q > $OUT/plain.txt 2>&1
timeout 60 $J --secure auth --tests lat-send,bw-write --sizes 8,1M --no-baselines -q > $OUT/auth.txt 2>&1
timeout 60 $J --secure encrypt --tests lat-send,bw-write --sizes 8,1M --no-baselines -q > $OUT/enc.txt 2>&1
timeout 90 target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -cp target/bigbox/jdet-benchmarks.jar io.jdet.internal.protocol.SealBench ENCRYPT 48 65000 1024 > $OUT/sealbench.txt 2>&1
echo done
