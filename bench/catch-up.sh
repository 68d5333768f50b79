#!/usr/bin/env bash
# Catch-up benchmark: Cluster Mirror vs a KafkaConsumer->KafkaProducer copy of the same backlog, side by side.
# Usage: bench/catch-up.sh [records]   (default 1,000,000 records of 1 KiB, lz4, 8 partitions)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
exec java -Xmx2g -cp "target/test-classes:target/classes:$(cat target/kafka-broker.classpath)" \
  io.clustermirror.bench.CatchUpBenchmark "$@"
