#!/usr/bin/env bash
# End-to-end latency benchmark: source append to destination visible, at a steady rate through the bare
# Fetch->Produce loop (the ceiling) and then through the service, on the same brokers.
# Prints p50/p90/p99/p99.9/max of each; writes bench/results/latency.txt and bench/results/latency.png (percentiles).
# Usage: bench/latency.sh [seconds] [MB/s] [warm-up seconds] [--copiers=bare,mirror]
#        (default 60 s measured at 10 MB/s after 30 s of warm-up, both copiers)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx2g -Djava.awt.headless=true io.clustermirror.bench.LatencyBenchmark "$@"
