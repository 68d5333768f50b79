#!/usr/bin/env bash
# Metadata sync benchmark: duration of one sync cycle of a mirror over N source topics (default 1,000).
# Usage: bench/sync-cycle.sh [topics]
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
exec java -Xmx1g -cp "target/test-classes:target/classes:$(cat target/kafka-broker.classpath)" \
  io.clustermirror.bench.SyncCycleBenchmark "$@"
