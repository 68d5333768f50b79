#!/usr/bin/env bash
# Many-partitions benchmark: N topics x 10 partitions (default 1,000 x 10 = 10,000) in one service instance started
# with -Xmx1g. Prints the first sync cycle over the new topics, the time until all are MIRRORING, whether all stay
# MIRRORING with lag 0 under a trickle across all of them, heap after a full GC and the live threads; writes
# bench/results/partitions.txt and bench/results/partitions.png (partitions MIRRORING over time).
# Usage: bench/partitions.sh [topics] [partitions per topic] [trickle seconds]   (default 1000 10 60)
set -euo pipefail
cd "$(dirname "$0")/.."
./mvnw -B -q package -DskipTests
. bench/java.sh
bench_java -Xmx2g -Djava.awt.headless=true io.clustermirror.bench.PartitionsBenchmark "$@"
