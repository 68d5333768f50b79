#!/usr/bin/env bash
# Transaction replay benchmark: source transactions mirrored per second on one partition, markers included.
# Usage: bench/transactions.sh [transactions] [partitions]
#   (default 5,000 transactions of 5 records on each of 1 partition, every fifth aborted)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
exec java -Xmx1g -cp "target/test-classes:target/classes:$(cat target/kafka-broker.classpath)" \
  io.clustermirror.bench.TransactionBenchmark "$@"
