#!/usr/bin/env bash
# Metadata sync benchmark: duration of one sync cycle of a mirror over N source topics (default 1,000).
# Usage: bench/sync-cycle.sh [topics]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx1g io.clustermirror.bench.SyncCycleBenchmark "$@"
