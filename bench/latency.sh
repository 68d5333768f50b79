#!/usr/bin/env bash
# End-to-end latency benchmark: source append to destination visible, at a steady rate through the service.
# Prints p50/p90/p99/p99.9/max; writes bench/results/latency.txt and bench/results/latency.png (percentile curve).
# Usage: bench/latency.sh [seconds] [MB/s] [warm-up seconds]   (default 60 s measured at 10 MB/s after 10 s)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx2g -Djava.awt.headless=true io.clustermirror.bench.LatencyBenchmark "$@"
