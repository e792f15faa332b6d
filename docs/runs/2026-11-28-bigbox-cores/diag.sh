# Why the in-process fabric's small-message rate falls on the 16-core machine (1.59 M msg/s against 6.3 M on the
# 2-vCPU guest): the machine's shape, the fabric and UDP rates with both ends pinned to two cores, to two distant
# cores and not pinned, and a profile of the unpinned fabric run. From the repository root on the device machine,
# after ../shared/tools/bigbox-runtime.sh here, with target/bigbox carried.
set -u
J="target/bigbox/jre/bin/java --enable-native-access=ALL-UNNAMED"
P="$J -jar target/bigbox/jdet-perf.jar perf"
d=docs/runs/2026-11-28-bigbox-cores
{ nproc; lscpu; cat /proc/loadavg; which mpirun mpicc; ls /usr/lib/x86_64-linux-gnu/openmpi 2>&1 | head -3;
  python3 -c "import mpi4py; print(mpi4py.get_config())" 2>&1; } > $OUT/info.txt 2>&1
for pin in none 0,1 0,8 0,15; do
  pre=""; [ $pin != none ] && pre="taskset -c $pin"
  echo "== pin $pin (load $(cut -d' ' -f1 /proc/loadavg))"
  timeout 40 $pre $P --nic loop --tests lat-send,bw-send,bw-write --sizes 8 --baselines aeron -q | grep -E "^ +8 +[a-z-]+ +[a-z/-]+ +[0-9]"
  timeout 40 $pre $P --tests bw-send,bw-write --sizes 8 --no-baselines -q | grep -E "^ +8 +[a-z-]+ +[a-z/-]+ +[0-9]"
done > $OUT/pin.txt 2>&1
timeout 60 $J -XX:+UnlockDiagnosticVMOptions -XX:+DebugNonSafepoints \
  -XX:StartFlightRecording=filename=$OUT/loop.jfr,settings=$d/profile.jfc \
  -jar target/bigbox/jdet-perf.jar perf --nic loop --tests bw-send --sizes 8 -D 4 --no-baselines -q > $OUT/jfr-run.txt 2>&1
ls -la $OUT; cat /proc/loadavg
