#!/usr/bin/env bash
# Small messages (8 and 64 B) with UDP GSO and GRO between two network namespaces: ../run.sh with other tests and
# sizes, outputs here. Usage, from the repository root:
#   docs/runs/2026-11-28-gso/small/run.sh before=3afcf6d.jar after=77dc4c1.jar
here=$(cd "$(dirname "$0")" && pwd)
TESTS=lat-send,bw-write,bw-send SIZES=8,64 BASELINES=udp OUT=$here PORT=46700 exec "$here/../run.sh" "$@"
