#!/bin/bash
# Four windows of small frames in flight (ProtocolNic.smallWindow): the jar before ($BEFORE, main at 35da6a8, the docs after the receive into place) and
# after ($AFTER), alternating, two rounds, over UDP and the in-process fabric: small-message rates and latency, and
# the bandwidth of large messages (which the change must leave alone). docs/PERFORMANCE.md, "2026-11-28, evening".
# Build the after jar first: ./mvnw -B -q -o -pl jdet-core,jdet-perf -am package -DskipTests
export JAVA_HOME=/usr/lib/jvm/temurin-25-jdk-amd64 PATH=/usr/lib/jvm/temurin-25-jdk-amd64/bin:$PATH
cd "$(dirname "$0")/../../.."; OUT=${OUT:-/tmp/jdet-runs}; mkdir -p "$OUT"
BEFORE=${BEFORE:-/tmp/before-window.jar}; AFTER=${AFTER:-jdet-perf/target/jdet-perf.jar}
stamp() { echo "== $(date +%T) load $(cut -d' ' -f1-3 /proc/loadavg) $*"; }
for round in 1 2; do
  for which in before after; do
    jar=$BEFORE; [ $which = after ] && jar=$AFTER
    for nic in udp:127.0.0.1 loop; do
      f=$OUT/${nic%%:*}-$which-$round.txt; stamp "$jar" > $f
      java --enable-native-access=ALL-UNNAMED -jar $jar perf --nic $nic --tests lat-send,bw-send,bw-write,bw-read \
        --sizes 8,64,1K,64K,1M -D 2 --no-baselines -q >> $f 2>&1
    done
  done
done
echo done > $OUT/DONE
