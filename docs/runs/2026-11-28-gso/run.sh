#!/usr/bin/env bash
# UDP GSO and GRO between two network namespaces joined by a veth pair of MTU 1500: jdet perf's server in one
# namespace, its client in the other, each jar given in turn, two rounds. Needs root and iproute2. Usage, from the
# repository root, with LABEL=JAR pairs (the outputs go to LABEL.txt in OUT, by default here):
#   docs/runs/2026-11-28-gso/run.sh before=3afcf6d.jar gso=9027657.jar gro=f3b5de4.jar
# TESTS, SIZES, BASELINES, OUT and PORT (the first side-channel port, less one) override the defaults below.
set -u
java=${JAVA_HOME:+$JAVA_HOME/bin/}java  # a JDK 25: JAVA_HOME, else the java on the PATH
out=${OUT:-$(cd "$(dirname "$0")" && pwd)}
tests=${TESTS:-lat-send,bw-write,bw-send,bw-read}
sizes=${SIZES:-4K,64K,1M}
baselines=${BASELINES:-udp,tcp}
jars=("$@")
ip netns add jgA; ip netns add jgB
trap 'ip netns del jgA; ip netns del jgB' EXIT
ip link add jgvA type veth peer name jgvB
ip link set jgvA netns jgA; ip link set jgvB netns jgB
ip -n jgA addr add 10.231.79.1/24 dev jgvA; ip -n jgB addr add 10.231.79.2/24 dev jgvB
for end in jgA:jgvA jgB:jgvB; do
  ip -n "${end%%:*}" link set "${end#*:}" mtu 1500 up; ip -n "${end%%:*}" link set lo up
done
port=${PORT:-45700}
run() { # jar label
  port=$((port + 1))
  ip netns exec jgB "$java" --enable-native-access=ALL-UNNAMED -jar "$1" perf --server --nic udp:10.231.79.2 \
    --port $port > /dev/null 2>&1 &
  sleep 1.5
  { echo "# $2 ($1), $(uptime)"
    ip netns exec jgA "$java" --enable-native-access=ALL-UNNAMED -jar "$1" perf --client 10.231.79.2:$port \
      --nic udp:10.231.79.1 --tests "$tests" --sizes "$sizes" -D 2 --baselines "$baselines" -q
  } >> "$out/$2.txt" 2>&1
  wait
}
for round in 1 2; do
  for pair in "${jars[@]}"; do
    run "${pair#*=}" "${pair%%=*}"
  done
done
