# Why 4 threads on one NIC fall below one: the NICs' counters (retransmissions, timeouts, receiver-not-ready) and
# the kernel's UDP drops around 1 and 4 threads (main a3a8116).
set -u
JV="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED -jar target/bigbox/jdet-perf.jar"
for t in 1 4; do for k in bw-send bw-write; do
  echo "== threads $t $k"; grep -A1 "^Udp:" /proc/net/snmp | tail -1
  timeout 30 $JV perf --tests $k --sizes 8 --qps 4 --threads $t --no-baselines -q --json $OUT/t$t-$k.json | grep -E "^ +8 +bw-.* jdet/udp +[0-9]"
  grep -A1 "^Udp:" /proc/net/snmp | tail -1
done; done
grep "^Udp:" /proc/net/snmp | head -1
