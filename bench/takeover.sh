#!/usr/bin/env bash
# Takeover benchmark: three instances share a destination; the one running a mirror (10 partitions, steady load) is
# killed (SIGKILL) or stopped (SIGTERM); time until it is MIRRORING on another instance, min/median/max over the runs.
# Usage: bench/takeover.sh [runs]   (default 10 of each)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx1g io.clustermirror.bench.TakeoverBenchmark "$@"
