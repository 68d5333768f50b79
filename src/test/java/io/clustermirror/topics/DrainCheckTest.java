package io.clustermirror.topics;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The drain read's fallback for sources without DescribeProducers (before Kafka 2.8): the oldest open transaction from
 * the log end and the last stable offset. The fallback as a whole runs against Kafka 2.1–2.7 in CompatibilityMatrixIT
 * (the promote case), which fails with UNSUPPORTED_VERSION without it.
 */
class DrainCheckTest {

    @Test
    void aLastStableOffsetBelowTheEndShouldBeTheOldestOpenTransactionsStart() {
        assertThat(DrainCheck.openTransactionStart(120, 100)).isEqualTo(100);
    }

    @Test
    void aLastStableOffsetAtTheEndShouldMeanNoTransactionIsOpen() {
        assertThat(DrainCheck.openTransactionStart(120, 120)).isEqualTo(-1);
        assertThat(DrainCheck.openTransactionStart(0, 0)).isEqualTo(-1);
    }
}
