#!/usr/bin/env bash
# Small messages (8 and 64 B) with UDP GSO and GRO between two network namespaces joined by a veth pair of MTU 1500: jdet perf's server in one
# namespace, its client in the other, each jar given in turn, two rounds. Needs root and iproute2. Usage, from the
# repository root, with LABEL=JAR pairs (the outputs go to LABEL.txt here):
#   docs/runs/2026-11-28-gso/small/run.sh before=3afcf6d.jar gso=9027657.jar gro=f3b5de4.jar
set -u
java=${JAVA_HOME:+$JAVA_HOME/bin/}java  # a JDK 25: JAVA_HOME, else the java on the PATH
out=$(cd "$(dirname "$0")" && pwd)
jars=("$@")
ip netns add jgA; ip netns add jgB
trap 'ip netns del jgA; ip netns del jgB' EXIT
ip link add jgvA type veth peer name jgvB
ip link set jgvA netns jgA; ip link set jgvB netns jgB
ip -n jgA addr add 10.231.79.1/24 dev jgvA; ip -n jgB addr add 10.231.79.2/24 dev jgvB
for end in jgA:jgvA jgB:jgvB; do
  ip -n "${end%%:*}" link set "${end#*:}" mtu 1500 up; ip -n "${end%%:*}" link set lo up
done
port=46700
run() { # jar label
  port=$((port + 1))
  ip netns exec jgB "$java" --enable-native-access=ALL-UNNAMED -jar "$1" perf --server --nic udp:10.231.79.2 \
    --port $port > /dev/null 2>&1 &
  sleep 1.5
  { echo "# $2 ($1), $(uptime)"
    ip netns exec jgA "$java" --enable-native-access=ALL-UNNAMED -jar "$1" perf --client 10.231.79.2:$port \
      --nic udp:10.231.79.1 --tests lat-send,bw-write,bw-send --sizes 8,64 -D 2 --baselines udp -q
  } >> "$out/$2.txt" 2>&1
  wait
}
for round in 1 2; do
  for pair in "${jars[@]}"; do
    run "${pair#*=}" "${pair%%=*}"
  done
done
