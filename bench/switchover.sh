#!/usr/bin/env bash
# Disaster-recovery benchmark: a promote of a 100-partition topic under a steady load, and the failback re-copy
# throughput against the catch-up of the same backlog, side by side in one run.
# Usage: bench/switchover.sh [partitions] [backlog records]   (default 100 partitions, 200,000 records of 1 KiB)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx2g io.clustermirror.bench.SwitchoverBenchmark "$@"
