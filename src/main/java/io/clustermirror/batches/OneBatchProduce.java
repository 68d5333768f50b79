package io.clustermirror.batches;

import io.clustermirror.kafka.ClusterView;
import java.nio.ByteBuffer;
import java.util.List;
import org.apache.kafka.common.TopicPartition;
import org.apache.kafka.common.message.ProduceRequestData;
import org.apache.kafka.common.record.MemoryRecords;

/** A Produce request (acks=all) carrying one restamped batch for one partition. */
public final class OneBatchProduce {

    private OneBatchProduce() {}

    /** @param transactionalId null for an idempotent batch; the replay producer's id for a transactional one */
    public static ProduceRequestData request(
            ClusterView view, TopicPartition tp, ByteBuffer batch, String transactionalId, int timeoutMs) {
        ProduceRequestData.TopicProduceDataCollection topics = new ProduceRequestData.TopicProduceDataCollection();
        topics.add(new ProduceRequestData.TopicProduceData()
                .setName(tp.topic())
                .setTopicId(view.topicIds().get(tp.topic()))
                .setPartitionData(List.of(new ProduceRequestData.PartitionProduceData()
                        .setIndex(tp.partition())
                        .setRecords(MemoryRecords.readableRecords(batch)))));
        return new ProduceRequestData()
                .setTransactionalId(transactionalId)
                .setAcks((short) -1)
                .setTimeoutMs(timeoutMs)
                .setTopicData(topics);
    }
}
