package io.clustermirror.fetch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.ByteBuffer;

import org.junit.jupiter.api.Test;

class BatchContinuityTest {

    private static final ByteBuffer HEADER = ByteBuffer.allocate(61);

    private static SourceBatch batch(long base, long last, int count, boolean transactional, boolean control, byte magic) {
        return new SourceBatch(base, last, count, 0, transactional, control, magic, HEADER.duplicate());
    }

    @Test
    void contiguousBatchShouldPass() {
        assertThat(BatchContinuity.check(batch(10, 14, 5, false, false, (byte) 2), 10)).isEmpty();
    }

    @Test
    void transactionalAndControlBatchesShouldBeNamed() {
        assertThat(BatchContinuity.check(batch(10, 14, 5, true, false, (byte) 2), 10)).hasValueSatisfying(
                reason -> assertThat(reason).isEqualTo("transactional batches at offset 10 are not supported yet"));
        assertThat(BatchContinuity.check(batch(10, 10, 1, true, true, (byte) 2), 10)).hasValueSatisfying(
                reason -> assertThat(reason).contains("control batch").contains("offset 10"));
    }

    @Test
    void gapBetweenBatchesShouldNameTheMissingOffsets() {
        assertThat(BatchContinuity.check(batch(20, 24, 5, false, false, (byte) 2), 10)).hasValueSatisfying(
                reason -> assertThat(reason).contains("[10, 20)"));
    }

    @Test
    void holesInsideABatchShouldBeNamed() {
        assertThat(BatchContinuity.check(batch(10, 19, 4, false, false, (byte) 2), 10)).hasValueSatisfying(
                reason -> assertThat(reason).contains("holds 4 records for 10 offsets"));
    }

    @Test
    void destinationEndingInsideABatchShouldBeNamed() {
        assertThat(BatchContinuity.check(batch(5, 14, 10, false, false, (byte) 2), 10)).hasValueSatisfying(
                reason -> assertThat(reason).contains("inside source batch [5..14]"));
    }

    @Test
    void oldMessageFormatsShouldBeRefused() {
        assertThat(BatchContinuity.check(batch(10, 10, 1, false, false, (byte) 1), 10)).hasValueSatisfying(
                reason -> assertThat(reason).contains("format v1"));
    }
}
